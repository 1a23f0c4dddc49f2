// The dashboard: reads the service's JSON API (nothing else) and renders each panel.
// It follows the service's live view (server-sent events, GET /api/dashboard/events): a panel is
// re-read as soon as the service says it changed, and open trades' prices arrive as they trade.
// While that stream is down, the page polls at the spec's intervals (agents and log 3 s, orders
// and footer 30 s; the others so that a countdown or a price never looks stale).
'use strict';

const SIGNAL_WINDOW_S = 300; // a signal can be confirmed for 5 minutes

const $ = (id) => document.getElementById(id);

// ---- fetching and the connection badge ----

let lastContact = null;
// The service's clock minus this browser's, from the last state poll: the TTL of LIMIT entries
// (an absolute time) counts down on the service's time, so a phone whose clock is off still
// shows the right time left. Signals need no offset: the service gives their age.
let serverOffsetMs = 0;
const serverNow = () => Date.now() + serverOffsetMs;

// The API token of this tab (sessionStorage: gone when the tab closes, never sent elsewhere).
// A service that needs tokens answers 401 until one is given; the page then asks for it.
const TOKEN_KEY = 'spotbot-token';
const token = () => sessionStorage.getItem(TOKEN_KEY);
const authHeaders = () => (token() ? { Authorization: 'Bearer ' + token() } : {});

function askForToken() {
  $('signin').hidden = false;
  $('signout').hidden = !token();
}

$('signin').addEventListener('submit', (e) => {
  e.preventDefault();
  const value = $('signin-token').value.trim();
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  location.reload();
});
$('signout').addEventListener('click', () => {
  sessionStorage.removeItem(TOKEN_KEY);
  location.reload();
});
$('signout').hidden = !token();

/** GET a JSON route; resolves to {status, body}; rejects only when the service is unreachable. */
async function api(path) {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), 8000);
  try {
    const response = await fetch(path, {
      signal: controller.signal, cache: 'no-store', headers: authHeaders(),
    });
    const body = await response.json().catch(() => null);
    markReachable();
    if (response.status === 401) askForToken();
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

/** Runs `task` now and every `seconds`; a failed run is shown by the badge, never thrown.
 * `whileLive` says whether it also runs while the live view is connected. */
function every(seconds, task, whileLive) {
  const run = () => task().catch(() => {});
  run();
  setInterval(() => { if (whileLive() || !live.connected) run(); }, seconds * 1000);
}
const never = () => false;
const always = () => true;

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

/** Fills a table's body; every cell names its column (`data-label`), which the phone layout
 * shows next to the figure when a row becomes a card. */
function fillTable(id, rows, emptyText, columns) {
  const table = $(id);
  const body = table.tBodies[0];
  const labels = [...table.tHead.rows[0].cells].map((th) => th.textContent);
  for (const tr of rows) [...tr.cells].forEach((td, i) => { td.dataset.label = labels[i] || ''; });
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
    // Where the checklist came from: a plugin's scan (scored by the service) or an agent's own.
    const source = s.origin ? s.origin.source + ' · ' + s.origin.by : '';
    const tr = row([s.symbol, s.direction, s.bot, el('td', source, s.origin && s.origin.source === 'agent' ? 'warn' : ''),
      num(s.ev.toFixed(1)), num(s.confidence),
      num(duration(age).replace('expired', '0s')), num(duration(left), left < 60 ? 'warn' : ''),
      signalActions(s)]);
    tr.dataset.symbol = s.symbol;
    return tr;
  }), 'No signal waiting for the boss.', 9);
}

// ---- open trades and their charts (on change; 10 s while prices are polled) ----

let openTrades = [];
const tradeCharts = new Map(); // symbol -> {node, view: TradeChart}

async function refreshTrades() {
  const { status, body } = await api('/api/dashboard/trades');
  if (status !== 200 || !body) return;
  openTrades = body.trades;
  renderTrades();
}

function renderTrades() {
  $('trades-count').textContent = openTrades.length ? String(openTrades.length) : '';
  fillTable('trades', openTrades.map((t) => {
    const trailing = !t.trailing.enabled ? 'off'
      : (t.trailing.active ? 'following' : 'armed at +' + t.trailing.trigger_pct + '%')
        + (t.trailing.stops.length > 1 ? ' · ' + (t.trailing.stops.length - 1) + ' moves' : '');
    const protection = el('td', t.protection, t.protection === 'protected' ? 'pos' : 'neg');
    const pnl = t.unrealised_pnl === null ? '–'
      : money(t.unrealised_pnl) + ' (' + money(t.unrealised_pct) + '%)';
    const tr = row([t.symbol, t.bot, num(price(t.size)), num(price(t.entry_px)), num(price(t.price)),
      num(price(t.sl_px)), num(price(t.tp_px)), trailing, num(pnl, signClass(t.unrealised_pnl)), protection,
      tradeActions(t)]);
    tr.dataset.symbol = t.symbol;
    return tr;
  }), 'No open trade.', 11);
  $('act-closeall').hidden = openTrades.length === 0;
  const open = new Set(openTrades.map((t) => t.symbol));
  for (const [symbol, chart] of tradeCharts) {
    if (!open.has(symbol)) {
      chart.view.plot.destroy();
      chart.node.remove();
      tradeCharts.delete(symbol);
    }
  }
  for (const t of openTrades) drawTradeChart(t);
  renderUnrealised();
}

/** Open trades at their newest streamed prices: the row, the chart's last candle, the total. */
function applyPrices(prices) {
  for (const p of prices) {
    const t = openTrades.find((x) => x.symbol === p.symbol);
    if (!t) continue;
    t.price = p.price;
    t.unrealised_pnl = p.unrealised_pnl;
    t.unrealised_pct = p.unrealised_pct;
    const last = t.candles[t.candles.length - 1];
    if (last) {
      last.close = p.price;
      last.high = Math.max(last.high, p.price);
      last.low = Math.min(last.low, p.price);
    }
  }
  renderTrades();
}

/** An open trade as its chart shows it: its candles, stops and levels, the entry marked. */
function chartModel(t) {
  return {
    candles: t.candles, stops: t.trailing.stops, entry_px: t.entry_px, sl_px: t.sl_px, tp_px: t.tp_px,
    marks: [{ time: Date.parse(t.opened_at), price: t.entry_px, kind: 'entry' }],
  };
}

function drawTradeChart(t) {
  let chart = tradeCharts.get(t.symbol);
  if (!chart) {
    const node = el('div', null, 'chart-card');
    node.dataset.symbol = t.symbol;
    const target = el('div', null, 'chart');
    const title = el('h3', t.symbol + ' · 15m candles, last 24 h');
    title.append(chartKey());
    node.append(title, target);
    $('trade-charts').append(node);
    chart = { node, view: new TradeChart(target, chartModel(t)) };
    tradeCharts.set(t.symbol, chart);
  } else {
    chart.view.update(chartModel(t));
  }
  chart.node.classList.toggle('no-data', t.candles.length === 0);
}

// ---- the account: equity, balance, drawdown (on change, at most every 5 s; 30 s) ----

let summaryReadAt = 0;
let summaryTimer = null;

/** Reads the account now, or once 5 s after the last read (a burst of changes reads once). */
function refreshSummarySoon() {
  const wait = summaryReadAt + 5000 - Date.now();
  if (wait <= 0) return refreshSummary();
  if (!summaryTimer) {
    summaryTimer = setTimeout(() => { summaryTimer = null; refreshSummary().catch(() => {}); }, wait);
  }
  return Promise.resolve();
}

async function refreshSummary() {
  summaryReadAt = Date.now();
  const { status, body } = await api('/api/protection');
  if (status !== 200 || !body) return;
  const amount = (x) => (x === null || x === undefined ? '–' : Number(x).toFixed(2));
  $('s-currency').textContent = body.currency;
  $('s-equity').textContent = amount(body.equity);
  $('s-balance').textContent = amount(body.quote_balance);
  $('s-positions').textContent = body.positions_value ? '+ ' + amount(body.positions_value) + ' in positions' : '';
  const dd = body.drawdown_pct;
  const limit = body.max_drawdown_pct;
  $('s-drawdown').textContent = dd === null ? '–' : dd.toFixed(2) + '%';
  $('s-drawdown').className = body.paused ? 'neg' : '';
  $('s-drawdown-limit').textContent = body.paused ? 'entries paused (limit ' + limit + '%)'
    : 'of ' + limit + '% pause' + (body.ok ? '' : ' · ' + 'not measurable now');
  const bar = $('s-drawdown-bar');
  const share = dd === null || !limit ? 0 : Math.min(1, dd / limit);
  bar.style.width = (share * 100).toFixed(1) + '%';
  bar.className = body.paused || share >= 1 ? 'neg' : share >= 0.5 ? 'warn' : '';
}

function renderUnrealised() {
  const known = openTrades.filter((t) => t.unrealised_pnl !== null);
  const total = known.reduce((sum, t) => sum + t.unrealised_pnl, 0);
  $('s-unrealised').textContent = openTrades.length === 0 ? '0.00' : known.length ? money(total) : '–';
  $('s-unrealised').className = signClass(total);
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
    if (unavailable !== undefined) fillTable('entries', [], unavailable || 'Not readable now.', 7);
    return;
  }
  const now = serverNow();
  $('entries-count').textContent = pendingEntries.length ? String(pendingEntries.length) : '';
  fillTable('entries', pendingEntries.map((e) => {
    const left = (Date.parse(e.expires_at) - now) / 1000;
    const tr = row([e.symbol, num(price(e.entry_px)), num(price(e.sl_px)), num(price(e.tp_px)),
      num(price(e.size)), num(duration(left), left < 3600 ? 'warn' : ''), entryActions(e)]);
    tr.dataset.symbol = e.symbol;
    return tr;
  }), 'No LIMIT entry waiting to fill.', 7);
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

// ---- the audit log (on order changes; 30 s) ----

async function refreshAudit() {
  const { status, body } = await api('/api/audit?limit=20');
  if (status !== 200 || !body) return;
  fillTable('audit', body.rows.map((r) => {
    const orders = r.orders.map((o) => o.kind + ' ' + (o.request.side || '') + ' '
      + (o.request.quantity || o.request.quote_quantity || '') + (o.exchange_id ? ' #' + o.exchange_id : '')).join(' · ');
    return row([time(r.at), r.agent, el('td', r.route, 'wrap'), r.symbol || '', el('td', r.approval || '', 'wrap'),
      el('td', r.outcome, r.outcome === 'ok' ? 'pos' : 'warn'), el('td', orders, 'wrap')]);
  }), 'No money or operator action yet.', 7);
}

// ---- footer, license and exchange (30 s) ----

let footer = null; // the last footer read: the reset's confirmation states its counts

async function refreshFooter() {
  const { status, body } = await api('/api/dashboard/footer');
  if (status !== 200 || !body) return;
  footer = body;
  $('exchange').textContent = body.exchange + ' · ' + body.mode;
  $('f-orders').textContent = body.orders_today;
  $('f-trades').textContent = body.trades_today + ' / ' + body.max_trades_per_day;
  $('f-winloss-today').textContent = body.wins_today + ' / ' + body.losses_today;
  $('f-winloss').textContent = body.wins + ' / ' + body.losses;
  $('f-losses').textContent = body.consecutive_losses
    + (body.max_consecutive_losses ? ' / ' + body.max_consecutive_losses : '');
  $('f-cap').textContent = body.trading_cap > 0 ? body.trading_cap + ' ' + body.currency : 'no cap';
  for (const id of ['f-pnl', 's-pnl-today']) {
    $(id).textContent = money(body.pnl_today) + (id === 'f-pnl' ? ' ' + body.currency : '');
    $(id).className = signClass(body.pnl_today);
  }
  $('blocked').hidden = !body.entries_blocked;
  $('blocked-detail').textContent = body.entries_blocked || '';
  // The way out of each block, next to it: the daily limit resets, the drawdown pause resumes.
  const code = (body.entries_blocked || '').split(':')[0];
  $('act-reset-blocked').hidden = code !== 'daily_limit_reached';
  const paused = code === 'drawdown_paused' || code === 'entries_paused';
  $('act-resume').hidden = !paused;
  $('act-pause').hidden = paused;
  $('act-reset').hidden = false;
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
    // The service's reason (a DNS or HTTP error) is for the operator: kept in the tooltip.
    const note = el('li', 'News unavailable right now: the news sources could not be reached. '
      + 'The page tries again in 5 minutes.', 'muted');
    if (body && body.error) note.title = body.error;
    list.replaceChildren(note);
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

// ---- the live view (server-sent events) ----

const live = { connected: false, pricesStreamed: false };

/** What to re-read when the service says a panel changed. */
const REFRESH = {
  trades: refreshTrades,
  summary: refreshSummarySoon,
  orders: () => Promise.all([refreshOrders(), refreshAudit()]),
  entries: refreshEntries,
  signals: refreshSignals,
  footer: refreshFooter,
  pnl: refreshPnl,
  activity: refreshState,
  license: refreshLicense,
};

function refreshAll() {
  for (const refresh of Object.values(REFRESH)) refresh().catch(() => {});
}

/** The header's note on how fills and prices reach the service (protection's path). */
function showPath(path) {
  const badge = $('path');
  if (!path) {
    badge.dataset.state = 'down';
    badge.textContent = 'live view down · polling';
    return;
  }
  const both = path.fills === 'stream' && path.prices === 'stream';
  badge.dataset.state = both ? 'live' : 'polled';
  badge.textContent = both ? 'fills & prices streamed'
    : 'fills ' + (path.fills === 'stream' ? 'streamed' : 'polled')
      + ' · prices ' + (path.prices === 'stream' ? 'streamed' : 'polled');
  badge.title = path.streams
    ? 'Exchange streams: order updates ' + path.streams.account + ', prices ' + path.streams.prices
      + ', ' + path.streams.reconnects + ' reconnects'
    : 'The exchange\u2019s streams are not followed: the service polls for fills and prices.';
  live.pricesStreamed = path.prices === 'stream';
}

/** The live view with the tab's token: EventSource cannot send a header, so the stream is read
 * with fetch and parsed here (events of `event:` and `data:` lines), reconnecting after 3 s. */
function followWithToken(source) {
  const handlers = {};
  source.addEventListener = (name, handler) => { handlers[name] = handler; };
  const fire = (name, data) => { if (handlers[name]) handlers[name]({ data }); };
  const connect = async () => {
    try {
      const response = await fetch('/api/dashboard/events', { headers: authHeaders(), cache: 'no-store' });
      if (response.status === 401) askForToken();
      if (!response.ok || !response.body) throw new Error('status ' + response.status);
      fire('open');
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = '';
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        buffer += value;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          let name = 'message';
          const data = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event:')) name = line.slice(6).trim();
            else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
          }
          if (data.length) fire(name, data.join('\n'));
        }
      }
    } catch (err) {
      // shown by the badge below
    }
    fire('error');
    setTimeout(connect, 3000);
  };
  setTimeout(connect, 0);
  return source;
}

function follow() {
  if (!token() && typeof EventSource === 'undefined') return;
  const source = token() ? followWithToken({}) : new EventSource('/api/dashboard/events');
  source.addEventListener('open', () => {
    // Whatever changed while the stream was down.
    const wasDown = !live.connected;
    live.connected = true;
    markReachable();
    if (wasDown) refreshAll();
  });
  source.addEventListener('path', (e) => showPath(JSON.parse(e.data)));
  source.addEventListener('changed', (e) => {
    for (const panel of JSON.parse(e.data).panels) {
      if (REFRESH[panel]) REFRESH[panel]().catch(() => {});
    }
  });
  source.addEventListener('prices', (e) => {
    markReachable();
    applyPrices(JSON.parse(e.data).trades);
  });
  // The browser reconnects on its own (after the 3 s the service asks for); meanwhile the
  // page polls, which also notices an unreachable service.
  source.addEventListener('error', () => {
    live.connected = false;
    showPath(null);
  });
}

// ---- start ----

// Every panel is read at once, so the first paint shows what the first reads return without
// waiting for the live view (or for one slow read). The service's clock offset comes with the
// state read; countdowns are drawn again every second, so they take it up as soon as it is in.
every(3, refreshState, never);
every(3, refreshSignals, never);
// Prices come with the live view only while the exchange's price stream is followed.
every(10, refreshTrades, () => !live.pricesStreamed);
every(30, refreshEntries, never);
every(30, refreshOrders, never);
every(30, refreshAudit, always);
every(30, refreshFooter, never);
every(30, refreshPnl, never);
every(30, refreshLicense, never);
every(30, refreshSummary, always);
every(300, refreshNews, always);
follow();
// Belt and braces: a change the live view did not announce (a signal that expired, a
// figure computed on read) shows within a minute.
setInterval(() => { if (live.connected) refreshAll(); }, 60000);
setInterval(() => { renderSignals(); renderEntries(); }, 1000);
window.addEventListener('resize', () => {
  for (const { view, node } of tradeCharts.values()) {
    view.plot.setSize({ width: Math.max(240, node.clientWidth), height: chartHeight() });
  }
  if (pnlPlot) pnlPlot.setSize({ width: Math.max(240, $('pnl-chart').clientWidth), height: chartHeight() });
});
