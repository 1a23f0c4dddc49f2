//! Proof that the boss said yes (`[signals] approval = "boss"`, the default) over loopback: an
//! agent's confirm or `POST /api/trade` of a signal the boss has not approved answers 403
//! `approval_required` and the exchange simulator receives nothing; the boss's button press on
//! the service's own message approves exactly that signal; a YES given on an earlier signal
//! never confirms a re-posted one; an admin token is the boss; `agent` mode trusts the agent,
//! and the signal id the agent passes still binds its YES to one signal;
//! `agent_signals = false` takes plugin-made signals only.

use serde_json::{Value, json};
use spotbot::activity::AgentName;
use spotbot::auth::Scope;
use spotbot::auth::tokens::TokenFile;

use crate::messenger_replies::{Replies, fake};
use crate::trading_support::{CHAT_ID, d, good_signal, signal_with};

/// The agents' tokens in the running host's data folder (it switches to tokens at once).
struct Agents {
    scout: String,
    coo: String,
    boss: String,
}

impl Agents {
    fn create(t: &Replies) -> Agents {
        let file = TokenFile::in_dir(t.host.data_dir.path());
        let token = |agent, scope| file.create(agent, scope, chrono::Utc::now()).unwrap().1;
        Agents {
            scout: token(AgentName::Scout, Scope::Propose),
            coo: token(AgentName::Coo, Scope::Execute),
            boss: token(AgentName::Boss, Scope::Admin),
        }
    }
}

async fn post(t: &Replies, path: &str, token: &str, body: Value) -> (u16, Value) {
    let response =
        t.host.http.post(t.host.url(path)).bearer_auth(token).json(&body).send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap_or(Value::Null))
}

async fn get(t: &Replies, path: &str, token: &str) -> (u16, Value) {
    let response = t.host.http.get(t.host.url(path)).bearer_auth(token).send().await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap_or(Value::Null))
}

/// The scout posts `signal`; returns its id and the approval request's message id.
async fn propose(t: &Replies, agents: &Agents, signal: Value, nth_message: usize) -> (String, i64) {
    let (status, created) = post(t, "/api/signal", &agents.scout, signal).await;
    assert_eq!((status, created["status"].as_str()), (200, Some("pending")), "{created}");
    let (_, view) = get(t, "/api/signal/ETHUSDT", &agents.scout).await;
    assert_eq!(view["origin"], json!({"source": "agent", "by": "scout"}), "{view}");
    assert_eq!(view["approved_by"], Value::Null);
    let sent = t.fake.wait_for_messages(nth_message, std::time::Duration::from_secs(10)).await;
    let request = sent[nth_message - 1].clone();
    assert!(request.text.contains("Source: posted by agent scout"), "{}", request.text);
    (view["id"].as_str().unwrap().to_string(), request.message_id)
}

const TRADE: &str =
    "/api/trade?symbol=ETHUSDT&direction=buy&bot=mr_combined&sl=2&tp=5&ev=30&confidence=9";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_places_nothing_until_the_boss_presses_yes_on_the_services_message() {
    let t = Replies::with_replies().await;
    let agents = Agents::create(&t);
    let (id, message_id) = propose(&t, &agents, good_signal("ETHUSDT"), 1).await;

    let (status, refused) = post(&t, "/api/signal/ETHUSDT/confirm", &agents.coo, json!(null)).await;
    assert_eq!((status, refused["error"].as_str()), (403, Some("approval_required")), "{refused}");
    assert!(refused["detail"].as_str().unwrap().contains(&id), "{refused}");
    let (status, refused) = post(&t, TRADE, &agents.coo, json!(null)).await;
    assert_eq!((status, refused["error"].as_str()), (403, Some("approval_required")), "{refused}");
    let earlier = TRADE.replace("/api/trade", "/trade");
    let (status, refused) = post(&t, &earlier, &agents.coo, json!(null)).await;
    assert_eq!((status, refused["error"].as_str()), (403, Some("approval_required")), "{refused}");
    assert_eq!(t.order_requests(), 0, "the exchange received nothing");

    t.wait_until_polling().await;
    t.fake.inject_button(CHAT_ID, CHAT_ID, message_id, &format!("1-YES ETHUSDT {id}"));
    let reply = t.message_containing("YES ETHUSDT: confirmed").await;
    assert!(reply.text.contains("bought"), "{}", reply.text);
    let entries = t.orders_of("MARKET", "BUY");
    assert_eq!(entries.len(), 1, "one entry: {entries:?}");
    assert!(entries[0]["clientOrderId"].as_str().unwrap().contains(&id), "{}", entries[0]);

    // The coo relays the same YES afterwards: answered from the record, nothing new sent.
    let (status, again) = post(&t, "/api/signal/ETHUSDT/confirm", &agents.coo, json!(null)).await;
    assert_eq!((status, again["already_confirmed"].as_bool()), (200, Some(true)), "{again}");
    assert_eq!(t.orders_of("MARKET", "BUY").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_yes_given_on_an_earlier_signal_never_confirms_a_reposted_one() {
    let t = Replies::with_replies().await;
    let agents = Agents::create(&t);
    t.wait_until_polling().await;
    let (first, first_message) = propose(&t, &agents, good_signal("ETHUSDT"), 1).await;
    let (status, _) = post(&t, "/api/signal/ETHUSDT/reject", &agents.coo, json!(null)).await;
    assert_eq!(status, 200);

    // Re-posted with a wider stop: new terms, a new message, a new id.
    let mut wider = signal_with("ETHUSDT", "buy", 9, 10);
    wider["sl_pct"] = json!(3.0);
    let (second, second_message) = propose(&t, &agents, wider, 2).await;
    assert_ne!(first, second);

    t.fake.inject_button(CHAT_ID, CHAT_ID, first_message, &format!("1-YES ETHUSDT {first}"));
    let reply = t.message_containing(&format!("given on signal {first}")).await;
    assert!(reply.text.contains(&format!("now {second}")), "{}", reply.text);
    let (status, refused) = post(&t, "/api/signal/ETHUSDT/confirm", &agents.coo, json!(null)).await;
    assert_eq!((status, refused["error"].as_str()), (403, Some("approval_required")), "{refused}");
    assert_eq!(t.order_requests(), 0, "the old YES placed nothing");

    t.fake.inject_button(CHAT_ID, CHAT_ID, second_message, &format!("1-YES ETHUSDT {second}"));
    t.message_containing("YES ETHUSDT: confirmed").await;
    assert_eq!(t.orders_of("MARKET", "BUY").len(), 1);
    let stops = t.orders_of("STOP_LOSS_LIMIT", "SELL");
    let entry: f64 = t.orders_of("MARKET", "BUY")[0]["cummulativeQuoteQty"]
        .as_str()
        .unwrap()
        .parse::<f64>()
        .unwrap()
        / t.orders_of("MARKET", "BUY")[0]["executedQty"].as_str().unwrap().parse::<f64>().unwrap();
    let stop: f64 = stops[0]["stopPrice"].as_str().unwrap().parse().unwrap();
    assert!((stop / entry - 0.97).abs() < 0.001, "the approved 3 % stop: {stop} vs {entry}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_admin_token_is_the_boss_and_agent_mode_trusts_the_agent() {
    let t = Replies::with_replies().await;
    let agents = Agents::create(&t);
    propose(&t, &agents, good_signal("ETHUSDT"), 1).await;
    let (status, placed) = post(&t, "/api/signal/ETHUSDT/confirm", &agents.boss, json!(null)).await;
    assert_eq!((status, placed["ok"].as_bool()), (200, Some(true)), "{placed}");
    assert_eq!(t.orders_of("MARKET", "BUY").len(), 1);

    let keys = "handle_replies = true\n[signals]\napproval = \"agent\"";
    let t = Replies::start(keys, fake().await).await;
    let agents = Agents::create(&t);
    propose(&t, &agents, good_signal("ETHUSDT"), 1).await;
    let (status, placed) = post(&t, "/api/signal/ETHUSDT/confirm", &agents.coo, json!(null)).await;
    assert_eq!((status, placed["ok"].as_bool()), (200, Some(true)), "{placed}");
    assert_eq!(t.orders_of("MARKET", "BUY").len(), 1);
}

/// In `agent` mode the service trusts the agent's YES, so the id it passes is what binds the
/// YES to the signal the boss saw: a confirm or reject naming an earlier signal of the symbol
/// changes nothing and the exchange receives nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_agent_mode_a_yes_bound_to_an_earlier_signal_never_confirms_a_reposted_one() {
    let keys = "handle_replies = true\n[signals]\napproval = \"agent\"";
    let t = Replies::start(keys, fake().await).await;
    let agents = Agents::create(&t);
    let (first, _) = propose(&t, &agents, good_signal("ETHUSDT"), 1).await;
    let (status, _) = post(&t, "/api/signal/ETHUSDT/reject", &agents.coo, json!(null)).await;
    assert_eq!(status, 200);
    let (second, _) = propose(&t, &agents, signal_with("ETHUSDT", "buy", 9, 10), 2).await;
    assert_ne!(first, second);

    let stale = format!("/api/signal/ETHUSDT/confirm?signal_id={first}");
    let (status, refused) = post(&t, &stale, &agents.coo, json!(null)).await;
    assert_eq!((status, refused["error"].as_str()), (403, Some("approval_required")), "{refused}");
    let detail = refused["detail"].as_str().unwrap();
    assert!(detail.contains(&first) && detail.contains(&second), "names both ids: {detail}");
    let stale = format!("/api/signal/ETHUSDT/reject?signal_id={first}");
    let (status, refused) = post(&t, &stale, &agents.coo, json!(null)).await;
    assert_eq!((status, refused["error"].as_str()), (409, Some("signal_changed")), "{refused}");
    assert_eq!(t.order_requests(), 0, "the stale id placed nothing");
    let (_, view) = get(&t, "/api/signal/ETHUSDT", &agents.coo).await;
    assert_eq!(view["status"], "pending", "the reposted signal is untouched: {view}");

    let current = format!("/api/signal/ETHUSDT/confirm?signal_id={second}");
    let (status, placed) = post(&t, &current, &agents.coo, json!(null)).await;
    assert_eq!((status, placed["ok"].as_bool()), (200, Some(true)), "{placed}");
    assert_eq!(t.orders_of("MARKET", "BUY").len(), 1);
    assert_eq!(t.orders_of("STOP_LOSS_LIMIT", "SELL").len(), 1, "its OCO");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_agent_signals_off_only_plugins_make_signals() {
    let t = Replies::start("[signals]\nagent_signals = false", fake().await).await;
    let agents = Agents::create(&t);
    let (status, refused) = post(&t, "/api/signal", &agents.scout, good_signal("ETHUSDT")).await;
    assert_eq!((status, refused["error"].as_str()), (403, Some("agent_signals_off")), "{refused}");
    assert!(t.fake.sent().is_empty(), "the boss was not asked");
}

/// The audit log, newest first, read with `token`.
async fn audit(t: &Replies, token: &str) -> Vec<Value> {
    let (status, page) = get(t, "/api/audit?limit=50", token).await;
    assert_eq!(status, 200, "{page}");
    page["rows"].as_array().unwrap().clone()
}

/// The client order ids of `row`'s orders, and those the simulator holds of `kind`/`side`.
fn client_ids(row: &Value) -> Vec<String> {
    row["orders"].as_array().unwrap().iter().map(|o| o["client_order_id"].to_string()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_money_action_leaves_a_row_naming_the_agent_the_approval_and_the_orders_sent() {
    let t = Replies::with_replies().await;
    let agents = Agents::create(&t);
    let (id, message_id) = propose(&t, &agents, good_signal("ETHUSDT"), 1).await;
    post(&t, "/api/signal/ETHUSDT/confirm", &agents.coo, json!(null)).await;
    t.wait_until_polling().await;
    t.fake.inject_button(CHAT_ID, CHAT_ID, message_id, &format!("1-YES ETHUSDT {id}"));
    t.message_containing("YES ETHUSDT: confirmed").await;
    let (status, closed) = post(&t, "/api/close?symbol=ETHUSDT", &agents.coo, json!(null)).await;
    assert_eq!(status, 200, "{closed}");
    let (status, _) = post(&t, "/api/reset-daily", &agents.boss, json!(null)).await;
    assert_eq!(status, 200);
    let (status, _) = get(&t, "/api/trades", &agents.coo).await;
    assert_eq!(status, 200);

    let rows = audit(&t, &agents.scout).await;
    let routes: Vec<&str> = rows.iter().map(|r| r["route"].as_str().unwrap()).collect();
    assert_eq!(
        routes,
        [
            "POST /api/reset-daily",
            "POST /api/close",
            "messenger YES",
            "POST /api/signal/{symbol}/confirm",
            "POST /api/license/register",
        ],
        "one row per money or operator action, none for reads or proposals"
    );
    assert_eq!(rows[4]["agent"], "open access", "the rig registered before tokens existed");
    let (reset, close, yes, refused) = (&rows[0], &rows[1], &rows[2], &rows[3]);
    assert_eq!(
        (refused["agent"].as_str(), refused["outcome"].as_str()),
        (Some("coo"), Some("approval_required"))
    );
    assert_eq!(refused["status"], 403);
    assert!(refused["orders"].as_array().unwrap().is_empty(), "{refused}");
    assert_eq!(yes["agent"], "the boss in the messenger");
    assert_eq!(yes["approval"], "the boss in the messenger");
    assert_eq!((close["agent"].as_str(), close["symbol"].as_str()), (Some("coo"), Some("ETHUSDT")));
    assert_eq!(reset["agent"], "boss");
    assert!(reset["orders"].as_array().unwrap().is_empty());

    // The orders of each row are exactly what the exchange received for it.
    let sim_ids = |kind: &str, side: &str| -> Vec<String> {
        t.orders_of(kind, side).iter().map(|o| o["clientOrderId"].to_string()).collect()
    };
    let entry = sim_ids("MARKET", "BUY");
    let exit = sim_ids("MARKET", "SELL");
    let yes_ids = client_ids(yes);
    assert!(yes_ids.contains(&entry[0]), "{yes_ids:?} vs {entry:?}");
    let kinds: Vec<&str> =
        yes["orders"].as_array().unwrap().iter().map(|o| o["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["entry", "oco"], "{yes}");
    let sent_qty = &yes["orders"][0]["request"]["quantity"];
    let executed = &t.orders_of("MARKET", "BUY")[0]["origQty"];
    assert_eq!(d(sent_qty.as_str().unwrap()), d(executed.as_str().unwrap()), "{yes} vs {executed}");
    assert!(yes["orders"][0]["exchange_id"].as_i64().is_some(), "{yes}");
    assert!(client_ids(close).contains(&exit[0]), "{close} vs {exit:?}");

    let text = serde_json::to_string(&rows).unwrap();
    for secret in [&agents.scout, &agents.coo, &agents.boss] {
        assert!(!text.contains(secret.as_str()), "a token in the audit log");
    }
}
