//! The L1 signature of an action (orders, cancels): the phantom-agent scheme of the
//! exchange's official SDKs.
//!
//! 1. `connectionId = keccak256(msgpack(action) ‖ nonce as u64 big-endian ‖ vault flag
//!    [‖ 0x00 ‖ expiresAfter])`, the action encoded with named keys in wire order;
//! 2. the EIP-712 digest of `Agent { source: "a" (mainnet) | "b" (testnet), connectionId }`
//!    in the domain `Exchange`, version 1, chain id 1337, verifying contract zero;
//! 3. a deterministic (RFC 6979), low-s secp256k1 signature of the digest, `v = 27 + recid`.
//!
//! The exchange recovers the signer from the signature and compares it with the account (or
//! its API wallet), so a byte that differs anywhere in step 1 shows up as an unknown signer,
//! never as a parse error. [`recover_signer`] is that check, for the simulator.

use std::fmt;
use std::str::FromStr;

use k256::ecdsa::{RecoveryId, Signature as EcdsaSignature, SigningKey, VerifyingKey};
use serde::{Deserialize, Serialize};
use sha3::{Digest, Keccak256};

/// Which network an action is for; it is part of what is signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    Mainnet,
    Testnet,
}

impl Network {
    /// The phantom agent's `source`.
    pub fn source(self) -> &'static str {
        match self {
            Self::Mainnet => "a",
            Self::Testnet => "b",
        }
    }
}

/// An account address: the last 20 bytes of the Keccak-256 of the public key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Address(pub [u8; 20]);

impl fmt::Display for Address {
    /// Lower-case hex, as the exchange wants it everywhere.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{}", hex::encode(self.0))
    }
}

impl FromStr for Address {
    type Err = KeyError;

    /// `0x` and 40 hex digits, either case.
    fn from_str(s: &str) -> Result<Self, KeyError> {
        let digits = s.strip_prefix("0x").filter(|d| d.len() == 40).ok_or(KeyError::Address)?;
        let mut bytes = [0u8; 20];
        hex::decode_to_slice(digits, &mut bytes).map_err(|_| KeyError::Address)?;
        Ok(Self(bytes))
    }
}

impl From<&VerifyingKey> for Address {
    fn from(key: &VerifyingKey) -> Self {
        let point = key.to_encoded_point(false);
        let hash = Keccak256::digest(&point.as_bytes()[1..]);
        let mut bytes = [0u8; 20];
        bytes.copy_from_slice(&hash[12..]);
        Self(bytes)
    }
}

/// Why a key or address could not be read. Never carries the key's text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    #[error("the private key is not 0x followed by 64 hex digits")]
    Format,
    #[error("the private key is not a valid secp256k1 secret (zero or too large)")]
    Range,
    #[error("the address is not 0x followed by 40 hex digits")]
    Address,
}

/// The key that signs actions. Its `Debug` shows only the address: the key itself is never
/// printed, logged or serialized.
#[derive(Clone)]
pub struct PrivateKey {
    key: SigningKey,
    address: Address,
}

impl fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PrivateKey(address {})", self.address)
    }
}

impl PrivateKey {
    /// Reads `0x` + 64 hex digits (the `0x` may be left out).
    pub fn from_hex(text: &str) -> Result<Self, KeyError> {
        let digits = text.trim();
        let digits = digits.strip_prefix("0x").unwrap_or(digits);
        if digits.len() != 64 {
            return Err(KeyError::Format);
        }
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(digits, &mut bytes).map_err(|_| KeyError::Format)?;
        let key = SigningKey::from_slice(&bytes).map_err(|_| KeyError::Range)?;
        let address = Address::from(key.verifying_key());
        Ok(Self { key, address })
    }

    /// The address the exchange recovers from this key's signatures.
    pub fn address(&self) -> Address {
        self.address
    }

    /// Signs `action` for `nonce` (acting for `vault` when set; never with an expiry) on
    /// `network`. Any serializable action signs: the service sends
    /// [`crate::actions::Action`]s, the SDK's test vectors use others.
    pub fn sign_l1(
        &self,
        action: &impl Serialize,
        nonce: u64,
        vault: Option<&Address>,
        network: Network,
    ) -> Result<Signature, SignatureError> {
        let digest = l1_digest(connection_id(action, nonce, vault, None)?, network);
        let (sig, recid) = self
            .key
            .sign_prehash_recoverable(&digest)
            .map_err(|e| SignatureError::Crypto(e.to_string()))?;
        let (r, s) = sig.split_bytes();
        Ok(Signature { r: minimal_hex(&r), s: minimal_hex(&s), v: 27 + recid.to_byte() })
    }
}

/// `{"r","s","v"}` of an action's envelope: `r` and `s` as `0x` hex of the 256-bit integers
/// (leading zeros dropped, as the Python SDK writes them), `v` 27 or 28.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Signature {
    pub r: String,
    pub s: String,
    pub v: u8,
}

/// Why a signature could not be made or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SignatureError {
    #[error("the action cannot be encoded: {0}")]
    Encode(String),
    #[error("the signature is malformed: {0}")]
    Malformed(String),
    #[error("signing failed: {0}")]
    Crypto(String),
}

/// `0x` + the hex of a big-endian integer without leading zeros (`0x0` for zero).
fn minimal_hex(bytes: &[u8]) -> String {
    let text = hex::encode(bytes);
    let trimmed = text.trim_start_matches('0');
    format!("0x{}", if trimmed.is_empty() { "0" } else { trimmed })
}

/// A 256-bit integer from `0x` hex of any length up to 64 digits.
fn read_u256(text: &str, what: &str) -> Result<[u8; 32], SignatureError> {
    let digits = text
        .strip_prefix("0x")
        .filter(|d| !d.is_empty() && d.len() <= 64)
        .ok_or_else(|| SignatureError::Malformed(format!("{what} is not 0x hex of 256 bits")))?;
    let padded = format!("{digits:0>64}");
    let mut bytes = [0u8; 32];
    hex::decode_to_slice(&padded, &mut bytes)
        .map_err(|_| SignatureError::Malformed(format!("{what} is not 0x hex of 256 bits")))?;
    Ok(bytes)
}

/// The hash that identifies an action with its nonce, vault and expiry.
pub fn connection_id(
    action: &impl Serialize,
    nonce: u64,
    vault: Option<&Address>,
    expires_after: Option<u64>,
) -> Result<[u8; 32], SignatureError> {
    let mut data =
        rmp_serde::to_vec_named(action).map_err(|e| SignatureError::Encode(e.to_string()))?;
    data.extend_from_slice(&nonce.to_be_bytes());
    match vault {
        None => data.push(0),
        Some(address) => {
            data.push(1);
            data.extend_from_slice(&address.0);
        }
    }
    if let Some(expires) = expires_after {
        data.push(0);
        data.extend_from_slice(&expires.to_be_bytes());
    }
    Ok(Keccak256::digest(&data).into())
}

/// keccak256 of the EIP-712 domain type string and fields (name "Exchange", version "1",
/// chain id 1337, verifying contract zero): the same for every L1 action.
fn domain_separator() -> [u8; 32] {
    let type_hash = Keccak256::digest(
        b"EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)",
    );
    let mut chain_id = [0u8; 32];
    chain_id[30..].copy_from_slice(&1337u16.to_be_bytes());
    let mut hasher = Keccak256::new();
    hasher.update(type_hash);
    hasher.update(Keccak256::digest(b"Exchange"));
    hasher.update(Keccak256::digest(b"1"));
    hasher.update(chain_id);
    hasher.update([0u8; 32]);
    hasher.finalize().into()
}

/// The EIP-712 digest of the phantom agent for `connection_id` on `network`.
pub fn l1_digest(connection_id: [u8; 32], network: Network) -> [u8; 32] {
    let mut agent = Keccak256::new();
    agent.update(Keccak256::digest(b"Agent(string source,bytes32 connectionId)"));
    agent.update(Keccak256::digest(network.source().as_bytes()));
    agent.update(connection_id);
    let mut digest = Keccak256::new();
    digest.update([0x19, 0x01]);
    digest.update(domain_separator());
    digest.update(agent.finalize());
    digest.finalize().into()
}

/// The address that signed `action` with `signature` — what the exchange compares with the
/// account. A signature over different bytes recovers a different (random) address.
pub fn recover_signer(
    action: &impl Serialize,
    nonce: u64,
    vault: Option<&Address>,
    expires_after: Option<u64>,
    network: Network,
    signature: &Signature,
) -> Result<Address, SignatureError> {
    let digest = l1_digest(connection_id(action, nonce, vault, expires_after)?, network);
    let r = read_u256(&signature.r, "r")?;
    let s = read_u256(&signature.s, "s")?;
    let sig = EcdsaSignature::from_scalars(r, s)
        .map_err(|_| SignatureError::Malformed("r or s is out of range".into()))?;
    let recid =
        signature.v.checked_sub(27).and_then(RecoveryId::from_byte).ok_or_else(|| {
            SignatureError::Malformed(format!("v {} is not 27 or 28", signature.v))
        })?;
    let key = VerifyingKey::recover_from_prehash(&digest, &sig, recid)
        .map_err(|_| SignatureError::Malformed("no key recovers from this signature".into()))?;
    Ok(Address::from(&key))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEST_KEY: &str = "0x0123456789012345678901234567890123456789012345678901234567890123";

    #[test]
    fn the_domain_separator_is_the_exchanges() {
        assert_eq!(
            hex::encode(domain_separator()),
            "d79297fcdf2ffcd4ae223d01edaa2ba214ff8f401d7c9300d995d17c82aa4040"
        );
    }

    #[test]
    fn signatures_parse_in_minimal_and_padded_form() {
        assert_eq!(minimal_hex(&[0, 0, 0x0a, 0xbc]), "0xabc");
        assert_eq!(minimal_hex(&[0; 4]), "0x0");
        assert_eq!(read_u256("0xabc", "r").unwrap()[29..], [0x00, 0x0a, 0xbc]);
        assert!(read_u256("abc", "r").is_err());
        assert!(read_u256(&format!("0x{}", "1".repeat(65)), "r").is_err());
        let bad_v = Signature { r: "0x1".into(), s: "0x1".into(), v: 29 };
        assert!(recover_signer(&"any action", 1, None, None, Network::Mainnet, &bad_v).is_err());
    }

    #[test]
    fn keys_are_read_strictly_and_never_printed() {
        assert_eq!(PrivateKey::from_hex("0x1234").unwrap_err(), KeyError::Format);
        assert_eq!(
            PrivateKey::from_hex(&format!("0x{}", "0".repeat(64))).unwrap_err(),
            KeyError::Range
        );
        let key = PrivateKey::from_hex(&TEST_KEY[2..]).unwrap();
        let shown = format!("{key:?}");
        assert!(!shown.contains("0123456789012345"), "{shown}");
        assert!(shown.contains("0x14791697260e4c9a71f18484c9f997b308e59325"));
        let address: Address = "0x14791697260E4C9A71F18484C9F997B308E59325".parse().unwrap();
        assert_eq!(address, key.address());
    }
}
