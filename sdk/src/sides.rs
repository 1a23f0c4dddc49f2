//! One-timeframe strategies that weigh a buy checklist against a sell checklist: the plumbing
//! such a strategy would otherwise write again (`ta_trend` and `ta_mean_revert` are two).
//!
//! Such a strategy reads one timeframe of each symbol (`timeframes = ["1h"]`, the host's
//! override of its one candle need, among its [`HostKeys`]), judges each symbol on its own and
//! keeps no state. It writes its [`Settings`] (its own config keys and their validation), its
//! indicators and checks (the usual [`Oscillators`] are here), and how a symbol's closed
//! candles become a buy, a sell or a skip ([`OneTimeframe::judge`]); the manifest, the config
//! parsing, the symbol loop and the refusal of stale or broken candles are here, written once,
//! and so are the helpers of its native tests ([`testing`],
//! [`crate::one_timeframe_contract_tests!`]).
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use spotbot_sdk::sides::{HostKeys, OneTimeframe, Opened, Settings, Side};
//! use spotbot_sdk::{ScanError, ScanResult, Strategy};
//!
//! #[derive(Serialize, Deserialize)]
//! #[serde(default)]
//! struct Config {
//!     #[serde(flatten)]
//!     host: HostKeys,
//!     min_passed: u32,
//! }
//!
//! impl Default for Config {
//!     fn default() -> Self {
//!         Config { host: HostKeys::on("1h"), min_passed: 5 }
//!     }
//! }
//!
//! impl Settings for Config {
//!     fn host(&self) -> &HostKeys {
//!         &self.host
//!     }
//!     fn validate(&self) -> Result<(), ScanError> {
//!         spotbot_sdk::config::positive("min_passed", self.min_passed as f64)
//!     }
//! }
//!
//! struct Mine;
//! impl OneTimeframe for Mine {
//!     type Config = Config;
//!     const NAME: &'static str = "mine";
//!     const VERSION: &'static str = "0.1.0";
//!     const DESCRIPTION: &'static str = "skips every symbol";
//!     const CANDLES: u32 = 50;
//!     fn min_bars(_: &Config) -> usize {
//!         20
//!     }
//!     fn judge(_: &Config, symbol: Opened<'_>) -> ScanResult {
//!         let why = format!("{} closed candles, no rule yet", symbol.bars.len());
//!         symbol.result.with_reason(why)
//!     }
//! }
//!
//! assert_eq!(Mine::describe().candles[0].timeframe, "1h");
//! // The host's keys are published flat, before the strategy's own.
//! assert!(Mine::describe().default_config.starts_with(r#"{"enabled":true,"#));
//! assert!(matches!(Mine::scan(spotbot_sdk::testing::request(
//!     &Mine::describe().candles, 2, r#"{"timeframes": ["4h", "1d"]}"#, 0)),
//!     Err(ScanError::BadConfig(m)) if m.starts_with("timeframes: ")));
//! assert_eq!(Side::Sell.as_str(), "sell");
//! ```

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::config::{ScanKeys, TradeKeys};
use crate::{
    ClosedCandles, Direction, Manifest, PluginKind, ScanError, ScanRequest, ScanResponse,
    ScanResult, Strategy, SymbolData,
};

mod oscillators;
pub mod testing;

pub use oscillators::Oscillators;

/// The config of a one-timeframe strategy: its `Default` is the manifest's default config (the
/// one source of its keys), and every value is judged before a scan reads it.
pub trait Settings: Default + Serialize + DeserializeOwned {
    /// The keys the host reads, the timeframe among them (embedded as a [`HostKeys`]).
    fn host(&self) -> &HostKeys;

    /// Judges every value of the strategy's own keys: a [`ScanError::BadConfig`] naming the
    /// key (the helpers of [`crate::config`] word it), so the host refuses a bad section by
    /// name.
    fn validate(&self) -> Result<(), ScanError>;

    /// The one timeframe every check reads.
    fn timeframe(&self) -> &str {
        self.host().timeframe()
    }

    /// Parses a request's config with [`crate::config::parse`] (unknown keys refused, a missing
    /// key from `Default`, every error naming its key), then judges the timeframe
    /// ([`HostKeys::validate`]) and [`Settings::validate`]s the rest.
    fn parse(json: &str) -> Result<Self, ScanError> {
        let config: Self = crate::config::parse(json)?;
        config.host().validate()?;
        config.validate()?;
        Ok(config)
    }
}

/// The keys of a one-timeframe strategy's section that the service reads (docs/strategies.md,
/// "Keys the host acts on"): which symbols it scans ([`ScanKeys`]), the one timeframe, and how
/// it trades a signal ([`TradeKeys`], no tiers: every signal is `normal`). Embed it with
/// `#[serde(flatten)]`: the keys stay flat in the published JSON, in this order. Declared in
/// each strategy's section, with the service's defaults, so its trades never borrow another
/// strategy's values.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostKeys {
    /// `enabled`, `use_universe`, `watchlist_override`, `min_quote_volume_usd`.
    #[serde(flatten)]
    pub scan: ScanKeys,
    /// Host and plugin: the one timeframe every check reads, as a one-element list (the host's
    /// `timeframes` replaces the manifest's candle needs in order).
    pub timeframes: Vec<String>,
    /// `size_pct`, `max_trades_per_day`, `trailing_*` and `risk_normal`.
    #[serde(flatten)]
    pub trade: TradeKeys,
}

impl HostKeys {
    /// The service's defaults on `timeframe`: a strategy's default.
    pub fn on(timeframe: &str) -> HostKeys {
        HostKeys {
            scan: ScanKeys::default(),
            timeframes: vec![timeframe.to_string()],
            trade: TradeKeys::default(),
        }
    }

    /// The one timeframe (the first of a list [`HostKeys::validate`] refuses, `""` for an
    /// empty one): a scan reads it only after the validation.
    pub fn timeframe(&self) -> &str {
        self.timeframes.first().map_or("", String::as_str)
    }

    /// Exactly one known timeframe ([`crate::config::one_timeframe`]), or a
    /// [`ScanError::BadConfig`] naming `timeframes`. The service judges its other keys itself.
    pub fn validate(&self) -> Result<(), ScanError> {
        crate::config::one_timeframe(&self.timeframes).map(|_| ())
    }
}

/// A strategy that judges each symbol on one timeframe's closed candles. Implementing it makes
/// the type a [`Strategy`] (export it with [`crate::export_strategy!`]): `describe` publishes
/// one candle need of the default config's timeframe and the default config; `scan` parses the
/// config and answers one result per symbol, in order, with no alerts and no state.
pub trait OneTimeframe: 'static {
    /// The strategy's config.
    type Config: Settings;
    /// The plugin name: the `bot` of every result and the `<name>` of `[strategy.<name>]`.
    const NAME: &'static str;
    /// The plugin version, the crate's `env!("CARGO_PKG_VERSION")`.
    const VERSION: &'static str;
    /// The manifest's description.
    const DESCRIPTION: &'static str;
    /// Candles asked for per symbol: a fixed count keeps Wilder-type indicators, which remember
    /// all history, reproducible.
    const CANDLES: u32;

    /// Closed candles a symbol needs before any check runs; fewer is a skip that says so.
    fn min_bars(config: &Self::Config) -> usize;

    /// A buy, a sell or a skip from the symbol's closed candles: finish and return
    /// `symbol.result` (a skip so far, priced at the live price).
    fn judge(config: &Self::Config, symbol: Opened<'_>) -> ScanResult;
}

/// One symbol ready to be judged: only closed, fresh candles count (the host's last candle may
/// still be forming, and a check that read it would change its mind within the candle).
#[derive(Debug)]
pub struct Opened<'a> {
    /// A `skip` of the symbol at [`Opened::live`] (0 without one), with no reason yet.
    pub result: ScanResult,
    /// The closed candles of the config's timeframe, at least [`OneTimeframe::min_bars`].
    pub bars: ClosedCandles<'a>,
    /// The ticker's price ([`SymbolData::live_price`]): the entry of a signal.
    pub live: Option<f64>,
}

/// Which way a checklist looks: a buy, or a sell (on spot: leave the coin held).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Buy,
    Sell,
}

impl Side {
    /// The result's direction of a signal on this side.
    pub fn direction(self) -> Direction {
        match self {
            Side::Buy => Direction::Buy,
            Side::Sell => Direction::Sell,
        }
    }

    /// `"buy"` or `"sell"`.
    pub fn as_str(self) -> &'static str {
        self.direction().as_str()
    }
}

/// A symbol's result: `Err` only when the config's timeframe is missing altogether (the host
/// must send what the manifest asks for); too few, stale or broken candles are a skip whose
/// reason starts `data: `.
fn evaluate<S: OneTimeframe>(
    config: &S::Config,
    data: &SymbolData,
    now_ms: i64,
) -> Result<ScanResult, ScanError> {
    let live = data.live_price();
    let result = ScanResult::new(&data.symbol, S::NAME, Direction::Skip, live.unwrap_or(0.0));
    Ok(match data.closed_candles(config.timeframe(), now_ms, S::min_bars(config))? {
        Ok(bars) => S::judge(config, Opened { result, bars, live }),
        Err(why) => result.with_reason(format!("data: {why}")),
    })
}

impl<S: OneTimeframe> Strategy for S {
    fn describe() -> Manifest {
        let config = S::Config::default();
        Manifest::new(S::NAME, S::VERSION, PluginKind::Strategy, S::DESCRIPTION)
            .with_candles(config.timeframe(), S::CANDLES)
            .with_default_config(&config)
    }

    fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let config = S::Config::parse(&request.config)?;
        request.evaluate_each(|symbol| evaluate::<S>(&config, symbol, request.now_ms))
    }
}
