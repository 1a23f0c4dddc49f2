//! History sync (`POST /api/trades/sync`): round trips made on the exchange outside the service
//! (by hand, or by another program with the same key) are copied into the closed-trade history.
//!
//! For each symbol the service knows (history, open trades, `[market] watchlist`) it reads the
//! account's fills (`my_trades`, the exchange's newest 500), drops every fill of an order the
//! service made or manages, and pairs the rest: each sell fill is matched with the most recent
//! earlier buy quantity not yet matched (last in, first out), and the matched part of one sell
//! order becomes one closed-trade row (`bot` [`SYNC_BOT`]). What each fill gave to the history
//! is stored per exchange trade id (table `synced_fills`) in the same transaction as the rows,
//! so a second run, or two runs at once, add nothing twice. Nothing is sent to the exchange and
//! the daily counters are not touched: they count the service's own trades.
//!
//! Not paired: sells without an earlier unmatched buy (coin deposited, bought before the
//! exchange's window, or bought by the service), buys not sold yet (a later sync pairs them),
//! and sell-first round trips (spot has no shorting; the buy-back counts as a buy).

use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use chrono::DateTime;
use rust_decimal::Decimal;
use serde::Serialize;
use utoipa::ToSchema;

use super::book::Day;
use super::client_id::ClientOrderId;
use super::trade::TradeProtection;
use super::trade::{CloseReason, ClosedTrade, Direction, Trade, TradeSource, pnl_of};
use super::{Execution, ExecutionError};
use crate::exchange::{self, Exchange, ExchangeError, OrderRef, OrderType};
use crate::store::tables::{self, SYNCED_FILLS};
use crate::store::{StoreError, Writer};

/// The `bot` of a synced row: no strategy made it.
pub const SYNC_BOT: &str = "synced";
/// The `source` of a synced row.
pub const SYNC_SOURCE: TradeSource = TradeSource::Synced;
/// How many of a symbol's newest orders are read to learn who placed each filled order.
const ORDERS_WINDOW: u32 = 1000;

/// What one sync did.
#[derive(Debug, Clone, Default)]
pub struct SyncReport {
    /// The rows added, in the order they closed.
    pub added: Vec<ClosedTrade>,
    /// Symbols whose fills were read.
    pub symbols: Vec<String>,
    /// Symbols that could not be read (the others were synced).
    pub errors: Vec<SyncError>,
}

/// A symbol the exchange could not give the fills of.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SyncError {
    pub symbol: String,
    pub error: String,
}

/// A fill the service did not make, with its order's facts.
#[derive(Debug, Clone, PartialEq)]
struct Fill {
    id: i64,
    order_id: i64,
    order_list_id: Option<i64>,
    client_order_id: Option<String>,
    order_type: Option<OrderType>,
    is_buyer: bool,
    price: Decimal,
    qty: Decimal,
    quote_qty: Decimal,
    commission: Decimal,
    commission_asset: String,
    time: i64,
}

/// The fills of one symbol to pair.
struct SymbolFills {
    symbol: String,
    base: String,
    quote: String,
    fills: Vec<Fill>,
}

/// Order and order-list ids the service's trade records name (entries, OCO legs, lists).
#[derive(Default)]
struct Known {
    orders: HashSet<i64>,
    lists: HashSet<i64>,
}

impl Known {
    fn add(&mut self, trade: &Trade) {
        let protection = &trade.protection;
        self.orders.extend(
            [trade.entry_order_id, protection.stop_order_id(), protection.take_profit_order_id()]
                .into_iter()
                .flatten(),
        );
        self.lists.extend(protection.list_id());
    }
}

/// Shaped like the service's client order ids, `<PREFIX>_<id>_<SYMBOL>` with a known purpose
/// ([`ClientOrderId`]), also with a leg's `T`/`S`/`X` suffix: also catches orders of another
/// install of the service.
fn service_shaped(client_order_id: &str) -> bool {
    let Some(rest) = client_order_id.get(3..) else {
        return false;
    };
    let Some((id, symbol)) = rest.split_once('_') else {
        return false;
    };
    ClientOrderId::purpose_of(client_order_id).is_some()
        && id.len() >= 5
        && id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        && !symbol.is_empty()
        && symbol.bytes().all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
}

impl Execution {
    /// Copies round trips made outside the service from the exchange's fills into the history.
    pub async fn sync_history(&self) -> Result<SyncReport, ExecutionError> {
        let exchange = self.orders()?.exchange.clone();
        let (symbols, known) = self.sync_scope()?;
        let mut report = SyncReport::default();
        let mut gathered = Vec::new();
        for symbol in symbols {
            match self.outside_fills(exchange.as_ref(), &symbol, &known).await {
                Ok(Some(fills)) => {
                    report.symbols.push(symbol);
                    gathered.push(fills);
                }
                Ok(None) => {}
                Err(err) => report.errors.push(SyncError { symbol, error: err.to_string() }),
            }
        }
        let (exchange_name, tz) = (self.exchange_name(), self.inner.tz);
        report.added = self.inner.book.store().write(|w| {
            let mut rows = Vec::new();
            for symbol in &gathered {
                let used = used_in(w, &symbol.symbol, &symbol.fills)?;
                let (trips, newly_used) = pair(&symbol.fills, &used, &symbol.base, &symbol.quote);
                for (id, qty) in newly_used {
                    let total = used.get(&id).copied().unwrap_or_default() + qty;
                    w.put(SYNCED_FILLS, &fill_key(&symbol.symbol, id), &total.normalize())?;
                }
                rows.extend(
                    trips.iter().map(|trip| trip.closed(&symbol.symbol, exchange_name, tz)),
                );
            }
            rows.sort_by_key(|row: &ClosedTrade| row.closed_at.clone());
            for row in &rows {
                w.append(tables::CLOSED_TRADES, row)?;
            }
            Ok(rows)
        })?;
        let status = if report.errors.is_empty() { "ok" } else { "error" };
        let mut action =
            format!("trades sync: {} closed trades added from {exchange_name}", report.added.len());
        for error in &report.errors {
            action.push_str(&format!("; {}: {}", error.symbol, error.error));
        }
        self.log("bot-ops", &action, status);
        Ok(report)
    }

    /// The symbols to read, and the ids the service's own records name.
    fn sync_scope(&self) -> Result<(BTreeSet<String>, Known), StoreError> {
        let mut symbols: BTreeSet<String> =
            self.inner.config.market.watchlist.iter().cloned().collect();
        let mut known = Known::default();
        for trade in self.inner.book.open_trades()? {
            known.add(&trade);
            symbols.insert(trade.symbol);
        }
        let history: Vec<(u64, ClosedTrade)> =
            self.inner.book.store().read(|r| r.newest(tables::CLOSED_TRADES, 0, usize::MAX))?;
        for (_, row) in history {
            // A synced row names the outside orders it was built from; they stay outside.
            if row.trade.bot != SYNC_BOT {
                known.add(&row.trade);
            }
            symbols.insert(row.trade.symbol);
        }
        Ok((symbols, known))
    }

    /// The fills of `symbol` the service did not make; `None` when the exchange does not list
    /// the symbol.
    async fn outside_fills(
        &self,
        exchange: &dyn Exchange,
        symbol: &str,
        known: &Known,
    ) -> Result<Option<SymbolFills>, ExecutionError> {
        let rules = match exchange.symbol_rules(symbol).await {
            Ok(rules) => rules,
            Err(ExchangeError::InvalidSymbol { .. }) => return Ok(None),
            Err(err) => return Err(ExecutionError::Exchange(err)),
        };
        let trades = exchange.my_trades(symbol, None).await.map_err(ExecutionError::Exchange)?;
        let unknown: Vec<&exchange::Trade> = trades
            .iter()
            .filter(|t| {
                !known.orders.contains(&t.order_id)
                    && !t.order_list_id.is_some_and(|l| known.lists.contains(&l))
            })
            .collect();
        let mut orders: HashMap<i64, exchange::Order> = HashMap::new();
        if !unknown.is_empty() {
            let recent = exchange.all_orders(symbol, ORDERS_WINDOW).await;
            orders.extend(
                recent.map_err(ExecutionError::Exchange)?.into_iter().map(|o| (o.order_id, o)),
            );
        }
        let journal = self.journal();
        let mut fills = Vec::new();
        for trade in unknown {
            if let Entry::Vacant(slot) = orders.entry(trade.order_id) {
                // Older than the window of orders: ask for this one.
                let order = exchange.order(symbol, &OrderRef::Id(trade.order_id)).await;
                slot.insert(order.map_err(ExecutionError::Exchange)?);
            }
            let order = &orders[&trade.order_id];
            let client = order.client_order_id.as_str();
            let leg_of = client.strip_suffix(['T', 'S']).unwrap_or(client);
            let journaled = journal.latest(client)?.is_some() || journal.latest(leg_of)?.is_some();
            if journaled || service_shaped(client) {
                continue;
            }
            fills.push(Fill {
                id: trade.id,
                order_id: trade.order_id,
                order_list_id: trade.order_list_id.or(order.order_list_id),
                client_order_id: Some(order.client_order_id.clone()),
                order_type: Some(order.order_type),
                is_buyer: trade.is_buyer,
                price: trade.price.0,
                qty: trade.qty.0,
                quote_qty: trade.quote_qty,
                commission: trade.commission,
                commission_asset: trade.commission_asset.clone(),
                time: trade.time,
            });
        }
        fills.sort_by_key(|f| (f.time, f.id));
        Ok(Some(SymbolFills {
            symbol: symbol.to_string(),
            base: rules.base_asset.clone(),
            quote: rules.quote_asset.clone(),
            fills,
        }))
    }
}

fn fill_key(symbol: &str, id: i64) -> String {
    format!("{symbol}/{id}")
}

/// What the history already holds of each fill.
fn used_in(w: &Writer, symbol: &str, fills: &[Fill]) -> Result<HashMap<i64, Decimal>, StoreError> {
    let mut used = HashMap::new();
    for fill in fills {
        if let Some(qty) = w.get::<Decimal>(SYNCED_FILLS, &fill_key(symbol, fill.id))? {
            used.insert(fill.id, qty);
        }
    }
    Ok(used)
}

/// A buy quantity waiting for a sell.
struct Lot {
    fill: usize,
    remaining: Decimal,
    /// Quote paid per coin received, fees included.
    unit_cost: Decimal,
}

/// The matched part of one sell order.
#[derive(Debug, Clone, PartialEq, Default)]
struct RoundTrip {
    sell_order_id: i64,
    sell_list_id: Option<i64>,
    sell_type: Option<OrderType>,
    buy_orders: Vec<(i64, Option<String>)>,
    /// Coins sold.
    qty: Decimal,
    /// Σ qty × buy price, Σ qty × sell price (for the average prices).
    entry_value: Decimal,
    exit_value: Decimal,
    /// Quote paid for the coins sold, fees included; quote received net of fees.
    entry_cost: Decimal,
    exit_quote: Decimal,
    opened_ms: i64,
    closed_ms: i64,
}

/// Pairs sells with the most recent earlier unmatched buys (LIFO): a sell of coins bought long
/// ago, or a buy that never found its sell, does not shift every later round trip. Fees in the
/// quote asset and a buy's fee in the coin are counted; fees in a third asset are not. Returns
/// the round trips in the order they closed and, per fill id, the quantity newly used.
fn pair(
    fills: &[Fill],
    used: &HashMap<i64, Decimal>,
    base: &str,
    quote: &str,
) -> (Vec<RoundTrip>, BTreeMap<i64, Decimal>) {
    let fee_in = |fill: &Fill, asset: &str| {
        if fill.commission_asset == asset { fill.commission } else { Decimal::ZERO }
    };
    let mut lots: Vec<Lot> = Vec::new();
    let mut trips: BTreeMap<i64, RoundTrip> = BTreeMap::new();
    let mut newly: BTreeMap<i64, Decimal> = BTreeMap::new();
    for (index, fill) in fills.iter().enumerate() {
        let already = used.get(&fill.id).copied().unwrap_or_default();
        if fill.is_buyer {
            let received = fill.qty - fee_in(fill, base);
            let remaining = received - already;
            if remaining > Decimal::ZERO {
                let unit_cost = (fill.quote_qty + fee_in(fill, quote)) / received;
                lots.push(Lot { fill: index, remaining, unit_cost });
            }
            continue;
        }
        let mut left = fill.qty - already;
        if left <= Decimal::ZERO || fill.qty.is_zero() {
            continue;
        }
        let proceeds_per_coin = (fill.quote_qty - fee_in(fill, quote)) / fill.qty;
        while left > Decimal::ZERO {
            let Some(lot) = lots.last_mut() else { break };
            let take = lot.remaining.min(left);
            let buy = &fills[lot.fill];
            let trip = trips.entry(fill.order_id).or_insert_with(|| RoundTrip {
                sell_order_id: fill.order_id,
                sell_list_id: fill.order_list_id,
                sell_type: fill.order_type,
                opened_ms: buy.time,
                ..RoundTrip::default()
            });
            if !trip.buy_orders.iter().any(|(id, _)| *id == buy.order_id) {
                trip.buy_orders.push((buy.order_id, buy.client_order_id.clone()));
            }
            trip.qty += take;
            trip.entry_value += take * buy.price;
            trip.entry_cost += take * lot.unit_cost;
            trip.exit_value += take * fill.price;
            trip.exit_quote += take * proceeds_per_coin;
            trip.opened_ms = trip.opened_ms.min(buy.time);
            trip.closed_ms = trip.closed_ms.max(fill.time);
            *newly.entry(buy.id).or_default() += take;
            *newly.entry(fill.id).or_default() += take;
            lot.remaining -= take;
            left -= take;
            if lot.remaining <= Decimal::ZERO {
                lots.pop();
            }
        }
    }
    let mut trips: Vec<RoundTrip> = trips.into_values().collect();
    trips.sort_by_key(|t| (t.closed_ms, t.sell_order_id));
    (trips, newly)
}

fn iso(ms: i64) -> String {
    DateTime::from_timestamp_millis(ms).unwrap_or_default().to_rfc3339()
}

impl RoundTrip {
    /// take-profit / stop-loss when the sell was such an order (an OCO leg placed by hand),
    /// market for any other sell (market or limit).
    fn reason(&self) -> CloseReason {
        match self.sell_type {
            Some(OrderType::StopLoss | OrderType::StopLossLimit) => CloseReason::StopLoss,
            Some(OrderType::LimitMaker | OrderType::TakeProfit | OrderType::TakeProfitLimit) => {
                CloseReason::TakeProfit
            }
            _ => CloseReason::Market,
        }
    }

    fn closed(
        &self,
        symbol: &str,
        exchange: crate::config::ExchangeName,
        tz: chrono_tz::Tz,
    ) -> ClosedTrade {
        let opened = DateTime::from_timestamp_millis(self.opened_ms).unwrap_or_default();
        let buys: Vec<String> = self.buy_orders.iter().map(|(id, _)| id.to_string()).collect();
        let provenance = format!(
            "made outside the service; copied by POST /api/trades/sync from the exchange's \
             fills (buy orders {}, sell order {})",
            buys.join(", "),
            self.sell_order_id
        );
        let trade = Trade {
            symbol: symbol.to_string(),
            direction: Direction::Buy,
            bot: SYNC_BOT.to_string(),
            exchange,
            size: self.qty,
            entry_px: (self.entry_value / self.qty).round_dp(8),
            entry_quote: self.entry_cost.round_dp(8),
            sl_px: Decimal::ZERO,
            tp_px: Decimal::ZERO,
            sl_pct: Decimal::ZERO,
            tp_pct: Decimal::ZERO,
            // The service never protected it; the reason records where the row came from.
            protection: TradeProtection::made_outside(self.sell_list_id, provenance),
            entry_order_id: self.buy_orders.first().map(|(id, _)| *id),
            entry_client_order_id: self.buy_orders.first().and_then(|(_, c)| c.clone()),
            source: SYNC_SOURCE,
            date: Day::of(opened, tz).iso(),
            opened_at: iso(self.opened_ms),
        };
        let exit_quote = self.exit_quote.round_dp(8);
        ClosedTrade {
            pnl: pnl_of(&trade, self.qty, exit_quote),
            exit_px: (self.exit_value / self.qty).round_dp(8),
            exit_quote,
            qty_sold: self.qty,
            reason: self.reason(),
            closed_at: iso(self.closed_ms),
            trade,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Decimal {
        s.parse().unwrap()
    }

    /// A fill of `qty` at `price` with a 0.1 % fee in the quote asset.
    fn fill(id: i64, order_id: i64, buy: bool, qty: &str, price: &str, time: i64) -> Fill {
        let (qty, price) = (d(qty), d(price));
        Fill {
            id,
            order_id,
            order_list_id: None,
            client_order_id: Some(format!("web_{order_id}")),
            order_type: Some(OrderType::Market),
            is_buyer: buy,
            price,
            qty,
            quote_qty: qty * price,
            commission: qty * price / d("1000"),
            commission_asset: "USDT".into(),
            time,
        }
    }

    fn run(
        fills: &[Fill],
        used: &HashMap<i64, Decimal>,
    ) -> (Vec<RoundTrip>, BTreeMap<i64, Decimal>) {
        pair(fills, used, "SOL", "USDT")
    }

    #[test]
    fn a_buy_and_its_sell_make_one_round_trip_with_both_fees() {
        let fills = [fill(1, 10, true, "2", "100", 1_000), fill(2, 11, false, "2", "110", 2_000)];
        let (trips, used) = run(&fills, &HashMap::new());
        assert_eq!(trips.len(), 1);
        let trip = &trips[0];
        assert_eq!(trip.qty, d("2"));
        assert_eq!(trip.entry_cost, d("200.2"), "200 + 0.2 fee");
        assert_eq!(trip.exit_quote, d("219.78"), "220 - 0.22 fee");
        let row =
            trip.closed("SOLUSDT", crate::config::ExchangeName::ExchangeA, chrono_tz::Tz::UTC);
        assert_eq!(row.pnl, d("19.58"));
        assert_eq!((row.trade.entry_px, row.exit_px), (d("100"), d("110")));
        assert_eq!(row.reason, CloseReason::Market);
        assert_eq!(row.trade.bot, SYNC_BOT);
        assert_eq!(row.trade.entry_order_id, Some(10));
        assert_eq!(row.closed_at, "1970-01-01T00:00:02+00:00");
        assert_eq!(used, BTreeMap::from([(1, d("2")), (2, d("2"))]));
    }

    #[test]
    fn what_was_used_is_not_paired_again() {
        let fills = [fill(1, 10, true, "2", "100", 1_000), fill(2, 11, false, "2", "110", 2_000)];
        let (_, used) = run(&fills, &HashMap::new());
        let used: HashMap<i64, Decimal> = used.into_iter().collect();
        let (trips, newly) = run(&fills, &used);
        assert!(trips.is_empty() && newly.is_empty());
    }

    #[test]
    fn a_partly_sold_buy_pairs_its_rest_with_a_later_sell() {
        let first = [fill(1, 10, true, "2", "100", 1_000), fill(2, 11, false, "0.5", "120", 2_000)];
        let (trips, used) = run(&first, &HashMap::new());
        assert_eq!(trips[0].qty, d("0.5"));
        assert_eq!(used[&1], d("0.5"));
        let used: HashMap<i64, Decimal> = used.into_iter().collect();
        let mut later = first.to_vec();
        later.push(fill(3, 12, false, "1.5", "90", 3_000));
        let (trips, newly) = run(&later, &used);
        assert_eq!(trips.len(), 1, "only the new sell: {trips:?}");
        assert_eq!((trips[0].sell_order_id, trips[0].qty), (12, d("1.5")));
        assert_eq!(newly, BTreeMap::from([(1, d("1.5")), (3, d("1.5"))]));
    }

    #[test]
    fn sells_pair_with_the_most_recent_earlier_buys() {
        // An old buy never sold (coin held), then a round trip: the sell takes the newer buy.
        let fills = [
            fill(1, 10, true, "5", "50", 1_000),
            fill(2, 11, true, "1", "100", 2_000),
            fill(3, 12, false, "1", "105", 3_000),
        ];
        let (trips, used) = run(&fills, &HashMap::new());
        assert_eq!(trips.len(), 1);
        assert_eq!(trips[0].entry_value, d("100"));
        assert!(!used.contains_key(&1), "the old buy stays unmatched");
    }

    #[test]
    fn a_sell_without_an_earlier_buy_is_not_paired() {
        let fills = [fill(1, 10, false, "1", "100", 1_000), fill(2, 11, true, "1", "90", 2_000)];
        let (trips, used) = run(&fills, &HashMap::new());
        assert!(trips.is_empty() && used.is_empty());
    }

    #[test]
    fn one_sell_order_over_several_buys_is_one_row() {
        let mut fills = vec![
            fill(1, 10, true, "1", "100", 1_000),
            fill(2, 11, true, "1", "110", 2_000),
            fill(3, 12, false, "1.5", "120", 3_000),
            fill(4, 12, false, "0.5", "121", 3_001),
        ];
        fills[2].order_type = Some(OrderType::LimitMaker);
        fills[3].order_type = Some(OrderType::LimitMaker);
        let (trips, _) = run(&fills, &HashMap::new());
        assert_eq!(trips.len(), 1);
        let trip = &trips[0];
        assert_eq!(trip.qty, d("2"));
        assert_eq!(trip.entry_value, d("210"));
        assert_eq!(trip.exit_value, d("240.5"));
        assert_eq!(trip.buy_orders.iter().map(|(id, _)| *id).collect::<Vec<_>>(), vec![11, 10]);
        let row =
            trip.closed("SOLUSDT", crate::config::ExchangeName::ExchangeA, chrono_tz::Tz::UTC);
        assert_eq!(row.reason, CloseReason::TakeProfit);
        assert_eq!(row.trade.entry_px, d("105"));
        assert_eq!(row.exit_px, d("120.25"));
        assert_eq!(row.trade.opened_at, "1970-01-01T00:00:01+00:00");
    }

    #[test]
    fn a_buy_fee_in_the_coin_reduces_what_can_be_sold() {
        let mut buy = fill(1, 10, true, "1", "100", 1_000);
        buy.commission = d("0.001");
        buy.commission_asset = "SOL".into();
        let sell = fill(2, 11, false, "1", "110", 2_000);
        let (trips, used) = run(&[buy, sell], &HashMap::new());
        assert_eq!(trips[0].qty, d("0.999"));
        assert_eq!(trips[0].entry_cost.round_dp(8), d("100"), "100 quote for 0.999 coins");
        assert_eq!(used[&2], d("0.999"));
    }

    #[test]
    fn the_service_client_id_shape_is_recognised() {
        for ours in [
            "SE_mubbs7i8ab12_BTCUSDT",
            "SO_mubbs7i8ab12_ETHUSDTT",
            "MT_mubbs7i8ab12_SOLUSDT",
            "SX_mubbs7i8ab12_ABCDEFGH",
        ] {
            assert!(service_shaped(ours), "{ours}");
        }
        for theirs in
            ["web_123", "hand-oco-entry", "x-ABC", "AB_12_", "ab_mubbs7i8_BTCUSDT", "SE_mu_BTCUSDT"]
        {
            assert!(!service_shaped(theirs), "{theirs}");
        }
    }
}
