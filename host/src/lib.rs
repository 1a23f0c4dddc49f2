//! spotbot: a spot-trading service for AI agents and their human operator.
//!
//! A map of the areas (see ARCHITECTURE.md); each owns one job and has one public face:
//!
//! - [`api`]: HTTP routes per spec group, the one error body, the OpenAPI document.
//! - [`audit`]: the append-only audit log of money and operator actions, and the acting
//!   request every journal entry names.
//! - [`auth`]: who may call the API: per-agent tokens and scopes, protected mode, the
//!   same-origin and `Host` checks.
//! - [`activity`]: agent cards and the 100-entry activity log every action writes to.
//! - [`dashboard`]: the dashboard page and its panels, read from the areas' state.
//! - [`exchange`]: the `Exchange` trait, exchange A's wire client, paper mode (simulator in-process).
//! - [`signals`]: pending signals, the skip rules, the ev/confidence gates, cleanup, and the
//!   optional reader of the boss's YES/NO replies (`[messenger] handle_replies`).
//! - [`execution`]: sizing, the bracket order, close, the order journal, reconciliation.
//! - [`protection`]: the protection run (exits the exchange made, gaps, trailing), the watched
//!   stops, the drawdown watch, the daily PnL report and the health check.
//! - [`market`]: the one candle cache (fetches only what is new), the `Timeframe` type, and
//!   the multi-timeframe market context (rules, TTL cache, snapshots, compression and watch
//!   memories).
//! - [`scans`]: MR Combined's scan-and-signal and Pump Momentum's alert scan, its stored
//!   alerts and their outcome evaluation.
//! - [`plugins`]: strategy plugins as sandboxed Wasm components, hot-reloaded from a folder,
//!   compiled by `serve` in a child process.
//! - [`store`]: the redb database, its schema version and a table per persistent thing.
//! - [`messenger`]: reaches the boss: message templates, HTML escaping and splitting, sending.
//! - [`news`]: `GET /api/news`'s headlines from RSS/Atom sources tried in order, cached
//!   10 minutes in memory.
//! - [`mcp`]: the MCP endpoint at `/mcp`: the API's operations as tools, each call dispatched
//!   into the API router.
//! - [`license`]: machine id, the signed license cache, 24 h revalidation, 72 h grace and
//!   the table of routes that need a license.
//! - [`scheduler`]: when jobs run: cron schedules read from the clock, each job switchable
//!   off so agents can drive instead, its status and its end reported.
//! - [`jobs`]: the built-in jobs (trailing, pending entries, 21:00 report, ...): what each
//!   calls, on its schedule.
//! - [`money`]: request and config numbers read as decimals, the one float-to-decimal
//!   conversion.
//! - [`config`]: the TOML file and environment secrets, validated before anything starts.
//! - [`clock`]: the one source of "now", replaceable by a test clock.
//! - [`keyed_locks`]: one async lock per symbol, kept only while held (callers name symbols).
//! - [`app`]: wires the areas together and serves them; used by `main` and by tests.
//! - [`state`]: `AppState`, the areas' public faces the API and the scheduler both reach.
//! - [`backtest`]: replays a plugin over history, its brackets in the simulator's matching
//!   engine (`spotbot backtest`).

pub mod activity;
pub mod api;
pub mod app;
pub mod audit;
pub mod auth;
pub mod background;
pub mod backtest;
pub mod clock;
pub mod config;
pub mod dashboard;
pub mod exchange;
pub mod execution;
pub mod jobs;
pub mod keyed_locks;
pub mod license;
pub mod logging;
pub mod market;
pub mod mcp;
pub mod messenger;
pub mod metrics;
pub mod money;
pub mod news;
pub mod plugins;
pub mod protection;
pub mod scans;
pub mod scheduler;
pub mod signals;
pub mod state;
pub mod store;
