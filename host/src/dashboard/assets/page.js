// The dashboard: polls the service's JSON API (nothing else) and renders each panel.
// Refresh intervals follow the spec where it gives one (agents and log 3 s, orders and
// footer 30 s); the others are chosen so that a countdown or a price never looks stale.
'use strict';

const SIGNAL_WINDOW_S = 300; // a signal can be confirmed for 5 minutes
const COLORS = { price: '#58a6ff', entry: '#8b949e', sl: '#f85149', tp: '#3fb950', pnl: '#d29922' };

const $ = (id) => document.getElementById(id);

// ---- fetching and the connection badge ----

let lastContact = null;
// The service's clock minus this browser's, from the last state poll: the TTL of LIMIT entries
// (an absolute time) counts down on the service's time, so a phone whose clock is off still
// shows the right time left. Signals need no offset: the service gives their age.
let serverOffsetMs = 0;
const serverNow = () => Date.now() + serverOffsetMs;

/** GET a JSON route; resolves to {status, body}; rejects only when the service is unreachable. */
async function api(path) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 8000);
  try {
    const response = await fetch(path, { signal: controller.signal, cache: 'no-store' });
    const body = await response.json().catch(() => null);
    markReachable();
    return { status: response.status, body };
  } catch (err) {
    markUnreachable();
    throw err;
  } finally {
    clearTimeout(timer);
  }
}

function markReachable() {
  lastContact = new Date();
  $('unreachable').hidden = true;
  const badge = $('connection');
  badge.dataset.state = 'live';
  badge.textContent = 'live · ' + lastContact.toLocaleTimeString();
}

function markUnreachable() {
  const badge = $('connection');
  badge.dataset.state = 'down';
  badge.textContent = 'unreachable';
  $('unreachable').hidden = false;
  $('unreachable-detail').textContent = lastContact
    ? 'Last contact ' + lastContact.toLocaleTimeString() + '; retrying every 3 s. The figures below are from then.'
    : 'No answer yet; retrying every 3 s.';
}

/** Runs `task` now and every `seconds`; a failed run is shown by the badge, never thrown. */
function every(seconds, task) {
  const run = () => task().catch(() => {});
  run();
  setInterval(run, seconds * 1000);
}

// ---- small rendering helpers ----

function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = text;
  if (className) node.className = className;
  return node;
}

function row(cells) {
  const tr = document.createElement('tr');
  for (const c of cells) tr.append(c instanceof Node ? c : el('td', c));
  return tr;
}

function num(value, className) {
  return el('td', value, 'num' + (className ? ' ' + className : ''));
}

function fillTable(id, rows, emptyText, columns) {
  const body = $(id).tBodies[0];
  if (rows.length === 0) {
    const td = el('td', emptyText);
    td.colSpan = columns;
    const tr = row([td]);
    tr.className = 'empty';
    body.replaceChildren(tr);
  } else {
    body.replaceChildren(...rows);
  }
}

function price(x) {
  if (x === null || x === undefined) return '–';
  const abs = Math.abs(x);
  const digits = abs >= 1000 ? 2 : abs >= 1 ? 4 : 8;
  return Number(x).toFixed(digits).replace(/\.?0+$/, '');
}

/** Rounds to cents first, so that -0.001 reads 0.00 and carries no colour. */
function cents(x) {
  const r = Math.round(Number(x) * 100) / 100;
  return r === 0 ? 0 : r;
}

function money(x) {
  if (x === null || x === undefined) return '–';
  const r = cents(x);
  return (r > 0 ? '+' : '') + r.toFixed(2);
}

function signClass(x) {
  const r = x === null || x === undefined ? 0 : cents(x);
  return r > 0 ? 'pos' : r < 0 ? 'neg' : '';
}

function duration(seconds) {
  if (seconds <= 0) return 'expired';
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = Math.floor(seconds % 60);
  return h > 0 ? h + 'h ' + m + 'm' : m + 'm ' + String(s).padStart(2, '0') + 's';
}

function time(iso) {
  const d = new Date(iso);
  return isNaN(d) ? iso : d.toLocaleTimeString();
}

// ---- agents and the activity log (3 s) ----

async function refreshState() {
  const { body } = await api('/api/state');
  if (!body) return;
  const ts = Date.parse(body.ts);
  if (!isNaN(ts)) serverOffsetMs = ts - Date.now();
  $('agents').replaceChildren(...Object.entries(body.agents).map(([name, card]) => {
    const div = el('div', null, 'card ' + card.status);
    div.dataset.agent = name;
    div.append(el('h3', name), el('div', card.status, 'status'),
      el('div', card.action, 'muted action'), el('div', 'updated ' + time(card.updated), 'muted'));
    return div;
  }));
  fillTable('log', body.log.map((e) => row([time(e.time), e.agent, el('td', e.action, 'wrap'), e.status])),
    'No activity yet.', 4);
}

// ---- pending signals (3 s, countdown every second) ----

let pendingSignals = [];
let signalsFetchedAt = 0;

async function refreshSignals() {
  const { status, body } = await api('/api/signal/list');
  if (status !== 200 || !body) return;
  pendingSignals = body.signals.filter((s) => s.status === 'pending');
  signalsFetchedAt = Date.now();
  renderSignals();
}

function renderSignals() {
  const sinceFetch = (Date.now() - signalsFetchedAt) / 1000;
  $('signals-count').textContent = pendingSignals.length ? String(pendingSignals.length) : '';
  fillTable('signals', pendingSignals.map((s) => {
    // The service's age at the fetch, plus the time since: no clock comparison at all.
    const age = s.age_seconds + sinceFetch;
    const left = SIGNAL_WINDOW_S - age;
    return row([s.symbol, s.direction, s.bot, num(s.ev.toFixed(1)), num(s.confidence),
      num(duration(age).replace('expired', '0s')), num(duration(left), left < 60 ? 'warn' : '')]);
  }), 'No signal waiting for the boss.', 7);
}

// ---- open trades and their charts (10 s) ----

const tradeCharts = new Map(); // symbol -> {plot, node}

async function refreshTrades() {
  const { status, body } = await api('/api/dashboard/trades');
  if (status !== 200 || !body) return;
  $('trades-count').textContent = body.count ? String(body.count) : '';
  fillTable('trades', body.trades.map((t) => {
    const trailing = !t.trailing.enabled ? 'off'
      : (t.trailing.active ? 'following' : 'armed at +' + t.trailing.trigger_pct + '%')
        + (t.trailing.stops.length > 1 ? ' · ' + (t.trailing.stops.length - 1) + ' moves' : '');
    const protection = el('td', t.protection, t.protection === 'protected' ? 'pos' : 'neg');
    const pnl = t.unrealised_pnl === null ? '–'
      : money(t.unrealised_pnl) + ' (' + money(t.unrealised_pct) + '%)';
    return row([t.symbol, t.bot, num(price(t.size)), num(price(t.entry_px)), num(price(t.price)),
      num(price(t.sl_px)), num(price(t.tp_px)), trailing, num(pnl, signClass(t.unrealised_pnl)), protection]);
  }), 'No open trade.', 10);
  const open = new Set(body.trades.map((t) => t.symbol));
  for (const [symbol, chart] of tradeCharts) {
    if (!open.has(symbol)) {
      chart.plot.destroy();
      chart.node.remove();
      tradeCharts.delete(symbol);
    }
  }
  for (const t of body.trades) drawTradeChart(t);
}

/** The stop in force at each candle: the last stop placed at or before it. */
function stopLine(times, stops, fallback) {
  let i = 0;
  let current = stops.length ? stops[0].price : fallback;
  return times.map((x) => {
    while (i < stops.length && stops[i].time / 1000 <= x) current = stops[i++].price;
    return current;
  });
}

function drawTradeChart(t) {
  const times = t.candles.map((c) => c.time / 1000);
  const data = [
    times,
    t.candles.map((c) => c.price),
    times.map(() => t.entry_px),
    stopLine(times, t.trailing.stops, t.sl_px),
    times.map(() => t.tp_px),
  ];
  let chart = tradeCharts.get(t.symbol);
  if (!chart) {
    const node = el('div', null, 'chart-card');
    node.dataset.symbol = t.symbol;
    const target = el('div', null, 'chart');
    node.append(el('h3', t.symbol + ' · 15m, last 24 h'), target);
    $('trade-charts').append(node);
    const plot = new uPlot(chartOptions(target, [
      { label: 'Price', stroke: COLORS.price, width: 1.5 },
      { label: 'Entry', stroke: COLORS.entry, dash: [4, 4] },
      { label: 'SL', stroke: COLORS.sl, paths: uPlot.paths.stepped({ align: 1 }) },
      { label: 'TP', stroke: COLORS.tp, dash: [4, 4] },
    ]), data, target);
    chart = { plot, node };
    tradeCharts.set(t.symbol, chart);
  }
  plotData(chart.plot, data);
  chart.node.classList.toggle('no-data', times.length === 0);
}

/** Sets `data` and widens the x axis to at least an hour around it: uPlot's own range for
 * one point (or points a few seconds apart) spans years. */
function plotData(plot, data) {
  plot.setData(data);
  const xs = data[0];
  if (xs.length === 0 || xs[xs.length - 1] - xs[0] >= 3600) return;
  const mid = (xs[0] + xs[xs.length - 1]) / 2;
  plot.setScale('x', { min: mid - 1800, max: mid + 1800 });
}

function chartOptions(target, series) {
  const axis = { stroke: '#8b949e', grid: { stroke: '#222a33' }, ticks: { stroke: '#222a33' } };
  return {
    width: Math.max(260, target.clientWidth || 320),
    height: 200,
    scales: { x: { time: true } },
    series: [{}, ...series],
    axes: [axis, { ...axis, size: 70 }],
    legend: { live: false },
  };
}

// ---- cumulative PnL (30 s) ----

let pnlPlot = null;

async function refreshPnl() {
  const { status, body } = await api('/api/dashboard/pnl');
  if (status !== 200 || !body) return;
  $('pnl-total').textContent = body.points.length
    ? money(body.total) + ' ' + body.currency + ' over ' + body.points.length + ' closed trades'
    : 'no closed trade yet';
  const data = [body.points.map((p) => p.time / 1000), body.points.map((p) => p.cumulative)];
  if (!pnlPlot) {
    const target = $('pnl-chart');
    pnlPlot = new uPlot(chartOptions(target, [
      { label: 'Cumulative PnL', stroke: COLORS.pnl, width: 1.5, points: { show: true, size: 4 } },
    ]), data, target);
  }
  plotData(pnlPlot, data);
}

// ---- pending LIMIT entries (30 s, countdown every second) ----

let pendingEntries = null; // null: not readable (license)

async function refreshEntries() {
  const { status, body } = await api('/api/pending-entries');
  pendingEntries = status === 200 && body ? body.pending : null;
  renderEntries(status === 503 && body ? body.detail : null);
}

function renderEntries(unavailable) {
  if (pendingEntries === null) {
    $('entries-count').textContent = '';
    if (unavailable !== undefined) fillTable('entries', [], unavailable || 'Not readable now.', 6);
    return;
  }
  const now = serverNow();
  $('entries-count').textContent = pendingEntries.length ? String(pendingEntries.length) : '';
  fillTable('entries', pendingEntries.map((e) => {
    const left = (Date.parse(e.expires_at) - now) / 1000;
    return row([e.symbol, num(price(e.entry_px)), num(price(e.sl_px)), num(price(e.tp_px)),
      num(price(e.size)), num(duration(left), left < 3600 ? 'warn' : '')]);
  }), 'No LIMIT entry waiting to fill.', 6);
}

// ---- recent orders (30 s) ----

function outcomeText(o) {
  switch (o.state) {
    case 'placed': return o.status.toLowerCase();
    case 'rejected': return 'rejected: ' + o.error;
    case 'unknown': return 'unknown: ' + o.detail;
    default: return o.state;
  }
}

async function refreshOrders() {
  const { status, body } = await api('/api/orders?limit=20');
  if (status !== 200 || !body) return;
  fillTable('orders', body.orders.map((o) => {
    const r = o.request || {};
    const prices = [['tp', r.take_profit], ['stop', r.stop_price], ['limit', r.price]]
      .filter(([, v]) => v !== undefined && v !== null).map(([k, v]) => k + ' ' + v).join(' · ');
    const state = el('td', outcomeText(o.outcome), 'wrap ' + (o.outcome.state === 'placed' ? '' : 'warn'));
    return row([time(o.created_at), o.symbol, o.kind, r.side || '', num(r.quantity || r.quote_quantity || ''),
      state, el('td', prices || (r.type || ''), 'wrap')]);
  }), 'No order sent yet.', 7);
}

// ---- footer, license and exchange (30 s) ----

async function refreshFooter() {
  const { status, body } = await api('/api/dashboard/footer');
  if (status !== 200 || !body) return;
  $('exchange').textContent = body.exchange + ' · ' + body.mode;
  $('f-orders').textContent = body.orders_today;
  $('f-trades').textContent = body.trades_today + ' / ' + body.max_trades_per_day;
  $('f-winloss-today').textContent = body.wins_today + ' / ' + body.losses_today;
  $('f-winloss').textContent = body.wins + ' / ' + body.losses;
  $('f-losses').textContent = body.consecutive_losses
    + (body.max_consecutive_losses ? ' / ' + body.max_consecutive_losses : '');
  $('f-cap').textContent = body.trading_cap > 0 ? body.trading_cap + ' ' + body.currency : 'no cap';
  $('f-pnl').textContent = money(body.pnl_today) + ' ' + body.currency;
  $('f-pnl').className = signClass(body.pnl_today);
  $('blocked').hidden = !body.entries_blocked;
  $('blocked-detail').textContent = body.entries_blocked || '';
}

async function refreshLicense() {
  const { body } = await api('/api/license/status');
  const active = body && body.status === 'active';
  $('unlicensed').hidden = active;
  $('unlicensed-detail').textContent = body && body.message ? body.message : '';
}

// ---- news (5 min; the service caches 10 min) ----

async function refreshNews() {
  const { body } = await api('/api/news');
  const list = $('news');
  if (!body || !body.ok) {
    $('news-source').textContent = '';
    list.replaceChildren(el('li', body && body.error ? 'No news: ' + body.error : 'No news.', 'muted'));
    return;
  }
  $('news-source').textContent = body.source || (body.cached ? 'cached' : '');
  list.replaceChildren(...body.data.slice(0, 12).map((item) => {
    const li = el('li');
    const a = el('a', item.title);
    a.href = item.url;
    a.target = '_blank';
    a.rel = 'noopener noreferrer';
    li.append(a, el('span', ' · ' + item.source, 'muted'));
    return li;
  }));
}

// ---- start ----

// The first state poll sets the service's clock offset before any countdown is drawn.
refreshState().catch(() => {}).finally(() => {
  every(3, refreshState);
  every(3, refreshSignals);
  every(10, refreshTrades);
  every(30, refreshEntries);
  every(30, refreshOrders);
  every(30, refreshFooter);
  every(30, refreshPnl);
  every(30, refreshLicense);
  every(300, refreshNews);
  setInterval(() => { renderSignals(); renderEntries(); }, 1000);
});
window.addEventListener('resize', () => {
  for (const { plot, node } of tradeCharts.values()) {
    plot.setSize({ width: Math.max(260, node.clientWidth), height: 200 });
  }
  if (pnlPlot) pnlPlot.setSize({ width: Math.max(260, $('pnl-chart').clientWidth), height: 200 });
});
