// The boss's actions from the page: approve or reject a pending signal, close a trade, close
// all, cancel a pending LIMIT entry, reset today's counters, resume paused entries. Each button
// first says exactly what will happen (symbol, size, prices) and acts only on "yes"; it then
// calls the same API route an agent would, with this tab's token, so the service checks the
// scope again and writes the audit row. The buttons show only for a caller whose scope allows
// every action (admin, from GET /api/auth/me); a read token watches.
'use strict';

const me = { agent: null, scope: 'read', auth: 'off', token_id: null };

async function refreshMe() {
  const { status, body } = await api('/api/auth/me');
  if (status !== 200 || !body) return;
  Object.assign(me, body);
  document.body.classList.toggle('can-act', me.scope === 'admin');
  const who = $('who');
  who.hidden = false;
  who.textContent = (me.agent || 'open access') + ' · ' + me.scope;
  who.title = me.token_id ? 'Signed in with token ' + me.token_id
    : 'This service needs no token: whoever reaches it may act (docs/security.md)';
}

// ---- asking first ----

// The one question open now: its answer goes to `answer`, and only the button that acts says
// yes. Closing the dialog any other way (Cancel, Escape) or asking another question first
// answers no, so one yes can never act twice.
let answer = null;

function answered(yes) {
  const resolve = answer;
  answer = null;
  if ($('confirm').open) $('confirm').close();
  if (resolve) resolve(yes);
}
$('confirm-ok').addEventListener('click', () => answered(true));
$('confirm-cancel').addEventListener('click', () => answered(false));
// Escape. (Not the `close` event: it arrives a task later, when the next question may be open.)
$('confirm').addEventListener('cancel', () => answered(false));

/** Shows the confirmation: `title`, one line per fact, and the button that acts. Resolves to
 * true only when that button was pressed. */
function ask(title, lines, actLabel) {
  answered(false);
  $('confirm-title').textContent = title;
  $('confirm-lines').replaceChildren(...lines.map((line) => el('li', line)));
  $('confirm-who').textContent = 'As ' + (me.agent || 'open access') + ' (' + me.scope + ')'
    + (me.token_id ? ', token ' + me.token_id : '') + '; recorded in the audit log.';
  $('confirm-ok').textContent = actLabel;
  return new Promise((resolve) => {
    answer = resolve;
    $('confirm').showModal();
  });
}

/** POSTs `path` as JSON with the tab's token; shows what the service answered. */
async function act(path, describe) {
  const result = $('action-result');
  let status = 0;
  let body = null;
  try {
    const response = await fetch(path, {
      method: 'POST', cache: 'no-store',
      headers: { ...authHeaders(), 'Content-Type': 'application/json' },
    });
    status = response.status;
    body = await response.json().catch(() => null);
  } catch (err) {
    body = { error: 'unreachable', detail: String(err) };
  }
  const refused = status !== 200 || !body || body.ok === false;
  result.className = 'banner ' + (refused ? 'error' : 'ok');
  result.textContent = refused
    ? 'Not done (' + (status || 'no answer') + '): ' + ((body && (body.detail || body.reason || body.error)) || 'no answer')
    : describe(body);
  result.hidden = false;
  refreshAll();
  return { status, body };
}

function button(label, className, onClick) {
  const b = el('button', label, className);
  b.type = 'button';
  b.addEventListener('click', onClick);
  return b;
}

function actionCell(buttons) {
  const td = el('td', null, 'act');
  td.append(...buttons);
  return td;
}

const pct = (x) => (x === null || x === undefined ? '?' : Number(x).toFixed(2).replace(/\.?0+$/, '') + ' %');

// ---- pending signals ----

function signalActions(s) {
  const approve = button('Approve…', 'approve', () => approveSignal(s));
  approve.dataset.action = 'approve';
  const reject = button('Reject…', '', () => rejectSignal(s));
  reject.dataset.action = 'reject';
  return actionCell([approve, reject]);
}

async function approveSignal(s) {
  const lines = s.direction === 'buy'
    ? ['Buy ' + s.symbol + ' at market now, sized by strategy ' + s.bot + ' ([strategy.' + s.bot + '] size_pct of equity).',
      'Then its stop ' + pct(s.sl_pct) + ' below and its target ' + pct(s.tp_pct) + ' above the fill, placed at once.']
    : ['Sell the whole open ' + s.symbol + ' position at market (its stop and target are cancelled first).'];
  lines.push('Signal ' + s.id + ': ev ' + s.ev.toFixed(1) + ', confidence ' + s.confidence + '/10; '
    + (s.origin ? s.origin.source + ' ' + s.origin.by : 'origin unknown') + '.');
  lines.push('This is your own YES on exactly this signal; a newer signal for ' + s.symbol + ' would need its own.');
  if (!await ask('Approve ' + s.direction + ' ' + s.symbol + '?', lines, 'Approve and execute')) return;
  await act('/api/signal/' + encodeURIComponent(s.symbol) + '/confirm?signal_id=' + encodeURIComponent(s.id),
    (b) => (b.trade ? 'Approved ' + s.symbol + ': executed.' : 'Approved ' + s.symbol + ': ' + (b.reason || 'done') + '.'));
}

async function rejectSignal(s) {
  const lines = ['Signal ' + s.id + ' (' + s.direction + ' ' + s.symbol + ', ' + s.bot + ') is skipped; nothing is placed.'];
  if (!await ask('Reject ' + s.symbol + '?', lines, 'Reject')) return;
  await act('/api/signal/' + encodeURIComponent(s.symbol) + '/reject?signal_id=' + encodeURIComponent(s.id),
    () => 'Rejected the ' + s.symbol + ' signal; nothing was placed.');
}

// ---- open trades ----

function tradeActions(t) {
  const close = button('Close…', 'danger', () => closeTrade(t));
  close.dataset.action = 'close';
  return actionCell([close]);
}

function tradeLine(t) {
  const side = t.direction === 'sell' ? 'Buy back ' : 'Sell ';
  return side + price(t.size) + ' ' + t.symbol + ' at market: entry ' + price(t.entry_px) + ', now '
    + price(t.price) + ', unrealised ' + (t.unrealised_pnl === null ? 'unknown' : money(t.unrealised_pnl)) + '.';
}

async function closeTrade(t) {
  const lines = [tradeLine(t), 'Its stop ' + price(t.sl_px) + ' and target ' + price(t.tp_px) + ' are cancelled first.'];
  if (!await ask('Close ' + t.symbol + '?', lines, 'Close at market')) return;
  await act('/api/close?symbol=' + encodeURIComponent(t.symbol),
    (b) => 'Closed ' + t.symbol + (b.position && b.position.pnl !== null && b.position.pnl !== undefined
      ? ': pnl ' + money(b.position.pnl) : '') + '.');
}

$('act-closeall').addEventListener('click', async () => {
  const trades = openTrades.slice();
  const lines = trades.map(tradeLine);
  lines.push('Every stop and target of these trades is cancelled first.');
  if (!await ask('Close all ' + trades.length + ' open trades?', lines, 'Close all at market')) return;
  await act('/api/closeall', (b) => 'Close all: ' + b.count + ' positions, ' + String(b.status).replace('_', ' ') + '.');
});

// ---- pending LIMIT entries ----

function entryActions(e) {
  const cancel = button('Cancel…', '', () => cancelEntry(e));
  cancel.dataset.action = 'cancel';
  return actionCell([cancel]);
}

async function cancelEntry(e) {
  const lines = [
    'Cancel the LIMIT ' + e.direction + ' of ' + price(e.size) + ' ' + e.symbol + ' at ' + price(e.entry_px) + ' on the exchange.',
    'If part of it filled first, that part becomes an open trade with its stop ' + price(e.sl_px)
      + ' and target ' + price(e.tp_px) + '.',
  ];
  if (!await ask('Cancel the ' + e.symbol + ' entry?', lines, 'Cancel the order')) return;
  await act('/api/pending-entries/cancel?symbol=' + encodeURIComponent(e.symbol),
    (b) => 'The ' + e.symbol + ' entry: ' + String(b.status).replace('_', ' ') + '.');
}

// ---- limits ----

async function resetDaily() {
  const f = footer || {};
  const lines = [
    'Entries today ' + f.trades_today + ' of ' + f.max_trades_per_day + ' and consecutive losses '
      + f.consecutive_losses + ' go back to 0: new entries are allowed again today.',
    'Trades, pnl and the history stay as they are.',
  ];
  if (!await ask('Reset today\u2019s counters?', lines, 'Reset')) return;
  await act('/api/reset-daily', (b) => 'Counters reset (entries today ' + b.trades_today_before + ' \u2192 '
    + b.trades_today_after + ').');
}
$('act-reset').addEventListener('click', resetDaily);
$('act-reset-blocked').addEventListener('click', resetDaily);

$('act-pause').addEventListener('click', async () => {
  const lines = [
    'No new entry until you resume: confirms, trades, LIMIT entries and scans are refused, and '
      + 'signals are not sent for approval.',
    'The ' + openTrades.length + ' open trades keep their stops, targets and trailing; closing still works.',
  ];
  if (!await ask('Pause new entries?', lines, 'Pause entries')) return;
  await act('/api/protection/pause', (b) => (b.newly_paused ? 'Entries paused.' : 'Entries were paused already.'));
});

$('act-resume').addEventListener('click', async () => {
  const lines = [
    (footer && footer.entries_blocked) || 'New entries are paused.',
    'New entries are allowed again, and the drawdown\u2019s high-water mark restarts at the equity of now.',
  ];
  if (!await ask('Resume entries?', lines, 'Resume entries')) return;
  await act('/api/protection/resume', () => 'Entries resumed.');
});

refreshMe().catch(() => {});
