//! The time loop. One run sets up, in this process and on one manual clock:
//!
//! - the exchange simulator (`spotbot-sim`) serving on loopback, listing the traded symbols,
//!   funded with `[exchange] paper_usdt`, seeded with `paper_seed`, on a clock that is the host
//!   areas' [`TestClock`];
//! - a store in memory and a temporary plugins folder holding a copy of the `.wasm`, loaded by
//!   [`Plugins::start`] with the run's config (its `[strategy.<name>]` section applies), whose
//!   market data source is the history ([`BacktestMarket`]);
//! - [`Execution`] built exactly as `app::start` builds it, with exchange A's client pointed at
//!   the simulator and no messenger.
//!
//! Then, for each close `t` of the plugin's finest timeframe from `from` to `to`:
//!
//! 1. the clock moves to `t`; the simulator's engine walks the price path of the candle that
//!    just closed, filling take-profits and triggering stops on the way;
//! 2. when an open trade's OCO list finished at the simulator, execution settles it as it does
//!    when the exchange's stream reports the fill (one read of the open lists, then the trades
//!    whose list is gone): the filled leg closes the trade with its pnl in the history, the
//!    daily counters move. A trade left unprotected (its OCO failed) goes through
//!    reconciliation, which places the OCO again as it would live;
//! 3. the simulator is scripted with the next candle's price path (see [`MAX_MOVE`]);
//! 4. the plugin scans every symbol through `Plugins::scan` at `t`; each buy result that
//!    passes the service's ev/confidence gates becomes an entry through
//!    [`Execution::open_trade`] (MARKET buy at the price of `t`, then the OCO at the result's
//!    stop and target) — daily trade limit, consecutive losses, capital cap, size and tier
//!    apply as live; no one is asked. A sell result closes the symbol's open trade at market.
//!
//! The equity (quote balance + coins at the price of `t`) is sampled at each step before its
//! entries, and after the closes at the end.
//!
//! At the last step nothing is scanned and the positions still open are closed at market.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, bail};
use rust_decimal::Decimal;
use rust_decimal::prelude::ToPrimitive;
use spotbot_sim::market::{Ohlc, path_from_candles, script_price};
use spotbot_sim::{Sim, SimConfig};

use super::Spec;
use super::history::{self, History, iso};
use super::market::{PROBE, Served};
use super::progress::Progress;
use super::report::{
    EquityPoint, GappedStop, Opening, Replayed, Report, SignalCounts, TimeSplit, TradeRow,
};
use super::robustness::report_monte_carlo;
use super::scans::{ScanPlan, ScansAhead};
use super::session::{Session, datetime};
use super::setup::{ExchangeRules, check, load_history, needs, sim_rules, sim_rules_from_exchange};
use super::why::WhyNoTrade;
use crate::activity::Dashboard;
use crate::clock::{Clock, SharedClock, TestClock};
use crate::config::{Config, GapExit};
use crate::exchange::core_exchange::CoreExchange;
use crate::execution::trade::Trade;
use crate::execution::{
    CloseStatus, EntryPlan, Execution, ExecutionError, ListRead, Parts, ProtectionState, Timing,
    TradeSource, ends_protection,
};
use crate::market::Timeframe;
use crate::messenger::Messenger;
use crate::plugins::PluginError;
use crate::plugins::model::{Direction, ScanResult};
use crate::protection::{TrailSettings, trail_with};
use crate::signals::Tier;

/// Largest step of the scripted price path inside a candle, as a fraction of the price: half
/// the 0.2 % between a stop's trigger and its limit (`docs/execution.md`), so a falling price
/// always passes a level where the stop-limit can fill, as a continuous market would.
pub const MAX_MOVE: f64 = 0.001;

/// A symbol's scripted price path: (time, price) points.
type Script = (String, Vec<(i64, Decimal)>);

/// The simulator account of the run (loopback only, never leaves the process).
const KEY: &str = "spotbot-backtest";
const SECRET: &str = "spotbot-backtest-secret";

/// The simulator's clock: the host areas' test clock.
struct SimClock(TestClock);

impl spotbot_sim::Clock for SimClock {
    fn now_ms(&self) -> spotbot_sim::Millis {
        self.0.now_ms()
    }

    fn advance(&self, ms: spotbot_sim::Millis) {
        self.0.advance(chrono::Duration::milliseconds(ms));
    }
}

/// Runs one backtest (see the module documentation).
pub async fn run(config: &Config, spec: &Spec, progress: &mut Progress) -> anyhow::Result<Report> {
    check(config, spec)?;
    let session = Session::start(config, &spec.plugin, spec.from_ms, Served::AsLive).await?;
    let prepared = prepare(spec, &session, 1, progress).await?;
    let span = Span { from_ms: spec.from_ms, to_ms: spec.to_ms };
    let mut report = replay_span(
        &session,
        &prepared,
        &spec.symbols,
        span,
        &BracketOverride::default(),
        progress,
    )
    .await?;
    let pnls: Vec<f64> = report.trades.iter().map(|t| t.pnl).collect();
    report.monte_carlo = report_monte_carlo(&pnls, report.start_equity, config.exchange.paper_seed);
    Ok(report)
}

/// What every replay of one plugin over one stretch of history reads, read once: the
/// history with the warm-up the plugin's scans need, where it came from, and the exchange's
/// listing of the traded symbols.
pub struct Prepared {
    history: Arc<History>,
    source: String,
    exchange_rules: ExchangeRules,
    finest: Timeframe,
}

impl Prepared {
    /// The replay's step.
    pub fn finest(&self) -> Timeframe {
        self.finest
    }

    /// Where the candles came from.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The history every replay reads.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// The same, for a session's market to serve.
    pub(super) fn shared_history(&self) -> Arc<History> {
        self.history.clone()
    }
}

/// First and last step of a replay, epoch ms (rounded onto the finest timeframe).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub from_ms: i64,
    pub to_ms: i64,
}

/// Stop and target of every entry, instead of the buy result's (the optimiser's `sl_pct` and
/// `tp_pct` keys); `None` keeps the result's.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BracketOverride {
    pub sl_pct: Option<Decimal>,
    pub tp_pct: Option<Decimal>,
}

impl BracketOverride {
    /// The entry's stop and target distances: each overridden one, else the result's.
    fn apply(&self, result: (Option<Decimal>, Option<Decimal>)) -> Option<(Decimal, Decimal)> {
        Some((self.sl_pct.or(result.0)?, self.tp_pct.or(result.1)?))
    }
}

/// Asks the plugin what its scans read (the probe) and reads that history for `spec`, with
/// `warmup_times` the warm-up its candle counts ask for (more for `check-bias`).
pub(super) async fn prepare(
    spec: &Spec,
    session: &Session,
    warmup_times: u32,
    progress: &mut Progress,
) -> anyhow::Result<Prepared> {
    let (name, plugins, market) = (&session.name, &session.plugins, &session.market);
    // The probe: what a scan of these symbols reads, decided by the scan code itself.
    match plugins.scan(name, Some(spec.symbols.clone())).await {
        Err(PluginError::MarketData(m)) if m == PROBE => {}
        Err(err) => bail!("plugin {name} cannot scan: {err}"),
        Ok(_) => bail!("plugin {name} scanned without market data"),
    }
    let query = market.probed().context("the plugin's scan asked for no market data")?;
    let mut timeframes: Vec<(Timeframe, u32)> = Vec::new();
    for need in &query.candles {
        let tf: Timeframe = need.timeframe.parse().map_err(|e| anyhow::anyhow!("{e}"))?;
        timeframes.push((tf, need.count.saturating_mul(warmup_times)));
    }
    let Some(finest) = timeframes.iter().map(|(tf, _)| *tf).min() else {
        bail!("plugin {name} reads no candles: there is nothing to replay");
    };
    let (t0, to_floor) = steps_between(finest, spec.from_ms, spec.to_ms)?;
    progress.note(&format!(
        "backtest {name} {}: {} symbol(s), {finest} steps, {} .. {}",
        session.loaded.manifest.version,
        spec.symbols.len(),
        iso(t0),
        iso(to_floor)
    ));
    let needs = needs(spec, &query, &timeframes, t0, to_floor);
    let (history, source, exchange_rules) =
        load_history(&session.cfg, spec, &needs, finest, progress).await?;
    let history = Arc::new(history);
    market.load(history.clone(), finest);
    Ok(Prepared { history, source, exchange_rules, finest })
}

/// The first and the last step between `from` and `to`.
pub(super) fn steps_between(
    finest: Timeframe,
    from_ms: i64,
    to_ms: i64,
) -> anyhow::Result<(i64, i64)> {
    let len = finest.duration_ms();
    let t0 = {
        let open = history::candle_open(finest, from_ms);
        if open < from_ms { open + len } else { open }
    };
    let to_floor = history::candle_open(finest, to_ms);
    if to_floor <= t0 {
        bail!("--from and --to span less than one {finest} candle");
    }
    Ok((t0, to_floor))
}

/// Replays `span` of the prepared history with the session's plugin and config.
pub(super) async fn replay_span(
    session: &Session,
    prepared: &Prepared,
    symbols: &[String],
    span: Span,
    bracket: &BracketOverride,
    progress: &mut Progress,
) -> anyhow::Result<Report> {
    let (cfg, history, finest) = (&session.cfg, &prepared.history, prepared.finest);
    session.market.load(history.clone(), finest);
    let (t0, to_floor) = steps_between(finest, span.from_ms, span.to_ms)?;
    let len = finest.duration_ms();
    // The last step: `to`, or the end of the traded symbols' candles.
    let data_end = symbols
        .iter()
        .filter_map(|s| history.get(s, finest).and_then(|c| c.open_time.last().copied()))
        .max()
        .map(|last| last + len)
        .context("no candles of the traded symbols")?;
    let t_end = to_floor.min(history::candle_open(finest, data_end));
    if t_end <= t0 {
        bail!("the history has no {finest} candles between {} and {}", iso(t0), iso(to_floor));
    }
    let clock = TestClock::new(datetime(t0));
    let shared: SharedClock = Arc::new(clock.clone());
    session.scan_clock.set(datetime(t0));

    // The simulator and execution, wired as app::start wires them.
    let quote = cfg.market.quote_asset.clone();
    let mut listing = Vec::new();
    for symbol in symbols {
        listing.push(match prepared.exchange_rules.get(symbol) {
            Some(r) => sim_rules_from_exchange(r),
            None => sim_rules(symbol, &quote, history.get(symbol, finest))?,
        });
    }
    let base_of = listing.iter().map(|r| (r.base.clone(), r.symbol.clone())).collect();
    let sim = simulator(cfg, &clock, listing);
    let exchange = Arc::new(
        CoreExchange::new(sim.clone(), KEY).map_err(|e| anyhow::anyhow!("the simulator: {e}"))?,
    );
    let metrics = crate::metrics::Metrics::default();
    let execution = Execution::new(Parts {
        exchange: Some(exchange.clone()),
        store: session.store.clone(),
        messenger: Messenger::new(&cfg.messenger, &cfg.secrets, metrics.clone()),
        dashboard: Arc::new(Dashboard::new(shared.clone())),
        config: cfg.clone(),
        plugins: session.plugins.clone(),
        clock: shared.clone(),
        timing: Timing::default(),
        metrics,
    });

    let scan_steps = (0..(t_end - t0) / len).map(|i| t0 + i * len).collect();
    let scans = ScansAhead::start(ScanPlan {
        plugins: session.plugins.clone(),
        clock: session.scan_clock.clone(),
        name: session.name.clone(),
        symbols: symbols.to_vec(),
        history: history.clone(),
        finest,
        steps: scan_steps,
    })
    .context("cannot start the scans' thread")?;
    let trailing = trailing_of(cfg, &execution, &session.name);
    let mut replay = Replay {
        scans,
        sim,
        exchange,
        seen_events: 0,
        execution,
        history: history.clone(),
        name: session.name.clone(),
        symbols: symbols.to_vec(),
        finest,
        quote,
        base_of,
        bracket: *bracket,
        counts: SignalCounts::default(),
        why: WhyNoTrade::default(),
        gap_exit: cfg.protection.gap_exit,
        trailing,
        stops_trailed: 0,
        trail_errors: BTreeMap::new(),
        gapped: Vec::new(),
        gaps_seen: BTreeSet::new(),
        scan_errors: BTreeMap::new(),
        openings: HashMap::new(),
        equity: Vec::new(),
        in_market: 0,
        closed_at_end: 0,
        notes: history.notes.clone(),
        fed_missing: Vec::new(),
        timing: TimeSplit::default(),
    };
    let started = Instant::now();
    let steps = replay.replay(t0, t_end, progress).await?;
    let elapsed_s = started.elapsed().as_secs_f64();
    let mut report = replay.report(steps, elapsed_s)?;
    report.replayed = session.replayed(symbols, finest, iso(t0), iso(t_end));
    report.source = prepared.source.clone();
    report.timing.context_s = session.market.context_seconds();
    report.timing.snapshot_s = session.market.snapshot_seconds();
    Ok(report)
}

/// The simulator's engine on the run's clock, listing `listing`, funded with `[exchange]
/// paper_usdt` (not served: the run trades on it through [`CoreExchange`]).
fn simulator(
    config: &Config,
    clock: &TestClock,
    listing: Vec<spotbot_sim::symbols::SymbolRules>,
) -> Sim {
    let mut sim_config = SimConfig::new(config.exchange.paper_seed, KEY, SECRET);
    sim_config.clock = Arc::new(SimClock(clock.clone()));
    sim_config.rules = listing;
    let funds = config.exchange.paper_usdt.round_dp(8);
    sim_config.initial_funds = vec![(config.market.quote_asset.clone(), funds)];
    Sim::new(sim_config)
}

/// The trailing rule the replay applies, as the service would for the replayed strategy:
/// `None` unless the trailing job runs (`[scheduler] enabled` and `trailing_stop`) and the
/// strategy's `trailing_enabled` is on. Its config is fixed for the run, so it is resolved
/// once.
fn trailing_of(cfg: &Config, execution: &Execution, strategy: &str) -> Option<TrailSettings> {
    let settings = TrailSettings::of(&execution.strategy_keys(strategy));
    (cfg.scheduler.enabled && cfg.scheduler.trailing_stop && settings.enabled).then_some(settings)
}

/// The state of one replay.
struct Replay {
    scans: ScansAhead,
    sim: Sim,
    exchange: Arc<CoreExchange>,
    /// How far the simulator's event log has been read.
    seen_events: u64,
    execution: Execution,
    history: Arc<History>,
    name: String,
    symbols: Vec<String>,
    finest: Timeframe,
    quote: String,
    /// Base asset → traded symbol.
    base_of: BTreeMap<String, String>,
    /// The optimiser's stop and target instead of the results'.
    bracket: BracketOverride,
    counts: SignalCounts,
    why: WhyNoTrade,
    /// Live trading's rule for a stop that gapped past its limit.
    gap_exit: GapExit,
    /// The trailing rule of the replayed strategy, when it trails (see [`trailing_of`]).
    trailing: Option<TrailSettings>,
    /// Stops the trailing rule raised.
    stops_trailed: usize,
    /// Stop moves that failed (the old stop stayed), by message.
    trail_errors: BTreeMap<String, usize>,
    gapped: Vec<GappedStop>,
    /// Trades whose gap was already reported (`gap_exit = "alert"` leaves them open).
    gaps_seen: BTreeSet<String>,
    scan_errors: BTreeMap<String, usize>,
    /// Tier and checklist of each entry's buy result, by the entry's client order id.
    openings: HashMap<String, Opening>,
    equity: Vec<EquityPoint>,
    /// Steps with a position open after the step's entries.
    in_market: usize,
    /// Positions closed at market at the last step.
    closed_at_end: usize,
    notes: Vec<String>,
    /// Symbols whose finest candle was missing at some step.
    fed_missing: Vec<String>,
    timing: TimeSplit,
}

impl Replay {
    /// Runs the steps from `t0` to `t_end`; returns their number.
    async fn replay(
        &mut self,
        t0: i64,
        t_end: i64,
        progress: &mut Progress,
    ) -> anyhow::Result<usize> {
        let len = self.finest.duration_ms();
        let steps = ((t_end - t0) / len + 1) as usize;
        progress.start(steps);
        for i in 0..steps {
            let t = t0 + i as i64 * len;
            let moved = Instant::now();
            if i > 0 {
                self.sim.advance(len);
            }
            self.timing.simulator_s += moved.elapsed().as_secs_f64();
            let mut open = self.settle().await?;
            if self.exit_gapped_stops(t, &open).await? {
                open = self.open_trades()?;
            }
            if let Some(settings) = self.trailing
                && i + 1 < steps
                && !open.is_empty()
            {
                self.trail(t, &open, &settings).await;
                open = self.open_trades()?;
            }
            if i + 1 == steps {
                self.closed_at_end = self.close_all().await?;
                self.sample(t)?;
            } else {
                self.sample(t)?;
                let fed = Instant::now();
                self.feed(t);
                self.timing.simulator_s += fed.elapsed().as_secs_f64();
                if self.scan(t).await? {
                    open = self.open_trades()?;
                    // The symbols that got orders now need the walk through their candle.
                    let fed = Instant::now();
                    self.feed_walks(t);
                    self.timing.simulator_s += fed.elapsed().as_secs_f64();
                }
                if !open.is_empty() {
                    self.in_market += 1;
                }
            }
            progress.update(i + 1, &format!("{} · {} trades", iso(t), self.counts.opened));
        }
        progress.finish();
        Ok(steps)
    }

    /// The report of the finished replay: the history's closed trades and the samples.
    fn report(&mut self, steps: usize, elapsed_s: f64) -> anyhow::Result<Report> {
        let closed: Vec<_> =
            self.execution.book().history(0, usize::MAX)?.into_iter().rev().collect();
        let pnls: Vec<Decimal> = closed.iter().map(|c| c.pnl).collect();
        let trades = closed
            .iter()
            .map(|c| {
                let id = c.trade.entry_client_order_id.as_ref();
                TradeRow::of(
                    c,
                    id.and_then(|id| self.openings.get(id)).cloned().unwrap_or_default(),
                )
            })
            .collect();
        for (err, n) in std::mem::take(&mut self.trail_errors) {
            self.notes.push(format!("trailing stop not moved {n} time(s): {err}"));
        }
        for symbol in &self.fed_missing {
            self.notes.push(format!(
                "{symbol}: some {} candles are missing; its price held",
                self.finest
            ));
        }
        let mut report = Report {
            replayed: Replayed::default(),
            steps,
            source: String::new(),
            quote_asset: self.quote.clone(),
            start_equity: 0.0,
            end_equity: 0.0,
            return_pct: 0.0,
            dust: 0.0,
            stats: crate::execution::stats::Aggregate::of(&[]),
            max_drawdown: 0.0,
            max_drawdown_pct: 0.0,
            exposure_pct: 0.0,
            avg_invested_pct: 0.0,
            fees: self.fees(),
            closed_at_end: self.closed_at_end,
            stops_trailed: self.stops_trailed,
            signals: std::mem::take(&mut self.counts),
            why_no_trade: std::mem::take(&mut self.why),
            gapped_stops: std::mem::take(&mut self.gapped),
            scan_errors: std::mem::take(&mut self.scan_errors),
            notes: std::mem::take(&mut self.notes),
            trades,
            monte_carlo: Vec::new(),
            equity: std::mem::take(&mut self.equity),
            elapsed_s,
            timing: self.timing,
        };
        report.finish_figures(&pnls, self.in_market);
        Ok(report)
    }

    /// Settles what the simulator did since the last step, as the exchange's streams make the
    /// service settle it live: the order updates of the simulator's event log, and when one
    /// ended a trade's protection, the same settlement. A trade left without its OCO goes
    /// through reconciliation. Returns the trades open after it.
    async fn settle(&mut self) -> anyhow::Result<Arc<Vec<Trade>>> {
        let updates = self.exchange.order_updates(&mut self.seen_events);
        let open = self.open_trades()?;
        if open.is_empty() {
            return Ok(open);
        }
        let started = Instant::now();
        if open.iter().any(|t| !t.protection.is_protected()) {
            // An OCO that failed is placed again, as reconciliation does live.
            self.execution.reconcile().await.context("reconciliation")?;
        } else if ends_protection(&open, &updates) {
            // A leg filled: one read of the open lists, then only the trades whose list is
            // gone.
            let lists = self.execution.open_protection(ListRead::WhenTracked).await?;
            let settled = self.execution.settle_exits(&lists).await;
            if let Some(err) = settled.errors.first() {
                bail!("settling an exit: {err}");
            }
        } else {
            return Ok(open);
        }
        self.timing.execution_s += started.elapsed().as_secs_f64();
        self.open_trades()
    }

    /// The open trades (decoded again only after a write, see [`crate::execution::Book`]).
    fn open_trades(&self) -> anyhow::Result<Arc<Vec<Trade>>> {
        Ok(self.execution.book().open_trades_shared()?)
    }

    /// Scripts each traded symbol's price from `t` to the next step (see
    /// [`Replay::script_of`]), then the next candle's open.
    fn feed(&mut self, t: i64) {
        let paths = (self.symbols.clone().into_iter())
            .filter_map(|symbol| self.script_of(symbol, t))
            .map(|(path, _)| path)
            .collect();
        let _ = self.sim.set_paths(paths);
    }

    /// Gives the symbols whose new orders the candle from `t` can reach the walk through it
    /// (after the step's entries; the others keep the script [`Replay::feed`] gave them).
    fn feed_walks(&mut self, t: i64) {
        let ordered: BTreeSet<String> =
            self.sim.engine().open_orders().map(|o| o.symbol.clone()).collect();
        let paths = (ordered.into_iter())
            .filter_map(|symbol| self.script_of(symbol, t))
            .filter_map(|(path, walked)| walked.then_some(path))
            .collect();
        let _ = self.sim.set_paths(paths);
    }

    /// The script of `symbol` through the finest candle opening at `t`, and whether it is the
    /// walk. The walk (see [`MAX_MOVE`]) is needed only where an order at the simulator could
    /// trigger or fill at a price within the candle's range
    /// ([`spotbot_sim::core::Engine::acts_between`]); elsewhere nothing can happen on the way,
    /// and the candle's open, extremes and close (all a read at a step's time can see) give
    /// the same fills as the walk would, none.
    fn script_of(&mut self, symbol: String, t: i64) -> Option<(Script, bool)> {
        let (candle, next) = self.candle_at(&symbol, t)?;
        let prices =
            [candle.open, candle.high, candle.low, candle.close, next.unwrap_or(candle.open)];
        // Conversion to the script's decimals keeps the order: the extremes of the points.
        let low = script_price(prices.iter().copied().fold(f64::INFINITY, f64::min));
        let high = script_price(prices.iter().copied().fold(f64::NEG_INFINITY, f64::max));
        let walk = self.sim.engine().acts_between(&symbol, low, high);
        let len = self.finest.duration_ms();
        let mut points = path_from_candles(len, &[candle], walk.then_some(MAX_MOVE));
        if let Some(next) = next {
            points.push((t + len, script_price(next)));
        }
        Some(((symbol, points), walk))
    }

    /// The finest candle of `symbol` opening at `t`, and the next one's open when that one
    /// follows right after (`None` when the candle at `t` is missing: the price holds).
    fn candle_at(&mut self, symbol: &str, t: i64) -> Option<(Ohlc, Option<f64>)> {
        let len = self.finest.duration_ms();
        let c = self.history.get(symbol, self.finest)?;
        let Ok(i) = c.open_time.binary_search(&t) else {
            if !self.fed_missing.iter().any(|s| s == symbol) {
                self.fed_missing.push(symbol.to_string());
            }
            return None;
        };
        let candle = Ohlc {
            open_time: t,
            open: c.open[i],
            high: c.high[i],
            low: c.low[i],
            close: c.close[i],
        };
        let next = (c.open_time.get(i + 1) == Some(&(t + len))).then(|| c.open[i + 1]);
        Some((candle, next))
    }

    /// Acts on the scan of the symbols whose market is open at `t` (a finest candle opens
    /// then; at a step without a candle nothing trades, as on a closed market nothing can),
    /// which ran ahead ([`ScansAhead`]). Returns whether a buy or sell result was acted on
    /// (trades may have opened or closed).
    async fn scan(&mut self, t: i64) -> anyhow::Result<bool> {
        let step = self.scans.next().await.context("the scans ended early")?;
        if step.t != t {
            bail!("the scan of {} arrived at step {}", iso(step.t), iso(t));
        }
        for symbol in &step.closed {
            self.why.market_closed(symbol);
        }
        let Some(scanned) = step.outcome else { return Ok(false) };
        self.timing.scan_s += step.seconds;
        let outcome = match scanned {
            Ok(outcome) => outcome,
            Err(err @ (PluginError::Disabled(_) | PluginError::NotFound(_))) => {
                bail!("plugin {}: {err}", self.name)
            }
            Err(err) => {
                self.scan_error(err.to_string());
                return Ok(false);
            }
        };
        self.timing.plugin_call_s += outcome.duration_ms / 1000.0;
        for alert in &outcome.alerts {
            let stage = serde_json::to_value(alert.stage).ok();
            let stage = stage.as_ref().and_then(|v| v.as_str()).unwrap_or("alert").to_string();
            *self.counts.alerts.entry(stage).or_default() += 1;
        }
        let started = Instant::now();
        let mut acted = false;
        for result in &outcome.results {
            match result.direction {
                Direction::Buy => self.buy(result, t).await,
                Direction::Sell => self.sell(result, t).await,
                Direction::Skip => self.why.skip(result),
            }
            acted |= result.direction != Direction::Skip;
        }
        self.timing.execution_s += started.elapsed().as_secs_f64();
        Ok(acted)
    }

    async fn buy(&mut self, r: &ScanResult, t: i64) {
        self.counts.buy += 1;
        match self.execution.book().open_trade(&r.symbol) {
            Ok(Some(_)) => {
                self.not_opened(&r.symbol, "trade_exists", format!("{} at {}", r.symbol, iso(t)));
                return;
            }
            Ok(None) => {}
            Err(err) => {
                self.not_opened(&r.symbol, "error", err.to_string());
                return;
            }
        }
        if let Some(reason) = gate_failure(r) {
            self.not_opened(&r.symbol, "gates", format!("{} at {}: {reason}", r.symbol, iso(t)));
            return;
        }
        let asked = crate::scans::signal_input(r).bracket().unzip();
        let Some((sl_pct, tp_pct)) = self.bracket.apply(asked) else {
            let detail = format!("{} at {}: no sl_pct or tp_pct above 0", r.symbol, iso(t));
            self.not_opened(&r.symbol, "refused", detail);
            return;
        };
        let mut plan = EntryPlan::new(
            &r.symbol,
            &r.bot,
            sl_pct,
            tp_pct,
            TradeSource::Signal,
            &format!("b{:x}", t / 60_000),
            format!("backtest: {} buy result at {}", self.name, iso(t)),
        );
        plan.tier = r.tier.as_deref().and_then(Tier::parse);
        match self.execution.open_trade(&plan).await {
            Ok(trade) => {
                self.counts.opened += 1;
                let tier = plan.tier.map(|t| t.as_str().to_string());
                let opening = Opening { tier, checklist: r.checklist.clone() };
                self.openings.insert(plan.entry_client_order_id.clone(), opening);
                if let ProtectionState::Unprotected { reason } = trade.protection.state() {
                    self.notes.push(format!("{} at {}: no OCO ({reason})", r.symbol, iso(t)));
                }
            }
            Err(err) => {
                let reason = match &err {
                    ExecutionError::TradeExists(_) => "trade_exists".to_string(),
                    ExecutionError::EntryBlocked(block) => block.code().to_string(),
                    ExecutionError::Refused(_) => "refused".to_string(),
                    _ => "error".to_string(),
                };
                self.not_opened(&r.symbol, &reason, format!("{} at {}: {err}", r.symbol, iso(t)));
            }
        }
    }

    /// Counts a buy result the service did not open, by the gate that refused it.
    /// Counts a failed scan or exit by its message (at most 200 characters, and
    /// [`super::why::MAX_KINDS`] messages: a plugin's error text must not grow the report).
    fn scan_error(&mut self, message: String) {
        let message: String = message.chars().take(200).collect();
        super::why::add_one(&mut self.scan_errors, &message);
    }

    fn not_opened(&mut self, symbol: &str, gate: &str, detail: String) {
        self.counts.not_opened(gate, detail);
        self.why.refused(symbol, gate);
    }

    /// Live trading's answer to a stop that triggered but could not fill because the price
    /// gapped past its limit (`[protection] gap_exit`, the trailing job's rule, which runs
    /// every minute live and at every step here): `market` closes the position at the price
    /// of `t`; `alert` leaves it open (a person would decide), reported once. Only trades whose
    /// price is below their stop at the simulator are asked about, as execution's
    /// `stop_gap` reads the stop order over HTTP.
    /// Returns whether it closed a trade.
    async fn exit_gapped_stops(&mut self, t: i64, open: &[Trade]) -> anyhow::Result<bool> {
        let mut closed = false;
        for trade in open {
            let below = {
                let engine = self.sim.engine();
                engine.price(&trade.symbol, t).is_ok_and(|price| price < trade.sl_px)
            };
            let key = format!("{} {}", trade.symbol, trade.opened_at);
            if !below || self.gaps_seen.contains(&key) {
                continue;
            }
            let Ok(Some(price)) = self.execution.stop_gap(trade).await else { continue };
            let action = match self.gap_exit {
                GapExit::Alert => {
                    self.gaps_seen.insert(key);
                    "alerted"
                }
                GapExit::Market => {
                    let cause = "backtest: stop gapped, exit at market ([protection] gap_exit)";
                    self.execution.close(&trade.symbol, cause).await.with_context(|| {
                        format!("closing {} after its stop gapped", trade.symbol)
                    })?;
                    closed = true;
                    "closed_at_market"
                }
            };
            let f = |d: Decimal| d.to_f64().unwrap_or(0.0);
            self.gapped.push(GappedStop {
                symbol: trade.symbol.clone(),
                at: iso(t),
                stop_px: f(trade.sl_px),
                price: f(price),
                action: action.to_string(),
            });
        }
        Ok(closed)
    }

    /// The trailing job's rule ([`trail_with`]) for each open trade at the price of
    /// `t`: live it runs every minute, here at each step, so within a candle the stop stays
    /// where the last close put it.
    async fn trail(&mut self, t: i64, open: &[Trade], settings: &TrailSettings) {
        let started = Instant::now();
        for trade in open {
            let price = self.sim.engine().price(&trade.symbol, t);
            let Ok(price) = price else { continue };
            match trail_with(&self.execution, trade, price, settings).await {
                Ok(Some(_)) => self.stops_trailed += 1,
                Ok(None) => {}
                Err(err) => *self.trail_errors.entry(err).or_default() += 1,
            }
        }
        self.timing.execution_s += started.elapsed().as_secs_f64();
    }

    async fn sell(&mut self, r: &ScanResult, t: i64) {
        self.counts.sell += 1;
        if !matches!(self.execution.book().open_trade(&r.symbol), Ok(Some(_))) {
            return;
        }
        let cause = format!("backtest: {} sell result at {}", self.name, iso(t));
        match self.execution.close(&r.symbol, &cause).await {
            Ok(_) => self.counts.exits += 1,
            Err(err) => self.scan_error(format!("exit of {}: {err}", r.symbol)),
        }
    }

    /// Closes every open position at market; returns how many closed.
    async fn close_all(&mut self) -> anyhow::Result<usize> {
        let report = self.execution.close_all("backtest: end of the replay").await?;
        for row in report.closed.iter().filter(|r| r.status != CloseStatus::Closed) {
            self.notes.push(format!(
                "{} could not be closed at the end: {}",
                row.symbol,
                row.error.as_deref().unwrap_or("unknown")
            ));
        }
        Ok(report.closed.iter().filter(|r| r.status == CloseStatus::Closed).count())
    }

    /// Samples the equity at `t`: quote balance plus every coin held at the price of `t`.
    fn sample(&mut self, t: i64) -> anyhow::Result<()> {
        let engine = self.sim.engine();
        let (mut cash, mut invested) = (Decimal::ZERO, Decimal::ZERO);
        if let Some(account) = engine.accounts.first() {
            for (asset, b) in &account.balances {
                let qty = b.free + b.locked;
                if qty.is_zero() {
                    continue;
                }
                if *asset == self.quote {
                    cash += qty;
                } else if let Some(symbol) = self.base_of.get(asset)
                    && let Ok(price) = engine.price(symbol, t)
                {
                    invested += qty * price;
                }
            }
        }
        let f = |d: Decimal| d.round_dp(8).to_f64().unwrap_or(0.0);
        self.equity.push(EquityPoint { t, equity: f(cash + invested), invested: f(invested) });
        Ok(())
    }

    /// Fees paid at the simulator, valued in the quote asset at each fill's price.
    fn fees(&self) -> f64 {
        let engine = self.sim.engine();
        let total: Decimal = engine
            .trades
            .iter()
            .map(|t| {
                if t.commission_asset == self.quote { t.commission } else { t.commission * t.price }
            })
            .sum();
        total.round_dp(8).to_f64().unwrap_or(0.0)
    }
}

/// Why the service's gates refuse a buy result at confirm: the rule scan-and-signal scores
/// results with (`scans::result_scores`), checked like a confirm (`signals::scoring`).
fn gate_failure(r: &ScanResult) -> Option<String> {
    let (ev, confidence) = crate::scans::result_scores(r, &crate::scans::signal_input(r));
    crate::signals::scoring::gate_failure(ev, confidence)
}
