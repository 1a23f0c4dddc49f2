//! What an `/exchange` answer says (wire reference §4.4), read strictly: the status of the one
//! order or cancel an action carries, the domain order a placement became, whether a cancel
//! was done. Only a well-formed, documented answer is an outcome. One that is cut, reshaped,
//! of the wrong kind, carries an impossible number (a fill above the order's size or beyond
//! its limit, an oid of 0) or an unknown value is `Unknown`: the action may have executed, so
//! the order is looked up by its cloid and never sent again. Only the documented errors (a
//! top-level `err`, a status's `error`) are typed rejections.

use rust_decimal::Decimal;
use spotbot_exchange_b_protocol::{Action, Cloid, OrderTypeWire, OrderWire, Tif};

use super::errors::{self, IOC_NO_MATCH};
use crate::exchange::answers::{self, Unreadable};
use crate::exchange::exchange_b::wire::{ExchangeAnswer, Filled, ResponseKind, StatusEntry};
use crate::exchange::{ExchangeError, NewOrder, Order, OrderStatus, Price, Qty};

/// The endpoint named in an unknown outcome's detail.
const WHAT: &str = "/exchange";

fn unknown(detail: String) -> ExchangeError {
    Unreadable::new(detail).action(WHAT)
}

/// The status of the order or cancel `action` carries (the client sends one per action), read
/// from the answer `body`; a top-level `err` is its typed error.
pub fn status(body: &[u8], action: &Action) -> Result<StatusEntry, ExchangeError> {
    let ok = match answers::parse::<ExchangeAnswer>(body).map_err(|e| e.action(WHAT))? {
        ExchangeAnswer::Err(text) => return Err(errors::top_level_error(text)),
        ExchangeAnswer::Ok(ok) => ok,
    };
    let asked = if action.is_cancel() { ResponseKind::Cancel } else { ResponseKind::Order };
    if ok.kind != asked {
        return Err(unknown(format!("a {:?} answer to a {asked:?}", ok.kind)));
    }
    let [entry]: [StatusEntry; 1] = ok
        .data
        .statuses
        .try_into()
        .map_err(|s: Vec<_>| unknown(format!("{} statuses for one {asked:?}", s.len())))?;
    Ok(entry)
}

/// The domain order `sent` (sent as `wire`) became by its status `entry`, at `now_ms`. An IOC
/// that matched nothing is an answer (status `Expired`, nothing executed, order id 0: the
/// exchange gives none); a documented `error` is its typed rejection; anything else that is
/// not this order's outcome is `Unknown`.
pub fn placed(
    sent: &NewOrder,
    wire: &OrderWire,
    entry: StatusEntry,
    now_ms: i64,
) -> Result<Order, ExchangeError> {
    let ioc = matches!(wire.t, OrderTypeWire::Limit { tif: Tif::Ioc });
    let (oid, status, executed, quote) = match entry {
        StatusEntry::Resting(_) if ioc => {
            return Err(unknown("an IOC order reported resting".into()));
        }
        StatusEntry::Resting(resting) => {
            let oid = this_order(wire, resting.oid, resting.cloid)?;
            (oid, OrderStatus::New, Decimal::ZERO, Decimal::ZERO)
        }
        StatusEntry::Filled(filled) => {
            let oid = this_order(wire, filled.oid, filled.cloid)?;
            let quote = fill_within(wire, &filled)?;
            let status = if filled.total_sz == wire.s.0 {
                OrderStatus::Filled
            } else if ioc {
                OrderStatus::Expired
            } else {
                OrderStatus::PartiallyFilled
            };
            (oid, status, filled.total_sz, quote)
        }
        StatusEntry::Error(error) if error.starts_with(IOC_NO_MATCH) => {
            (0, OrderStatus::Expired, Decimal::ZERO, Decimal::ZERO)
        }
        StatusEntry::Error(error) => return Err(errors::entry_error(error)),
        StatusEntry::Text(text) => {
            return Err(unknown(format!("{text:?} is no outcome of an order")));
        }
    };
    Ok(Order {
        symbol: sent.symbol.clone(),
        order_id: oid,
        order_list_id: None,
        client_order_id: sent.client_order_id.clone(),
        side: sent.side,
        order_type: sent.order_type,
        status,
        price: Price(wire.p.0),
        stop_price: None,
        orig_qty: Qty(wire.s.0),
        executed_qty: Qty(executed),
        cumulative_quote_qty: quote,
        time_in_force: sent.time_in_force,
        time: now_ms,
        update_time: now_ms,
        working: true,
        fills: Vec::new(),
    })
}

/// The order id of a resting or filled status, when it is about the order sent: an oid is
/// never 0 (that is an IOC that matched nothing), and a cloid it names must be the one sent.
fn this_order(wire: &OrderWire, oid: u64, cloid: Option<Cloid>) -> Result<i64, ExchangeError> {
    if cloid.is_some() && cloid != wire.c {
        return Err(unknown(format!("the status names another cloid ({cloid:?})")));
    }
    match i64::try_from(oid) {
        Ok(oid) if oid > 0 => Ok(oid),
        _ => Err(unknown(format!("oid {oid} is no order id"))),
    }
}

/// The quote of a fill, when it is possible for the order sent: at most its size, at an
/// average no worse than its limit (a buy never pays more, a sell never gets less).
fn fill_within(wire: &OrderWire, filled: &Filled) -> Result<Decimal, ExchangeError> {
    let (size, limit) = (wire.s.0, wire.p.0);
    if filled.total_sz > size {
        return Err(unknown(format!("{} filled of an order of {size}", filled.total_sz)));
    }
    let beyond = if wire.b { filled.avg_px > limit } else { filled.avg_px < limit };
    if beyond {
        return Err(unknown(format!("filled at {} beyond the limit {limit}", filled.avg_px)));
    }
    filled
        .total_sz
        .checked_mul(filled.avg_px)
        .map(|q| q.round_dp(8))
        .ok_or_else(|| unknown("the fill's quote is beyond the decimal range".into()))
}

/// Whether a cancel was done by its status `entry`: `"success"`, or the documented `error`
/// as its typed rejection (the order is not open: `UnknownOrder`); anything else is `Unknown`.
pub fn cancelled(entry: StatusEntry) -> Result<(), ExchangeError> {
    match entry {
        StatusEntry::Text(text) if text == "success" => Ok(()),
        StatusEntry::Error(error) => Err(errors::entry_error(error)),
        other => Err(unknown(format!("{other:?} is no outcome of a cancel"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exchange::exchange_b::cloid::cloid_of;
    use crate::exchange::exchange_b::wire::fixtures;
    use crate::exchange::{Side, TimeInForce};
    use rust_decimal_macros::dec;
    use spotbot_exchange_b_protocol::{CancelWire, Grouping, WireDecimal};

    /// The wire of an order of 0.02 ETH (asset 10151) as `orders::order_wire` sends it (its
    /// own tests check that mapping).
    fn eth_wire(buy: bool, price: Decimal, tif: Tif, client_id: &str) -> OrderWire {
        OrderWire {
            a: 10151,
            b: buy,
            p: WireDecimal(price),
            s: WireDecimal(dec!(0.02)),
            r: false,
            t: OrderTypeWire::Limit { tif },
            c: Some(cloid_of(client_id)),
        }
    }

    /// A MARKET buy of 0.02 at the mid 1900: an IOC limited at 1995.
    fn market_buy() -> (NewOrder, OrderWire) {
        let o = NewOrder::market("ETHUSDT", Side::Buy, Qty(dec!(0.02)), "TE_a_ETHUSDT");
        (o, eth_wire(true, dec!(1995), Tif::Ioc, "TE_a_ETHUSDT"))
    }

    /// A take-profit: a GTC sell of 0.02 at `price`.
    fn take_profit(price: Decimal) -> (NewOrder, OrderWire) {
        let o =
            NewOrder::limit("ETHUSDT", Side::Sell, Qty(dec!(0.02)), Price(price), "SO_a_ETHUSDT");
        (o, eth_wire(false, price, Tif::Gtc, "SO_a_ETHUSDT"))
    }

    /// What the client makes of `text` answering `(sent, wire)`.
    fn outcome((sent, wire): &(NewOrder, OrderWire), text: &str) -> Result<Order, ExchangeError> {
        let action = Action::Order { orders: vec![wire.clone()], grouping: Grouping::Na };
        status(text.as_bytes(), &action).and_then(|entry| placed(sent, wire, entry, 7))
    }

    /// What the client makes of `text` answering a cancel.
    fn cancel_outcome(text: &str) -> Result<(), ExchangeError> {
        let action = Action::Cancel { cancels: vec![CancelWire { a: 10151, o: 77738308 }] };
        status(text.as_bytes(), &action).and_then(cancelled)
    }

    #[test]
    fn documented_answers_are_outcomes_or_typed_rejections() {
        let buy = market_buy();
        let part = outcome(&buy, fixtures::FILLED_PART).unwrap();
        assert_eq!(
            (part.status, part.executed_qty.0, part.order_id),
            (OrderStatus::Filled, dec!(0.02), 77747314)
        );
        assert_eq!(part.cumulative_quote_qty, dec!(37.828));
        assert_eq!(part.client_order_id, "TE_a_ETHUSDT");
        let half = fixtures::FILLED_PART.replace(r#""totalSz":"0.02""#, r#""totalSz":"0.01""#);
        let half = outcome(&buy, &half).unwrap();
        assert_eq!((half.status, half.executed_qty.0), (OrderStatus::Expired, dec!(0.01)));
        let none = outcome(&buy, fixtures::IOC_NO_MATCH).unwrap();
        assert_eq!(
            (none.status, none.executed_qty.0, none.order_id),
            (OrderStatus::Expired, dec!(0), 0)
        );
        let broke = outcome(&buy, fixtures::INSUFFICIENT).unwrap_err();
        assert!(matches!(broke, ExchangeError::InsufficientBalance { .. }), "{broke:?}");
        assert!(broke.to_string().contains("insufficient spot balance to trade asset=10142"));
        let signer = outcome(&buy, fixtures::WRONG_SIGNER).unwrap_err();
        assert!(matches!(signer, ExchangeError::InvalidSignature { .. }), "{signer:?}");
        let spent =
            r#"{"status":"err","response":"Too many cumulative requests sent (14295 > 14294)"}"#;
        assert!(matches!(outcome(&buy, spent), Err(ExchangeError::RateLimited { .. })));

        let tp = take_profit(dec!(2000));
        let resting = outcome(&tp, fixtures::RESTING).unwrap();
        assert_eq!(
            (resting.status, resting.order_id, resting.price.0),
            (OrderStatus::New, 77738308, dec!(2000))
        );
        assert_eq!(resting.time_in_force, Some(TimeInForce::Gtc));
        let cheap_tp = take_profit(dec!(1800));
        let whole = outcome(&cheap_tp, fixtures::FILLED_PART).unwrap();
        assert_eq!(whole.status, OrderStatus::Filled, "0.02 of 0.02");

        // The live answer's cloid (not in the docs) and keys in another order read the same.
        let cloid = cloid_of("SO_a_ETHUSDT");
        let live = fixtures::RESTING
            .replace(r#""oid":77738308"#, &format!(r#""cloid":"{cloid}","oid":77738308"#));
        assert_eq!(outcome(&tp, &live).unwrap().order_id, 77738308);
        let reordered = r#"{"response":{"data":{"statuses":[{"resting":{"oid":77738308}}]},"type":"order"},"status":"ok"}"#;
        assert_eq!(outcome(&tp, reordered).unwrap().order_id, 77738308);

        assert_eq!(cancel_outcome(fixtures::CANCEL_OK), Ok(()));
        let missing = cancel_outcome(fixtures::CANCEL_MISSING).unwrap_err();
        assert!(matches!(missing, ExchangeError::UnknownOrder { .. }), "{missing:?}");
    }

    fn assert_unknown(result: Result<impl std::fmt::Debug, ExchangeError>, text: &str, why: &str) {
        assert!(matches!(result, Err(ExchangeError::Unknown { .. })), "{why}: {result:?}\n{text}");
    }

    /// Every damaged form of an order's or a cancel's answer is an unknown outcome: never a
    /// rejection (a confirm would send the entry again), never a well-formed outcome.
    #[test]
    fn damaged_action_answers_are_unknown_outcomes() {
        let (buy, tp) = (market_buy(), take_profit(dec!(2000)));
        for cut in 0..fixtures::FILLED_PART.len() {
            let text = &fixtures::FILLED_PART[..cut];
            assert_unknown(outcome(&buy, text), text, "a cut fill");
        }
        for cut in 0..fixtures::INSUFFICIENT.len() {
            let text = &fixtures::INSUFFICIENT[..cut];
            assert_unknown(outcome(&buy, text), text, "a cut refusal");
        }
        for cut in 0..fixtures::CANCEL_OK.len() {
            let text = &fixtures::CANCEL_OK[..cut];
            assert_unknown(cancel_outcome(text), text, "a cut cancel");
        }

        let fill = |from: &str, to: &str| {
            assert!(fixtures::FILLED_PART.contains(from), "{from}");
            fixtures::FILLED_PART.replacen(from, to, 1)
        };
        let rest = |from: &str, to: &str| {
            assert!(fixtures::RESTING.contains(from), "{from}");
            fixtures::RESTING.replacen(from, to, 1)
        };
        let other_cloid = cloid_of("SO_b_ETHUSDT");
        let fills = [
            // Valid JSON of the wrong shape.
            (format!("[{}]", fixtures::FILLED_PART), "a list around the answer"),
            (fill(r#""statuses":[{"#, r#""statuses":{"x":{"#).replace("}]}}}", "}}}}}"), "statuses as an object"),
            (fill(r#""totalSz":"0.02""#, r#""totalSz":0.02"#), "a size as a number"),
            (fill(r#""oid":77747314"#, r#""oid":"77747314""#), "an oid as text"),
            (fill(r#""filled":{"#, r#""filled":[{"#).replace("314}}]", "314}]}]"), "the fill as a list"),
            // A field the outcome needs is missing.
            (fill(r#""avgPx":"1891.4","#, ""), "no average price"),
            (fill(r#""totalSz":"0.02","#, ""), "no size"),
            (fill(r#","oid":77747314"#, ""), "no oid"),
            (r#"{"status":"ok","response":{"type":"order"}}"#.into(), "no data"),
            (r#"{"status":"ok","response":{"type":"order","data":{}}}"#.into(), "no statuses"),
            (r#"{"status":"ok"}"#.into(), "no response"),
            (fill(r#""type":"order","#, ""), "no type"),
            // Impossible numbers.
            (fill(r#""totalSz":"0.02""#, r#""totalSz":"1e400""#), "1e400"),
            (fill(r#""totalSz":"0.02""#, r#""totalSz":"-0.0001""#), "a negative size"),
            (fill(r#""totalSz":"0.02""#, r#""totalSz":"0""#), "a fill of nothing"),
            (fill(r#""totalSz":"0.02""#, r#""totalSz":"0.03""#), "more than the order"),
            (fill(r#""avgPx":"1891.4""#, r#""avgPx":"0""#), "a price of 0"),
            (fill(r#""avgPx":"1891.4""#, r#""avgPx":"-1891.4""#), "a negative price"),
            (fill(r#""avgPx":"1891.4""#, r#""avgPx":"2500""#), "above the buy's limit"),
            (fill(r#""avgPx":"1891.4""#, r#""avgPx":"Infinity""#), "not finite"),
            (fill(r#""oid":77747314"#, r#""oid":0"#), "an oid of 0"),
            (fill(r#""oid":77747314"#, r#""oid":-77747314"#), "a negative oid"),
            (fill(r#""oid":77747314"#, r#""oid":18446744073709551615"#), "an oid beyond i64"),
            // Unknown values.
            (fill(r#""status":"ok""#, r#""status":"okay""#), "an unknown top status"),
            (fill(r#""type":"order""#, r#""type":"orders""#), "an unknown response type"),
            (fill(r#""type":"order""#, r#""type":"cancel""#), "a cancel's answer to an order"),
            (fill(r#""filled":"#, r#""matched":"#), "an unknown status key"),
            (fill(r#"[{"filled""#, r#"["waitingForFill",{"filled""#), "two statuses for one order"),
            (r#"{"status":"ok","response":{"type":"order","data":{"statuses":[]}}}"#.into(), "no status"),
            (r#"{"status":"ok","response":{"type":"order","data":{"statuses":["waitingForFill"]}}}"#.into(), "a grouped child's text"),
            (r#"{"status":"ok","response":{"type":"order","data":{"statuses":[null]}}}"#.into(), "a null status"),
            (fill(r#"{"filled""#, r#"{"error":"x","filled""#), "an error and a fill in one status"),
            // Duplicated keys.
            (fill(r#""status":"ok""#, r#""status":"ok","status":"err""#), "a top status twice"),
            (fill(r#""oid":77747314"#, r#""oid":77747314,"oid":1"#), "an oid twice"),
            (fill(r#""totalSz":"0.02""#, r#""totalSz":"0.02","totalSz":"0.01""#), "a size twice"),
            // Not the exchange's answer.
            ("<html><body><h1>504 Gateway Time-out</h1></body></html>".into(), "an HTML page"),
            (String::new(), "an empty 200"),
            ("  \n".into(), "only whitespace"),
            ("null".into(), "null"),
            ("{}".into(), "an empty object"),
            (r#""ok""#.into(), "a bare text"),
            (r#"{"status":"err","response":{"msg":"refused"}}"#.into(), "an err that is no text"),
            (r#"{"status":"err"}"#.into(), "an err without a text"),
            (format!("{} trailing", fixtures::FILLED_PART), "text after the answer"),
        ];
        for (text, why) in fills {
            assert_unknown(outcome(&buy, &text), &text, why);
        }
        assert_unknown(outcome(&buy, fixtures::RESTING), fixtures::RESTING, "an IOC resting");
        let another = format!(r#""oid":77738308,"cloid":"{other_cloid}""#);
        for (text, why) in [
            (rest(r#""oid":77738308"#, &another), "another order's cloid"),
            (rest(r#""oid":77738308"#, r#""oid":77738308,"cloid":"0x12""#), "a malformed cloid"),
            (rest(r#""oid":77738308"#, r#""oid":0"#), "a resting oid of 0"),
            (rest(r#""resting":{"oid":77738308}"#, r#""resting":{}"#), "resting without an oid"),
            (rest(r#""resting":"#, r#""Resting":"#), "a misspelt status"),
            (fixtures::FILLED_PART.to_string(), "a sell filled below its limit"),
        ] {
            assert_unknown(outcome(&tp, &text), &text, why);
        }

        let cancel = |from: &str, to: &str| {
            assert!(fixtures::CANCEL_OK.contains(from), "{from}");
            fixtures::CANCEL_OK.replacen(from, to, 1)
        };
        for (text, why) in [
            (cancel(r#"["success"]"#, r#"["succes"]"#), "an unknown text"),
            (cancel(r#"["success"]"#, r#"["success","success"]"#), "two statuses"),
            (cancel(r#"["success"]"#, "[]"), "no status"),
            (cancel(r#"["success"]"#, r#"[{"resting":{"oid":1}}]"#), "an order's status"),
            (cancel(r#"["success"]"#, r#"[{"error":5}]"#), "an error that is no text"),
            (cancel(r#""type":"cancel""#, r#""type":"order""#), "an order's answer"),
            (cancel(r#""statuses":["success"]"#, r#""statuses":"success""#), "not a list"),
            ("<html>503 Service Unavailable</html>".into(), "an HTML page"),
            (String::new(), "an empty 200"),
        ] {
            assert_unknown(cancel_outcome(&text), &text, why);
        }
    }
}
