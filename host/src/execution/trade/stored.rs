//! How a trade record is stored (table `open_trades`, and inside `closed_trades`): the trade's
//! own fields, with its protection's flat fields beside them ([`StoredProtection`], kept with
//! the protection's definition). Records read and write as before; only [`Trade`] is used in
//! memory.

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};

use super::protection::StoredProtection;
use super::{Direction, Trade, TradeSource};
use crate::config::ExchangeName;

/// A trade record as stored by any version: the trade's own fields, and its protection's
/// flat fields beside them (see [`StoredProtection`]).
#[derive(Serialize, Deserialize)]
pub(super) struct StoredTrade {
    symbol: String,
    direction: Direction,
    bot: String,
    exchange: ExchangeName,
    size: Decimal,
    entry_px: Decimal,
    entry_quote: Decimal,
    sl_px: Decimal,
    tp_px: Decimal,
    sl_pct: Decimal,
    tp_pct: Decimal,
    #[serde(flatten)]
    protection: StoredProtection,
    entry_order_id: Option<i64>,
    entry_client_order_id: Option<String>,
    source: TradeSource,
    date: String,
    opened_at: String,
}

impl From<StoredTrade> for Trade {
    fn from(s: StoredTrade) -> Self {
        Trade {
            symbol: s.symbol,
            direction: s.direction,
            bot: s.bot,
            exchange: s.exchange,
            size: s.size,
            entry_px: s.entry_px,
            entry_quote: s.entry_quote,
            sl_px: s.sl_px,
            tp_px: s.tp_px,
            sl_pct: s.sl_pct,
            tp_pct: s.tp_pct,
            protection: s.protection.into(),
            entry_order_id: s.entry_order_id,
            entry_client_order_id: s.entry_client_order_id,
            source: s.source,
            date: s.date,
            opened_at: s.opened_at,
        }
    }
}

impl From<Trade> for StoredTrade {
    fn from(t: Trade) -> Self {
        StoredTrade {
            protection: StoredProtection::from(&t.protection),
            symbol: t.symbol,
            direction: t.direction,
            bot: t.bot,
            exchange: t.exchange,
            size: t.size,
            entry_px: t.entry_px,
            entry_quote: t.entry_quote,
            sl_px: t.sl_px,
            tp_px: t.tp_px,
            sl_pct: t.sl_pct,
            tp_pct: t.tp_pct,
            entry_order_id: t.entry_order_id,
            entry_client_order_id: t.entry_client_order_id,
            source: t.source,
            date: t.date,
            opened_at: t.opened_at,
        }
    }
}
