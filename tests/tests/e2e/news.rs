//! `GET /api/news` over real HTTP: local feed servers on loopback play good RSS and Atom
//! feeds, broken ones, a slow one and failing ones; the host tries `[news] sources` in order,
//! answers one of the three shapes, and keeps headlines 10 minutes on its (test) clock.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use spotbot_tests::TestHost;

const RSS: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0"><channel>
  <title>RSS Wire</title><link>https://rsswire.example</link><description>d</description>
  <item><title>Bitcoin tops a new high</title><link>https://rsswire.example/btc</link></item>
  <item><title>Ether fees fall</title><link>https://rsswire.example/eth</link></item>
  <item><title>Solana ships an upgrade</title><link>https://rsswire.example/sol</link></item>
</channel></rss>"#;

const ATOM: &str = r#"<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Atom Wire</title><id>urn:atomwire</id><updated>2026-01-01T00:00:00Z</updated>
  <entry><title>Stablecoin supply grows</title><id>urn:1</id>
    <updated>2026-01-01T00:00:00Z</updated><link href="https://atomwire.example/usdt"/></entry>
</feed>"#;

/// Well-formed RSS whose items all lack a title or an http(s) link.
const NO_VALID_ITEMS: &str = r#"<?xml version="1.0"?>
<rss version="2.0"><channel><title>Empty Wire</title><link>https://e.example</link>
  <description>d</description>
  <item><title></title><link>https://e.example/1</link></item>
  <item><title>No link at all</title></item>
  <item><title>Mail</title><link>mailto:desk@e.example</link></item>
</channel></rss>"#;

/// Longer than any source timeout of these tests.
const SLOW: Duration = Duration::from_secs(5);

/// A feed server on 127.0.0.1 that counts the requests each path gets.
struct Feeds {
    base: String,
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

impl Feeds {
    async fn start() -> Feeds {
        let hits = Arc::new(Mutex::new(HashMap::new()));
        let app = Router::new().route("/{feed}", get(serve)).with_state(hits.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Feeds { base, hits }
    }

    fn url(&self, feed: &str) -> String {
        format!("{}/{feed}", self.base)
    }

    fn hits(&self, feed: &str) -> usize {
        self.hits.lock().unwrap().get(feed).copied().unwrap_or(0)
    }

    /// A host whose `[news] sources` are these feeds, in this order, with a 1 s timeout.
    async fn host(&self, feeds: &[&str]) -> TestHost {
        let sources: Vec<String> = feeds.iter().map(|feed| self.url(feed)).collect();
        TestHost::start(&format!("[news]\nsources = {sources:?}\ntimeout_secs = 1\n")).await
    }
}

async fn serve(
    State(hits): State<Arc<Mutex<HashMap<String, usize>>>>,
    Path(feed): Path<String>,
) -> Response {
    *hits.lock().unwrap().entry(feed.clone()).or_default() += 1;
    let xml = |body: &'static str| ([(header::CONTENT_TYPE, "application/xml")], body);
    match feed.as_str() {
        "rss" | "rss-too" => xml(RSS).into_response(),
        "atom" => xml(ATOM).into_response(),
        "no-items" => xml(NO_VALID_ITEMS).into_response(),
        "invalid-xml" => xml("<html><body>Just a moment...</html>").into_response(),
        "slow" => {
            tokio::time::sleep(SLOW).await;
            xml(RSS).into_response()
        }
        _ => (StatusCode::INTERNAL_SERVER_ERROR, "upstream down").into_response(),
    }
}

async fn news(host: &TestHost) -> Value {
    let response = host.http.get(host.url("/api/news")).send().await.unwrap();
    assert_eq!(response.status(), StatusCode::OK, "every shape is a 200");
    response.json().await.unwrap()
}

fn titles(answer: &Value) -> Vec<&str> {
    answer["data"].as_array().unwrap().iter().map(|item| item["title"].as_str().unwrap()).collect()
}

/// The keys of an answer, sorted.
fn keys(answer: &Value) -> Vec<&str> {
    let mut keys: Vec<&str> = answer.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    keys
}

#[tokio::test]
async fn the_first_good_source_answers_even_when_a_later_one_is_good_too() {
    let feeds = Feeds::start().await;
    let host = feeds.host(&["rss", "atom"]).await;
    let answer = news(&host).await;
    assert_eq!(
        answer,
        json!({
            "ok": true,
            "cached": false,
            "source": feeds.url("rss"),
            "data": [
                {"title": "Bitcoin tops a new high", "url": "https://rsswire.example/btc",
                 "source": "RSS Wire"},
                {"title": "Ether fees fall", "url": "https://rsswire.example/eth",
                 "source": "RSS Wire"},
                {"title": "Solana ships an upgrade", "url": "https://rsswire.example/sol",
                 "source": "RSS Wire"},
            ],
        })
    );
    assert_eq!((feeds.hits("rss"), feeds.hits("atom")), (1, 0), "the later source is not asked");
    host.stop().await;
}

#[tokio::test]
async fn broken_sources_fall_through_to_the_next_one_in_order() {
    let feeds = Feeds::start().await;
    let host = feeds.host(&["invalid-xml", "no-items", "atom", "rss"]).await;
    let answer = news(&host).await;
    assert_eq!(keys(&answer), ["cached", "data", "ok", "source"]);
    assert_eq!((&answer["ok"], &answer["cached"]), (&json!(true), &json!(false)));
    assert_eq!(answer["source"], feeds.url("atom"));
    assert_eq!(
        answer["data"],
        json!([{"title": "Stablecoin supply grows", "url": "https://atomwire.example/usdt",
                "source": "Atom Wire"}])
    );
    let asked: Vec<usize> =
        ["invalid-xml", "no-items", "atom", "rss"].iter().map(|f| feeds.hits(f)).collect();
    assert_eq!(asked, [1, 1, 1, 0]);
    host.stop().await;
}

#[tokio::test]
async fn a_source_past_its_timeout_is_skipped_for_the_next() {
    let feeds = Feeds::start().await;
    let host = feeds.host(&["slow", "atom"]).await;
    let started = Instant::now();
    let answer = news(&host).await;
    assert!(started.elapsed() < SLOW, "waited {:?}, not the 1 s timeout", started.elapsed());
    assert_eq!(answer["source"], feeds.url("atom"), "{answer}");
    assert_eq!(feeds.hits("slow"), 1);
    host.stop().await;
}

#[tokio::test]
async fn max_items_caps_the_headlines() {
    let feeds = Feeds::start().await;
    let sources = format!("[{:?}]", feeds.url("rss"));
    let host = TestHost::start(&format!("[news]\nsources = {sources}\nmax_items = 2\n")).await;
    let answer = news(&host).await;
    assert_eq!(titles(&answer), ["Bitcoin tops a new high", "Ether fees fall"]);
    host.stop().await;
}

#[tokio::test]
async fn headlines_are_cached_ten_minutes_on_the_service_clock() {
    let feeds = Feeds::start().await;
    let host = feeds.host(&["rss", "atom"]).await;
    let fresh = news(&host).await;
    assert_eq!(fresh["cached"], false);

    let cached = news(&host).await;
    assert_eq!(cached, json!({"ok": true, "data": fresh["data"], "cached": true}));
    host.clock.advance(chrono::Duration::minutes(10) - chrono::Duration::seconds(1));
    assert_eq!(news(&host).await["cached"], true, "9:59 after the fetch");
    assert_eq!(feeds.hits("rss"), 1, "no request reached the feed while cached");

    host.clock.advance(chrono::Duration::seconds(1));
    let refetched = news(&host).await;
    assert_eq!(
        (&refetched["cached"], &refetched["source"]),
        (&json!(false), &json!(feeds.url("rss")))
    );
    assert_eq!((feeds.hits("rss"), feeds.hits("atom")), (2, 0));
    assert_eq!(news(&host).await["cached"], true, "the refetch is cached again");
    host.stop().await;
}

#[tokio::test]
async fn when_every_source_fails_the_error_names_each_and_why() {
    let feeds = Feeds::start().await;
    // A port nothing listens on: bound, then released.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let refused = format!("http://{}/rss", closed.local_addr().unwrap());
    drop(closed);
    let sources = [
        feeds.url("down"),
        feeds.url("invalid-xml"),
        feeds.url("no-items"),
        feeds.url("slow"),
        refused.clone(),
    ];
    let toml = format!("[news]\nsources = {sources:?}\ntimeout_secs = 1\n");
    let host = TestHost::start(&toml).await;

    let answer = news(&host).await;
    assert_eq!(keys(&answer), ["data", "error", "ok"], "{answer}");
    assert_eq!((&answer["ok"], &answer["data"]), (&json!(false), &json!([])));
    let error = answer["error"].as_str().unwrap();
    let reasons = [
        (feeds.url("down"), "HTTP 500"),
        (feeds.url("invalid-xml"), "not a feed"),
        (feeds.url("no-items"), "no valid items"),
        (feeds.url("slow"), "timed out after 1 s"),
        (refused, "unreachable"),
    ];
    let mut from = 0;
    for (url, why) in reasons {
        let named = format!("{url} ({why}");
        let at = error[from..].find(&named).unwrap_or_else(|| panic!("{named} in order: {error}"));
        from += at + named.len();
    }
    assert!(!error.contains("Just a moment"), "no response body in the error: {error}");

    // The failed round is repeated for a minute without asking the sources, then retried.
    let hits = || ["down", "invalid-xml", "no-items", "slow"].map(|f| feeds.hits(f));
    assert_eq!(hits(), [1, 1, 1, 1]);
    host.clock.advance(chrono::Duration::seconds(59));
    assert_eq!(news(&host).await, answer);
    assert_eq!(hits(), [1, 1, 1, 1]);
    host.clock.advance(chrono::Duration::seconds(1));
    assert_eq!(news(&host).await["ok"], false);
    assert_eq!(hits(), [2, 2, 2, 2]);
    host.stop().await;
}

#[tokio::test]
async fn no_sources_configured_is_the_failed_shape_with_a_clear_error() {
    let host = TestHost::start("[news]\nsources = []\n").await;
    assert_eq!(
        news(&host).await,
        json!({"ok": false, "data": [],
               "error": "no news sources configured ([news] sources is empty)"})
    );
    host.stop().await;
}

#[tokio::test]
async fn the_document_describes_the_three_shapes_and_needs_no_license() {
    let host = TestHost::start("[news]\nsources = []\n").await;
    let doc: Value =
        host.http.get(host.url("/api/openapi.json")).send().await.unwrap().json().await.unwrap();
    let operation = &doc["paths"]["/api/news"]["get"];
    assert_eq!(operation["tags"], json!(["news and portfolio"]));
    // Only the auth layer's answers (401, 403, 429, 503 `auth_unavailable`): no error of its own.
    let statuses = keys(&operation["responses"]);
    assert_eq!(statuses, ["200", "401", "403", "429", "503"], "{operation}");
    assert!(operation["responses"]["503"]["description"].as_str().unwrap().contains("auth_"));
    let schemas = &doc["components"]["schemas"];
    let shapes: Vec<&str> = schemas["NewsAnswer"]["oneOf"]
        .as_array()
        .unwrap()
        .iter()
        .map(|shape| shape["$ref"].as_str().unwrap())
        .collect();
    assert_eq!(
        shapes,
        [
            "#/components/schemas/FreshNews",
            "#/components/schemas/CachedNews",
            "#/components/schemas/FailedNews"
        ]
    );
    let required = |name: &str| schemas[name]["required"].clone();
    assert_eq!(required("FreshNews"), json!(["ok", "data", "cached", "source"]));
    assert_eq!(required("CachedNews"), json!(["ok", "data", "cached"]));
    assert_eq!(required("FailedNews"), json!(["ok", "data", "error"]));
    assert_eq!(schemas["CachedNews"]["properties"]["cached"]["enum"], json!([true]));
    assert_eq!(schemas["FreshNews"]["properties"]["cached"]["enum"], json!([false]));
    assert_eq!(schemas["FailedNews"]["properties"]["ok"]["enum"], json!([false]));
    host.stop().await;
}
