//! The license server over HTTP on loopback, as the host's client and an operator use it.

use std::io::{BufRead as _, BufReader};
use std::process::{Command, Stdio};

use reqwest::StatusCode;
use serde_json::{Value, json};
use spotbot_license_server::wire::{self, AnswerBody, Verdict};
use spotbot_license_server::{Config, LicenseServer};

const M1: &str = "11111111-1111-4111-8111-111111111111";
const M2: &str = "22222222-2222-4222-8222-222222222222";
const NONCE: &str = "test-nonce-0123456789";

/// A plain-HTTP client; reqwest is built without a default TLS provider, so pick one.
fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

async fn start(dir: &tempfile::TempDir) -> LicenseServer {
    let mut config = Config::new(dir.path());
    config.register_per_hour = 3;
    LicenseServer::bind(config, "127.0.0.1:0".parse().unwrap()).await.unwrap()
}

async fn post(server: &LicenseServer, path: &str, body: Value) -> (StatusCode, Value) {
    let response =
        client().post(format!("{}{path}", server.url())).json(&body).send().await.unwrap();
    (response.status(), response.json().await.unwrap())
}

async fn register(server: &LicenseServer, email: &str) -> String {
    let (status, body) =
        post(server, "/v1/register", json!({"email": email, "name": "Test Operator"})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["plan"], "free");
    assert_eq!(body["features"]["max_positions"], 5);
    body["license_key"].as_str().unwrap().to_string()
}

/// Calls activate or validate and returns the HTTP status and the verified payload.
async fn ask(
    server: &LicenseServer,
    path: &str,
    key: &str,
    machine: &str,
) -> (StatusCode, wire::AnswerPayload) {
    let (status, body) =
        post(server, path, json!({"license_key": key, "machine_id": machine, "nonce": NONCE}))
            .await;
    let body: AnswerBody = serde_json::from_value(body).unwrap();
    let payload = body.answer.verify_for(&server.public_key(), key, machine, Some(NONCE)).unwrap();
    assert_eq!(body.status, payload.verdict.as_str());
    (status, payload)
}

#[tokio::test]
async fn register_activate_move_and_revoke() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&dir).await;
    let key = register(&server, "ops@example.com").await;
    assert_eq!(wire::normalize_key(&key).unwrap(), key);

    let (status, p) = ask(&server, "/v1/validate", &key, M1).await;
    assert_eq!((status, p.verdict), (StatusCode::CONFLICT, Verdict::NotActivated));

    let (status, p) = ask(&server, "/v1/activate", &key, M1).await;
    assert_eq!((status, p.verdict), (StatusCode::OK, Verdict::Active));
    assert_eq!(p.plan.as_deref(), Some("free"));
    assert_eq!(p.features, Some(wire::Features::FREE));

    // Activating on a second machine moves the binding; the first learns it on validation.
    let (status, p) = ask(&server, "/v1/activate", &key, M2).await;
    assert_eq!((status, p.verdict), (StatusCode::OK, Verdict::Active));
    let (status, p) = ask(&server, "/v1/validate", &key, M1).await;
    assert_eq!((status, p.verdict), (StatusCode::CONFLICT, Verdict::BoundElsewhere));
    assert_eq!(p.plan, None);

    let unknown = "SPOT-2222-2222-2222-2222";
    let (status, p) = ask(&server, "/v1/validate", unknown, M2).await;
    assert_eq!((status, p.verdict), (StatusCode::NOT_FOUND, Verdict::UnknownKey));

    // Loopback may revoke without a token.
    let (status, body) = post(&server, "/v1/revoke", json!({"license_key": key})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, p) = ask(&server, "/v1/validate", &key, M2).await;
    assert_eq!((status, p.verdict), (StatusCode::CONFLICT, Verdict::Revoked));
    let (status, p) = ask(&server, "/v1/activate", &key, M2).await;
    assert_eq!((status, p.verdict), (StatusCode::CONFLICT, Verdict::Revoked));
    let (status, _) = post(&server, "/v1/revoke", json!({"license_key": unknown})).await;
    assert_eq!(status, StatusCode::NOT_FOUND);

    // Everything survives a restart, and the key pair stays the same.
    let public = server.public_key_hex();
    server.stop().await.unwrap();
    let server = start(&dir).await;
    assert_eq!(server.public_key_hex(), public);
    let (_, p) = ask(&server, "/v1/validate", &key, M2).await;
    assert_eq!(p.verdict, Verdict::Revoked);
    let (status, body) =
        post(&server, "/v1/register", json!({"email": "OPS@Example.com", "name": "Again"})).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["error"], "email_registered");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn malformed_requests_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&dir).await;
    for (path, body, field) in [
        ("/v1/register", json!({"email": "not-an-email", "name": "A"}), "email"),
        ("/v1/register", json!({"email": "a@example.com", "name": " "}), "name"),
        (
            "/v1/activate",
            json!({"license_key": "SPOT-1234", "machine_id": M1, "nonce": NONCE}),
            "license_key",
        ),
        (
            "/v1/validate",
            json!({"license_key": "SPOT-2222-2222-2222-2222", "machine_id": "pc-1", "nonce": NONCE}),
            "machine_id",
        ),
        (
            "/v1/validate",
            json!({"license_key": "SPOT-2222-2222-2222-2222", "machine_id": M1, "nonce": "x"}),
            "nonce",
        ),
    ] {
        let (status, answer) = post(&server, path, body).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
        assert_eq!(answer["ok"], false);
        assert_eq!(answer["field"], field);
        assert_eq!(answer["error"], format!("invalid_{field}"));
    }
    // A body missing a field: serde's message names it.
    let (status, answer) = post(&server, "/v1/register", json!({"name": "A"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(answer["error"], "invalid_body");
    assert!(answer["detail"].as_str().unwrap().contains("email"), "{answer}");
    // Not JSON at all.
    let response = client()
        .post(format!("{}/v1/register", server.url()))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::BAD_REQUEST);
    server.stop().await.unwrap();
}

#[tokio::test]
async fn register_is_rate_limited_per_address() {
    let dir = tempfile::tempdir().unwrap();
    let server = start(&dir).await;
    for i in 0..3 {
        register(&server, &format!("user{i}@example.com")).await;
    }
    let response = client()
        .post(format!("{}/v1/register", server.url()))
        .json(&json!({"email": "user9@example.com", "name": "Nine"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::TOO_MANY_REQUESTS);
    assert!(response.headers().contains_key("retry-after"));
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"], "rate_limited");
    server.stop().await.unwrap();
}

#[tokio::test]
async fn revoke_needs_the_admin_token_when_one_is_set() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(dir.path());
    config.admin_token = Some("s3cret-admin".into());
    let server = LicenseServer::bind(config, "127.0.0.1:0".parse().unwrap()).await.unwrap();
    let key = register(&server, "a@example.com").await;
    let client = client();
    let url = format!("{}/v1/revoke", server.url());
    let denied = client.post(&url).json(&json!({"license_key": key})).send().await.unwrap();
    assert_eq!(denied.status(), StatusCode::UNAUTHORIZED);
    let wrong = client
        .post(&url)
        .bearer_auth("guess")
        .json(&json!({"license_key": key}))
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), StatusCode::UNAUTHORIZED);
    let allowed = client
        .post(&url)
        .bearer_auth("s3cret-admin")
        .json(&json!({"license_key": key}))
        .send()
        .await
        .unwrap();
    assert_eq!(allowed.status(), StatusCode::OK);
    server.stop().await.unwrap();
}

/// The binary: prints its public key, serves it at /v1/public-key, logs without terminal
/// colours into a file, stops on SIGTERM.
#[tokio::test]
async fn the_binary_prints_and_serves_its_public_key() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_spotbot-license-server"))
        .args(["--addr", &format!("127.0.0.1:{port}"), "--data-dir"])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let first = lines.next().unwrap().unwrap();
    let printed = first.strip_prefix("public key: ").unwrap().to_string();
    assert!(wire::parse_public_key(&printed).is_ok());
    let second = lines.next().unwrap().unwrap();
    assert_eq!(second, format!("listening on http://127.0.0.1:{port}"));

    let served: Value = client()
        .get(format!("http://127.0.0.1:{port}/v1/public-key"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(served["algorithm"], "ed25519");
    assert_eq!(served["public_key"], printed.as_str());
    let on_disk = std::fs::read_to_string(dir.path().join("public.key")).unwrap();
    assert_eq!(on_disk.trim(), printed);

    let registered = client()
        .post(format!("http://127.0.0.1:{port}/v1/register"))
        .json(&json!({"email": "log@example.com", "name": "Log Check"}))
        .send()
        .await
        .unwrap();
    assert_eq!(registered.status(), StatusCode::CREATED);

    let _ = Command::new("kill").arg(child.id().to_string()).status();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("license registered"), "{text}");
    assert!(!text.contains('\u{1b}'), "escape codes in a log file: {text:?}");
}
