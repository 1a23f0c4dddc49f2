//! The actions of `POST /exchange` against the core, for an account whose signature and
//! nonce were checked: `order` (exchange B's spot rules first, then the core's placement with
//! B's price rule) and the two cancels. Each order or cancel gets its own entry in `statuses`;
//! a refusal of one does not stop the others.

use super::errors::{self, order_refusal};
use super::listing::{Listing, MIN_ORDER_VALUE, Pair};
use super::render;
use crate::clock::Millis;
use crate::core::{Engine, Leg, OrderType, PriceRule, Side, Tif as CoreTif};
use crate::state::exchange_b::refused::RefusedOrder;
use rust_decimal::Decimal;
use serde_json::{Map, Value, json};
use spotbot_exchange_b_protocol::numbers::{check_price, check_size, to_wire};
use spotbot_exchange_b_protocol::{Action, Cloid, OrderTypeWire, OrderWire, Tif};

/// What running an action gave.
pub struct Outcome {
    /// The `{"status":"ok","response":…}` body.
    pub body: Value,
    /// Whether at least one order or cancel went through (for the request log).
    pub executed: bool,
    /// Orders refused with a `*Rejected` status, for `orderUpdates`.
    pub refused: Vec<RefusedOrder>,
}

/// Runs `action` for `account` at `now`.
pub fn run(e: &mut Engine, account: usize, action: &Action, now: Millis) -> Outcome {
    let listing = Listing::new(&e.rules);
    let l = &listing;
    let mut refused = Vec::new();
    let (kind, statuses): (&str, Vec<Value>) = match action {
        Action::Order { orders, .. } => (
            "order",
            orders
                .iter()
                .map(|o| {
                    place(e, l, account, o, now).unwrap_or_else(|t| {
                        refused.extend(refused_order(l, account, o, &t, now));
                        errors::entry(&t, o.a)
                    })
                })
                .collect(),
        ),
        Action::Cancel { cancels } => (
            "cancel",
            cancels.iter().map(|c| cancel(e, l, account, c.a, Target::Oid(c.o), now)).collect(),
        ),
        Action::CancelByCloid { cancels } => (
            "cancel",
            cancels
                .iter()
                .map(|c| cancel(e, l, account, c.asset, Target::Cloid(c.cloid), now))
                .collect(),
        ),
    };
    let executed = statuses.iter().any(|s| s.get("error").is_none());
    let body = json!({"status": "ok", "response": {"type": kind, "data": {"statuses": statuses}}});
    Outcome { body, executed, refused }
}

/// The refused order `o` for `orderUpdates`, if its refusal has a `*Rejected` status.
fn refused_order(
    l: &Listing,
    account: usize,
    o: &OrderWire,
    text: &str,
    now: Millis,
) -> Option<RefusedOrder> {
    Some(RefusedOrder {
        account,
        coin: l.pair_by_asset(o.a)?.name.clone(),
        side: render::side(if o.b { Side::Buy } else { Side::Sell }),
        limit_px: to_wire(o.p.0),
        sz: to_wire(o.s.0),
        cloid: o.c.map(|c| c.to_string()),
        status: errors::rejected_status(text)?,
        time: now,
        oid: 0,
    })
}

/// The best bid and ask of `symbol`'s book now (for the post-only refusal).
fn bbo(e: &Engine, symbol: &str, now: Millis) -> (Decimal, Decimal) {
    let Ok(rules) = e.rules(symbol) else { return (Decimal::ZERO, Decimal::ZERO) };
    let book = e.book(rules, e.market.price(rules, now));
    let best = |side: &[(Decimal, Decimal)]| side.first().map_or(Decimal::ZERO, |l| l.0);
    (best(&book.bids), best(&book.asks))
}

/// `{"<kind>": {"oid": …, ["cloid": …,] …fields}}`.
fn placed_entry(kind: &str, oid: i64, cloid: Option<Cloid>, fields: Map<String, Value>) -> Value {
    let mut inner = fields;
    inner.insert("oid".into(), json!(u64::try_from(oid).unwrap_or(0)));
    if let Some(c) = cloid {
        inner.insert("cloid".into(), json!(c.to_string()));
    }
    json!({ kind: inner })
}

/// Places one order: `resting`, `filled` (IOC: what crossed, the rest canceled), or the text
/// of the refusal.
fn place(
    e: &mut Engine,
    l: &Listing,
    account: usize,
    o: &OrderWire,
    now: Millis,
) -> Result<Value, String> {
    let pair: &Pair = l.pair_by_asset(o.a).ok_or(errors::UNKNOWN_ASSET)?;
    if o.r {
        return Err(errors::REDUCE_ONLY.into());
    }
    let tif = match o.t {
        OrderTypeWire::Limit { tif } => tif,
        OrderTypeWire::Trigger { .. } => return Err(errors::TRIGGER.into()),
    };
    let (px, sz) = (o.p.0, o.s.0);
    check_size(sz, pair.sz_decimals).map_err(|_| errors::SIZE)?;
    check_price(px, pair.sz_decimals).map_err(|_| errors::TICK)?;
    // A product beyond the decimal range is far above the minimum (the core refuses its range).
    if px.checked_mul(sz).is_some_and(|value| value < MIN_ORDER_VALUE) {
        return Err(errors::MIN_VALUE.into());
    }
    let (order_type, core_tif) = match tif {
        Tif::Gtc => (OrderType::Limit, CoreTif::Gtc),
        Tif::Ioc => (OrderType::Limit, CoreTif::Ioc),
        Tif::Alo => (OrderType::LimitMaker, CoreTif::Gtc),
    };
    let leg = Leg {
        order_type,
        side: if o.b { Side::Buy } else { Side::Sell },
        qty: sz,
        price: Some(px),
        stop: None,
        tif: core_tif,
        client_id: o.c.map(|c| c.to_string()),
    };
    let placed = e
        .place_order_by(account, &pair.symbol, leg, PriceRule::FrontEnd, now)
        .map_err(|r| order_refusal(r, || bbo(e, &pair.symbol, now)))?;
    let filled: Decimal = placed.fills.iter().map(|f| f.qty).sum();
    if tif == Tif::Ioc && filled.is_zero() {
        return Err(errors::IOC_CANCEL.into());
    }
    let open = e.order(placed.order_id).is_some_and(|x| x.status.is_open());
    if open || filled.is_zero() {
        return Ok(placed_entry("resting", placed.order_id, o.c, Map::new()));
    }
    let cost: Decimal = placed.fills.iter().map(|f| f.price * f.qty).sum();
    let mut fields = Map::new();
    fields.insert("totalSz".into(), json!(to_wire(filled)));
    fields.insert("avgPx".into(), json!(to_wire((cost / filled).round_dp(8))));
    Ok(placed_entry("filled", placed.order_id, o.c, fields))
}

/// Which order a cancel names.
enum Target {
    Oid(u64),
    Cloid(Cloid),
}

/// Cancels the account's open order on the pair of `asset`: `"success"` or the error entry.
fn cancel(
    e: &mut Engine,
    l: &Listing,
    account: usize,
    asset: u32,
    target: Target,
    now: Millis,
) -> Value {
    let found = l.pair_by_asset(asset).and_then(|pair| match target {
        Target::Oid(oid) => {
            let id = i64::try_from(oid).ok()?;
            let o = e.order(id)?;
            (o.account == account && o.symbol == pair.symbol).then_some(id)
        }
        Target::Cloid(c) => e.order_by_client_id(account, &pair.symbol, &c.to_string()),
    });
    let canceled = found.is_some_and(|id| {
        let cancel_id = e.new_client_id();
        e.cancel_order(id, cancel_id, now).is_ok()
    });
    if canceled { json!("success") } else { errors::entry(errors::MISSING_ORDER, asset) }
}
