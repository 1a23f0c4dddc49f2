//! What the signal routes answer: creation outcomes, the confirm answer with what its
//! execution produced, and cleanup.

use serde::Serialize;
use utoipa::ToSchema;

use super::model::SignalStatus;
use crate::execution::{CloseRow, TradeView};

/// Outcome of `POST /api/signal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CreateStatus {
    /// Created and the approval request was sent.
    Pending,
    /// Created, but the approval request could not be sent.
    MessengerFailed,
    /// A signal for the symbol is already pending.
    DuplicateSkipped,
    /// A trade for the symbol is open.
    TradeExistsSkipped,
    /// A sell signal without an open position.
    NoPositionSellSkipped,
    /// A buy while the daily trade limit or the consecutive-loss limit blocks new entries:
    /// confirm would refuse it, so the boss is not asked (`reason` says which limit and how
    /// it is lifted).
    DailyLimitSkipped,
    /// A buy while the drawdown pause blocks new entries (`reason` says since when and why).
    DrawdownPausedSkipped,
    /// A buy while the boss has paused new entries (`reason` says since when and by whom).
    EntriesPausedSkipped,
    /// Created without asking the boss, to be confirmed at once (scan-and-signal only, with
    /// `[signals] allow_auto_confirm`).
    AutoConfirmed,
}

impl CreateStatus {
    /// The wire name (`duplicate_skipped`).
    pub fn as_str(self) -> &'static str {
        match self {
            CreateStatus::Pending => "pending",
            CreateStatus::MessengerFailed => "messenger_failed",
            CreateStatus::DuplicateSkipped => "duplicate_skipped",
            CreateStatus::TradeExistsSkipped => "trade_exists_skipped",
            CreateStatus::NoPositionSellSkipped => "no_position_sell_skipped",
            CreateStatus::DailyLimitSkipped => "daily_limit_skipped",
            CreateStatus::DrawdownPausedSkipped => "drawdown_paused_skipped",
            CreateStatus::EntriesPausedSkipped => "entries_paused_skipped",
            CreateStatus::AutoConfirmed => "auto_confirmed",
        }
    }
}

/// The answer of `POST /api/signal`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct CreateAnswer {
    /// True when a signal was created (pending or messenger_failed).
    pub ok: bool,
    pub symbol: String,
    pub status: CreateStatus,
    pub ev: Option<f64>,
    pub confidence: Option<u32>,
    /// Why a skip happened, when the status alone does not say it (`daily_limit_skipped`,
    /// `drawdown_paused_skipped`, `entries_paused_skipped`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What the execution of a confirmed signal produced.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TradeResult {
    pub ok: bool,
    /// The opened trade (buy signals).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub opened: Option<TradeView>,
    /// The closed position (sell signals exit the position).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closed: Option<CloseRow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The answer of a confirm that was not refused with an error status.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ConfirmAnswer {
    /// True when the trade was placed (or had been, for a repeated confirm).
    pub ok: bool,
    pub symbol: String,
    /// `confirmed`, or `pending` when nothing was placed (gates, limits, refusal).
    pub status: SignalStatus,
    pub ev: f64,
    pub confidence: u32,
    /// Why nothing was placed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trade: Option<TradeResult>,
    /// This confirm placed nothing because an earlier one already executed (or is executing)
    /// the signal, or a trade placed with `POST /trade` / `POST /api/trade` consumed it.
    pub already_confirmed: bool,
    /// Who gave the boss's YES the execution ran on (`[signals] approval = "boss"`), e.g.
    /// `the boss in the messenger` or `boss (token 3f9a…)`; absent in `agent` mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approved_by: Option<String>,
}

/// The answer of cleanup.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct CleanupAnswer {
    pub ok: bool,
    pub expired: Vec<String>,
    pub deleted: Vec<String>,
    pub count_expired: usize,
    pub count_deleted: usize,
}
