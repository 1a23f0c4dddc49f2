//! Moves values between the host model (`model.rs`) and the generated Wasm bindings. Candle
//! columns are moved, never copied.

use super::bindings::exports::spotbot::strategy::plugin as wit;
use super::model as m;

/// `From` both ways for enums whose cases have the same names on both sides.
macro_rules! same_cases {
    ($($ty:ident { $($case:ident),+ $(,)? })+) => {$(
        impl From<m::$ty> for wit::$ty {
            fn from(v: m::$ty) -> Self {
                match v { $(m::$ty::$case => wit::$ty::$case),+ }
            }
        }
        impl From<wit::$ty> for m::$ty {
            fn from(v: wit::$ty) -> Self {
                match v { $(wit::$ty::$case => m::$ty::$case),+ }
            }
        }
    )+};
}

same_cases! {
    PluginKind { Strategy, Scanner }
    MacroPhase { Bull, Bear, Range }
    RangePosition { Low, Mid, High, JustBrokenUp, JustBrokenDown, Unknown }
    LiquidityProfile { Clean, EqualHighs, EqualLows, Void }
    Regime { Trend, Compression, Sideway, VolatileChop, Transition, Unknown }
    BosMode { Confirmed, Quick, None }
    TrendAge { Fresh, Extended, None }
    PriorityDecision { TradeLong, TradeShort, Standby, NoTrade, WatchRegimeShift }
    Direction { Buy, Sell, Skip }
    Stage { PumpWatch, PumpSignal }
    ConfidenceLevel { Low, Medium, High }
}

impl From<wit::Manifest> for m::Manifest {
    fn from(v: wit::Manifest) -> Self {
        m::Manifest {
            name: v.name,
            version: v.version,
            kind: v.kind.into(),
            description: v.description,
            candles: v
                .candles
                .into_iter()
                .map(|c| m::CandleNeed { timeframe: c.timeframe, count: c.count })
                .collect(),
            needs_reference: v.needs_reference,
            needs_market_context: v.needs_market_context,
            default_config: v.default_config,
        }
    }
}

impl From<m::Candles> for wit::Candles {
    fn from(v: m::Candles) -> Self {
        wit::Candles {
            timeframe: v.timeframe,
            open_time: v.open_time,
            open: v.open,
            high: v.high,
            low: v.low,
            close: v.close,
            volume: v.volume,
        }
    }
}

impl From<m::MarketContext> for wit::MarketContext {
    fn from(v: m::MarketContext) -> Self {
        wit::MarketContext {
            htf_tf: v.htf_tf,
            mtf_tf: v.mtf_tf,
            macro_phase: v.macro_phase.into(),
            range_position: v.range_position.into(),
            liquidity_profile: v.liquidity_profile.into(),
            range_high: v.range_high,
            range_low: v.range_low,
            regime: v.regime.into(),
            trend_direction: v.trend_direction,
            bos_mode: v.bos_mode.into(),
            trend_age: v.trend_age.into(),
            compression_bias: v.compression_bias,
            volatile_chop: v.volatile_chop,
            atr: v.atr,
            priority_decision: v.priority_decision.into(),
            no_trade_reason: v.no_trade_reason,
            timestamp: v.timestamp,
        }
    }
}

impl From<m::SymbolData> for wit::SymbolData {
    fn from(v: m::SymbolData) -> Self {
        wit::SymbolData {
            symbol: v.symbol,
            last_price: v.last_price,
            quote_volume_24h: v.quote_volume_24h,
            candles: v.candles.into_iter().map(Into::into).collect(),
            market_context: v.market_context.map(Into::into),
        }
    }
}

impl From<m::ScanRequest> for wit::ScanRequest {
    fn from(v: m::ScanRequest) -> Self {
        wit::ScanRequest {
            now_ms: v.now_ms,
            config: v.config,
            symbols: v.symbols.into_iter().map(Into::into).collect(),
            reference: v.reference.map(Into::into),
            state: v
                .state
                .into_iter()
                .map(|e| wit::StateEntry { key: e.key, value: e.value })
                .collect(),
        }
    }
}

impl From<wit::ScanResult> for m::ScanResult {
    fn from(v: wit::ScanResult) -> Self {
        m::ScanResult {
            symbol: v.symbol,
            bot: v.bot,
            direction: v.direction.into(),
            price: v.price,
            checklist: v
                .checklist
                .into_iter()
                .map(|c| m::Check { name: c.name, pass: c.pass, detail: c.detail })
                .collect(),
            passed: v.passed,
            total: v.total,
            ask_coo: v.ask_coo,
            sl_pct: v.sl_pct,
            tp_pct: v.tp_pct,
            ev: v.ev,
            confidence: v.confidence,
            tier: v.tier,
            reason: v.reason,
            tp1_pct: v.tp1_pct,
            tp2_pct: v.tp2_pct,
            range_support: v.range_support,
            range_resistance: v.range_resistance,
            range_midline: v.range_midline,
            rsi: v.rsi,
            macd_hist: v.macd_hist,
            bb_lower: v.bb_lower,
            bb_upper: v.bb_upper,
            bb_mid: v.bb_mid,
            vol_ratio: v.vol_ratio,
            adx: v.adx,
            stoch_k: v.stoch_k,
            buy_signals: v.buy_signals,
            sell_signals: v.sell_signals,
        }
    }
}

impl From<wit::ScanResponse> for m::ScanResponse {
    fn from(v: wit::ScanResponse) -> Self {
        m::ScanResponse {
            results: v.results.into_iter().map(Into::into).collect(),
            alerts: v
                .alerts
                .into_iter()
                .map(|a| m::ScannerAlert {
                    symbol: a.symbol,
                    stage: a.stage.into(),
                    confidence: a.confidence.into(),
                    price: a.price,
                    metrics: a
                        .metrics
                        .into_iter()
                        .map(|x| m::Metric { name: x.name, value: x.value })
                        .collect(),
                })
                .collect(),
            state_updates: v
                .state_updates
                .into_iter()
                .map(|u| match u {
                    wit::StateUpdate::Set(e) => {
                        m::StateUpdate::Set(m::StateEntry { key: e.key, value: e.value })
                    }
                    wit::StateUpdate::Remove(key) => m::StateUpdate::Remove(key),
                    wit::StateUpdate::Clear => m::StateUpdate::Clear,
                })
                .collect(),
        }
    }
}

impl From<wit::ScanError> for m::ScanError {
    fn from(v: wit::ScanError) -> Self {
        match v {
            wit::ScanError::BadConfig(s) => m::ScanError::BadConfig(s),
            wit::ScanError::MissingData(s) => m::ScanError::MissingData(s),
            wit::ScanError::Failed(s) => m::ScanError::Failed(s),
        }
    }
}
