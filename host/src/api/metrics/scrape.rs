//! Gauges read at scrape time from what the service already keeps (the store, the signals in
//! memory, the license, the exchange client's request budget). Nothing here calls the
//! exchange: a scrape must not spend request weight. It lives with the route because it reads
//! the whole service; the recorder (`crate::metrics`) stays below every area.

use metrics::Label;

use crate::dashboard::panels::Footer;
use crate::execution::trade::ProtectionState;
use crate::metrics::Metrics;
use crate::signals::SignalStatus;
use crate::state::AppState;
use crate::store::StoreError;

const OPEN_TRADES: &str = "spotbot_open_trades";
const TRADES_TODAY: &str = "spotbot_trades_today";
const CONSECUTIVE_LOSSES: &str = "spotbot_consecutive_losses";
const PNL_TODAY: &str = "spotbot_realised_pnl_today";
const DRAWDOWN_PAUSED: &str = "spotbot_drawdown_paused";
const LICENSE_ACTIVE: &str = "spotbot_license_active";
const GRACE_LEFT: &str = "spotbot_license_grace_remaining_seconds";
const SIGNALS: &str = "spotbot_signals";
const WEIGHT: &str = "spotbot_exchange_request_weight";
const REFUSED_READS: &str = "spotbot_exchange_refused_reads_total";
const BACKGROUND_WAITS: &str = "spotbot_exchange_background_waits_total";
const EVENT_STREAMS: &str = "spotbot_dashboard_event_streams";
const CANDLES: &str = "spotbot_candle_cache_candles";
const CANDLE_SERIES: &str = "spotbot_candle_cache_series";

/// The protection states an open trade can be in, each always exposed (zero when none), so
/// an alert on `unprotected > 0` has a series to read.
const PROTECTION: [&str; 3] = ["protected", "pending", "unprotected"];

/// Every signal status, each always exposed (zero when none).
const SIGNAL_STATUSES: [SignalStatus; 4] =
    [SignalStatus::Pending, SignalStatus::Confirmed, SignalStatus::Skipped, SignalStatus::Expired];

fn describe(metrics: &Metrics) {
    let gauges = [
        (OPEN_TRADES, "Open trades by protection state (protected, pending, unprotected)"),
        (TRADES_TODAY, "Entries today in the configured time zone (the daily limit's counter)"),
        (CONSECUTIVE_LOSSES, "Losing closes in a row today"),
        (PNL_TODAY, "Net pnl of the trades closed today, in the quote asset"),
        (DRAWDOWN_PAUSED, "1 while the drawdown pause blocks new entries"),
        (LICENSE_ACTIVE, "1 while the license is active (licensed routes answer)"),
        (
            GRACE_LEFT,
            "Seconds until the active license's offline grace ends unless a validation \
             succeeds; 0 without an active license",
        ),
        (SIGNALS, "Signals kept in memory, by status (pending, confirmed, skipped, expired)"),
        (EVENT_STREAMS, "Dashboard event streams open (GET /api/dashboard/events; at most 32)"),
        (CANDLES, "Candles held by the candle cache (at most 1000 a series)"),
        (CANDLE_SERIES, "Series (symbol and timeframe) held by the candle cache (at most 512)"),
        (
            WEIGHT,
            "Exchange request weight per minute: used, limit, money_limit (the ceiling of \
             orders and protection), read_limit (agent reads' share), background_limit (the \
             part of it the scheduled scans may use before they wait for the next minute)",
        ),
    ];
    for (name, help) in gauges {
        metrics.describe_gauge(name, help);
    }
    metrics.describe_counter(
        REFUSED_READS,
        "Agent reads refused with 429 because the read share of the budget was spent",
    );
    metrics.describe_counter(
        BACKGROUND_WAITS,
        "Reads of scheduled scans that waited for the next minute (the scan paced, not failed)",
    );
}

/// Sets every scrape-time gauge (and its description) from `state`.
pub(super) fn read(metrics: &Metrics, state: &AppState) -> Result<(), StoreError> {
    describe(metrics);
    let trades = state.execution.book().open_trades()?;
    for name in PROTECTION {
        let count =
            trades.iter().filter(|t| protection_name(&t.protection.state()) == name).count();
        let label = vec![Label::from_static_parts("protection", name)];
        metrics.gauge(OPEN_TRADES, label).set(count as f64);
    }
    let footer = Footer::read(&state.execution, &state.config)?;
    metrics.gauge(TRADES_TODAY, vec![]).set(footer.trades_today as f64);
    metrics.gauge(CONSECUTIVE_LOSSES, vec![]).set(footer.consecutive_losses as f64);
    metrics.gauge(PNL_TODAY, vec![]).set(footer.pnl_today);
    let paused = state.execution.entry_pause()?.is_some();
    metrics.gauge(DRAWDOWN_PAUSED, vec![]).set(f64::from(u8::from(paused)));
    let grace_end = state.license.grace_end();
    metrics.gauge(LICENSE_ACTIVE, vec![]).set(f64::from(u8::from(grace_end.is_some())));
    let grace_left = grace_end.map_or(0, |end| (end - state.clock.now()).num_seconds().max(0));
    metrics.gauge(GRACE_LEFT, vec![]).set(grace_left as f64);
    metrics.gauge(EVENT_STREAMS, vec![]).set(state.live.open_streams() as f64);
    if let Some(contexts) = &state.market {
        let candles = contexts.candles();
        metrics.gauge(CANDLES, vec![]).set(candles.held_candles() as f64);
        metrics.gauge(CANDLE_SERIES, vec![]).set(candles.len() as f64);
    }
    for status in SIGNAL_STATUSES {
        let label = vec![Label::from_static_parts("status", status.as_str())];
        metrics.gauge(SIGNALS, label).set(state.signals.count(status) as f64);
    }
    if let Some(budget) = state.exchange.as_ref().and_then(|e| e.budget_use()) {
        for (kind, value) in [
            ("used", budget.weight_used),
            ("limit", budget.weight_limit),
            ("money_limit", budget.money_limit),
            ("read_limit", budget.read_limit),
            ("background_limit", budget.background_limit),
        ] {
            let label = vec![Label::from_static_parts("kind", kind)];
            metrics.gauge(WEIGHT, label).set(value as f64);
        }
        metrics.counter(REFUSED_READS, vec![]).absolute(budget.refused_reads);
        metrics.counter(BACKGROUND_WAITS, vec![]).absolute(budget.background_waits);
    }
    Ok(())
}

fn protection_name(state: &ProtectionState) -> &'static str {
    match state {
        ProtectionState::Protected => "protected",
        ProtectionState::Pending => "pending",
        ProtectionState::Unprotected { .. } => "unprotected",
    }
}
