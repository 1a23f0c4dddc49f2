//! spotbot: a spot-trading service for AI agents and their human operator.
//!
//! A map of the areas (`docs/architecture.md` has the workspace, the data flow of a confirm
//! and of an exchange-side exit, the money-safety invariants and where protection lives);
//! each area owns one job and has one public face, and its `mod.rs` opens with its own map:
//!
//! - [`api`]: HTTP routes per spec group, the one error body, the OpenAPI document, the
//!   read-budget 429, the audit layer, the `GET /metrics` scrape and the earlier route set.
//! - [`auth`]: who may call the API: per-agent tokens and scopes, protected mode, the
//!   same-origin and `Host` checks, bad-token strikes.
//! - [`audit`]: the append-only audit log of money and operator actions, and the acting
//!   request every journal entry names.
//! - [`signals`]: pending signals, the skip rules, ev/confidence and the confirm gates, the
//!   boss's approval bound to a signal's terms, cleanup, and the optional reader of the boss's
//!   YES/NO replies (`[messenger] handle_replies`).
//! - [`execution`]: every order the service sends: sizing, the bracket (MARKET entry, then an
//!   OCO or a resting take-profit with a watched stop, one `protector` component each, with
//!   the watched stop's polling loop), close, manual LIMIT entries, the order
//!   journal, the trade book and history, settlement of exits, stop moves, reconciliation.
//! - [`protection`]: the protection run (exits the exchange made, gapped stops, trailing),
//!   reactions to the exchange's streams, the drawdown pause, the equity
//!   series, the daily PnL report and the health check.
//! - [`exchange`]: the `Exchange` trait and the `OrderLists` face an adapter offers or not
//!   (exchange A's does, exchange B's does not), exchange A's and exchange B's REST clients and stream
//!   links, the pushed-event feed, symbol rules and pre-send checks, lookup by client order
//!   id, the request budget, exchange A's rules on the simulator core (the backtest's
//!   exchange) and paper mode (the simulator in-process).
//! - [`market`]: the one candle cache (fetches only what is new), the `Timeframe` type, and
//!   the multi-timeframe market context (rules, TTL cache, snapshots, compression and watch
//!   memories).
//! - [`scans`]: a strategy's scan-and-signal (MR Combined's or any strategy plugin's) and Pump
//!   Momentum's alert scan, its stored alerts and their outcome evaluation.
//! - [`plugins`]: strategy plugins as sandboxed Wasm components, hot-reloaded from a folder,
//!   compiled by `serve` in a child process, and each loaded strategy's background bias check.
//! - [`backtest`]: research: a plugin replayed over history with its brackets on the
//!   simulator's matching core, walk-forward optimisation, bias checks and luck statistics
//!   (`spotbot backtest`, `optimize`, `check-bias`; their command lines are the binary's).
//! - [`store`]: the redb database, its schema version, a table per persistent thing and the
//!   tables each commit changed.
//! - [`messenger`]: reaches the boss: message templates, HTML escaping and splitting, sending.
//! - [`license`]: machine id, the signed license cache, 24 h revalidation, 72 h grace and
//!   the table of routes that need a license.
//! - [`scheduler`]: when jobs run: cron schedules read from the clock, each job switchable
//!   off so agents can drive instead, its status and its end reported.
//! - [`jobs`]: the built-in jobs (trailing, drawdown, pending entries, reconciliation, 21:00
//!   report, health, ...): what each calls, on its schedule.
//! - [`activity`]: agent cards and the 100-entry activity log every action writes to.
//! - [`dashboard`]: the dashboard page and its panels, read from the areas' state, and its
//!   live view.
//! - [`metrics`]: the Prometheus recorder each service owns, counted into where things happen.
//! - [`mcp`]: the MCP endpoint at `/mcp`: the API's operations as tools, each call dispatched
//!   into the API router.
//! - [`news`]: `GET /api/news`'s headlines from RSS/Atom sources tried in order, cached
//!   10 minutes in memory.
//! - [`config`]: the TOML file and environment secrets, validated before anything starts.
//! - [`money`]: request and config numbers read as decimals, the one float-to-decimal
//!   conversion.
//! - [`clock`]: the one source of "now", replaceable by a test clock.
//! - [`keyed_locks`]: one async lock per key (a symbol), kept only while held or awaited.
//! - [`background`]: a loop the service owns and stops on shutdown.
//! - [`logging`]: log output for humans or machines, on stderr.
//! - [`app`]: wires the areas together and serves them; used by `main` and by tests.
//! - [`state`]: `AppState`, the areas' public faces the API and the scheduler both reach.

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
