//! Exchange B (spot on an L1 order book, wire reference `exchange-b-api.md` §1-§5): the
//! answers as the exchange spells them ([`wire`]), the service's symbols on its pairs
//! ([`symbols`]), client order ids as 16-byte cloids ([`cloid`]), nonces that never repeat
//! ([`nonce`]), its request weights ([`weights`]) and the REST client that implements
//! [`Exchange`](crate::exchange::Exchange) over them ([`client`]). Signed actions, their
//! signature and the price and size rules come from `spotbot-exchange-b-protocol`, the crate
//! the simulator checks them with.
//!
//! Exchange B has no stop orders on spot: its protection is [`Protection::Watched`]
//! (a resting take-profit, the stop watched by the service) and it has no OCO lists.
//!
//! What the adapter approximates, because exchange B does not report it:
//! - `server_time` is the service clock (there is no time endpoint);
//! - 24 h tickers: last = mid (mark when one-sided), base volume = quote volume / last;
//!   high and low come from the 24 newest 1h candles when at most 5 symbols are asked, else
//!   they are the range of the previous day's price and the last one;
//! - kline quote volume = base volume × typical price;
//! - `all_orders` = open orders plus the orders of the recent fills (looked up one by one,
//!   at most 100), so an order that ended unfilled is missing once it left the book;
//! - open orders' cumulative quote = executed × limit price (resting orders fill at their
//!   limit); looked-up orders read theirs from the fills;
//! - an IOC (MARKET) that matched nothing has order id 0 (the exchange gives none).
//!
//! [`Protection::Watched`]: crate::exchange::Protection::Watched

pub mod client;
pub mod cloid;
pub mod nonce;
pub mod stream;
pub mod symbols;
mod weights;
pub mod wire;

pub use client::{ClientConfig, ExchangeBClient, MAINNET_URL, TESTNET_URL};
