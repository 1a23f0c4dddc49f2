//! Exchange B's answers exactly as the wire reference spells them (§3 `/info`, §4.4
//! `/exchange`), read into plain structs; turning them into domain types happens in the
//! client, once. They are read strictly ([`crate::exchange::answers`]): every price, size and
//! amount is a plain decimal string with the sign it can have, every enum one of its
//! documented values, and a field an outcome needs (a status, a size, a price, an oid, a
//! time) has no default, so an answer that lacks one is unreadable instead of a value built
//! from defaults. A field the service does not need is not read, so an extra display field
//! never makes an answer unreadable.

use rust_decimal::Decimal;
use serde::Deserialize;
use spotbot_exchange_b_protocol::Cloid;

use crate::exchange::answers::{self, decimal, non_negative, nullable_non_negative, positive};

/// One token of `spotMeta.tokens`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Token {
    pub name: String,
    pub sz_decimals: u32,
    pub index: u32,
}

/// One pair of `spotMeta.universe`: `tokens` = `[base, quote]` token indexes.
#[derive(Debug, Clone, Deserialize)]
pub struct PairJson {
    pub name: String,
    pub tokens: Vec<u32>,
    pub index: u32,
}

/// `spotMeta`.
#[derive(Debug, Clone, Deserialize)]
pub struct SpotMeta {
    pub tokens: Vec<Token>,
    pub universe: Vec<PairJson>,
}

/// One asset context of `spotMetaAndAssetCtxs` (same order as `universe`).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssetCtx {
    pub coin: String,
    #[serde(deserialize_with = "non_negative")]
    pub day_ntl_vlm: Decimal,
    #[serde(deserialize_with = "non_negative")]
    pub mark_px: Decimal,
    /// Always there, `null` when a side of the book is empty.
    #[serde(deserialize_with = "nullable_non_negative")]
    pub mid_px: Option<Decimal>,
    #[serde(deserialize_with = "non_negative")]
    pub prev_day_px: Decimal,
}

/// One mid of `allMids` (an object of coin → mid).
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct Mid(#[serde(deserialize_with = "non_negative")] pub Decimal);

/// One candle of `candleSnapshot`.
#[derive(Debug, Clone, Deserialize)]
pub struct Candle {
    pub t: i64,
    #[serde(rename = "T")]
    pub close_time: i64,
    #[serde(deserialize_with = "non_negative")]
    pub o: Decimal,
    #[serde(deserialize_with = "non_negative")]
    pub h: Decimal,
    #[serde(deserialize_with = "non_negative")]
    pub l: Decimal,
    #[serde(deserialize_with = "non_negative")]
    pub c: Decimal,
    #[serde(deserialize_with = "non_negative")]
    pub v: Decimal,
    pub n: u64,
}

/// One balance of `spotClearinghouseState`: `coin` is the token name.
#[derive(Debug, Clone, Deserialize)]
pub struct BalanceJson {
    pub coin: String,
    #[serde(deserialize_with = "non_negative")]
    pub hold: Decimal,
    #[serde(deserialize_with = "non_negative")]
    pub total: Decimal,
}

/// `spotClearinghouseState`.
#[derive(Debug, Clone, Deserialize)]
pub struct ClearinghouseState {
    pub balances: Vec<BalanceJson>,
}

/// `B` (bid: a buy) or `A` (ask: a sell).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum SideJson {
    #[serde(rename = "B")]
    Bid,
    #[serde(rename = "A")]
    Ask,
}

/// An order's time in force: the three an order is placed with, and the two IOC-like ones
/// the exchange's own front end gives its market orders and liquidations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum TifJson {
    Gtc,
    Ioc,
    Alo,
    FrontendMarket,
    LiquidationMarket,
}

/// An order as `frontendOpenOrders` lists it, `orderStatus` nests it and the WebSocket's
/// `orderUpdates` push it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderJson {
    pub coin: String,
    #[serde(deserialize_with = "positive")]
    pub limit_px: Decimal,
    pub oid: u64,
    pub side: SideJson,
    /// The size still open (`0.0` once filled).
    #[serde(deserialize_with = "non_negative")]
    pub sz: Decimal,
    /// The size placed.
    #[serde(deserialize_with = "positive")]
    pub orig_sz: Decimal,
    /// `None` when the key is absent, which only the WebSocket's order updates do (they carry
    /// no time in force; the REST answers always do); `Some(None)` for its documented `null`
    /// (a trigger order).
    #[serde(default, deserialize_with = "answers::present")]
    pub tif: Option<Option<TifJson>>,
    pub timestamp: i64,
    /// Absent or `null` when the order has none.
    #[serde(default)]
    pub cloid: Option<Cloid>,
}

/// `orderStatus`'s `order` when found (and one element of `orderUpdates`): the order, its
/// status and when it got it.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OrderWithStatus {
    pub order: OrderJson,
    pub status: String,
    pub status_timestamp: i64,
}

/// `orderStatus`, in one of its two documented forms; anything else does not read.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "OrderStatusJson")]
pub enum OrderStatusAnswer {
    /// `{"status":"order","order":{…}}`.
    Found(OrderWithStatus),
    /// `{"status":"unknownOid"}`: the only answer that says the exchange has no such order.
    UnknownOid,
}

/// `orderStatus` as sent, before its two forms are told apart.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OrderStatusJson {
    status: String,
    /// `None` when absent, `Some(None)` when `null`.
    #[serde(default, deserialize_with = "answers::present")]
    order: Option<Option<OrderWithStatus>>,
}

impl TryFrom<OrderStatusJson> for OrderStatusAnswer {
    type Error = String;

    fn try_from(answer: OrderStatusJson) -> Result<Self, String> {
        match (answer.status.as_str(), answer.order) {
            ("order", Some(Some(found))) => Ok(Self::Found(found)),
            ("unknownOid", None) => Ok(Self::UnknownOid),
            (status, order) => {
                let with = if order.is_some() { "with" } else { "without" };
                Err(format!("orderStatus {status:?} {with} an order is not a documented answer"))
            }
        }
    }
}

/// One fill of `userFills`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FillJson {
    pub coin: String,
    #[serde(deserialize_with = "positive")]
    pub px: Decimal,
    #[serde(deserialize_with = "positive")]
    pub sz: Decimal,
    pub side: SideJson,
    pub time: i64,
    pub oid: u64,
    pub crossed: bool,
    /// Negative for a maker rebate.
    #[serde(deserialize_with = "decimal")]
    pub fee: Decimal,
    pub fee_token: String,
    pub tid: u64,
}

/// The top level of an `/exchange` answer: `ok` with a response object, or `err` with the
/// text of why the whole action was refused. Any other status, or an `err` whose response is
/// not a text, does not read.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "status", content = "response", rename_all = "lowercase")]
pub enum ExchangeAnswer {
    Ok(OkResponse),
    Err(String),
}

/// What an `ok` answer answers: the service sends orders and cancels (a cancel by cloid is
/// answered as a cancel).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ResponseKind {
    Order,
    Cancel,
}

/// `response` of an `ok` answer to an order or a cancel: its kind and one status per order or
/// cancel, in request order.
#[derive(Debug, Clone, Deserialize)]
pub struct OkResponse {
    #[serde(rename = "type")]
    pub kind: ResponseKind,
    pub data: StatusesData,
}

#[derive(Debug, Clone, Deserialize)]
pub struct StatusesData {
    pub statuses: Vec<StatusEntry>,
}

/// One entry of `statuses`: a bare string (`"success"`, `"waitingForFill"`) or an object
/// with exactly one of `resting`, `filled` and `error` (an object with two says two things).
#[derive(Debug, Clone, Deserialize)]
#[serde(from = "StatusJson")]
pub enum StatusEntry {
    Text(String),
    Resting(Resting),
    Filled(Filled),
    Error(String),
}

/// A status as sent: a string, or an object of one key.
#[derive(Deserialize)]
#[serde(untagged)]
enum StatusJson {
    Text(String),
    Object(OneStatus),
}

/// An object of exactly one key (as an externally tagged enum reads).
#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum OneStatus {
    Resting(Resting),
    Filled(Filled),
    Error(String),
}

impl From<StatusJson> for StatusEntry {
    fn from(status: StatusJson) -> Self {
        match status {
            StatusJson::Text(text) => Self::Text(text),
            StatusJson::Object(OneStatus::Resting(r)) => Self::Resting(r),
            StatusJson::Object(OneStatus::Filled(f)) => Self::Filled(f),
            StatusJson::Object(OneStatus::Error(e)) => Self::Error(e),
        }
    }
}

/// An order resting on the book. A live answer also names the cloid that was sent (wire
/// reference §4.4: not in the docs, read when there).
#[derive(Debug, Clone, Deserialize)]
pub struct Resting {
    pub oid: u64,
    #[serde(default)]
    pub cloid: Option<Cloid>,
}

/// An order that matched at once: how much and at what average price.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Filled {
    #[serde(deserialize_with = "positive")]
    pub total_sz: Decimal,
    #[serde(deserialize_with = "positive")]
    pub avg_px: Decimal,
    pub oid: u64,
    #[serde(default)]
    pub cloid: Option<Cloid>,
}

#[cfg(test)]
pub(crate) mod fixtures {
    //! Answers as the wire reference shows them (§3, §4.4), shaped like mainnet's.

    /// `spotMeta`: PURR/USDC (pair 0), UBTC/USDC (`@142`), UETH/USDC (`@151`), a second
    /// pair of UBTC against another quote, and a token named `BTC` that is not bitcoin.
    pub const SPOT_META: &str = r#"{
      "tokens": [
        {"name":"USDC","szDecimals":8,"weiDecimals":8,"index":0,"tokenId":"0x6d1e7cde53ba9467b783cb7c530ce054","isCanonical":true,"evmContract":null,"fullName":null},
        {"name":"PURR","szDecimals":0,"weiDecimals":5,"index":1,"tokenId":"0xc1fb593aeffbeb02f85e0308e9956a90","isCanonical":true,"evmContract":null,"fullName":null},
        {"name":"UBTC","szDecimals":5,"weiDecimals":10,"index":197,"tokenId":"0x8f254b963e8468305d409b33aa137c67","isCanonical":false,"evmContract":null,"fullName":"Unit Bitcoin"},
        {"name":"UETH","szDecimals":4,"weiDecimals":9,"index":221,"tokenId":"0xe1edd30daaf5caac3fe63569e24748da","isCanonical":false,"evmContract":null,"fullName":"Unit Ethereum"},
        {"name":"BTC","szDecimals":2,"weiDecimals":8,"index":300,"tokenId":"0x00000000000000000000000000000300","isCanonical":false,"evmContract":null,"fullName":"not bitcoin"},
        {"name":"USDT0","szDecimals":2,"weiDecimals":8,"index":268,"tokenId":"0x00000000000000000000000000000268","isCanonical":false,"evmContract":null,"fullName":null}
      ],
      "universe": [
        {"name":"PURR/USDC","tokens":[1,0],"index":0,"isCanonical":true},
        {"name":"@142","tokens":[197,0],"index":142,"isCanonical":false},
        {"name":"@151","tokens":[221,0],"index":151,"isCanonical":false},
        {"name":"@170","tokens":[197,268],"index":170,"isCanonical":false},
        {"name":"@180","tokens":[300,0],"index":180,"isCanonical":false}
      ]
    }"#;

    pub const ALL_MIDS: &str =
        r#"{"BTC":"30135.0","PURR/USDC":"0.2","@142":"97123.5","@151":"3321.45","@107":"18.62"}"#;

    /// `spotMetaAndAssetCtxs`'s contexts for the pairs of [`SPOT_META`].
    pub const CTXS: &str = r#"[
      {"dayNtlVlm":"8906.0","markPx":"0.2","midPx":"0.2","prevDayPx":"0.25","circulatingSupply":"1","coin":"PURR/USDC"},
      {"dayNtlVlm":"15000000.5","markPx":"97100.0","midPx":"97123.5","prevDayPx":"95000.0","circulatingSupply":"1","coin":"@142"},
      {"dayNtlVlm":"0.0","markPx":"3320.0","midPx":null,"prevDayPx":"0.0","circulatingSupply":"1","coin":"@151"},
      {"dayNtlVlm":"0.0","markPx":"1.0","midPx":null,"prevDayPx":"1.0","circulatingSupply":"1","coin":"@170"},
      {"dayNtlVlm":"0.0","markPx":"1.0","midPx":null,"prevDayPx":"1.0","circulatingSupply":"1","coin":"@180"}
    ]"#;

    pub const CANDLES: &str = r#"[
      {"T":1684702799999,"c":"0.001604","h":"0.001616","i":"1h","l":"0.001601","n":709,"o":"0.001601","s":"@142","t":1684699200000,"v":"520665683.0"}
    ]"#;

    pub const BALANCES: &str = r#"{"balances":[
      {"coin":"USDC","token":0,"hold":"10.5","total":"14.625485","entryNtl":"0.0"},
      {"coin":"UBTC","token":197,"hold":"0.0","total":"0.0015","entryNtl":"145.1"},
      {"coin":"PURR","token":1,"hold":"0.0","total":"0.0","entryNtl":"0.0"}
    ]}"#;

    /// A take-profit resting at 101000 with a cloid, a third of it filled.
    pub const ORDER_STATUS_OPEN: &str = r#"{"status":"order","order":{"order":{
      "coin":"@142","isPositionTpsl":false,"isTrigger":false,"limitPx":"101000.0","oid":91490942,
      "orderType":"Limit","origSz":"0.003","reduceOnly":false,"side":"A","sz":"0.002","tif":"Gtc",
      "timestamp":1681247412573,"triggerCondition":"N/A","triggerPx":"0.0","children":[],
      "cloid":"0x534f5f0102030405060708090a0b0c0d"},
      "status":"open","statusTimestamp":1681247412600}}"#;

    pub const ORDER_STATUS_UNKNOWN: &str = r#"{"status":"unknownOid"}"#;

    pub const USER_FILLS: &str = r#"[
      {"coin":"@142","px":"97050.0","sz":"0.001","side":"A","time":1681247412700,"startPosition":"0.003","dir":"Sell","closedPnl":"0.0","hash":"0xa1","oid":91490942,"crossed":false,"fee":"0.097","feeToken":"USDC","tid":118906512037719},
      {"coin":"@107","px":"18.62041381","sz":"43.84","side":"A","time":1735969713869,"startPosition":"10659.65434798","dir":"Sell","closedPnl":"8722.988077","hash":"0xa2","oid":59071663721,"crossed":true,"fee":"0.304521","tid":907359904431134,"feeToken":"USDC"},
      {"coin":"@142","px":"97000.0","sz":"0.002","side":"B","time":1681247400000,"startPosition":"0.001","dir":"Buy","closedPnl":"0.0","hash":"0xa3","oid":91490900,"crossed":true,"fee":"0.000002","feeToken":"UBTC","tid":118906512037700}
    ]"#;

    pub const RESTING: &str = r#"{"status":"ok","response":{"type":"order","data":{"statuses":[{"resting":{"oid":77738308}}]}}}"#;
    pub const FILLED_PART: &str = r#"{"status":"ok","response":{"type":"order","data":{"statuses":[{"filled":{"totalSz":"0.02","avgPx":"1891.4","oid":77747314}}]}}}"#;
    pub const IOC_NO_MATCH: &str = r#"{"status":"ok","response":{"type":"order","data":{"statuses":[{"error":"Order could not immediately match against any resting orders. asset=10142"}]}}}"#;
    pub const INSUFFICIENT: &str = r#"{"status":"ok","response":{"type":"order","data":{"statuses":[{"error":"Order has insufficient spot balance to trade asset=10142"}]}}}"#;
    pub const WRONG_SIGNER: &str = r#"{"status":"err","response":"L1 error: User or API Wallet 0x0123456789abcdef0123456789abcdef01234567 does not exist."}"#;
    pub const CANCEL_OK: &str =
        r#"{"status":"ok","response":{"type":"cancel","data":{"statuses":["success"]}}}"#;
    pub const CANCEL_MISSING: &str = r#"{"status":"ok","response":{"type":"cancel","data":{"statuses":[{"error":"Order was never placed, already canceled, or filled. asset=10142"}]}}}"#;
}
