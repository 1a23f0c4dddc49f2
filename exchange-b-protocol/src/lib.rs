//! Exchange B's action wire, shared by the service's adapter (which signs) and the simulator
//! (which recovers the signer): the signed actions as typed values ([`actions`]), the L1
//! signature over them ([`signing`]) and the price and size rules every number on the wire
//! obeys ([`numbers`]).
//!
//! One implementation on both sides is deliberate: the signature covers the msgpack bytes of
//! the action, so any difference in key order, number spelling or optional keys between
//! signer and verifier is a rejected order. The bytes are proven against the exchange's
//! official SDK test vectors (`signing` tests), not only against each other; the responses
//! (`/info` answers, order statuses) are NOT shared — the adapter and the simulator each read
//! and write them from the wire reference, so a misreading on one side shows in the tests.

pub mod actions;
pub mod numbers;
pub mod signing;

pub use actions::{
    Action, CancelByCloidWire, CancelWire, Cloid, Envelope, Grouping, OrderTypeWire, OrderWire,
    Tif, WireDecimal,
};
pub use numbers::{NumberError, SPOT_MAX_DECIMALS};
pub use signing::{Address, KeyError, Network, PrivateKey, Signature, SignatureError};
