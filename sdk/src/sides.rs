//! One-timeframe strategies that weigh a buy checklist against a sell checklist: the plumbing
//! such a strategy would otherwise write again (`ta_trend` and `ta_mean_revert` are two).
//!
//! Such a strategy reads one timeframe of each symbol (`timeframes = ["1h"]`, the host's
//! override of its one candle need), judges each symbol on its own and keeps no state. It writes
//! its [`Settings`] (config keys and their validation), its indicators and checks, and how a
//! symbol's closed candles become a buy, a sell or a skip ([`OneTimeframe::judge`]); the
//! manifest, the config parsing, the symbol loop and the refusal of stale or broken candles are
//! here, written once.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use spotbot_sdk::sides::{OneTimeframe, Opened, Settings, Side};
//! use spotbot_sdk::{ScanError, ScanResult, Strategy};
//!
//! #[derive(Default, Serialize, Deserialize)]
//! #[serde(default)]
//! struct Config {
//!     timeframes: Vec<String>,
//! }
//!
//! impl Settings for Config {
//!     fn timeframe(&self) -> &str {
//!         self.timeframes.first().map_or("1h", String::as_str)
//!     }
//!     fn validate(&self) -> Result<(), ScanError> {
//!         spotbot_sdk::config::one_timeframe(&self.timeframes).map(|_| ())
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
//! assert!(matches!(Mine::scan(spotbot_sdk::testing::request(
//!     &Mine::describe().candles, 2, r#"{"timeframes": ["4h", "1d"]}"#, 0)),
//!     Err(ScanError::BadConfig(m)) if m.starts_with("timeframes: ")));
//! assert_eq!(Side::Sell.as_str(), "sell");
//! ```

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::{
    ClosedCandles, Direction, Manifest, PluginKind, ScanError, ScanRequest, ScanResponse,
    ScanResult, Strategy, SymbolData,
};

/// The config of a one-timeframe strategy: its `Default` is the manifest's default config (the
/// one source of its keys), and every value is judged before a scan reads it.
pub trait Settings: Default + Serialize + DeserializeOwned {
    /// The one timeframe every check reads.
    fn timeframe(&self) -> &str;

    /// Judges every value the strategy reads: a [`ScanError::BadConfig`] naming the key (the
    /// helpers of [`crate::config`] word it), so the host refuses a bad section by name.
    fn validate(&self) -> Result<(), ScanError>;

    /// Parses a request's config with [`crate::config::parse`] (unknown keys refused, a missing
    /// key from `Default`, every error naming its key) and [`Settings::validate`]s it.
    fn parse(json: &str) -> Result<Self, ScanError> {
        let config: Self = crate::config::parse(json)?;
        config.validate()?;
        Ok(config)
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

/// For tests of a [`OneTimeframe`] strategy that signals with [`ScanResult::with_signal`] and
/// explains every result: the contract's checks of a result
/// ([`crate::testing::contract::result`]), the service's scores exactly on signals
/// ([`crate::testing::contract::scored_like_the_service`]), no tier (every signal is sized
/// `normal`), `ask_coo` set and a reason on every result, a signal's too.
pub fn assert_result<S: OneTimeframe>(r: &ScanResult) {
    crate::testing::contract::result(r, S::NAME);
    crate::testing::contract::scored_like_the_service(r);
    assert!(r.ask_coo && r.tier.is_none(), "{r:#?}");
    assert!(!r.reason.as_deref().unwrap_or_default().is_empty(), "every result says why: {r:#?}");
}
