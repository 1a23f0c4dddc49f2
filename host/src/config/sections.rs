//! The plain sections of the config file, each with the defaults documented in
//! `examples/config.toml`.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

/// `[server]`: where the API listens and where data lives.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ServerConfig {
    pub addr: String,
    pub data_dir: String,
    /// Largest accepted request body; larger bodies are answered with 413.
    pub max_body_bytes: usize,
    pub log_format: LogFormat,
}

impl Default for ServerConfig {
    fn default() -> Self {
        Self {
            addr: "127.0.0.1:8000".into(),
            data_dir: "data".into(),
            max_body_bytes: 64 * 1024,
            log_format: LogFormat::Human,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    #[default]
    Human,
    Json,
}

/// `[exchange]`: which exchange trades, and against which environment.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ExchangeConfig {
    pub active: ExchangeName,
    pub mode: ExchangeMode,
    /// Overrides the REST base derived from `mode` (mainnet/testnet); empty means none.
    pub base_url: Option<String>,
    /// Paper mode: seed of the simulator's synthetic market (same seed, same prices).
    pub paper_seed: u64,
    /// Paper mode: USDT the simulated account starts with.
    #[serde(deserialize_with = "crate::money::decimal")]
    pub paper_usdt: Decimal,
    /// Whole-request timeout of one exchange call, milliseconds; past it an order's outcome
    /// is unknown and is settled by a lookup by client order id.
    pub request_timeout_ms: u64,
    /// Percent of the exchange's request weight agent reads (scans, market context,
    /// portfolio) may use per minute; the rest is reserved for orders, cancels, lookups and
    /// the prices protection needs. Past it reads answer 429 `rate_limited`.
    pub read_share_pct: u64,
    /// Follow the exchange's streams (order updates, prices of open trades) besides polling.
    pub streams: bool,
    /// Overrides the WebSocket API URL derived from `mode`; with `base_url` set and no stream
    /// URLs, streams are off (nothing to derive them from).
    pub ws_api_url: Option<String>,
    /// Overrides the market streams' base URL derived from `mode` (exchange B: its one
    /// WebSocket URL, `…/ws`).
    pub stream_url: Option<String>,
    /// Exchange B only: the account (`0x` + 40 hex digits) the key in EXCHANGE_PRIVATE_KEY
    /// trades for, when that key is an API wallet of the account; empty means the key's own
    /// address is the account.
    pub account_address: Option<String>,
    /// A stream that says nothing (not even a ping) this long is dead; the polled path covers
    /// it until it is back, milliseconds.
    pub stream_silence_ms: u64,
}

impl Default for ExchangeConfig {
    fn default() -> Self {
        Self {
            active: ExchangeName::default(),
            mode: ExchangeMode::default(),
            base_url: None,
            paper_seed: 1,
            paper_usdt: Decimal::from(10_000),
            request_timeout_ms: 10_000,
            read_share_pct: 60,
            streams: true,
            ws_api_url: None,
            stream_url: None,
            account_address: None,
            stream_silence_ms: 45_000,
        }
    }
}

/// Which exchange: the active one in the config, the one an adapter talks to, the one a trade
/// was opened on.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Deserialize, Serialize, utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ExchangeName {
    #[default]
    ExchangeA,
    ExchangeB,
}

impl ExchangeName {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ExchangeA => "exchange_a",
            Self::ExchangeB => "exchange_b",
        }
    }
}

impl std::fmt::Display for ExchangeName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExchangeMode {
    /// The in-process exchange simulator with a synthetic market; needs no keys.
    #[default]
    Paper,
    Testnet,
    Mainnet,
}

impl ExchangeMode {
    /// As the config spells it: `paper`, `testnet` or `mainnet`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Paper => "paper",
            Self::Testnet => "testnet",
            Self::Mainnet => "mainnet",
        }
    }
}

/// `[risk]`: limits checked at order time.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RiskConfig {
    /// Capital base cap in the quote asset; 0 means the whole balance is used.
    #[serde(deserialize_with = "crate::money::decimal")]
    pub max_trading_usdt: Decimal,
    /// Losing trades in a row (today) after which new entries stop with reason
    /// `daily_limit_reached`; 0 turns the limit off. Resets at midnight.
    pub max_consecutive_losses: u32,
}

impl Default for RiskConfig {
    fn default() -> Self {
        Self { max_trading_usdt: Decimal::ZERO, max_consecutive_losses: 3 }
    }
}

/// `[signals]`: how signals reach a trade.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SignalsConfig {
    /// Honour a scan result's `ask_coo = false`: the service confirms that signal itself
    /// (every gate still applies) and tells the boss the outcome instead of asking. Default
    /// false, NOT recommended: a plugin could then trade without a human.
    pub allow_auto_confirm: bool,
    /// Whose YES makes a signal confirmable (docs/security.md). `boss` (default): the boss's
    /// own, given on the service's message (button or typed reply, `[messenger]
    /// handle_replies`) or by a caller with the `admin` scope; an agent's confirm of an
    /// unapproved signal answers 403 `approval_required`. `agent`: the agent that relays the
    /// YES is trusted (the spec's flow).
    pub approval: ApprovalMode,
    /// Accept signals that agents post themselves (`POST /api/signal`, their own checklist);
    /// false: only plugin-made signals (scan-and-signal), a post answers 403.
    pub agent_signals: bool,
}

impl Default for SignalsConfig {
    fn default() -> Self {
        Self { allow_auto_confirm: false, approval: ApprovalMode::Boss, agent_signals: true }
    }
}

/// `[signals] approval`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApprovalMode {
    Boss,
    Agent,
}

/// `[protection]`: the protection loop's limits (docs/protection.md). Kept apart from
/// `[risk]`, which is checked when an order is sized; these watch the account as a whole.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProtectionConfig {
    /// Fall of the account equity below its high-water mark, in percent, above which the boss
    /// is alerted and new entries pause until `POST /api/protection/resume` (spec: above
    /// 15 %). 100 never pauses (equity cannot fall by more than all of it).
    #[serde(deserialize_with = "crate::money::decimal")]
    pub max_drawdown_pct: Decimal,
    /// What happens to a position whose stop-loss triggered but did not fill because the price
    /// gapped beyond its limit (spec, bracket step 3).
    pub gap_exit: GapExit,
    /// Where the stop-loss of new trades lives: `exchange` (an order on the book, in one OCO
    /// with the take-profit) or `service` (off the book: the service watches the price and
    /// exits at market; only the take-profit rests on the exchange). An exchange without
    /// exchange-side stops always uses `service`.
    pub stop: StopPlacement,
    /// How often the service checks the prices of the stops it watches, milliseconds.
    pub watch_interval_ms: u64,
    /// Trailing on streamed prices moves a symbol's stop at most once per this many
    /// milliseconds, so the exchange's order-count limits hold.
    pub trail_interval_ms: u64,
    /// The boss is told when the exchange's streams stay down this many seconds (protection
    /// then runs on the polled path), and again when they are back.
    pub stream_outage_alert_s: u64,
    /// Which coins the account holds without an open trade reconciliation adopts as trades
    /// (and protects): see [`AdoptHoldings`].
    pub adopt_holdings: AdoptHoldings,
    /// The stop of an adopted holding the journal knows no signal for, percent below its
    /// entry price (`adopt_holdings = "all"`).
    #[serde(deserialize_with = "crate::money::decimal")]
    pub adopt_sl_pct: Decimal,
    /// The take-profit of such a holding, percent above its entry price.
    #[serde(deserialize_with = "crate::money::decimal")]
    pub adopt_tp_pct: Decimal,
    /// Assets reconciliation never adopts (coins the operator keeps on the account for
    /// themselves, e.g. a fee coin).
    pub ignore_assets: Vec<String>,
}

/// `[protection] adopt_holdings`: what reconciliation does with coin the account holds while
/// the service has no trade for it (an entry whose answer was lost or damaged, a buy made by
/// hand, a deposit).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum AdoptHoldings {
    /// Adopt a holding only when the order journal shows the service bought it: the symbol's
    /// newest entry did not become a trade. It is protected at that signal's levels. Coin the
    /// service never bought is the operator's and is left alone.
    #[default]
    Journal,
    /// Also adopt every other holding above the symbol's minimum, protected at
    /// `adopt_sl_pct` / `adopt_tp_pct` (an account used by the service alone).
    All,
    /// Adopt nothing; a holding the journal attributes to the service is reported to the boss.
    Off,
}

impl Default for ProtectionConfig {
    fn default() -> Self {
        Self {
            max_drawdown_pct: Decimal::from(15),
            gap_exit: GapExit::Market,
            stop: StopPlacement::Exchange,
            watch_interval_ms: 1000,
            trail_interval_ms: 10_000,
            stream_outage_alert_s: 120,
            adopt_holdings: AdoptHoldings::Journal,
            adopt_sl_pct: Decimal::from(3),
            adopt_tp_pct: Decimal::from(6),
            ignore_assets: Vec::new(),
        }
    }
}

/// `[protection] stop`: where the stop-loss of new trades lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopPlacement {
    /// On the exchange's book, in one OCO list with the take-profit.
    #[default]
    Exchange,
    /// Off the book: the service watches the price and exits at market.
    Service,
}

impl StopPlacement {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Exchange => "exchange",
            Self::Service => "service",
        }
    }
}

/// `[protection] gap_exit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum GapExit {
    /// Close the position at market on the next protection run (the default: the loss is
    /// already past the stop, and an unfilled stop limit protects nothing).
    #[default]
    Market,
    /// Only alert the boss; the position stays open until someone closes it.
    Alert,
}

/// `[market]`: what is watched and how days are counted.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MarketConfig {
    pub watchlist: Vec<String>,
    /// The major coin that relative strength is measured against.
    pub reference_symbol: String,
    pub quote_asset: String,
    /// IANA time zone of the daily jobs (21:00 PnL report, midnight counter reset).
    pub timezone: String,
    /// Market-context snapshots older than this many days are deleted when a newer one of
    /// the same symbol is stored (at least 1).
    pub snapshot_retention_days: u32,
    /// The liquidity-filtered universe (`use_universe = true`) keeps at most this many
    /// symbols, the highest 24 h quote volume first (exchange weight of a scan grows with it).
    pub universe_max_symbols: u32,
}

impl MarketConfig {
    /// `timezone` as a zone (validated when the config is read; UTC should it not parse).
    pub fn tz(&self) -> chrono_tz::Tz {
        self.timezone.parse().unwrap_or(chrono_tz::Tz::UTC)
    }
}

impl Default for MarketConfig {
    fn default() -> Self {
        Self {
            watchlist: ["BTCUSDT", "ETHUSDT", "SOLUSDT", "BNBUSDT", "XRPUSDT"]
                .map(String::from)
                .to_vec(),
            reference_symbol: "BTCUSDT".into(),
            quote_asset: "USDT".into(),
            timezone: "UTC".into(),
            snapshot_retention_days: 90,
            universe_max_symbols: 300,
        }
    }
}

/// `[news]`: the RSS/Atom sources behind `GET /api/news` (docs/api.md#news).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct NewsConfig {
    /// Feed URLs (http or https), tried in this order; the first with valid items answers.
    /// Empty is valid: the route then answers that no news source is configured.
    pub sources: Vec<String>,
    /// Deadline of one source (connect, answer and body), seconds; a source past it is
    /// skipped for the next one.
    pub timeout_secs: u64,
    /// Headlines answered at most, in the feed's order.
    pub max_items: usize,
}

impl Default for NewsConfig {
    fn default() -> Self {
        Self {
            sources: [
                "https://www.coindesk.com/arc/outboundfeeds/rss/",
                "https://cointelegraph.com/rss",
                "https://decrypt.co/feed",
            ]
            .map(String::from)
            .to_vec(),
            timeout_secs: 5,
            max_items: 20,
        }
    }
}

/// `[plugins]`: the folder strategies are hot-loaded from and the sandbox limits of every
/// plugin call (see docs/strategies.md).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PluginsConfig {
    pub dir: String,
    /// Linear-memory cap of one plugin instance, MiB.
    pub memory_mib: u64,
    /// Deadline of one scan call, milliseconds.
    pub scan_timeout_ms: u64,
    /// Deadline of `describe()` when a file is loaded, milliseconds.
    pub load_timeout_ms: u64,
    /// Cap of one scan response, KiB.
    pub max_result_kib: u64,
    /// Cap of one plugin's persisted state, KiB.
    pub max_state_kib: u64,
    /// Plugin calls running at the same time; more wait.
    pub max_concurrent_calls: u32,
    /// Largest `.wasm` file accepted, KiB.
    pub max_wasm_kib: u64,
    /// Wasm stack of one call, KiB.
    pub max_stack_kib: u64,
    /// Quiet time after a change in the folder before the file is read, milliseconds.
    pub reload_debounce_ms: u64,
    /// Market data of plugin scans: `exchange` (the market area) or `synthetic`
    /// (deterministic random walks, for demos and tests only; never trade on it).
    pub market_data: String,
    /// Not read from the file: the executable that compiles plugins in a child process
    /// (`plugins::compiler`). `spotbot serve` sets its own binary; `None` (tests, backtests)
    /// compiles in the process.
    #[serde(skip)]
    pub compiler: Option<std::path::PathBuf>,
    /// Not read from the file: the config file the service was started with, which the
    /// background bias checks (`plugins::bias`) give their child process; `None` there: the
    /// defaults.
    #[serde(skip)]
    pub config_file: Option<std::path::PathBuf>,
}

impl Default for PluginsConfig {
    fn default() -> Self {
        Self {
            dir: "plugins".into(),
            memory_mib: 64,
            scan_timeout_ms: 2_000,
            load_timeout_ms: 1_000,
            max_result_kib: 1_024,
            max_state_kib: 64,
            max_concurrent_calls: 4,
            max_wasm_kib: 16 * 1024,
            max_stack_kib: 512,
            reload_debounce_ms: 100,
            market_data: "exchange".into(),
            compiler: None,
            config_file: None,
        }
    }
}

/// `[messenger]`: the bot API the boss is reached through (token and chat id by environment).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MessengerConfig {
    pub api_base: String,
    /// Poll the bot's updates and act on the boss's `1-YES <SYMBOL>` / `0-NO <SYMBOL>` replies
    /// and button presses. Only for a bot token no agent platform polls: a token has one
    /// consumer of updates (docs/messenger.md).
    pub handle_replies: bool,
    /// The one user whose replies count (with the chat of MESSENGER_CHAT_ID); unset means the
    /// chat id, which is the boss's user id in a private chat.
    pub boss_user_id: Option<i64>,
}

impl Default for MessengerConfig {
    fn default() -> Self {
        Self {
            api_base: "https://api.telegram.org".into(),
            handle_replies: false,
            boss_user_id: None,
        }
    }
}

/// `[scheduler]`: the built-in jobs (host/src/scheduler/, docs/scheduler.md), each switchable
/// off so that agents can drive the same routes instead.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SchedulerConfig {
    /// Master switch: false runs no job at all.
    pub enabled: bool,
    /// Every minute: raise stops of profitable positions (protection loop).
    pub trailing_stop: bool,
    /// Every minute: alert when the drawdown exceeds 15 % (protection loop).
    pub drawdown_check: bool,
    /// Every minute: settle manual LIMIT entries (fill → OCO, TTL → cancel).
    pub pending_entries_check: bool,
    /// Every minute: reconciliation (journal, open trades, the account's holdings), telling
    /// the boss only what is new.
    pub reconciliation: bool,
    /// Every hour: check the exchange connectivity.
    pub health_check: bool,
    /// 21:00 in `[market] timezone`: the daily PnL report to the boss.
    pub daily_pnl: bool,
    /// Every 5 minutes: expire and delete old signals.
    pub signal_cleanup: bool,
    /// Cron `*/5 * * * *`: the pump momentum scan (trading loop; off by default).
    pub pump_scan: bool,
    /// Every hour at :30: fill the outcome fields of stored pump alerts (reads candles only).
    pub pump_outcomes: bool,
    /// Seconds of real time between two looks at the clock; 0 turns the background loop off
    /// (tests call `Scheduler::tick` themselves).
    pub poll_seconds: u64,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            trailing_stop: true,
            drawdown_check: true,
            pending_entries_check: true,
            reconciliation: true,
            health_check: true,
            daily_pnl: true,
            signal_cleanup: true,
            // The scan belongs to the scout's trading loop: it reads the whole universe every
            // 5 minutes and messages the boss, so it is the operator's choice to switch it on.
            pump_scan: false,
            pump_outcomes: true,
            poll_seconds: 1,
        }
    }
}

/// `[license]`: the license server (its address can also come from TRADER_LICENSE_URL).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LicenseConfig {
    /// License server base URL; TRADER_LICENSE_URL overrides it.
    pub server_url: Option<String>,
    /// The license server's Ed25519 public key (64 hex characters, printed by
    /// `spotbot-license-server` at start). Answers that do not verify with it are never trusted.
    pub public_key: Option<String>,
    /// Seconds of real time between two looks at the revalidation schedule; 0 turns the
    /// background task off (tests drive it themselves).
    pub poll_seconds: u64,
}

impl Default for LicenseConfig {
    fn default() -> Self {
        Self { server_url: None, public_key: None, poll_seconds: 60 }
    }
}

/// `[api]`: who may call the API (docs/security.md).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ApiConfig {
    /// `tokens`: every route but liveness, the API document and the dashboard page needs
    /// `Authorization: Bearer <token>` (`spotbot token create`). `off`: no tokens; on an
    /// address beyond loopback the service warns at start and on `/api/health`. Unset: open
    /// on loopback until the first token is created, tokens from then on; beyond loopback
    /// tokens, and the service refuses to start without one.
    pub auth: Option<AuthMode>,
    /// `Host` header values the API accepts, as `host` (any port) or `host:port`; others get
    /// 403. Guards against DNS rebinding: a web page that resolves its own name to this
    /// machine cannot reach the API. Behind compose add the service name (`"spotbot"`).
    pub allowed_hosts: Vec<String>,
    /// Bad tokens one address may present within a minute; the next ones answer 429 for a
    /// minute (a valid token still passes). 0 switches the limit off.
    pub bad_tokens_per_minute: u32,
}

impl Default for ApiConfig {
    fn default() -> Self {
        Self {
            auth: None,
            allowed_hosts: ["127.0.0.1", "localhost", "::1"].map(String::from).to_vec(),
            bad_tokens_per_minute: 10,
        }
    }
}

/// `[api] auth`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    Tokens,
    Off,
}

/// `[mcp]`: the Model Context Protocol endpoint at `/mcp` (docs/agents.md#mcp). Its tools are
/// the API's operations, dispatched into the same router, so every gate of the API applies.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    /// false: `/mcp` is not served (answers 404 like any unknown path).
    pub enabled: bool,
    /// Moved to `[api] allowed_hosts` (the check now covers the whole API); kept only to say
    /// so when an older file still has it.
    pub allowed_hosts: Option<Vec<String>>,
}

impl Default for McpConfig {
    fn default() -> Self {
        Self { enabled: true, allowed_hosts: None }
    }
}
