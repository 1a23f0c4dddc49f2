//! `POST /api/trades/restore`: an operator puts one trade record into the book (for instance a
//! position opened by hand on the exchange). A buy is a held coin (stop below, target above);
//! a sell is coin sold that its OCO buys back (stop above, target below). With `sl_oid` the record is tied to that stop's
//! OCO list on the exchange; without it the trade is unprotected and the next reconciliation
//! places its OCO.

use rust_decimal::Decimal;
use serde::Deserialize;
use utoipa::ToSchema;

use super::client_id::{ClientOrderId, Purpose};
use super::sizing::stop_limit_px;
use super::trade::protection::{OcoLegs, TradeProtection};
use super::trade::{Direction, Trade, TradeSource};
use super::{Execution, ExecutionError};
use crate::config::is_strategy_name;
use crate::exchange::{OrderRef, Symbol};
use crate::money::Number;

/// Body of `POST /api/trades/restore`.
#[derive(Debug, Clone, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RestoreInput {
    #[schema(pattern = "^[A-Z0-9]{2,20}$", example = "BTCUSDT")]
    pub symbol: String,
    pub direction: Direction,
    /// Coin quantity held.
    #[schema(value_type = f64, minimum = 0.00000001, maximum = 1000000000000.0)]
    pub size: Number,
    #[schema(value_type = f64, minimum = 0.00000001, maximum = 1000000000000.0)]
    pub entry_px: Number,
    #[schema(value_type = f64, minimum = 0.00000001, maximum = 1000000000000.0)]
    pub sl_px: Number,
    #[schema(value_type = f64, minimum = 0.00000001, maximum = 1000000000000.0)]
    pub tp_px: Number,
    /// Exchange order id of the stop-loss leg (needed for trailing and for closing).
    pub sl_oid: Option<i64>,
    pub tp_oid: Option<i64>,
    /// Strategy name; default `ta_trend` as in the earlier route set.
    #[schema(pattern = "^[a-z][a-z0-9_]{0,63}$")]
    pub bot: Option<String>,
    /// YYYY-MM-DD; default today.
    #[schema(format = Date)]
    pub date: Option<String>,
}

fn invalid(field: &str, reason: impl std::fmt::Display) -> ExecutionError {
    ExecutionError::Invalid(format!("`{field}` {reason}"))
}

/// Restored amounts and prices: 1e-8 (the exchanges' smallest step) up to 1e12.
fn amount(field: &str, value: Number) -> Result<Decimal, ExecutionError> {
    value
        .decimal_if(|d| d >= Decimal::new(1, 8) && d <= Decimal::from(1_000_000_000_000_i64))
        .map(|d| d.round_dp(8))
        .ok_or_else(|| invalid(field, format!("must be between 0.00000001 and 1e12, got {value}")))
}

impl Execution {
    /// Validates and stores the trade; 409 when the symbol already has one.
    pub async fn restore(&self, input: RestoreInput) -> Result<Trade, ExecutionError> {
        let bot = input.bot.clone().unwrap_or_else(|| "ta_trend".into());
        input.symbol.parse::<Symbol>().map_err(|reason| invalid("symbol", reason))?;
        if !is_strategy_name(&bot) {
            return Err(invalid("bot", "must match [a-z][a-z0-9_]{0,63}"));
        }
        let date = match &input.date {
            Some(d) => chrono::NaiveDate::parse_from_str(d, "%Y-%m-%d")
                .map_err(|_| invalid("date", format!("{d:?} is not a date YYYY-MM-DD")))?
                .format("%Y-%m-%d")
                .to_string(),
            None => self.today().iso(),
        };
        let size = amount("size", input.size)?;
        let entry_px = amount("entry_px", input.entry_px)?;
        let sl_px = amount("sl_px", input.sl_px)?;
        let tp_px = amount("tp_px", input.tp_px)?;
        let ordered = match input.direction {
            Direction::Buy => sl_px < entry_px && entry_px < tp_px,
            Direction::Sell => tp_px < entry_px && entry_px < sl_px,
        };
        if !ordered {
            return Err(invalid(
                "sl_px",
                "and tp_px must satisfy sl_px < entry_px < tp_px (buy) or tp_px < entry_px < \
                 sl_px (sell)",
            ));
        }
        let rules = self.symbol_rules(&input.symbol).await.map_err(|e| match e {
            ExecutionError::UnknownSymbol { symbol } => {
                invalid("symbol", format!("{symbol} is not listed on the exchange"))
            }
            other => other,
        })?;
        let _symbol = self.lock_symbol(&input.symbol).await;
        if self.inner.book.open_trade(&input.symbol)?.is_some() {
            return Err(ExecutionError::TradeExists(input.symbol));
        }
        let oco_list_id = match input.sl_oid {
            Some(id) => {
                let exchange = &self.orders()?.exchange;
                let order =
                    exchange.order(&input.symbol, &OrderRef::Id(id)).await.map_err(|e| {
                        invalid("sl_oid", format!("{id} is not an order of {}: {e}", input.symbol))
                    })?;
                order.order_list_id
            }
            None => None,
        };
        let hundred = Decimal::ONE_HUNDRED;
        let stop_limit = stop_limit_px(sl_px, input.direction, &rules);
        let client_id =
            ClientOrderId::fresh(Purpose::Restored, self.inner.clock.now_ms(), &input.symbol)
                .into_string();
        let trade = Trade {
            symbol: input.symbol.clone(),
            direction: input.direction,
            bot,
            exchange: self.exchange_name(),
            size,
            entry_px,
            entry_quote: entry_px * size,
            sl_px,
            tp_px,
            sl_pct: ((entry_px - sl_px).abs() / entry_px * hundred).round_dp(4),
            tp_pct: ((tp_px - entry_px).abs() / entry_px * hundred).round_dp(4),
            // A restored trade tied to an OCO keeps its stop on the exchange; one without
            // protection gets it where new trades get theirs.
            protection: match oco_list_id {
                Some(list_id) => TradeProtection::list_in_place(
                    Some(client_id),
                    stop_limit,
                    OcoLegs { list_id, tp_order_id: input.tp_oid, sl_order_id: input.sl_oid },
                ),
                None => {
                    TradeProtection::pending(self.stop_placement(), stop_limit, Some(client_id))
                        .unprotected(
                            "restored without protection on the exchange; reconciliation places it"
                                .into(),
                        )
                }
            },
            entry_order_id: None,
            entry_client_order_id: None,
            source: TradeSource::Restored,
            date,
            opened_at: self.now_iso(),
        };
        self.inner.book.put_trade(&trade)?;
        self.log("bot-ops", &format!("trade restored: {}", trade.symbol), "ok");
        Ok(trade)
    }
}
