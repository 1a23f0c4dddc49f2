//! Exchange A's market streams: `<symbol>@bookTicker` (best bid/ask whenever they change, no
//! `e`/`E`) and `<symbol>@trade` (one per price change of the simulated market, which is also
//! the last price stops trigger on), raw at `/ws/<stream>` or wrapped
//! `{"stream", "data"}` at `/stream?streams=a/b`, with the live control messages
//! (SUBSCRIBE, UNSUBSCRIBE, LIST_SUBSCRIPTIONS, SET_PROPERTY, GET_PROPERTY).

use super::link::{Reply, Service};
use crate::clock::Millis;
use crate::exchange_a::wire::fmt8;
use crate::faults::StreamService;
use crate::state::Sim;
use rust_decimal::Decimal;
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

/// Streams per connection at most.
const MAX_STREAMS: usize = 1024;

/// Counters shared by every market-stream connection of one server.
#[derive(Default)]
pub(super) struct Sequences {
    book_update: AtomicI64,
    trade: AtomicI64,
}

pub(super) struct MarketStreams {
    streams: Vec<String>,
    combined: bool,
    sequences: Arc<Sequences>,
    /// Per symbol: the best bid/ask last sent, and the last price seen.
    last_top: HashMap<String, [Decimal; 4]>,
    /// Per symbol of a trade stream: the price when it was opened or subscribed, then the last
    /// one pushed. Taken before the client hears it is connected (the handshake, the SUBSCRIBE
    /// reply), so a price change right after that is a trade the client sees.
    last_price: HashMap<String, Decimal>,
}

/// What a stream name asks for.
enum Kind {
    BookTicker,
    Trade,
}

impl MarketStreams {
    /// Opens `streams` now (call it during the handshake: see `last_price`).
    pub fn new(sim: &Sim, streams: Vec<String>, combined: bool, sequences: Arc<Sequences>) -> Self {
        let mut opened = Self {
            streams,
            combined,
            sequences,
            last_top: HashMap::new(),
            last_price: HashMap::new(),
        };
        for name in opened.streams.clone() {
            opened.note_price(sim, &name);
        }
        opened
    }

    /// Records the current price of a trade stream's symbol as the one last seen.
    fn note_price(&mut self, sim: &Sim, name: &str) {
        let Some((symbol, Kind::Trade)) = parse(sim, name) else { return };
        let e = sim.engine();
        let Ok(rules) = e.rules(&symbol) else { return };
        let price = e.market.price(rules, sim.now_ms());
        self.last_price.entry(symbol).or_insert(price);
    }

    /// The stream names of a `/ws/<stream>` path or a `streams=a/b` query.
    pub fn names(raw: &str) -> Vec<String> {
        raw.split('/').filter(|s| !s.is_empty()).map(str::to_string).collect()
    }

    /// A payload as sent: as it is on a raw connection, wrapped on a combined one.
    fn wrap(&self, stream: &str, data: String) -> String {
        if self.combined {
            let stream = serde_json::to_string(stream).unwrap_or_default();
            format!(r#"{{"stream":{stream},"data":{data}}}"#)
        } else {
            data
        }
    }

    fn control(&mut self, sim: &Sim, req: &Value) -> Value {
        let id = req.get("id").cloned().unwrap_or(Value::Null);
        let invalid =
            |msg: &str| json!({ "code": 2, "msg": format!("Invalid request: {msg}"), "id": id });
        let params: Vec<Value> = match req.get("params") {
            None => Vec::new(),
            Some(Value::Array(a)) => a.clone(),
            Some(_) => return invalid("'params' must be an array"),
        };
        let names = || params.iter().filter_map(Value::as_str).map(str::to_string);
        match req.get("method").and_then(Value::as_str) {
            Some("SUBSCRIBE") => {
                for name in names() {
                    if parse(sim, &name).is_none() {
                        return invalid(&format!("unknown stream '{name}'"));
                    }
                    if !self.streams.contains(&name) {
                        if self.streams.len() >= MAX_STREAMS {
                            return invalid("too many streams");
                        }
                        self.note_price(sim, &name);
                        self.streams.push(name);
                    }
                }
                json!({ "result": null, "id": id })
            }
            Some("UNSUBSCRIBE") => {
                let gone: Vec<String> = names().collect();
                self.streams.retain(|s| !gone.contains(s));
                json!({ "result": null, "id": id })
            }
            Some("LIST_SUBSCRIPTIONS") => json!({ "result": self.streams, "id": id }),
            Some("SET_PROPERTY") => match (params.first().and_then(Value::as_str), params.get(1)) {
                (Some("combined"), Some(Value::Bool(b))) => {
                    self.combined = *b;
                    json!({ "result": null, "id": id })
                }
                (Some("combined"), _) => {
                    json!({ "code": 1, "msg": "Invalid value type: expected Boolean", "id": id })
                }
                _ => json!({ "code": 0, "msg": "Unknown property", "id": id }),
            },
            Some("GET_PROPERTY") => match params.first().and_then(Value::as_str) {
                Some("combined") => json!({ "result": self.combined, "id": id }),
                _ => json!({ "code": 0, "msg": "Unknown property", "id": id }),
            },
            _ => invalid("unknown or missing 'method'"),
        }
    }
}

/// (symbol, kind) of a stream name such as `btcusdt@bookTicker`, if the symbol is listed.
fn parse(sim: &Sim, name: &str) -> Option<(String, Kind)> {
    let (symbol, kind) = name.split_once('@')?;
    let kind = match kind {
        "bookTicker" => Kind::BookTicker,
        "trade" => Kind::Trade,
        _ => return None,
    };
    let symbol = symbol.to_ascii_uppercase();
    sim.engine().rules(&symbol).ok()?;
    Some((symbol, kind))
}

impl Service for MarketStreams {
    fn kind(&self) -> StreamService {
        StreamService::Market
    }

    fn on_text(&mut self, sim: &Sim, text: &str) -> Reply {
        let answer = match serde_json::from_str::<Value>(text) {
            Ok(req) => self.control(sim, &req),
            Err(_) => json!({ "code": 3, "msg": "Invalid JSON: expected a JSON object" }),
        };
        Reply::one(answer.to_string())
    }

    fn poll(&mut self, sim: &Sim) -> Vec<String> {
        let now = sim.now_ms();
        let mut frames = Vec::new();
        for name in self.streams.clone() {
            let Some((symbol, kind)) = parse(sim, &name) else { continue };
            let (price, top) = {
                let e = sim.engine();
                let Ok(rules) = e.rules(&symbol) else { continue };
                let price = e.market.price(rules, now);
                let book = e.book(rules, price);
                let first = |side: &[(Decimal, Decimal)]| side.first().copied().unwrap_or_default();
                let (bid, ask) = (first(&book.bids), first(&book.asks));
                (price, [bid.0, bid.1, ask.0, ask.1])
            };
            let data = match kind {
                Kind::BookTicker => {
                    if self.last_top.get(&symbol) == Some(&top) {
                        continue;
                    }
                    self.last_top.insert(symbol.clone(), top);
                    book_ticker(&self.sequences, &symbol, top)
                }
                Kind::Trade => {
                    let before = self.last_price.insert(symbol.clone(), price);
                    if before.is_none_or(|p| p == price) {
                        continue;
                    }
                    trade(&self.sequences, &symbol, price, top[1], now)
                }
            };
            frames.push(self.wrap(&name, data));
        }
        frames
    }

    fn shutdown_frame(&self, now: Millis) -> String {
        let event = serde_json::to_string(&super::Shutdown::new(now)).unwrap_or_default();
        self.wrap("!serverShutdown", event)
    }
}

/// `bookTicker`, keys in the exchange's order (and no `e`/`E`).
#[derive(Serialize)]
struct BookTicker<'a> {
    u: i64,
    s: &'a str,
    b: String,
    #[serde(rename = "B")]
    bid_qty: String,
    a: String,
    #[serde(rename = "A")]
    ask_qty: String,
}

#[derive(Serialize)]
struct Trade<'a> {
    e: &'static str,
    #[serde(rename = "E")]
    event_time: Millis,
    s: &'a str,
    t: i64,
    p: String,
    q: String,
    #[serde(rename = "T")]
    trade_time: Millis,
    m: bool,
    #[serde(rename = "M")]
    ignore: bool,
}

fn book_ticker(seq: &Sequences, symbol: &str, [b, bq, a, aq]: [Decimal; 4]) -> String {
    let u = seq.book_update.fetch_add(1, Ordering::Relaxed) + 1;
    let t =
        BookTicker { u, s: symbol, b: fmt8(b), bid_qty: fmt8(bq), a: fmt8(a), ask_qty: fmt8(aq) };
    serde_json::to_string(&t).unwrap_or_default()
}

/// A market trade at the new price, of the best level's quantity.
fn trade(seq: &Sequences, symbol: &str, price: Decimal, qty: Decimal, now: Millis) -> String {
    let t = seq.trade.fetch_add(1, Ordering::Relaxed) + 1;
    let trade = Trade {
        e: "trade",
        event_time: now,
        s: symbol,
        t,
        p: fmt8(price),
        q: fmt8(qty),
        trade_time: now,
        m: false,
        ignore: true,
    };
    serde_json::to_string(&trade).unwrap_or_default()
}
