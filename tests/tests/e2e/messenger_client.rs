//! The messenger client against the fake Bot API on loopback: what the boss receives, how
//! long texts are split, which failures are retried, and that the bot token never shows in an
//! error.

use std::time::{Duration, Instant};

use spotbot::config::{MessengerConfig, Secrets};
use spotbot::messenger::templates::{self, ApprovalRequest, ReconciliationReport};
use spotbot::messenger::{Button, Messenger, MessengerError, Outgoing};
use spotbot_tests::fake_messenger::{FakeMessenger, Fault};

const TOKEN: &str = "123456:SECRET-token_for_tests";
const CHAT: i64 = 4242;
const WAIT: Duration = Duration::from_secs(5);

fn messenger(api_base: &str, token: Option<&str>, chat_id: Option<&str>) -> Messenger {
    let config = MessengerConfig { api_base: api_base.into(), ..MessengerConfig::default() };
    let secrets = Secrets::from_lookup(|name| match name {
        "MESSENGER_BOT_TOKEN" => token.map(str::to_string),
        "MESSENGER_CHAT_ID" => chat_id.map(str::to_string),
        _ => None,
    });
    Messenger::new(&config, &secrets, spotbot::metrics::Metrics::default())
}

async fn fake_and_messenger() -> (FakeMessenger, Messenger) {
    let fake = FakeMessenger::start(TOKEN, CHAT).await;
    let messenger = messenger(&fake.base_url(), Some(TOKEN), Some(&CHAT.to_string()));
    (fake, messenger)
}

fn send_attempts(fake: &FakeMessenger) -> usize {
    fake.calls().iter().filter(|call| call.method == "sendMessage").count()
}

fn text(html: &str) -> Outgoing {
    Outgoing { html: html.into(), buttons: Vec::new() }
}

#[tokio::test]
async fn approval_request_arrives_as_html_with_escaped_values_reply_forms_and_buttons() {
    let (fake, messenger) = fake_and_messenger().await;
    let request = ApprovalRequest {
        symbol: "BTCUSDT".into(),
        direction: "buy".into(),
        bot: "a<b&c>".into(),
        price: Some(65000.5),
        sl_pct: Some(2.0),
        tp_pct: Some(4.0),
        sl_px: None,
        tp_px: None,
        checklist: vec![("rsi < 30".into(), true, "27.1".into())],
        passed: Some(7),
        total: Some(9),
        ev: 31.0,
        confidence: 8,
        expires_in_minutes: 5,
        signal_id: "mi2k3x9z".into(),
        origin: "plugin mr_combined's scan, checklist scored by the service".into(),
    };

    let sent = messenger.send(&templates::approval_request(&request)).await.unwrap();

    let received = fake.wait_for_messages(1, WAIT).await;
    assert_eq!(received.len(), 1);
    let message = &received[0];
    assert_eq!(sent.message_ids, [message.message_id]);
    assert_eq!(message.chat_id, CHAT);
    assert_eq!(message.parse_mode.as_deref(), Some("HTML"));
    assert!(message.html.contains("a&lt;b&amp;c&gt;"), "{}", message.html);
    for expected in ["a<b&c>", "1-YES BTCUSDT", "0-NO BTCUSDT", "7/9", "✅ rsi < 30"] {
        assert!(message.text.contains(expected), "{expected:?} missing in {}", message.text);
    }
    let data: Vec<&str> = message.buttons.iter().map(|(_, data)| data.as_str()).collect();
    assert_eq!(data, ["1-YES BTCUSDT mi2k3x9z", "0-NO BTCUSDT mi2k3x9z"]);
    let params = &fake.calls()[0].params;
    assert_eq!(params["link_preview_options"]["is_disabled"], true);
}

#[tokio::test]
async fn a_long_report_arrives_as_several_messages_each_within_the_limit() {
    let (fake, messenger) = fake_and_messenger().await;
    let actions: Vec<String> = (0..100)
        .map(|i| format!("trade #{i}: stop-loss <re-placed> at 63 700 & the store updated"))
        .collect();
    let report = templates::reconciliation_report(&ReconciliationReport { actions });
    assert!(report.html.chars().count() > 6000);
    let message = Outgoing {
        html: report.html,
        buttons: vec![Button { text: "OK".into(), callback_data: "ok".into() }],
    };

    let sent = messenger.send(&message).await.unwrap();

    let received = fake.wait_for_messages(sent.message_ids.len(), WAIT).await;
    assert!(received.len() >= 2, "{} message(s)", received.len());
    assert!(fake.calls().iter().all(|call| call.status == 200), "every chunk accepted");
    for message in &received {
        assert!(message.text.chars().count() <= 4096);
        assert!(message.html.chars().count() <= 4096);
    }
    let all: String = received.iter().map(|m| m.text.as_str()).collect::<Vec<_>>().join("\n");
    for i in [0, 57, 99] {
        let line = format!("• trade #{i}: stop-loss <re-placed> at 63 700 & the store updated\n");
        assert!(format!("{all}\n").contains(&line), "line {i} lost or cut");
    }
    let (last, earlier) = received.split_last().unwrap();
    assert_eq!(last.buttons, [("OK".to_string(), "ok".to_string())]);
    assert!(earlier.iter().all(|m| m.buttons.is_empty()), "buttons only under the last one");
}

#[tokio::test]
async fn rate_limit_is_waited_out_and_the_message_arrives_once() {
    let (fake, messenger) = fake_and_messenger().await;
    fake.fail_next(Fault::RateLimit { retry_after_s: 1 }, 1);
    let started = Instant::now();

    messenger.send(&text("daily report")).await.unwrap();

    assert!(started.elapsed() >= Duration::from_secs(1), "retry_after was not waited");
    assert_eq!(fake.wait_for_messages(1, WAIT).await.len(), 1);
    assert_eq!(send_attempts(&fake), 2);
}

#[tokio::test]
async fn a_rate_limit_longer_than_a_minute_is_reported_not_waited() {
    let (fake, messenger) = fake_and_messenger().await;
    fake.fail_next(Fault::RateLimit { retry_after_s: 600 }, 1);
    let started = Instant::now();

    let error = messenger.send(&text("daily report")).await.unwrap_err();

    assert!(matches!(error, MessengerError::Api { code: 429, .. }), "{error:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(send_attempts(&fake), 1);
}

#[tokio::test]
async fn server_errors_are_retried_and_the_message_arrives_once() {
    let (fake, messenger) = fake_and_messenger().await;
    fake.fail_next(Fault::ServerError(502), 2);

    messenger.send(&text("trade opened")).await.unwrap();

    assert_eq!(fake.wait_for_messages(1, WAIT).await.len(), 1);
    assert_eq!(send_attempts(&fake), 3);
}

#[tokio::test]
async fn a_refusal_is_an_api_error_with_its_description() {
    let fake = FakeMessenger::start(TOKEN, CHAT).await;
    let messenger = messenger(&fake.base_url(), Some(TOKEN), Some("999"));

    let error = messenger.send(&text("hello")).await.unwrap_err();

    match error {
        MessengerError::Api { code, description } => {
            assert_eq!(code, 400);
            assert!(description.contains("chat not found"), "{description}");
        }
        other => panic!("expected Api, got {other:?}"),
    }
    assert!(fake.sent().is_empty());
    assert_eq!(send_attempts(&fake), 1, "a refusal is not retried");
}

#[tokio::test]
async fn not_configured_sends_nothing() {
    let fake = FakeMessenger::start(TOKEN, CHAT).await;
    for messenger in [
        messenger(&fake.base_url(), Some(TOKEN), None),
        messenger(&fake.base_url(), None, Some("4242")),
    ] {
        assert!(!messenger.is_configured());
        let error = messenger.send(&text("hello")).await.unwrap_err();
        assert_eq!(error, MessengerError::NotConfigured);
    }
    assert!(fake.calls().is_empty());
}

#[tokio::test]
async fn refused_markup_is_resent_once_as_plain_text() {
    let (fake, messenger) = fake_and_messenger().await;

    // Unescaped `<` and `&`: the messenger refuses the HTML.
    messenger.send(&text("PnL <-5% & <b>falling</b>")).await.unwrap();

    let received = fake.wait_for_messages(1, WAIT).await;
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].parse_mode, None);
    assert_eq!(received[0].text, "PnL <-5% & falling");
    assert_eq!(send_attempts(&fake), 2);
}

#[tokio::test]
async fn the_token_never_appears_in_an_error() {
    let (fake, messenger) = fake_and_messenger().await;
    let mut errors = Vec::new();

    // Refused: wrong chat, wrong token, an error text that echoes the token.
    let wrong_chat = self::messenger(&fake.base_url(), Some(TOKEN), Some("999"));
    errors.push(wrong_chat.send(&text("x")).await.unwrap_err());
    let wrong_token = self::messenger(&fake.base_url(), Some("1:other"), Some("4242"));
    errors.push(wrong_token.send(&text("x")).await.unwrap_err());
    fake.fail_next(Fault::Error { code: 403, description: format!("Forbidden: {TOKEN}") }, 1);
    errors.push(messenger.send(&text("x")).await.unwrap_err());
    // Server errors until the retries are spent.
    fake.fail_next(Fault::ServerError(500), 3);
    errors.push(messenger.send(&text("x")).await.unwrap_err());
    // Nobody listening.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let unreachable = self::messenger(&format!("http://{closed}"), Some(TOKEN), Some("4242"));
    errors.push(unreachable.send(&text("x")).await.unwrap_err());

    assert!(matches!(errors[1], MessengerError::Api { code: 401, .. }), "{:?}", errors[1]);
    assert!(matches!(errors[4], MessengerError::Transport(_)), "{:?}", errors[4]);
    for error in &errors {
        for shown in [error.to_string(), format!("{error:?}")] {
            assert!(!shown.contains("SECRET-token"), "token leaked: {shown}");
        }
    }
}
