//! Manual trades with a LIMIT entry and a time to live (`POST /api/trade/manual`): a LIMIT GTC
//! entry with client order id `MT_...`, stored as a pending entry (table `pending_entries`,
//! keyed by that id) until a check finds it filled (the OCO is placed only then), or its TTL
//! elapsed (it is cancelled; a part that filled is kept and protected). The OCO is placed at
//! the `sl_px` and `tp_px` the entry announced, even when the limit filled at a better price.
//!
//! A buy uses the spec's formulas (sl below, tp above). A sell is mirrored: it sells coin the
//! account holds at `entry_px`, with the stop above and the target below, protected by an OCO
//! that buys the coin back (stop limit × 1.002).

use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;

use super::book::open_trade_in;
use super::client_id::{ClientOrderId, Purpose, fresh_cause};
use super::journal::{Commit, OrderKind};
use super::plan::EntryPlan;
use super::sizing::{BracketPrices, EntryOrder, bracket_prices, size_entry};
use super::trade::{Direction, Trade, TradeSource, TradeView};
use super::{Execution, ExecutionError};
use crate::exchange::{
    ExchangeError, NewOrder, Order, OrderRef, OrderStatus, Price, Qty, SymbolRules,
};
use crate::messenger::templates;
use crate::money::json_number;
use crate::store::{StoreError, Writer, tables};

/// The strategy name of manual trades (its `[strategy.manual]` section may set `size_pct`).
pub const MANUAL_BOT: &str = "manual";

/// A LIMIT entry waiting for its fill, as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PendingEntry {
    pub plan: EntryPlan,
    pub entry_order_id: i64,
    pub entry_px: Decimal,
    pub sl_px: Decimal,
    pub tp_px: Decimal,
    /// Coin quantity ordered.
    pub size: Decimal,
    pub expires_ms: i64,
    /// ISO 8601.
    pub expires_at: String,
    pub created_at: String,
    /// The agent that placed it.
    pub agent: String,
}

/// A pending entry as the API shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PendingEntryView {
    pub symbol: String,
    pub direction: Direction,
    pub entry_order_id: i64,
    /// Starts with `MT_`.
    pub client_order_id: String,
    pub entry_px: f64,
    pub sl_px: f64,
    pub tp_px: f64,
    pub sl_pct: f64,
    pub tp_pct: f64,
    /// Coin quantity ordered.
    pub size: f64,
    /// ISO 8601 time the entry is cancelled if it has not filled.
    pub expires_at: String,
    pub created_at: String,
    pub agent: String,
}

impl PendingEntry {
    pub fn view(&self) -> PendingEntryView {
        PendingEntryView {
            symbol: self.plan.symbol.clone(),
            direction: self.plan.direction,
            entry_order_id: self.entry_order_id,
            client_order_id: self.plan.entry_client_order_id.clone(),
            entry_px: json_number(self.entry_px),
            sl_px: json_number(self.sl_px),
            tp_px: json_number(self.tp_px),
            sl_pct: json_number(self.plan.sl_pct),
            tp_pct: json_number(self.plan.tp_pct),
            size: json_number(self.size),
            expires_at: self.expires_at.clone(),
            created_at: self.created_at.clone(),
            agent: self.agent.clone(),
        }
    }

    fn note(&self, size: Decimal) -> templates::PendingEntryNote {
        let text = |d: Decimal| d.normalize().to_string();
        templates::PendingEntryNote {
            symbol: self.plan.symbol.clone(),
            direction: self.plan.direction.as_str().into(),
            size: text(size),
            entry_px: text(self.entry_px),
            sl_px: text(self.sl_px),
            tp_px: text(self.tp_px),
            client_order_id: self.plan.entry_client_order_id.clone(),
            expires_at: self.expires_at.clone(),
        }
    }
}

/// A validated manual trade request.
#[derive(Debug, Clone)]
pub struct ManualRequest {
    pub symbol: String,
    pub direction: Direction,
    pub entry_px: Decimal,
    pub sl_pct: Decimal,
    pub tp_pct: Decimal,
    pub ttl_hours: f64,
    pub agent: String,
}

/// What one check of the pending entries did.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct CheckReport {
    pub ok: bool,
    pub checked: usize,
    /// Entries that filled: their trades (protected by their OCO, or unprotected with an alert).
    pub filled: Vec<TradeView>,
    /// Entries cancelled because their TTL elapsed (or cancelled on the exchange).
    pub expired: Vec<PendingEntryView>,
    /// Trades opened from the part of an expired entry that had filled.
    pub partially_filled: Vec<TradeView>,
    /// Entries still waiting (NEW or PARTIALLY_FILLED within their TTL).
    pub open: Vec<PendingEntryView>,
    /// One sentence per entry that could not be checked; it is checked again next time.
    pub errors: Vec<String>,
}

/// What recovering pending entries from the exchange did.
#[derive(Debug, Clone, Default, Serialize, ToSchema)]
pub struct RecoverEntriesReport {
    pub ok: bool,
    pub recovered: usize,
    /// Open `MT_` orders not restored: already tracked, or placed by another install (their
    /// stop and target are unknown).
    pub skipped: usize,
    pub entries: Vec<PendingEntryView>,
}

fn put_entry_in(w: &Writer, entry: &PendingEntry) -> Result<(), StoreError> {
    w.put(tables::PENDING_ENTRIES, &entry.plan.entry_client_order_id, entry)
}

/// How an entry's order stands at a check.
pub(super) enum Outcome {
    Filled(Order),
    Waiting,
    Ended(Order),
}

/// Why an entry's order ended before it filled completely (what the boss is told).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ending {
    /// Its TTL elapsed, or the exchange ended it.
    Expired,
    /// `POST /api/pending-entries/cancel` or closeall cancelled it.
    Cancelled,
}

impl Execution {
    /// Every pending entry.
    pub fn pending_entries(&self) -> Result<Vec<PendingEntry>, StoreError> {
        Ok(self
            .inner
            .book
            .store()
            .read(|r| r.all::<PendingEntry>(tables::PENDING_ENTRIES))?
            .into_iter()
            .map(|(_, e)| e)
            .collect())
    }

    /// The pending entry of `symbol`, if any (one per symbol, like open trades).
    pub(crate) fn pending_entry_for(
        &self,
        symbol: &str,
    ) -> Result<Option<PendingEntry>, StoreError> {
        Ok(self.pending_entries()?.into_iter().find(|e| e.plan.symbol == symbol))
    }

    /// Places a manual LIMIT entry and stores it as pending; returns it with the order's
    /// status at placement (an entry that filled at once is settled right away).
    pub async fn place_manual(
        &self,
        req: ManualRequest,
    ) -> Result<(PendingEntry, OrderStatus), ExecutionError> {
        let orders = self.orders()?.clone();
        let _symbol = self.lock_symbol(&req.symbol).await;
        if self.inner.book.open_trade(&req.symbol)?.is_some()
            || self.pending_entry_for(&req.symbol)?.is_some()
        {
            return Err(ExecutionError::TradeExists(req.symbol));
        }
        // The request is checked before the limits: an unlisted symbol or an off-tick price is
        // the caller's mistake whatever the day's count, and says so.
        let rules = self.symbol_rules(&req.symbol).await?;
        if rules.round_price(req.entry_px).0 != req.entry_px.normalize() {
            return Err(ExecutionError::Invalid(format!(
                "`entry_px` {} is not a multiple of the tick size {}",
                req.entry_px.normalize(),
                rules.tick_size.normalize()
            )));
        }
        if let Some(block) = self.entry_block(MANUAL_BOT)? {
            return Err(ExecutionError::EntryBlocked(block));
        }
        let balances = orders.exchange.balances().await?;
        let free = |asset: &str| {
            balances.iter().find(|b| b.asset == asset).map_or(Decimal::ZERO, |b| b.free)
        };
        let sizing = size_entry(
            free(&rules.quote_asset),
            self.inner.config.risk.max_trading_usdt,
            self.size_pct(MANUAL_BOT, None),
            req.entry_px,
            &rules,
            EntryOrder::Limit,
        )
        .map_err(ExecutionError::Refused)?;
        self.note_capped(&req.symbol, &sizing);
        if req.direction == Direction::Sell && free(&rules.base_asset) < sizing.qty {
            return Err(ExecutionError::Refused(format!(
                "a sell entry sells held coin: {} {} needed, {} free (spot has no shorting)",
                sizing.qty.normalize(),
                rules.base_asset,
                free(&rules.base_asset).normalize()
            )));
        }
        let prices = bracket_prices(req.entry_px, req.sl_pct, req.tp_pct, req.direction, &rules)
            .map_err(ExecutionError::Refused)?;
        let now = self.inner.clock.now();
        let expires = now + chrono::Duration::milliseconds((req.ttl_hours * 3_600_000.0) as i64);
        let mut plan = EntryPlan::new(
            &req.symbol,
            MANUAL_BOT,
            req.sl_pct,
            req.tp_pct,
            TradeSource::Manual,
            &fresh_cause(now.timestamp_millis()),
            format!("manual {} {} LIMIT {}", req.direction.as_str(), req.symbol, req.entry_px),
        );
        plan.direction = req.direction;
        plan.expires_ms = Some(expires.timestamp_millis());
        let order = NewOrder::limit(
            &req.symbol,
            req.direction.entry_side(),
            Qty(sizing.qty),
            Price(req.entry_px),
            &plan.entry_client_order_id,
        );
        let pending = |order_id: i64| PendingEntry {
            plan: plan.clone(),
            entry_order_id: order_id,
            entry_px: req.entry_px,
            sl_px: prices.sl_px,
            tp_px: prices.tp_px,
            size: sizing.qty,
            expires_ms: expires.timestamp_millis(),
            expires_at: expires.to_rfc3339(),
            created_at: now.to_rfc3339(),
            agent: req.agent.clone(),
        };
        let placed = orders
            .place(&order, OrderKind::Entry, &plan.cause, Some(&plan), |w, placed| {
                put_entry_in(w, &pending(placed.order_id))
            })
            .await
            .map_err(|e| ExecutionError::from_send(e, &plan.entry_client_order_id))?;
        let entry = pending(placed.order_id);
        self.log(
            &req.agent,
            &format!(
                "manual LIMIT entry {} {} @ {}",
                req.direction.as_str(),
                req.symbol,
                req.entry_px
            ),
            "ok",
        );
        self.notify(
            templates::pending_entry_placed(&entry.note(entry.size)),
            "pending entry placed",
        );
        if !placed.status.is_open() {
            // It filled (or ended) at once: settle it now rather than at the next check.
            match classify(placed.clone()) {
                Outcome::Filled(order) => self.settle_entry(&entry, &order, None).await?,
                Outcome::Ended(order) => {
                    self.settle_entry(&entry, &order, Some(Ending::Expired)).await?
                }
                Outcome::Waiting => None,
            };
        }
        Ok((entry, placed.status))
    }

    /// Polls every pending entry: FILLED → the trade is recorded and its OCO placed; TTL
    /// elapsed → cancelled (what filled before is kept and protected) and the boss alerted;
    /// NEW or PARTIALLY_FILLED → left for the next check.
    pub async fn check_pending(&self) -> Result<CheckReport, ExecutionError> {
        let orders = self.orders()?.clone();
        let mut report = CheckReport { ok: true, ..CheckReport::default() };
        for listed in self.pending_entries()? {
            let _symbol = self.lock_symbol(&listed.plan.symbol).await;
            // Re-read under the lock: a concurrent check may have settled it meanwhile.
            let key = &listed.plan.entry_client_order_id;
            let stored: Option<PendingEntry> =
                self.inner.book.store().read(|r| r.get(tables::PENDING_ENTRIES, key))?;
            let Some(entry) = stored else {
                continue;
            };
            report.checked += 1;
            let id = OrderRef::Id(entry.entry_order_id);
            let order = match orders.order_with_fills(&entry.plan.symbol, &id).await {
                Ok(order) => order,
                Err(err) => {
                    report.errors.push(format!("{}: {err}", entry.plan.entry_client_order_id));
                    continue;
                }
            };
            let now_ms = self.inner.clock.now_ms();
            let outcome = match classify(order) {
                Outcome::Waiting if now_ms >= entry.expires_ms => {
                    match self.cancel_entry_order(&entry).await {
                        Ok(order) => classify(order),
                        Err(err) => {
                            report
                                .errors
                                .push(format!("{}: {err}", entry.plan.entry_client_order_id));
                            continue;
                        }
                    }
                }
                other => other,
            };
            match outcome {
                Outcome::Waiting => report.open.push(entry.view()),
                Outcome::Filled(order) => {
                    report.filled.extend(self.settle_entry(&entry, &order, None).await?);
                }
                Outcome::Ended(order) => {
                    report.expired.push(entry.view());
                    let part = self.settle_entry(&entry, &order, Some(Ending::Expired)).await?;
                    report.partially_filled.extend(part);
                }
            }
        }
        Ok(report)
    }

    /// Cancels an entry's order at the exchange; the answer (or, if it already ended, its
    /// final state, which may be FILLED) tells what had filled.
    pub(super) async fn cancel_entry_order(
        &self,
        entry: &PendingEntry,
    ) -> Result<Order, ExecutionError> {
        let orders = self.orders()?;
        let id = OrderRef::Id(entry.entry_order_id);
        match orders.exchange.cancel_order(&entry.plan.symbol, &id).await {
            Ok(_) | Err(ExchangeError::UnknownOrder { .. }) => {}
            Err(err) => return Err(err.into()),
        }
        orders
            .order_with_fills(&entry.plan.symbol, &id)
            .await
            .map_err(|e| ExecutionError::from_send(e, &entry.plan.entry_client_order_id))
    }

    /// Records what an entry whose order is final became, in one transaction with its
    /// removal: the trade of what filled (then protected), if anything. `ending` is `None`
    /// when it filled completely.
    pub(super) async fn settle_entry(
        &self,
        entry: &PendingEntry,
        order: &Order,
        ending: Option<Ending>,
    ) -> Result<Option<TradeView>, ExecutionError> {
        let rules = self.symbol_rules(&entry.plan.symbol).await?;
        let today = self.today();
        let trade = self
            .trade_of_fill(&entry.plan, order, &rules, today)
            .map(|trade| at_announced_levels(trade, entry, &rules));
        self.inner.book.store().write(|w| {
            w.remove(tables::PENDING_ENTRIES, &entry.plan.entry_client_order_id)?;
            match &trade {
                Some(trade) => open_trade_in(w, trade, today),
                None => Ok(()),
            }
        })?;
        let filled_qty = order.executed_qty.0;
        let filled = trade.as_ref().map(|_| filled_qty.normalize().to_string());
        let note = entry.note(entry.size);
        let symbol = &entry.plan.symbol;
        match ending {
            Some(Ending::Expired) => {
                self.log("finance", &format!("manual entry {symbol} expired and cancelled"), "ok");
                self.notify(
                    templates::pending_entry_expired(&note, filled.as_deref()),
                    "pending entry expired",
                );
            }
            Some(Ending::Cancelled) => {
                self.log("coo", &format!("manual entry {symbol} cancelled"), "ok");
                self.notify(
                    templates::pending_entry_cancelled(&note, filled.as_deref()),
                    "pending entry cancelled",
                );
            }
            None => {
                self.log("finance", &format!("manual entry {symbol} filled"), "ok");
                self.notify(
                    templates::pending_entry_filled(&entry.note(filled_qty)),
                    "pending entry filled",
                );
            }
        }
        Ok(match trade {
            Some(trade) => Some(self.protect_and_report(trade, Commit::Durable).await.view()),
            None => None,
        })
    }

    /// Restores pending entries from open `MT_` LIMIT orders on the exchange, using the plan
    /// this install's order journal holds for them.
    pub async fn recover_pending(&self) -> Result<RecoverEntriesReport, ExecutionError> {
        let orders = self.orders()?.clone();
        let mut report = RecoverEntriesReport { ok: true, ..RecoverEntriesReport::default() };
        let tracked = self.pending_entries()?;
        for order in orders.exchange.open_orders(None).await? {
            if ClientOrderId::purpose_of(&order.client_order_id) != Some(Purpose::ManualEntry) {
                continue;
            }
            if tracked.iter().any(|e| e.entry_order_id == order.order_id) {
                report.skipped += 1;
                continue;
            }
            let plan = orders
                .journal
                .latest(&order.client_order_id)?
                .and_then(|(_, journaled)| journaled.plan);
            let Some(plan) = plan else {
                report.skipped += 1;
                continue;
            };
            let Some(entry) = self.entry_from_open_order(plan, &order).await? else {
                report.skipped += 1;
                continue;
            };
            report.recovered += 1;
            report.entries.push(entry.view());
        }
        Ok(report)
    }
}

impl Execution {
    /// The pending entry an open `MT_` order stands for, rebuilt from its journaled plan and
    /// stored (`None` when the plan gives no valid bracket at the order's price).
    pub(crate) async fn entry_from_open_order(
        &self,
        plan: EntryPlan,
        order: &Order,
    ) -> Result<Option<PendingEntry>, ExecutionError> {
        let rules = self.symbol_rules(&order.symbol).await?;
        let Ok(prices) =
            bracket_prices(order.price.0, plan.sl_pct, plan.tp_pct, plan.direction, &rules)
        else {
            return Ok(None);
        };
        let expires_ms = plan.expires_ms.unwrap_or_else(|| self.inner.clock.now_ms());
        let entry = PendingEntry {
            entry_order_id: order.order_id,
            entry_px: order.price.0,
            sl_px: prices.sl_px,
            tp_px: prices.tp_px,
            size: order.orig_qty.0,
            expires_ms,
            expires_at: chrono::DateTime::from_timestamp_millis(expires_ms)
                .map(|t| t.to_rfc3339())
                .unwrap_or_default(),
            created_at: self.now_iso(),
            agent: "coo".into(),
            plan,
        };
        self.inner.book.store().write(|w| put_entry_in(w, &entry))?;
        Ok(Some(entry))
    }
}

/// The trade of a filled entry, protected at the levels the entry announced (the spec: the
/// pending entry stores `sl_px` and `tp_px`; the boss was told them at placement), not re-based
/// on a better fill. Only when those levels no longer bracket the fill — a marketable limit
/// filled beyond its own stop — does the trade keep the levels re-based on the fill at the
/// same percentages (placing the announced stop would sell at once); the log says so and the
/// boss sees the levels placed in the "trade opened" message.
fn at_announced_levels(trade: Trade, entry: &PendingEntry, rules: &SymbolRules) -> Trade {
    let announced = BracketPrices::at(entry.sl_px, entry.tp_px, trade.direction, rules);
    if !announced.brackets(trade.entry_px, trade.direction) {
        tracing::warn!(
            symbol = %trade.symbol,
            fill = %trade.entry_px,
            sl = %entry.sl_px,
            tp = %entry.tp_px,
            "the announced levels do not bracket the fill; protecting at levels re-based on it"
        );
        return trade;
    }
    Trade {
        sl_px: announced.sl_px,
        tp_px: announced.tp_px,
        protection: trade.protection.clone().with_stop_limit(announced.sl_limit_px),
        ..trade
    }
}

/// FILLED → filled; still on the book → waiting; any other end (cancelled, expired, rejected)
/// → ended. The TTL is the caller's rule.
pub(super) fn classify(order: Order) -> Outcome {
    match order.status {
        OrderStatus::Filled => Outcome::Filled(order),
        status if status.is_open() => Outcome::Waiting,
        _ => Outcome::Ended(order),
    }
}
