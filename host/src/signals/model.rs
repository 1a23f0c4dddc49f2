//! The pending signal: the body that creates it, its status, and what the API shows.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::approval::{Approval, Origin, Terms};
use crate::config::{Tier, is_strategy_name};
use crate::exchange::Symbol;
use crate::execution::Direction;
use crate::money::Number;

/// One checklist item of a strategy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckItem {
    #[schema(min_length = 1, max_length = 64)]
    pub name: String,
    pub pass: bool,
    #[serde(default)]
    #[schema(max_length = 500)]
    pub detail: String,
}

/// Body of `POST /api/signal`. ev and confidence are not accepted: the service computes them
/// (see docs/signals.md), so a caller cannot talk its way past the gates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SignalInput {
    /// Exchange symbol such as BTCUSDT; must be listed on the active exchange.
    #[schema(pattern = "^[A-Z0-9]{2,20}$", example = "BTCUSDT")]
    pub symbol: String,
    pub direction: Direction,
    /// Strategy name.
    #[schema(pattern = "^[a-z][a-z0-9_]{0,63}$", example = "mr_combined")]
    pub bot: String,
    /// Price when the signal was made.
    #[schema(exclusive_minimum = 0)]
    pub price: Option<f64>,
    /// Stop-loss distance in percent of the entry; required for a buy.
    #[schema(value_type = Option<f64>, exclusive_minimum = 0, maximum = 99)]
    pub sl_pct: Option<Number>,
    /// Take-profit distance in percent of the entry; required for a buy.
    #[schema(value_type = Option<f64>, exclusive_minimum = 0, maximum = 1000)]
    pub tp_pct: Option<Number>,
    #[schema(max_items = 50)]
    pub checklist: Option<Vec<CheckItem>>,
    /// Items passed; must match the checklist when both are given.
    #[schema(minimum = 0, maximum = 50)]
    pub passed: Option<u32>,
    /// Items in the checklist; must match it when both are given.
    #[schema(minimum = 0, maximum = 50)]
    pub total: Option<u32>,
    pub rsi: Option<f64>,
    pub macd_hist: Option<f64>,
    pub bb_lower: Option<f64>,
    pub bb_upper: Option<f64>,
    pub bb_mid: Option<f64>,
    pub vol_ratio: Option<f64>,
    #[schema(minimum = 0, maximum = 1000)]
    pub buy_signals: Option<u32>,
    #[schema(minimum = 0, maximum = 1000)]
    pub sell_signals: Option<u32>,
    pub adx: Option<f64>,
    pub stoch_k: Option<f64>,
    #[schema(minimum = 0)]
    pub tp1_pct: Option<f64>,
    #[schema(minimum = 0)]
    pub tp2_pct: Option<f64>,
    #[schema(minimum = 0)]
    pub range_support: Option<f64>,
    #[schema(minimum = 0)]
    pub range_resistance: Option<f64>,
    #[schema(minimum = 0)]
    pub range_midline: Option<f64>,
    /// Setup quality; sizes the entry by the strategy's risk_normal / risk_aplus /
    /// risk_aplusplus (left out: normal).
    pub tier: Option<Tier>,
}

/// The spec's PendingSignal.status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SignalStatus {
    Pending,
    Confirmed,
    Skipped,
    Expired,
}

impl SignalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Confirmed => "confirmed",
            Self::Skipped => "skipped",
            Self::Expired => "expired",
        }
    }
}

/// A pending signal as kept in memory.
#[derive(Debug, Clone, PartialEq)]
pub struct PendingSignal {
    /// Short id (base 36 of the creation time in ms); order client ids derive from it.
    pub id: String,
    pub input: SignalInput,
    pub status: SignalStatus,
    pub tg_sent: bool,
    pub ev: f64,
    pub confidence: u32,
    pub created_ms: i64,
    /// A plugin's scan or an agent's own post.
    pub origin: Origin,
    /// The boss's YES, bound to the terms it was given on.
    pub approval: Option<Approval>,
}

impl PendingSignal {
    /// What the boss approves: id, symbol, side, stop and target distances, tier and expiry of
    /// the signal. A changed or re-posted signal has other terms and needs a new YES.
    pub fn terms(&self) -> Terms {
        let i = &self.input;
        let pct = |v: Option<crate::money::Number>| v.map(|n| n.to_string()).unwrap_or_default();
        Terms::over(&[
            &self.id,
            &i.symbol,
            i.direction.as_str(),
            &pct(i.sl_pct),
            &pct(i.tp_pct),
            i.tier.map_or("", |t| t.as_str()),
            &(self.created_ms + super::EXPIRY_MS).to_string(),
        ])
    }

    /// Whether the boss's YES covers this signal as it is now.
    pub fn approved_by_boss(&self) -> Option<&Approval> {
        self.approval.as_ref().filter(|a| a.terms == self.terms())
    }
}

/// A signal as the API shows it: every field of the spec's PendingSignal. (The fields of
/// [`SignalInput`] are repeated rather than flattened: the input refuses unknown fields, and a
/// flattened schema would then forbid the fields added here.)
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SignalView {
    pub id: String,
    pub symbol: String,
    pub direction: Direction,
    pub bot: String,
    pub price: Option<f64>,
    pub sl_pct: Option<f64>,
    pub tp_pct: Option<f64>,
    pub checklist: Option<Vec<CheckItem>>,
    pub passed: Option<u32>,
    pub total: Option<u32>,
    pub rsi: Option<f64>,
    pub macd_hist: Option<f64>,
    pub bb_lower: Option<f64>,
    pub bb_upper: Option<f64>,
    pub bb_mid: Option<f64>,
    pub vol_ratio: Option<f64>,
    pub buy_signals: Option<u32>,
    pub sell_signals: Option<u32>,
    pub adx: Option<f64>,
    pub stoch_k: Option<f64>,
    pub tp1_pct: Option<f64>,
    pub tp2_pct: Option<f64>,
    pub range_support: Option<f64>,
    pub range_resistance: Option<f64>,
    pub range_midline: Option<f64>,
    pub tier: Option<Tier>,
    pub status: SignalStatus,
    /// The approval request reached the messenger.
    pub tg_sent: bool,
    pub age_seconds: i64,
    /// Expected value computed when the signal was stored (gate: > 25).
    pub ev: f64,
    /// Confidence 0..=10 computed when the signal was stored (gate: >= 8).
    pub confidence: u32,
    /// ISO 8601 creation time.
    pub created_at: String,
    /// Where the checklist came from: a plugin's scan (scored by the service) or an agent's
    /// own post (written by the agent).
    pub origin: Origin,
    /// Who gave the boss's YES on the signal as it is now (`[signals] approval = "boss"`);
    /// absent until then.
    pub approved_by: Option<String>,
}

impl PendingSignal {
    pub fn age_seconds(&self, now_ms: i64) -> i64 {
        (now_ms - self.created_ms).max(0) / 1000
    }

    pub fn view(&self, now_ms: i64) -> SignalView {
        let i = self.input.clone();
        SignalView {
            id: self.id.clone(),
            symbol: i.symbol,
            direction: i.direction,
            bot: i.bot,
            price: i.price,
            sl_pct: i.sl_pct.map(Number::to_f64),
            tp_pct: i.tp_pct.map(Number::to_f64),
            checklist: i.checklist,
            passed: i.passed,
            total: i.total,
            rsi: i.rsi,
            macd_hist: i.macd_hist,
            bb_lower: i.bb_lower,
            bb_upper: i.bb_upper,
            bb_mid: i.bb_mid,
            vol_ratio: i.vol_ratio,
            buy_signals: i.buy_signals,
            sell_signals: i.sell_signals,
            adx: i.adx,
            stoch_k: i.stoch_k,
            tp1_pct: i.tp1_pct,
            tp2_pct: i.tp2_pct,
            range_support: i.range_support,
            range_resistance: i.range_resistance,
            range_midline: i.range_midline,
            tier: i.tier,
            status: self.status,
            tg_sent: self.tg_sent,
            age_seconds: self.age_seconds(now_ms),
            ev: self.ev,
            confidence: self.confidence,
            created_at: chrono::DateTime::from_timestamp_millis(self.created_ms)
                .map(|t| t.to_rfc3339())
                .unwrap_or_default(),
            origin: self.origin.clone(),
            approved_by: self.approved_by_boss().map(|a| a.by.clone()),
        }
    }
}

/// Checks a body beyond its types; `Err((field, reason))` names the bad field.
impl SignalInput {
    /// `passed` and `total` counted from the checklist where the caller left them out, so
    /// every reader of the stored signal (the list, the approval request) sees them.
    pub fn with_counts(mut self) -> Self {
        if let Some(list) = &self.checklist {
            self.passed = self.passed.or(Some(list.iter().filter(|c| c.pass).count() as u32));
            self.total = self.total.or(Some(list.len() as u32));
        }
        self
    }

    /// A buy's stop and target distances in percent, to 6 decimals; `None` when either is
    /// missing, which [`validate`] refuses for a buy (a missing one is never taken as 0).
    pub fn bracket(&self) -> Option<(Decimal, Decimal)> {
        let pct = |v: Option<Number>| v?.decimal().map(|d| d.round_dp(6));
        Some((pct(self.sl_pct)?, pct(self.tp_pct)?))
    }
}

pub fn validate(input: &SignalInput) -> Result<(), (&'static str, String)> {
    input.symbol.parse::<Symbol>().map_err(|reason| ("symbol", reason))?;
    if !is_strategy_name(&input.bot) {
        return Err(("bot", "must match [a-z][a-z0-9_]{0,63}, e.g. mr_combined".into()));
    }
    let positive = [("price", input.price)];
    for (field, value) in positive {
        if let Some(v) = value
            && !(v.is_finite() && v > 0.0)
        {
            return Err((field, format!("must be a positive number, got {v}")));
        }
    }
    if input.direction == Direction::Buy {
        // A buy's bracket is placed at these distances from the entry: a missing one would
        // be a stop or target at the entry price itself, never a default.
        for (field, value) in [("sl_pct", input.sl_pct), ("tp_pct", input.tp_pct)] {
            if value.is_none() {
                return Err((
                    field,
                    "is required for a buy: the bracket's stop and target are placed sl_pct \
                     below and tp_pct above the entry"
                        .into(),
                ));
            }
        }
    }
    let percents = [
        ("sl_pct", input.sl_pct, Decimal::from(99)),
        ("tp_pct", input.tp_pct, Decimal::ONE_THOUSAND),
    ];
    for (field, value, max) in percents {
        if let Some(v) = value
            && v.decimal_if(|d| d > Decimal::ZERO && d <= max).is_none()
        {
            return Err((field, format!("must be > 0 and <= {max} percent, got {v}")));
        }
    }
    let non_negative = [
        ("tp1_pct", input.tp1_pct),
        ("tp2_pct", input.tp2_pct),
        ("range_support", input.range_support),
        ("range_resistance", input.range_resistance),
        ("range_midline", input.range_midline),
    ];
    for (field, value) in non_negative {
        if let Some(v) = value
            && !(v.is_finite() && v >= 0.0)
        {
            return Err((field, format!("must be a number >= 0, got {v}")));
        }
    }
    let counts = [
        ("passed", input.passed, 50),
        ("total", input.total, 50),
        ("buy_signals", input.buy_signals, 1000),
        ("sell_signals", input.sell_signals, 1000),
    ];
    for (field, value, max) in counts {
        if value.is_some_and(|v| v > max) {
            return Err((field, format!("must be at most {max}")));
        }
    }
    if let Some(list) = &input.checklist {
        if list.len() > 50 {
            return Err(("checklist", "has more than 50 items".into()));
        }
        if let Some(item) = list.iter().find(|c| c.name.is_empty() || c.name.chars().count() > 64) {
            return Err((
                "checklist",
                format!("item name {:?} must be 1-64 characters", item.name),
            ));
        }
        if list.iter().any(|c| c.detail.chars().count() > 500) {
            return Err(("checklist", "an item detail is longer than 500 characters".into()));
        }
        let passed = list.iter().filter(|c| c.pass).count() as u32;
        if input.passed.is_some_and(|p| p != passed) {
            return Err(("passed", format!("must match the checklist ({passed} passed)")));
        }
        if input.total.is_some_and(|t| t as usize != list.len()) {
            return Err(("total", format!("must match the checklist ({} items)", list.len())));
        }
    } else if let (Some(p), Some(t)) = (input.passed, input.total)
        && p > t
    {
        return Err(("passed", format!("{p} is more than total {t}")));
    }
    Ok(())
}
