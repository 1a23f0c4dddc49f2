//! What the native tests of every [`OneTimeframe`] strategy share: the contract's tests with
//! what `OneTimeframe` fixes filled in ([`crate::one_timeframe_contract_tests!`]), the check
//! of every result ([`assert_result`]), and a scan of one symbol at the contract's clock
//! ([`one`]). A crate's tests keep what is theirs: its pinned manifest and default config, its
//! scenarios and what they must answer.

use crate::testing::{scan_one, scan_request, symbol_data};
use crate::{Candles, ScanRequest, ScanResult, SymbolData};

use super::OneTimeframe;

/// The clock of every request here: [`crate::testing::contract::NOW`] (2026-01-01T00:00:00Z),
/// so scenario paths ending at it are closed and fresh.
pub use crate::testing::contract::NOW;

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

/// A request at [`NOW`] under `config` (JSON text) over `symbols`.
pub fn request(config: &str, symbols: Vec<SymbolData>) -> ScanRequest {
    scan_request(NOW, config, symbols)
}

/// The one result of a scan at [`NOW`] of `symbol` with `candles` under `config`, after the
/// host's checks ([`crate::testing::scan_one`]) and [`assert_result`].
pub fn one<S: OneTimeframe>(symbol: &str, candles: Candles, config: &str) -> ScanResult {
    let r = scan_one::<S>(NOW, config, symbol_data(symbol, vec![candles]));
    assert_result::<S>(&r);
    r
}

/// The result's checklist as `(name, pass)` pairs, in order: what a scenario test compares.
pub fn names(r: &ScanResult) -> Vec<(&str, bool)> {
    r.checklist.iter().map(|c| (c.name.as_str(), c.pass)).collect()
}

/// [`crate::contract_tests!`] for a [`OneTimeframe`] strategy: what `OneTimeframe` fixes is
/// filled in (a strategy, its `Config`, no reference, no market context, [`assert_result`] on
/// every random walk's result), what the crate publishes stays pinned in the crate: its name,
/// its one candle need and its default config's JSON, literally.
///
/// ```ignore
/// spotbot_sdk::one_timeframe_contract_tests! {
///     plugin: crate::Mine,
///     name: "mine",
///     candles: ("1h", 200),
///     default_config: serde_json::json!({"timeframes": ["1h"], "rsi_max": 40.0}),
/// }
/// ```
#[macro_export]
macro_rules! one_timeframe_contract_tests {
    (
        plugin: $plugin:ty,
        name: $name:expr,
        candles: ($tf:expr, $count:expr),
        default_config: $default:expr $(,)?
    ) => {
        $crate::contract_tests! {
            plugin: $plugin,
            config: <$plugin as $crate::sides::OneTimeframe>::Config,
            name: $name,
            kind: $crate::PluginKind::Strategy,
            candles: [($tf, $count)],
            needs_reference: false,
            needs_market_context: false,
            default_config: $default,
            each_result: $crate::sides::testing::assert_result::<$plugin>,
        }
    };
}
