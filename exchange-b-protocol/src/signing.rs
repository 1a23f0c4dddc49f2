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
    use crate::actions::Action;

    const TEST_KEY: &str = "0x0123456789012345678901234567890123456789012345678901234567890123";

    /// The official Python SDK's `test_phantom_agent_creation_matches_production` action.
    fn sdk_order() -> Action {
        serde_json::from_str(
            r#"{"type":"order","orders":[{"a":4,"b":true,"p":"1670.1","s":"0.0147","r":false,"t":{"limit":{"tif":"Ioc"}}}],"grouping":"na"}"#,
        )
        .unwrap()
    }

    #[test]
    fn the_msgpack_bytes_and_connection_id_match_the_sdk_vector() {
        let packed = rmp_serde::to_vec_named(&sdk_order()).unwrap();
        assert_eq!(
            hex::encode(packed),
            "83a474797065a56f72646572a66f72646572739186a16104a162c3a170a6313637302e31a173a6302e30313437a172c2a17481a56c696d697481a3746966a3496f63a867726f7570696e67a26e61"
        );
        let id = connection_id(&sdk_order(), 1_677_777_606_040, None, None).unwrap();
        assert_eq!(
            hex::encode(id),
            "0fcbeda5ae3c4950a548021552a4fea2226858c4453571bf3f24ba017eac2908"
        );
    }

    #[test]
    fn the_domain_separator_is_the_exchanges() {
        assert_eq!(
            hex::encode(domain_separator()),
            "d79297fcdf2ffcd4ae223d01edaa2ba214ff8f401d7c9300d995d17c82aa4040"
        );
    }

    #[test]
    fn the_signature_matches_the_sdk_vector_and_recovers_the_signer() {
        let key = PrivateKey::from_hex(TEST_KEY).unwrap();
        assert_eq!(key.address().to_string(), "0x14791697260e4c9a71f18484c9f997b308e59325");
        let id = connection_id(&sdk_order(), 1_677_777_606_040, None, None).unwrap();
        assert_eq!(
            hex::encode(l1_digest(id, Network::Mainnet)),
            "be5eb0697b77c2acfeaa07a3d4913ae5d06489c63bfd143c5d3d66540a196c43"
        );
        let sig = key.sign_l1(&sdk_order(), 1_677_777_606_040, None, Network::Mainnet).unwrap();
        assert_eq!(sig.r, "0xe302c107c0048633293299b066317048f69f685aa4f536fe56c050efaf04996c");
        assert_eq!(sig.s, "0x70e01d4d26e3d724fb8f8ab54b3f2544a37ea1b092f83532349405274f3f3962");
        assert_eq!(sig.v, 28);
        let signer =
            recover_signer(&sdk_order(), 1_677_777_606_040, None, None, Network::Mainnet, &sig)
                .unwrap();
        assert_eq!(signer, key.address());
    }

    /// One vector of the SDK's `tests/signing_test.py`: the action, the vault, and the
    /// expected `(r, s, v)` on mainnet and on testnet (nonce 0).
    fn assert_sdk_vector(
        action: &impl Serialize,
        vault: Option<&str>,
        mainnet: (&str, &str, u8),
        testnet: (&str, &str, u8),
    ) {
        let key = PrivateKey::from_hex(TEST_KEY).unwrap();
        let vault: Option<Address> = vault.map(|v| v.parse().unwrap());
        for (network, (r, s, v)) in [(Network::Mainnet, mainnet), (Network::Testnet, testnet)] {
            let sig = key.sign_l1(action, 0, vault.as_ref(), network).unwrap();
            assert_eq!((sig.r.as_str(), sig.s.as_str(), sig.v), (r, s, v), "{network:?}");
            let signer = recover_signer(action, 0, vault.as_ref(), None, network, &sig).unwrap();
            assert_eq!(signer, key.address());
        }
    }

    fn order(json: &str) -> Action {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_sdks_order_vectors_sign_byte_for_byte() {
        // test_l1_action_signing_order_matches
        assert_sdk_vector(
            &order(
                r#"{"type":"order","orders":[{"a":1,"b":true,"p":"100","s":"100","r":false,"t":{"limit":{"tif":"Gtc"}}}],"grouping":"na"}"#,
            ),
            None,
            (
                "0xd65369825a9df5d80099e513cce430311d7d26ddf477f5b3a33d2806b100d78e",
                "0x2b54116ff64054968aa237c20ca9ff68000f977c93289157748a3162b6ea940e",
                28,
            ),
            (
                "0x82b2ba28e76b3d761093aaded1b1cdad4960b3af30212b343fb2e6cdfa4e3d54",
                "0x6b53878fc99d26047f4d7e8c90eb98955a109f44209163f52d8dc4278cbbd9f5",
                27,
            ),
        );
        // test_l1_action_signing_order_with_cloid_matches (r with 63 digits: minimal form)
        assert_sdk_vector(
            &order(
                r#"{"type":"order","orders":[{"a":1,"b":true,"p":"100","s":"100","r":false,"t":{"limit":{"tif":"Gtc"}},"c":"0x00000000000000000000000000000001"}],"grouping":"na"}"#,
            ),
            None,
            (
                "0x41ae18e8239a56cacbc5dad94d45d0b747e5da11ad564077fcac71277a946e3",
                "0x3c61f667e747404fe7eea8f90ab0e76cc12ce60270438b2058324681a00116da",
                27,
            ),
            (
                "0xeba0664bed2676fc4e5a743bf89e5c7501aa6d870bdb9446e122c9466c5cd16d",
                "0x7f3e74825c9114bc59086f1eebea2928c190fdfbfde144827cb02b85bbe90988",
                28,
            ),
        );
        // test_l1_action_signing_tpsl_order_matches
        assert_sdk_vector(
            &order(
                r#"{"type":"order","orders":[{"a":1,"b":true,"p":"100","s":"100","r":false,"t":{"trigger":{"isMarket":true,"triggerPx":"103","tpsl":"sl"}}}],"grouping":"na"}"#,
            ),
            None,
            (
                "0x98343f2b5ae8e26bb2587daad3863bc70d8792b09af1841b6fdd530a2065a3f9",
                "0x6b5bb6bb0633b710aa22b721dd9dee6d083646a5f8e581a20b545be6c1feb405",
                27,
            ),
            (
                "0x971c554d917c44e0e1b6cc45d8f9404f32172a9d3b3566262347d0302896a2e4",
                "0x206257b104788f80450f8e786c329daa589aa0b32ba96948201ae556d5637eac",
                28,
            ),
        );
    }

    /// `{"type":"dummy","num":float_to_int_for_hashing(1000)}` of the SDK's tests.
    #[derive(Serialize)]
    struct Dummy {
        r#type: &'static str,
        num: u64,
    }

    #[derive(Serialize)]
    struct ScheduleCancel {
        r#type: &'static str,
        #[serde(skip_serializing_if = "Option::is_none")]
        time: Option<u64>,
    }

    #[test]
    fn the_sdks_other_l1_vectors_sign_byte_for_byte() {
        let dummy = Dummy { r#type: "dummy", num: 100_000_000_000 };
        // test_l1_action_signing_matches
        assert_sdk_vector(
            &dummy,
            None,
            (
                "0x53749d5b30552aeb2fca34b530185976545bb22d0b3ce6f62e31be961a59298",
                "0x755c40ba9bf05223521753995abb2f73ab3229be8ec921f350cb447e384d8ed8",
                27,
            ),
            (
                "0x542af61ef1f429707e3c76c5293c80d01f74ef853e34b76efffcb57e574f9510",
                "0x17b8b32f086e8cdede991f1e2c529f5dd5297cbe8128500e00cbaf766204a613",
                28,
            ),
        );
        // test_l1_action_signing_matches_with_vault
        assert_sdk_vector(
            &dummy,
            Some("0x1719884eb866cb12b2287399b15f7db5e7d775ea"),
            (
                "0x3c548db75e479f8012acf3000ca3a6b05606bc2ec0c29c50c515066a326239",
                "0x4d402be7396ce74fbba3795769cda45aec00dc3125a984f2a9f23177b190da2c",
                28,
            ),
            (
                "0xe281d2fb5c6e25ca01601f878e4d69c965bb598b88fac58e475dd1f5e56c362b",
                "0x7ddad27e9a238d045c035bc606349d075d5c5cd00a6cd1da23ab5c39d4ef0f60",
                27,
            ),
        );
        // test_schedule_cancel_action, without and with a time
        assert_sdk_vector(
            &ScheduleCancel { r#type: "scheduleCancel", time: None },
            None,
            (
                "0x6cdfb286702f5917e76cd9b3b8bf678fcc49aec194c02a73e6d4f16891195df9",
                "0x6557ac307fa05d25b8d61f21fb8a938e703b3d9bf575f6717ba21ec61261b2a0",
                27,
            ),
            (
                "0xc75bb195c3f6a4e06b7d395acc20bbb224f6d23ccff7c6a26d327304e6efaeed",
                "0x342f8ede109a29f2c0723bd5efb9e9100e3bbb493f8fb5164ee3d385908233df",
                28,
            ),
        );
        assert_sdk_vector(
            &ScheduleCancel { r#type: "scheduleCancel", time: Some(123_456_789) },
            None,
            (
                "0x609cb20c737945d070716dcc696ba030e9976fcf5edad87afa7d877493109d55",
                "0x16c685d63b5c7a04512d73f183b3d7a00da5406ff1f8aad33f8ae2163bab758b",
                28,
            ),
            (
                "0x4e4f2dbd4107c69783e251b7e1057d9f2b9d11cee213441ccfa2be63516dc5bc",
                "0x706c656b23428c8ba356d68db207e11139ede1670481a9e01ae2dfcdb0e1a678",
                27,
            ),
        );
    }

    #[test]
    fn any_other_bytes_recover_another_signer() {
        let key = PrivateKey::from_hex(TEST_KEY).unwrap();
        let sig = key.sign_l1(&sdk_order(), 7, None, Network::Testnet).unwrap();
        let other_nonce = recover_signer(&sdk_order(), 8, None, None, Network::Testnet, &sig);
        assert_ne!(other_nonce.unwrap(), key.address());
        let other_network = recover_signer(&sdk_order(), 7, None, None, Network::Mainnet, &sig);
        assert_ne!(other_network.unwrap(), key.address());
        let Action::Order { mut orders, grouping } = sdk_order() else { unreachable!() };
        orders[0].s.0 += rust_decimal::Decimal::new(1, 4);
        let changed = Action::Order { orders, grouping };
        let other_size = recover_signer(&changed, 7, None, None, Network::Testnet, &sig);
        assert_ne!(other_size.unwrap(), key.address());
    }

    #[test]
    fn signatures_parse_in_minimal_and_padded_form() {
        assert_eq!(minimal_hex(&[0, 0, 0x0a, 0xbc]), "0xabc");
        assert_eq!(minimal_hex(&[0; 4]), "0x0");
        assert_eq!(read_u256("0xabc", "r").unwrap()[29..], [0x00, 0x0a, 0xbc]);
        assert!(read_u256("abc", "r").is_err());
        assert!(read_u256(&format!("0x{}", "1".repeat(65)), "r").is_err());
        let bad_v = Signature { r: "0x1".into(), s: "0x1".into(), v: 29 };
        assert!(recover_signer(&sdk_order(), 1, None, None, Network::Mainnet, &bad_v).is_err());
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
