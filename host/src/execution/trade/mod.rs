//! The open trade and the closed-trade row: what is stored (decimals, exactly as sent to and
//! received from the exchange; [`stored`] is the record's shape) and what the API shows (the
//! spec's float fields). [`protection`] defines what protects a trade.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

pub mod protection;
mod stored;

use crate::config::ExchangeName;
use crate::exchange::{Order, Side, SymbolRules};
use crate::money::json_number;
pub use protection::TradeProtection;
use stored::StoredTrade;

/// Direction of a signal or trade. Spot has no shorting: a `sell` exits a held position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Direction {
    Buy,
    Sell,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Buy => "buy",
            Self::Sell => "sell",
        }
    }

    /// The side of the order that opens a position in this direction.
    pub fn entry_side(self) -> Side {
        match self {
            Self::Buy => Side::Buy,
            Self::Sell => Side::Sell,
        }
    }

    /// The side of the orders that close it (the OCO legs, a market exit).
    pub fn exit_side(self) -> Side {
        match self {
            Self::Buy => Side::Sell,
            Self::Sell => Side::Buy,
        }
    }
}

/// Where a trade record came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum TradeSource {
    /// A confirmed pending signal.
    Signal,
    /// `POST /api/trade`.
    Trade,
    /// A manual LIMIT entry (`POST /api/trade/manual`) that filled.
    Manual,
    /// Adopted from an open OCO list the store did not know (reconciliation).
    Recovered,
    /// `POST /api/trades/restore`.
    Restored,
    /// A round trip made outside the service, copied into history by `POST /api/trades/sync`.
    Synced,
}

/// Whether the take-profit/stop-loss pair of a trade is in place (as stored, and as
/// [`TradeProtection::state`] tells it).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum ProtectionState {
    /// The entry filled; the protection is being placed (a restart in this state makes
    /// reconciliation place it).
    Pending,
    /// The protection legs are in place.
    Protected,
    /// The protection could not be placed (or ended without a fill): the boss was alerted.
    Unprotected { reason: String },
}

/// An open trade as stored (table `open_trades`, keyed by symbol).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(from = "StoredTrade", into = "StoredTrade")]
pub struct Trade {
    pub symbol: String,
    pub direction: Direction,
    pub bot: String,
    /// The exchange it was opened on.
    pub exchange: ExchangeName,
    /// Coin quantity held and protected (net of fees paid in the coin, rounded to the step).
    pub size: Decimal,
    /// Average fill price of the entry.
    pub entry_px: Decimal,
    /// What the held `size` cost on a buy entry (the fee is in it, since it reduced `size`;
    /// the coin's remainder below one step is not: see [`held_position`]), or the quote
    /// received net of the fee for a sell entry; the base of the pnl.
    pub entry_quote: Decimal,
    pub sl_px: Decimal,
    pub tp_px: Decimal,
    pub sl_pct: Decimal,
    pub tp_pct: Decimal,
    /// Where its stop lives (chosen when it opened), the orders that protect it, and whether
    /// they are in place.
    pub protection: TradeProtection,
    pub entry_order_id: Option<i64>,
    pub entry_client_order_id: Option<String>,
    pub source: TradeSource,
    /// Day of the entry, YYYY-MM-DD in the configured time zone.
    pub date: String,
    /// ISO 8601 time of the entry.
    pub opened_at: String,
}

/// An open trade as the API shows it (the spec's Trade resource plus protection facts).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TradeView {
    pub symbol: String,
    pub direction: Direction,
    pub bot: String,
    pub exchange: ExchangeName,
    /// Coin quantity.
    pub size: f64,
    pub entry_px: f64,
    pub sl_px: f64,
    pub tp_px: f64,
    pub sl_pct: f64,
    pub tp_pct: f64,
    /// The stop-loss order on the exchange (none for a stop the service watches).
    pub sl_oid: Option<i64>,
    pub tp_oid: Option<i64>,
    /// The OCO list holding both legs (none for a stop the service watches).
    pub oco_list_id: Option<i64>,
    /// Where the stop-loss lives: `exchange` (an order on the book) or `service` (watched by
    /// the service, which exits at market when the price crosses it).
    pub stop: String,
    /// `ok` when the leg is in place, `pending` while it is being placed, `failed` when the
    /// position is unprotected.
    pub sl_placed: String,
    pub tp_placed: String,
    /// `protected`, `pending` or `unprotected`.
    pub protection: String,
    /// Why the trade is unprotected, when it is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub protection_error: Option<String>,
    pub source: TradeSource,
    /// YYYY-MM-DD.
    pub date: String,
    pub opened_at: String,
}

impl Trade {
    pub fn view(&self) -> TradeView {
        let (placed, protection, error) = match self.protection.state() {
            ProtectionState::Protected => ("ok", "protected", None),
            ProtectionState::Pending => ("pending", "pending", None),
            ProtectionState::Unprotected { reason } => ("failed", "unprotected", Some(reason)),
        };
        TradeView {
            symbol: self.symbol.clone(),
            direction: self.direction,
            bot: self.bot.clone(),
            exchange: self.exchange,
            size: json_number(self.size),
            entry_px: json_number(self.entry_px),
            sl_px: json_number(self.sl_px),
            tp_px: json_number(self.tp_px),
            sl_pct: json_number(self.sl_pct),
            tp_pct: json_number(self.tp_pct),
            sl_oid: self.protection.stop_order_id(),
            tp_oid: self.protection.take_profit_order_id(),
            oco_list_id: self.protection.list_id(),
            stop: self.protection.placement().as_str().into(),
            sl_placed: placed.into(),
            tp_placed: placed.into(),
            protection: protection.into(),
            protection_error: error,
            source: self.source,
            date: self.date.clone(),
            opened_at: self.opened_at.clone(),
        }
    }
}

/// How a trade ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CloseReason {
    /// The take-profit leg filled on the exchange.
    TakeProfit,
    /// The stop-loss leg filled on the exchange.
    StopLoss,
    /// Closed at market by `POST /api/close`, `closeall` or a sell signal.
    Market,
}

/// A closed trade (table `closed_trades`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClosedTrade {
    pub trade: Trade,
    pub exit_px: Decimal,
    /// Quote received net of the exit fee (long), or paid including it (sold position).
    pub exit_quote: Decimal,
    pub qty_sold: Decimal,
    /// Net of the fees of both sides (see [`pnl_of`]).
    pub pnl: Decimal,
    pub reason: CloseReason,
    /// ISO 8601.
    pub closed_at: String,
}

/// A closed-trade row as the API shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ClosedTradeView {
    pub symbol: String,
    pub direction: Direction,
    pub bot: String,
    pub size: f64,
    pub entry_px: f64,
    pub exit_px: f64,
    /// Net of fees, in the quote asset.
    pub pnl: f64,
    pub reason: CloseReason,
    pub opened_at: String,
    pub closed_at: String,
}

impl ClosedTrade {
    pub fn view(&self) -> ClosedTradeView {
        ClosedTradeView {
            symbol: self.trade.symbol.clone(),
            direction: self.trade.direction,
            bot: self.trade.bot.clone(),
            size: json_number(self.qty_sold),
            entry_px: json_number(self.trade.entry_px),
            exit_px: json_number(self.exit_px),
            pnl: json_number(self.pnl),
            reason: self.reason,
            opened_at: self.trade.opened_at.clone(),
            closed_at: self.closed_at.clone(),
        }
    }
}

/// The position a buy entry opened: the coin it holds — what the fill received net of the fee
/// paid in the coin, rounded down to the step (an OCO for more than is held would be refused)
/// — and what that coin cost: the quote spent, in the proportion of the coin received that
/// the trade holds.
///
/// The remainder below one step (0.0000742 ETH of a 0.0258 ETH buy at a 0.1 % fee and a
/// 0.0001 step) stays in the account: it is not spent, so its cost is not the trade's loss.
/// A later market exit of the coin sells it (see `sizing::exit_qty`). Booking its cost here
/// would make a flat round trip lose the fees plus the remainder's value.
pub fn held_position(order: &Order, rules: &SymbolRules) -> (Decimal, Decimal) {
    let received = order.executed_qty.0 - order.commission_in(&rules.base_asset);
    let held = rules.floor_qty(received).0;
    let cost = if received > Decimal::ZERO {
        (order.cumulative_quote_qty * held / received).round_dp(8)
    } else {
        order.cumulative_quote_qty
    };
    (held, cost)
}

/// The net pnl of closing `qty` of `trade` for `exit_quote` — the quote received for a long
/// position, the quote paid (fee included) to buy back a sold one — against that quantity's
/// share of what the entry spent or received. A market exit may sell more than the trade's
/// size (the coin's sub-step remainder swept along): only the trade's own share of the exit
/// counts, the remainder's cost having never been booked either.
pub fn pnl_of(trade: &Trade, qty: Decimal, exit_quote: Decimal) -> Decimal {
    let own = if trade.size > Decimal::ZERO { qty.min(trade.size) } else { qty };
    let exit_share = if qty > own { exit_quote * own / qty } else { exit_quote };
    let entry_share = if trade.size.is_zero() {
        trade.entry_px * own
    } else {
        trade.entry_quote * own / trade.size
    };
    let pnl = match trade.direction {
        Direction::Buy => exit_share - entry_share,
        Direction::Sell => entry_share - exit_share,
    };
    pnl.round_dp(8)
}

/// A trade for unit tests: 1 ETH bought at 3000 with an exchange-side OCO (stop 2940, limit
/// 2934, target 3150). Each test changes the fields it is about with `..Trade::example(..)`.
#[cfg(test)]
impl Trade {
    pub(crate) fn example(direction: Direction) -> Self {
        use protection::OcoLegs;
        use rust_decimal_macros::dec;
        Trade {
            symbol: "ETHUSDT".into(),
            direction,
            bot: "mr_combined".into(),
            exchange: ExchangeName::ExchangeA,
            size: dec!(1),
            entry_px: dec!(3000),
            entry_quote: dec!(3000),
            sl_px: dec!(2940),
            tp_px: dec!(3150),
            sl_pct: dec!(2),
            tp_pct: dec!(5),
            protection: TradeProtection::list_in_place(
                None,
                dec!(2934),
                OcoLegs { list_id: 3, tp_order_id: Some(2), sl_order_id: Some(1) },
            ),
            entry_order_id: None,
            entry_client_order_id: None,
            source: TradeSource::Trade,
            date: "2026-01-01".into(),
            opened_at: String::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trade_stored_before_legs_existed_loads_with_its_oco() {
        let stored = serde_json::json!({
            "symbol": "ETHUSDT", "direction": "buy", "bot": "mr_combined",
            "exchange": "exchange_a", "size": "0.33", "entry_px": "3000",
            "entry_quote": "990", "sl_px": "2940", "tp_px": "3150", "sl_limit_px": "2934.12",
            "sl_pct": "2", "tp_pct": "5", "sl_oid": 11, "tp_oid": 12, "oco_list_id": 7,
            "entry_order_id": 5, "entry_client_order_id": "TE_a_ETHUSDT",
            "oco_client_order_id": "TO_a_ETHUSDT", "protection": {"state": "protected"},
            "source": "trade", "date": "2026-03-02", "opened_at": "2026-03-02T08:00:00+00:00"
        });
        let trade: Trade = serde_json::from_value(stored).unwrap();
        let p = &trade.protection;
        assert_eq!(
            (p.list_id(), p.take_profit_order_id(), p.stop_order_id()),
            (Some(7), Some(12), Some(11))
        );
        assert_eq!(p.placement(), crate::config::StopPlacement::Exchange);
        assert_eq!(p.client_id(), Some("TO_a_ETHUSDT"));
        assert!(p.is_protected());
        let again: Trade = serde_json::from_value(serde_json::to_value(&trade).unwrap()).unwrap();
        assert_eq!(again, trade, "the new shape reads back the same");
    }
}
