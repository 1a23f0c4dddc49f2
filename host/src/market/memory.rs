//! Compression-state and watch-state memory: what the market context remembers about a
//! (symbol, MTF) between computations, persisted so it survives restarts (spec, Persistence).
//!
//! The analysis itself ([`super::context::analyze`]) is a pure function of the candles in
//! front of it; it cannot say *since when* a market has been squeezed or in an HTF/MTF
//! conflict, nor how the last squeeze ended. These two memories do: every computation
//! observes the fresh context and the memory after that observation is shown in
//! `mtf.detail.compression_memory` / `mtf.detail.watch_memory` (and kept in the snapshot).
//! They are observed only when a context is computed (a cache miss, a stale entry or a
//! timeframe change), never on a cache hit.

use serde::{Deserialize, Serialize};

use super::context::{MarketContext, MarketDirection};
use spotbot_sdk::{PriorityDecision, Regime};

/// The running squeeze of one (symbol, MTF).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompressionEpisode {
    /// First computation that saw the regime compression, epoch seconds.
    pub since: i64,
    /// The latest computation that still saw it.
    pub last_seen: i64,
    /// How many computations saw it.
    pub observations: u32,
    /// The squeeze box when the episode began: high and low of the last 20 MTF candles.
    pub box_high: f64,
    pub box_low: f64,
}

/// How the previous squeeze ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompressionRelease {
    pub since: i64,
    /// First computation that no longer saw compression, epoch seconds.
    pub ended: i64,
    pub box_high: f64,
    pub box_low: f64,
    /// `up` (close above the box), `down` (below) or `inside`.
    pub direction: String,
    /// The regime it was released into.
    pub regime_after: Regime,
}

/// Compression-state memory of one (symbol, MTF).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompressionMemory {
    pub active: Option<CompressionEpisode>,
    pub last_release: Option<CompressionRelease>,
}

impl CompressionMemory {
    /// Records one computation: `squeeze_box` is (high, low) of the recent MTF candles and
    /// `close` the last MTF close.
    pub fn observe(&mut self, context: &MarketContext, squeeze_box: (f64, f64), close: f64) {
        let now = context.timestamp;
        if context.mtf.regime == Regime::Compression {
            match &mut self.active {
                Some(episode) => {
                    episode.last_seen = now;
                    episode.observations = episode.observations.saturating_add(1);
                }
                None => {
                    self.active = Some(CompressionEpisode {
                        since: now,
                        last_seen: now,
                        observations: 1,
                        box_high: squeeze_box.0,
                        box_low: squeeze_box.1,
                    });
                }
            }
        } else if let Some(episode) = self.active.take() {
            let direction = if close > episode.box_high {
                "up"
            } else if close < episode.box_low {
                "down"
            } else {
                "inside"
            };
            self.last_release = Some(CompressionRelease {
                since: episode.since,
                ended: now,
                box_high: episode.box_high,
                box_low: episode.box_low,
                direction: direction.to_string(),
                regime_after: context.mtf.regime,
            });
        }
    }
}

/// The running HTF/MTF conflict (`watch_regime_shift`) of one (symbol, MTF).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WatchEpisode {
    pub since: i64,
    pub last_seen: i64,
    pub observations: u32,
    /// The MTF trend direction that conflicts with the HTF when the watch began.
    pub mtf_direction: MarketDirection,
}

/// How the previous watch ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WatchResolution {
    pub since: i64,
    pub ended: i64,
    /// The decision that replaced `watch_regime_shift`.
    pub resolved_to: PriorityDecision,
}

/// Watch-state memory of one (symbol, MTF).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WatchMemory {
    pub active: Option<WatchEpisode>,
    pub last_resolution: Option<WatchResolution>,
}

impl WatchMemory {
    /// Records one computation.
    pub fn observe(&mut self, context: &MarketContext) {
        let now = context.timestamp;
        if context.priority_decision == PriorityDecision::WatchRegimeShift {
            match &mut self.active {
                Some(episode) => {
                    episode.last_seen = now;
                    episode.observations = episode.observations.saturating_add(1);
                }
                None => {
                    self.active = Some(WatchEpisode {
                        since: now,
                        last_seen: now,
                        observations: 1,
                        mtf_direction: context.mtf.trend_direction,
                    });
                }
            }
        } else if let Some(episode) = self.active.take() {
            self.last_resolution = Some(WatchResolution {
                since: episode.since,
                ended: now,
                resolved_to: context.priority_decision,
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::market::context::{HtfContext, MtfContext};
    use spotbot_sdk::{BosMode, LiquidityProfile, MacroPhase, RangePosition, TrendAge};

    fn context(at: i64, regime: Regime, decision: PriorityDecision) -> MarketContext {
        MarketContext {
            symbol: "BTCUSDT".into(),
            htf_tf: "1d".into(),
            mtf_tf: "4h".into(),
            htf: HtfContext {
                macro_phase: MacroPhase::Range,
                range_position: RangePosition::Mid,
                liquidity_profile: LiquidityProfile::Clean,
                range_high: 110.0,
                range_low: 90.0,
                detail: serde_json::json!({}),
            },
            mtf: MtfContext {
                regime,
                trend_direction: MarketDirection::Up,
                bos_mode: BosMode::None,
                trend_age: TrendAge::None,
                compression_bias: MarketDirection::None,
                volatile_chop: false,
                atr_val: 1.0,
                detail: serde_json::json!({}),
            },
            priority_decision: decision,
            no_trade_reason: String::new(),
            timestamp: at,
        }
    }

    #[test]
    fn a_squeeze_is_remembered_until_it_breaks_and_the_break_side_is_kept() {
        use PriorityDecision::{NoTrade, Standby};
        let mut memory = CompressionMemory::default();
        memory.observe(&context(100, Regime::Compression, NoTrade), (101.0, 99.0), 100.0);
        memory.observe(&context(200, Regime::Compression, NoTrade), (101.5, 98.0), 100.5);
        let active = memory.active.clone().unwrap();
        assert_eq!((active.since, active.last_seen, active.observations), (100, 200, 2));
        assert_eq!((active.box_high, active.box_low), (101.0, 99.0), "the box of the start");

        memory.observe(&context(300, Regime::Trend, Standby), (104.0, 99.0), 103.0);
        assert!(memory.active.is_none());
        let release = memory.last_release.clone().unwrap();
        assert_eq!((release.since, release.ended), (100, 300));
        assert_eq!(release.direction, "up");
        assert_eq!(release.regime_after, Regime::Trend);

        // Another computation outside compression changes nothing.
        memory.observe(&context(400, Regime::Sideway, Standby), (104.0, 99.0), 100.0);
        assert_eq!(memory.last_release.unwrap().ended, 300);
    }

    #[test]
    fn a_watch_is_remembered_until_another_decision_replaces_it() {
        use PriorityDecision::{TradeLong, WatchRegimeShift};
        let mut memory = WatchMemory::default();
        memory.observe(&context(10, Regime::Transition, WatchRegimeShift));
        memory.observe(&context(20, Regime::Transition, WatchRegimeShift));
        assert_eq!(memory.active.as_ref().unwrap().observations, 2);
        memory.observe(&context(30, Regime::Trend, TradeLong));
        assert!(memory.active.is_none());
        let resolution = memory.last_resolution.unwrap();
        assert_eq!((resolution.since, resolution.ended), (10, 30));
        assert_eq!(resolution.resolved_to, TradeLong);
    }
}
