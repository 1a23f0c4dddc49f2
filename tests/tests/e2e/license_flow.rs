//! The license end to end: the host's API and the real license server on loopback, every
//! party on one test clock (spec: License behavior, License state; issue 5).

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as B64;
use serde_json::{Value, json};
use spotbot::license::Tick;
use spotbot::store::Store;
use spotbot::store::tables::LICENSE_CACHE;

use crate::license_support::Rig;

fn assert_key_shape(key: &str) {
    let groups: Vec<&str> = key.split('-').collect();
    assert_eq!(groups.len(), 5, "{key}");
    assert_eq!(groups[0], "SPOT");
    for group in &groups[1..] {
        assert_eq!(group.len(), 4, "{key}");
        assert!(group.bytes().all(|b| b"23456789ABCDEFGHJKLMNPQRSTUVWXYZ".contains(&b)), "{key}");
    }
}

#[tokio::test]
async fn register_activates_and_a_restart_keeps_the_license_without_the_server() {
    let mut rig = Rig::new().await;
    let host = rig.new_host().await;

    let status = host.assert_required().await;
    assert!(status["message"].as_str().unwrap().contains("/api/license/register"), "{status}");
    assert_eq!(status["plan"], Value::Null);
    let machine_id = status["machine_id"].as_str().unwrap().to_string();
    assert!(uuid_like(&machine_id), "{machine_id}");

    let key = host.register("ops@example.com").await;
    assert_key_shape(&key);
    host.assert_active().await;
    let status = host.status().await;
    assert_eq!(status["plan"], "free");
    assert_eq!(status["features"], json!({"max_positions": 5, "max_watchlist": 30}));
    assert_eq!(status["expires_at"], Value::Null);
    assert_eq!(status["validated_at"], "2026-03-02T08:00:00Z");
    assert_eq!(status["machine_id"], machine_id.as_str());
    assert!(status.get("message").is_none(), "{status}");
    // The key is never shown again.
    assert!(!status.to_string().contains(&key));

    // Restart with the license server down: the cached, signed license is enough.
    let data = host.stop().await;
    rig.stop_server().await;
    rig.advance_hours(23);
    let host = rig.host(data, None).await;
    host.assert_active().await;
    assert_eq!(host.status().await["machine_id"], machine_id.as_str());
    assert_eq!(host.license().tick().await, Tick::NotDue, "no contact before 24 h");
    host.stop().await;
}

fn uuid_like(text: &str) -> bool {
    text.len() == 36 && text.chars().filter(|c| *c == '-').count() == 4
}

#[tokio::test]
async fn offline_grace_ends_after_72_hours_and_the_server_coming_back_restores_the_license() {
    let mut rig = Rig::new().await;
    let host = rig.new_host().await;
    host.register("grace@example.com").await;
    let validated_at = host.status().await["validated_at"].clone();

    rig.stop_server().await;
    rig.advance_hours(71);
    assert_eq!(host.license().tick().await, Tick::Unreachable);
    host.assert_active().await;
    let status = host.status().await;
    assert_eq!(status["validated_at"], validated_at);
    assert!(status["message"].as_str().unwrap().contains("2026-03-05T08:00:00Z"), "{status}");

    rig.advance_hours(2); // 73 h since the last successful validation
    assert_eq!(host.license().tick().await, Tick::Unreachable);
    let status = host.assert_required().await;
    assert!(status["message"].as_str().unwrap().contains("72 h"), "{status}");

    // The server is back: the next attempt (15 minutes later) makes it active again.
    rig.start_server().await;
    rig.advance_minutes(5);
    assert_eq!(host.license().tick().await, Tick::NotDue, "attempts are spaced");
    rig.advance_minutes(10);
    assert_eq!(host.license().tick().await, Tick::Validated);
    host.assert_active().await;
    let status = host.status().await;
    assert_eq!(status["validated_at"], "2026-03-05T09:15:00Z");
    host.stop().await;
}

#[tokio::test]
async fn grace_boundaries_are_exact_on_the_status_without_a_tick() {
    let mut rig = Rig::new().await;
    let host = rig.new_host().await;
    host.register("edge@example.com").await;
    rig.stop_server().await;
    rig.clock.advance(chrono::Duration::hours(72) - chrono::Duration::seconds(1));
    host.assert_active().await;
    rig.clock.advance(chrono::Duration::seconds(1));
    host.assert_required().await;
    host.stop().await;
}

#[tokio::test]
async fn activating_the_key_on_another_machine_ends_the_old_install_at_its_next_validation() {
    let rig = Rig::new().await;
    let first = rig.new_host().await;
    let key = first.register("moving@example.com").await;
    let second = rig.new_host().await;
    assert_ne!(first.status().await["machine_id"], second.status().await["machine_id"]);

    let (status, body) = second.post("/api/license/activate", json!({"license_key": key})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        body,
        json!({"ok": true, "plan": "free", "message": "License active on this install."})
    );
    second.assert_active().await;

    // The first install does not know yet; it learns at its next validation.
    first.assert_active().await;
    rig.advance_hours(24);
    assert_eq!(first.license().tick().await, Tick::Rejected);
    let status = first.assert_required().await;
    assert!(status["message"].as_str().unwrap().contains("another machine"), "{status}");
    assert_eq!(second.license().tick().await, Tick::Validated);
    second.assert_active().await;

    // The refusal is signed and stored: a restart keeps the old install unlicensed.
    let data = first.stop().await;
    let first = rig.host(data, None).await;
    first.assert_required().await;
    assert_eq!(first.license().tick().await, Tick::Idle, "no retries of a refused key");
    first.stop().await;
    second.stop().await;
}

#[tokio::test]
async fn a_revoked_key_ends_the_license_at_the_next_validation() {
    let rig = Rig::new().await;
    let host = rig.new_host().await;
    let key = host.register("revoked@example.com").await;
    rig.revoke(&key).await;
    rig.advance_hours(24);
    assert_eq!(host.license().tick().await, Tick::Rejected);
    let status = host.assert_required().await;
    assert!(status["message"].as_str().unwrap().contains("revoked"), "{status}");
    let (status, body) = host.post("/api/license/activate", json!({"license_key": key})).await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["error"], "license_revoked");
    host.stop().await;
}

#[tokio::test]
async fn trader_license_key_is_activated_at_start_and_reused_after_a_restart() {
    let mut rig = Rig::new().await;
    let registrar = rig.new_host().await;
    let key = registrar.register("env@example.com").await;
    registrar.stop().await;

    let host = rig.host(tempfile::tempdir().unwrap(), Some(&key)).await;
    host.assert_active().await;
    let data = host.stop().await;

    rig.stop_server().await;
    let host = rig.host(data, Some(&key.to_lowercase())).await;
    host.assert_active().await;
    host.stop().await;
}

#[tokio::test]
async fn trader_license_key_is_activated_once_the_server_is_reachable() {
    let mut rig = Rig::new().await;
    let registrar = rig.new_host().await;
    let key = registrar.register("late@example.com").await;
    registrar.stop().await;

    rig.stop_server().await;
    let host = rig.host(tempfile::tempdir().unwrap(), Some(&key)).await;
    let status = host.assert_required().await;
    assert!(!status.to_string().contains(&key), "the key is never returned");
    rig.start_server().await;
    rig.advance_minutes(15);
    assert_eq!(host.license().tick().await, Tick::Activated);
    host.assert_active().await;
    host.stop().await;
}

/// Rewrites the stored cache document with `edit`.
fn edit_cache(data: &tempfile::TempDir, edit: impl FnOnce(&mut Value)) {
    let store = Store::open(data.path()).unwrap();
    let mut doc: Value = store.read(|r| r.get(LICENSE_CACHE, "current")).unwrap().unwrap();
    edit(&mut doc);
    store.write(|w| w.put(LICENSE_CACHE, "current", &doc)).unwrap();
}

fn edit_payload(doc: &mut Value, edit: impl FnOnce(&mut Value)) {
    let bytes = B64.decode(doc["answer"]["payload"].as_str().unwrap()).unwrap();
    let mut payload: Value = serde_json::from_slice(&bytes).unwrap();
    edit(&mut payload);
    doc["answer"]["payload"] = B64.encode(serde_json::to_vec(&payload).unwrap()).into();
}

#[tokio::test]
async fn a_tampered_cache_makes_the_license_required() {
    let rig = Rig::new().await;

    // A better plan written into the stored answer.
    let host = rig.new_host().await;
    host.register("tamper@example.com").await;
    let data = host.stop().await;
    edit_cache(&data, |doc| {
        edit_payload(doc, |p| p["features"]["max_positions"] = 999.into());
    });
    let host = rig.host(data, None).await;
    let status = host.assert_required().await;
    assert!(status["message"].as_str().unwrap().contains("verification"), "{status}");
    host.stop().await;

    // A revoked verdict turned back into active.
    let host = rig.new_host().await;
    let key = host.register("tamper2@example.com").await;
    rig.revoke(&key).await;
    rig.advance_hours(24);
    assert_eq!(host.license().tick().await, Tick::Rejected);
    let data = host.stop().await;
    edit_cache(&data, |doc| edit_payload(doc, |p| p["verdict"] = "active".into()));
    let host = rig.host(data, None).await;
    host.assert_required().await;
    host.stop().await;

    // The cache of another install copied in (its machine id differs).
    let other = rig.new_host().await;
    other.register("tamper3@example.com").await;
    let other_data = other.stop().await;
    let foreign: Value = Store::open(other_data.path())
        .unwrap()
        .read(|r| r.get(LICENSE_CACHE, "current"))
        .unwrap()
        .unwrap();
    let fresh = rig.new_host().await;
    let data = fresh.stop().await;
    Store::open(data.path()).unwrap().write(|w| w.put(LICENSE_CACHE, "current", &foreign)).unwrap();
    let host = rig.host(data, None).await;
    host.assert_required().await;
    host.stop().await;
}

#[tokio::test]
async fn editing_the_stored_validation_time_does_not_extend_the_grace() {
    let mut rig = Rig::new().await;
    let host = rig.new_host().await;
    host.register("clockwork@example.com").await;
    let data = host.stop().await;
    edit_cache(&data, |doc| doc["received_at"] = "2030-01-01T00:00:00Z".into());
    let host = rig.host(data, None).await;
    host.assert_active().await;
    assert_eq!(host.status().await["validated_at"], "2026-03-02T08:00:00Z");
    rig.stop_server().await;
    rig.advance_hours(73);
    assert_eq!(host.license().tick().await, Tick::Unreachable);
    host.assert_required().await;
    host.stop().await;
}

#[tokio::test]
async fn malformed_email_name_key_or_body_is_refused_naming_the_field() {
    let rig = Rig::new().await;
    let host = rig.new_host().await;
    for (path, body, code, field) in [
        ("/api/license/register", json!({"email": "nope", "name": "A"}), "invalid_email", "email"),
        ("/api/license/register", json!({"email": "a@b", "name": "A"}), "invalid_email", "email"),
        (
            "/api/license/register",
            json!({"email": "a@example.com", "name": ""}),
            "invalid_name",
            "name",
        ),
        ("/api/license/register", json!({"name": "A"}), "invalid_body", "email"),
        ("/api/license/register", json!({"email": 5, "name": "A"}), "invalid_body", "string"),
        (
            "/api/license/activate",
            json!({"license_key": "SPOT-1234"}),
            "invalid_license_key",
            "license_key",
        ),
        (
            "/api/license/activate",
            json!({"license_key": "SPOT-OOOO-2222-2222-2222"}),
            "invalid_license_key",
            "license_key",
        ),
        ("/api/license/activate", json!({}), "invalid_body", "license_key"),
    ] {
        let (status, answer) = host.post(path, body.clone()).await;
        assert_eq!(status, 422, "{body} -> {answer}");
        assert_eq!(answer["ok"], false);
        assert_eq!(answer["error"], code, "{body} -> {answer}");
        assert!(answer["detail"].as_str().unwrap().contains(field), "{body} -> {answer}");
    }
    for path in ["/api/license/register", "/api/license/activate"] {
        let (status, answer) = host.post_raw(path, "{\"email\": ").await;
        assert_eq!(status, 400, "{answer}");
        assert_eq!(answer["error"], "invalid_json");
    }
    let (status, answer) = host
        .post("/api/license/activate", json!({"license_key": "SPOT-2222-2222-2222-2222"}))
        .await;
    assert_eq!(status, 404, "{answer}");
    assert_eq!(answer["error"], "license_not_found");

    host.register("dup@example.com").await;
    let (status, answer) =
        host.post("/api/license/register", json!({"email": "DUP@example.com", "name": "B"})).await;
    assert_eq!(status, 409, "{answer}");
    assert_eq!(answer["error"], "email_registered");
    host.stop().await;
}

#[tokio::test]
async fn an_unreachable_server_answers_502_and_keeps_the_current_license() {
    let mut rig = Rig::new().await;
    let host = rig.new_host().await;
    let key = host.register("keep@example.com").await;
    rig.stop_server().await;
    let (status, answer) = host.post("/api/license/activate", json!({"license_key": key})).await;
    assert_eq!(status, 502, "{answer}");
    assert_eq!(answer["error"], "license_server_unreachable");
    assert!(!answer.to_string().contains(&key));
    host.assert_active().await;
    host.stop().await;
}
