//! The signatures of exchange B's actions against the official Python SDK's test vectors
//! (`tests/signing_test.py`): the msgpack bytes of [`Action`], the connection id, the EIP-712
//! digest and the secp256k1 signature, byte for byte, on mainnet and testnet — and that any
//! other bytes recover another signer.

use serde::Serialize;
use spotbot_exchange_b_protocol::signing::{connection_id, l1_digest, recover_signer};
use spotbot_exchange_b_protocol::{Action, Address, Network, PrivateKey};

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
    assert_eq!(hex::encode(id), "0fcbeda5ae3c4950a548021552a4fea2226858c4453571bf3f24ba017eac2908");
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
