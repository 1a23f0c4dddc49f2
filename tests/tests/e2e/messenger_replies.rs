//! The optional boss-reply loop (`[messenger] handle_replies = true`) over loopback: the host
//! polls the fake messenger's `getUpdates`, and the boss's `1-YES <SYMBOL>` / `0-NO <SYMBOL>`,
//! typed or pressed, confirm or reject the signal. Money assertions read the exchange
//! simulator; strangers and a second consumer of the bot token are shut out.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use spotbot::config::Secret;
use spotbot_sim::{RunningSim, SimConfig};
use spotbot_tests::fake_messenger::{FakeMessenger, Fault, SentRecord};

use crate::license_support::{Host, Rig};
use crate::trading_support::{BOT_TOKEN, CHAT_ID, KEY, SECRET, d, good_signal};

const WAIT: Duration = Duration::from_secs(10);
const STRANGER: i64 = 777;

/// Simulator, fake messenger and a licensed host whose `[messenger]` section is ours.
pub(crate) struct Replies {
    _rig: Rig,
    pub(crate) sim: RunningSim,
    pub(crate) fake: FakeMessenger,
    pub(crate) host: Host,
}

impl Replies {
    /// A host on `fake` (set up by the test: a fault scheduled, another poller running) with
    /// `messenger_keys` in its `[messenger]` section.
    pub(crate) async fn start(messenger_keys: &str, fake: FakeMessenger) -> Replies {
        let rig = Rig::new().await;
        let mut sim_config = SimConfig::new(11, KEY, SECRET);
        sim_config.initial_funds = vec![("USDT".into(), rust_decimal::Decimal::from(10_000))];
        let sim = spotbot_sim::serve(sim_config, "127.0.0.1:0").await.expect("simulator binds");
        sim.sim.set_price("ETHUSDT", d("3000")).expect("price");
        let toml = format!(
            "[exchange]\nmode = \"testnet\"\nbase_url = \"{}\"\nrequest_timeout_ms = 1500\n\
             [messenger]\napi_base = \"{}\"\n{messenger_keys}\n\
             [strategy.mr_combined]\nsize_pct = 10.0\nmax_trades_per_day = 5\n",
            sim.base_url(),
            fake.base_url()
        );
        let dir = tempfile::tempdir().unwrap();
        let mut config = rig.config_with(&toml, dir.path(), None);
        config.plugins.dir = dir.path().join("plugins").display().to_string();
        config.secrets.exchange_api_key = Some(Secret::new(KEY));
        config.secrets.exchange_api_secret = Some(Secret::new(SECRET));
        config.secrets.messenger_bot_token = Some(Secret::new(BOT_TOKEN));
        config.secrets.messenger_chat_id = Some(CHAT_ID.to_string());
        let host = rig.start_config(config, dir).await;
        host.register(&format!("replies-{}@example.com", std::process::id())).await;
        Replies { _rig: rig, sim, fake, host }
    }

    pub(crate) async fn with_replies() -> Replies {
        Self::start("handle_replies = true", fake().await).await
    }

    /// Creates a pending ETHUSDT signal and returns its approval request as the boss got it.
    pub(crate) async fn pending_signal(&self) -> SentRecord {
        let (status, answer) = self.host.post("/api/signal", good_signal("ETHUSDT")).await;
        assert_eq!((status, answer["status"].as_str()), (200, Some("pending")), "{answer}");
        let sent = self.fake.wait_for_messages(1, WAIT).await;
        let request = sent.first().expect("the approval request reached the boss").clone();
        let buttons: Vec<&str> = request.buttons.iter().map(|(_, data)| data.as_str()).collect();
        let (_, signal) = self.host.get("/api/signal/ETHUSDT").await;
        let id = signal["id"].as_str().expect("the signal's id");
        assert_eq!(buttons, [format!("1-YES ETHUSDT {id}"), format!("0-NO ETHUSDT {id}")]);
        request
    }

    /// Waits until the host's long poll is held, so an injected update is not dropped as one
    /// that waited from before the start.
    pub(crate) async fn wait_until_polling(&self) {
        assert!(self.fake.wait_until_polling(WAIT).await, "the host polls getUpdates");
    }

    /// Waits for a sent message containing `needle`.
    pub(crate) async fn message_containing(&self, needle: &str) -> SentRecord {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(found) = self.fake.sent().into_iter().find(|m| m.text.contains(needle)) {
                return found;
            }
            assert!(Instant::now() < deadline, "no message with {needle:?}: {:?}", self.texts());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    pub(crate) fn texts(&self) -> Vec<String> {
        self.fake.sent().into_iter().map(|m| m.text).collect()
    }

    pub(crate) fn orders_of(&self, order_type: &str, side: &str) -> Vec<Value> {
        self.sim
            .sim
            .orders()
            .into_iter()
            .filter(|o| o["type"] == order_type && o["side"] == side)
            .collect()
    }

    pub(crate) fn order_requests(&self) -> usize {
        self.sim
            .sim
            .requests()
            .into_iter()
            .filter(|r| r.method == "POST" && r.path.starts_with("/api/v3/order"))
            .count()
    }

    async fn signal_status(&self) -> (u16, Value) {
        self.host.get("/api/signal/ETHUSDT").await
    }
}

pub(crate) async fn fake() -> FakeMessenger {
    FakeMessenger::start(BOT_TOKEN, CHAT_ID).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_boss_types_yes_and_the_bracket_is_placed_at_the_exchange() {
    // The first poll fails: the loop backs off and polls again instead of giving up.
    let fake = fake().await;
    fake.fail_next(Fault::ServerError(502), 1);
    let t = Replies::start("handle_replies = true", fake).await;
    t.pending_signal().await;
    t.wait_until_polling().await;
    assert!(t.orders_of("MARKET", "BUY").is_empty(), "nothing is traded before the YES");

    t.fake.inject_text(CHAT_ID, CHAT_ID, "1-yes  ethusdt");

    let reply = t.message_containing("YES ETHUSDT: confirmed").await;
    assert!(reply.text.starts_with("✅ YES ETHUSDT: confirmed; bought"), "{}", reply.text);
    let entries = t.orders_of("MARKET", "BUY");
    assert_eq!(entries.len(), 1, "exactly one entry: {entries:?}");
    assert_eq!(entries[0]["status"], "FILLED");
    assert!(entries[0]["clientOrderId"].as_str().unwrap().starts_with("SE_"), "{}", entries[0]);
    let executed: rust_decimal::Decimal =
        entries[0]["executedQty"].as_str().unwrap().parse().unwrap();
    assert!((d("0.33")..=d("0.334")).contains(&executed), "10 % of 10 000 USDT: {}", entries[0]);
    let (tps, sls) = (t.orders_of("LIMIT_MAKER", "SELL"), t.orders_of("STOP_LOSS_LIMIT", "SELL"));
    assert_eq!((tps.len(), sls.len()), (1, 1), "one OCO: {tps:?} {sls:?}");
    assert_eq!(tps[0]["orderListId"], sls[0]["orderListId"], "both legs in one list");
    assert!(tps[0]["orderListId"].as_i64().unwrap() >= 0);
    assert!(t.texts().iter().any(|m| m.contains("Trade opened")), "{:?}", t.texts());

    // The signal was consumed exactly as by POST /api/signal/ETHUSDT/confirm.
    let (status, _) = t.signal_status().await;
    assert_eq!(status, 404);
    let (_, trades) = t.host.get("/api/trades").await;
    assert_eq!(trades["trades"].as_array().map(Vec::len), Some(1), "{trades}");

    // The wire: pending updates dropped at start (offset -1, no wait), then long polls for the
    // two kinds of update, the first 502 retried, and the handled update confirmed by offset.
    let polls = t.fake.calls_of("getUpdates");
    assert_eq!(polls[0].status, 502, "{polls:?}");
    assert_eq!(
        (polls[1].params["offset"].as_i64(), polls[1].params["timeout"].as_i64()),
        (Some(-1), Some(0))
    );
    let long = &polls[2].params;
    assert!((20..=25).contains(&long["timeout"].as_i64().unwrap()), "{long}");
    assert_eq!(long["allowed_updates"], json!(["message", "callback_query"]));
    t.wait_until_polling().await;
    assert!(t.fake.pending_updates().is_empty(), "the update was confirmed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_no_button_press_rejects_answers_the_press_and_places_nothing() {
    let t = Replies::with_replies().await;
    let request = t.pending_signal().await;
    t.wait_until_polling().await;

    let query = t.fake.inject_button(CHAT_ID, CHAT_ID, request.message_id, "0-NO ETHUSDT");

    let reply = t.message_containing("NO ETHUSDT:").await;
    assert_eq!(reply.text, "❌ NO ETHUSDT: rejected; nothing is placed");
    let answers = t.fake.wait_for_calls("answerCallbackQuery", 1, WAIT).await;
    assert_eq!(answers.len(), 1, "the press is answered once");
    assert_eq!(
        (answers[0].params["callback_query_id"].as_str(), answers[0].status),
        (Some(query.as_str()), 200)
    );
    // The approval request shows the decision and loses its buttons.
    let edits = t.fake.wait_for_calls("editMessageText", 1, WAIT).await;
    assert_eq!(edits.len(), 1, "{edits:?}");
    let edit = &edits[0];
    assert_eq!((edit.params["message_id"].as_i64(), edit.status), (Some(request.message_id), 200));
    assert!(edit.params.get("reply_markup").is_none(), "{}", edit.params);
    let text = edit.params["text"].as_str().unwrap();
    assert!(
        text.contains("Approve BUY ETHUSDT") && text.ends_with("rejected; nothing is placed"),
        "{text}"
    );

    let (status, body) = t.signal_status().await;
    assert_eq!((status, body["error"].as_str()), (409, Some("signal_not_pending")), "{body}");
    assert_eq!(t.order_requests(), 0, "no order was sent");
    assert!(t.sim.sim.orders().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replies_from_anyone_but_the_boss_are_ignored_and_place_nothing() {
    let t = Replies::with_replies().await;
    let request = t.pending_signal().await;
    t.wait_until_polling().await;

    // Another user in the boss's chat, a stranger in their own chat, the boss's id in another
    // chat, and a stranger pressing the button.
    t.fake.inject_text(STRANGER, CHAT_ID, "1-YES ETHUSDT");
    t.fake.inject_text(STRANGER, STRANGER, "1-YES ETHUSDT");
    t.fake.inject_text(CHAT_ID, -100_555, "1-YES ETHUSDT");
    t.fake.inject_button(STRANGER, CHAT_ID, request.message_id, "1-YES ETHUSDT");
    t.fake.inject_button(STRANGER, STRANGER, request.message_id, "0-NO ETHUSDT");
    // Updates are handled in order: once the boss's own (non-reply) message is answered,
    // every stranger's update before it was handled too.
    t.fake.inject_text(CHAT_ID, CHAT_ID, "hello");
    let help = t.message_containing("Reply 1-YES SYMBOL").await;
    assert_eq!(help.chat_id, CHAT_ID);

    assert_eq!(t.fake.sent().len(), 2, "approval and help only: {:?}", t.texts());
    assert!(t.fake.calls_of("answerCallbackQuery").is_empty(), "strangers get no answer");
    assert!(t.fake.calls_of("editMessageText").is_empty());
    assert_eq!(t.order_requests(), 0, "no order was sent");
    let (status, body) = t.signal_status().await;
    assert_eq!((status, body["status"].as_str()), (200, Some("pending")), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_handle_replies_off_nothing_polls() {
    let t = Replies::start("", fake().await).await;
    t.pending_signal().await;
    t.fake.inject_text(CHAT_ID, CHAT_ID, "1-YES ETHUSDT");

    // Nothing may ever poll; give a poller a second to show up.
    let polls = t.fake.wait_for_calls("getUpdates", 1, Duration::from_secs(1)).await;
    assert!(polls.is_empty(), "{polls:?}");
    assert!(!t.fake.is_polling());
    assert_eq!(t.fake.pending_updates().len(), 1, "the boss's reply waits for its consumer");
    assert_eq!(t.order_requests(), 0);
    let (status, body) = t.signal_status().await;
    assert_eq!((status, body["status"].as_str()), (200, Some("pending")), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_consumer_of_the_token_stops_the_loop_after_one_409() {
    // The agent platform already long-polls the same token.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let fake = fake().await;
    let url = format!("{}/bot{BOT_TOKEN}/getUpdates", fake.base_url());
    let platform = tokio::spawn(async move {
        let _ = reqwest::Client::new().post(url).json(&json!({ "timeout": 20 })).send().await;
    });
    assert!(fake.wait_until_polling(WAIT).await, "the platform polls");
    let t = Replies::start("handle_replies = true", fake).await;

    let deadline = Instant::now() + WAIT;
    let entry = loop {
        let (_, state) = t.host.get("/api/state").await;
        let found = state["log"].as_array().and_then(|log| {
            log.iter()
                .find(|e| e["action"].as_str().is_some_and(|a| a.contains("boss replies stopped")))
                .cloned()
        });
        if let Some(entry) = found {
            break entry;
        }
        assert!(Instant::now() < deadline, "no dashboard entry: {state}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(
        (entry["agent"].as_str(), entry["status"].as_str()),
        (Some("bot-ops"), Some("error"))
    );
    assert!(entry["action"].as_str().unwrap().contains("409"), "{entry}");

    // The loop is over: no retry fights the platform for the updates.
    let conflicts: Vec<_> =
        t.fake.calls_of("getUpdates").into_iter().filter(|c| c.status == 409).collect();
    assert_eq!(conflicts.len(), 1, "{conflicts:?}");
    let later = t.fake.wait_for_calls("getUpdates", 2, Duration::from_millis(1500)).await;
    assert_eq!(later.len(), 1, "one call, the 409: {later:?}");
    platform.abort();
}
