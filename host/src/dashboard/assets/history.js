// History: the equity curve (GET /api/equity), profit per day or week and the figures per
// strategy and per symbol (GET /api/trades/stats), and the closed trades a page at a time with
// filters (GET /api/trades/history). The same figures an agent reads; re-read when a trade
// closes, and every minute. Also the plugins that produce the trades (GET /api/strategies).
'use strict';

// ---- equity over time ----

let equityDays = 7;
let equityPlot = null;

async function refreshEquity() {
  const { status, body } = await api('/api/equity?days=' + equityDays + '&points=800');
  if (status !== 200 || !body) return;
  const points = body.points;
  $('equity-range').textContent = points.length
    ? points[points.length - 1].equity.toFixed(2) + ' ' + body.currency + ' now · ' + points.length + ' points'
    : 'no measurement yet (the service measures equity every minute)';
  const data = [points.map((p) => p.time / 1000), points.map((p) => p.equity)];
  if (!equityPlot) {
    const target = $('equity-chart');
    // uPlot shows the points by itself while they are sparse (the first minutes).
    const options = chartOptions(target, [{ label: 'Equity', stroke: COLORS.tp, width: 1.5 }]);
    // Around the figures, not from 0: a move of 1 % must be visible.
    options.scales.y = { range: (u, min, max) => {
      const pad = max > min ? (max - min) * 0.1 : Math.abs(max) * 0.01 || 1;
      return [min - pad, max + pad];
    } };
    equityPlot = new uPlot(options, data, target);
  }
  plotData(equityPlot, data);
}

/** A row of range buttons: marks the pressed one and calls `choose` with its data value. */
function ranges(id, key, choose) {
  $(id).addEventListener('click', (e) => {
    const pressed = e.target.closest('button');
    if (!pressed) return;
    for (const b of $(id).querySelectorAll('button')) b.classList.toggle('on', b === pressed);
    choose(pressed.dataset[key]);
  });
}
ranges('equity-days', 'days', (days) => { equityDays = Number(days); refreshEquity().catch(() => {}); });

// ---- statistics: profit per period, per strategy and per symbol ----

let stats = null;
let barsPeriod = 'daily';
let barsPlot = null;

async function refreshStats() {
  const { status, body } = await api('/api/trades/stats');
  if (status !== 200 || !body) return;
  stats = body;
  renderBars();
  renderStats();
  fillChoices('history-bot', Object.keys(body.by_bot));
  fillChoices('history-symbol', Object.keys(body.by_symbol));
}

function renderBars() {
  if (!stats) return;
  const periods = stats[barsPeriod];
  $('bars-note').textContent = periods.length ? stats.currency + ', net of fees' : 'no closed trade yet';
  const day = (start) => Date.parse(start + 'T00:00:00Z') / 1000;
  const data = [periods.map((p) => day(p.start)), periods.map((p) => p.pnl)];
  if (!barsPlot) {
    const target = $('bars-chart');
    const options = chartOptions(target, [{
      label: 'PnL', stroke: COLORS.pnl, fill: COLORS.pnl + '88', points: { show: false },
      paths: uPlot.paths.bars({ size: [0.7, 40] }),
    }]);
    barsPlot = new uPlot(options, data, target);
  }
  barsPlot.setData(data);
  // A period of room on each side, so a single bar is a bar and not a year-wide axis.
  const xs = data[0];
  if (xs.length) {
    const room = barsPeriod === 'weekly' ? 7 * 86400 : 86400;
    barsPlot.setScale('x', { min: xs[0] - room, max: xs[xs.length - 1] + room });
  }
}
ranges('bars-period', 'period', (period) => { barsPeriod = period; renderBars(); });

function statRow(name, a, className) {
  const tr = row([name, num(a.count), num(a.win_rate === null ? '–' : a.win_rate.toFixed(1) + '%'),
    num(money(a.total_pnl), signClass(a.total_pnl)), num(a.avg_pnl === null ? '–' : money(a.avg_pnl)),
    num(a.profit_factor === null ? (a.wins ? 'no loss' : '–') : a.profit_factor.toFixed(2)),
    num(a.max_drawdown.toFixed(2))]);
  if (className) tr.className = className;
  return tr;
}

function renderStats() {
  const group = (title) => {
    const td = el('td', title);
    td.colSpan = 7;
    const tr = row([td]);
    tr.className = 'group';
    return tr;
  };
  const rows = [statRow('All trades', stats)];
  const bots = Object.entries(stats.by_bot);
  const symbols = Object.entries(stats.by_symbol);
  if (bots.length) rows.push(group('By strategy'), ...bots.map(([name, a]) => statRow(name, a)));
  if (symbols.length) rows.push(group('By symbol'), ...symbols.map(([name, a]) => statRow(name, a)));
  $('stats-note').textContent = stats.count ? stats.currency : '';
  fillTable('stats', stats.count ? rows : [], 'No closed trade yet.', 7);
}

/** Keeps a filter's options in step with the names the statistics know, and its choice. */
function fillChoices(id, names) {
  const select = $(id);
  const chosen = select.value;
  select.replaceChildren(el('option', 'all'), ...names.map((n) => el('option', n)));
  select.options[0].value = '';
  select.value = names.includes(chosen) ? chosen : '';
}

// ---- closed trades, a page at a time ----

const HISTORY_PAGE = 25;
let historyOffset = 0;

function historyQuery() {
  const q = new URLSearchParams({ limit: HISTORY_PAGE, offset: historyOffset });
  for (const [key, id] of [['bot', 'history-bot'], ['symbol', 'history-symbol'], ['from', 'history-from'], ['to', 'history-to']]) {
    if ($(id).value) q.set(key, $(id).value);
  }
  return '/api/trades/history?' + q;
}

async function refreshHistory() {
  const { status, body } = await api(historyQuery());
  if (status !== 200 || !body) return;
  $('history-count').textContent = body.total ? String(body.total) : '';
  const dateTime = (iso) => { const d = new Date(iso); return isNaN(d) ? iso : d.toLocaleString(); };
  fillTable('history', body.trades.map((t) => {
    const tr = row([dateTime(t.closed_at), t.symbol, t.direction, t.bot, num(price(t.size)),
      num(price(t.entry_px)), num(price(t.exit_px)), num(money(t.pnl), signClass(t.pnl)), t.reason]);
    tr.dataset.symbol = t.symbol;
    tr.className = 'pickable';
    tr.title = 'Show this trade on a chart';
    tr.addEventListener('click', () => showClosedTrade(t).catch(() => {}));
    return tr;
  }), 'No closed trade matches.', 9);
  const last = Math.min(body.offset + body.count, body.total);
  $('history-page').textContent = body.total ? (body.offset + 1) + '–' + last + ' of ' + body.total : '';
  $('history-newer').disabled = body.offset === 0;
  $('history-older').disabled = last >= body.total;
}

// ---- a closed trade on a chart ----

let closedChart = null;

/** Draws `t` (a history row) with the candles around it, its stops, its entry and its exit. */
async function showClosedTrade(t) {
  const from = Date.parse(t.opened_at);
  const to = Date.parse(t.closed_at);
  const { status, body } = await api('/api/dashboard/chart?symbol=' + encodeURIComponent(t.symbol)
    + '&from=' + from + '&to=' + to);
  const card = $('history-chart-card');
  card.hidden = false;
  if (status !== 200 || !body) {
    $('history-chart-title').textContent = t.symbol + ': no chart (' + ((body && body.detail) || status) + ')';
    return;
  }
  const title = $('history-chart-title');
  title.textContent = t.symbol + ' · ' + body.timeframe + ' candles · ' + t.direction + ' ' + price(t.size)
    + ' at ' + price(t.entry_px) + ' → ' + price(t.exit_px) + ' (' + t.reason.replace('_', ' ') + ', '
    + money(t.pnl) + ')';
  title.append(chartKey());
  const model = {
    candles: body.candles, stops: body.stops, entry_px: t.entry_px, sl_px: null, tp_px: null,
    marks: [{ time: from, price: t.entry_px, kind: 'entry' }, { time: to, price: t.exit_px, kind: 'exit' }],
  };
  card.dataset.symbol = t.symbol;
  if (closedChart) closedChart.update(model);
  else closedChart = new TradeChart($('history-chart'), model);
}

$('history-filter').addEventListener('change', () => { historyOffset = 0; refreshHistory().catch(() => {}); });
$('history-newer').addEventListener('click', () => {
  historyOffset = Math.max(0, historyOffset - HISTORY_PAGE);
  refreshHistory().catch(() => {});
});
$('history-older').addEventListener('click', () => {
  historyOffset += HISTORY_PAGE;
  refreshHistory().catch(() => {});
});

// ---- strategies: the plugins folder ----

async function refreshStrategies() {
  const { status, body } = await api('/api/strategies');
  if (status !== 200 || !body) return;
  $('strategies-dir').textContent = body.dir;
  const when = (iso) => (iso ? new Date(iso).toLocaleString() : '–');
  fillTable('strategies', body.plugins.map((p) => {
    const serving = p.status === 'loaded';
    const canary = p.canary ? p.canary.outcome + ' · ' + p.canary.duration_ms.toFixed(1) + ' ms' : '–';
    const scan = p.last_scan;
    const statusClass = serving ? 'pos' : p.status === 'stale' ? 'warn' : 'neg';
    const tr = row([p.name || p.file, p.version || '–', el('td', p.status, statusClass),
      el('td', canary, p.canary && p.canary.outcome !== 'ok' ? 'warn' : ''),
      biasCell(p.bias_check),
      scan ? when(scan.at) + ' · ' + scan.outcome + ' · ' + scan.symbols + ' symbols' : 'not yet',
      num(scan ? scan.duration_ms.toFixed(1) + ' ms' : '–'), num(p.scans.ok + ' / ' + p.scans.failed),
      el('td', p.last_error ? p.last_error + ' (' + p.last_error_source + ', ' + when(p.last_error_at) + ')' : '', 'wrap warn')]);
    tr.dataset.plugin = p.name || p.file;
    return tr;
  }), 'No plugin in the folder.', 9);
}

// The background check for look-ahead and recursive dependence (docs/backtest.md, "Bias
// checks"): a failed plugin keeps serving, flagged here with the first difference.
function biasCell(check) {
  if (!check) return el('td', '–');
  const cls = { passed: 'pos', failed: 'neg', error: 'warn' }[check.status] || '';
  const text = check.detail ? check.status + ': ' + check.detail : check.status;
  return el('td', text, 'wrap ' + cls);
}

// A closed trade (the live view's `pnl` panel) changes the history and its figures; equity
// gets a point a minute.
const historyPanels = () => Promise.all([refreshStats(), refreshHistory()]);
const pnlPanel = REFRESH.pnl;
REFRESH.pnl = () => Promise.all([pnlPanel(), historyPanels()]);
every(60, historyPanels, never);
every(60, refreshEquity, always);
// A plugin loads, is refused or scans: seen within 30 s.
every(30, refreshStrategies, always);
window.addEventListener('resize', () => {
  const closed = closedChart && closedChart.plot;
  for (const [plot, id] of [[equityPlot, 'equity-chart'], [barsPlot, 'bars-chart'], [closed, 'history-chart']]) {
    if (plot) plot.setSize({ width: Math.max(240, $(id).clientWidth), height: chartHeight() });
  }
});
