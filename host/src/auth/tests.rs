use std::net::SocketAddr;
use std::sync::Arc;

use axum::http::{HeaderMap, HeaderValue, Method, Uri};

use super::*;
use crate::clock::{Clock, TestClock};

const LOOPBACK: &str = "127.0.0.1:8000";
const ANY: &str = "0.0.0.0:8000";

fn clock() -> TestClock {
    TestClock::new("2026-11-28T12:00:00Z".parse().unwrap())
}

fn auth_at(dir: &std::path::Path, bound: &str, mode: Option<AuthMode>) -> Result<Auth, String> {
    let config = ApiConfig { auth: mode, ..ApiConfig::default() };
    Auth::start(&config, bound.parse::<SocketAddr>().unwrap(), dir, Arc::new(clock()))
}

fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
    let mut map = HeaderMap::new();
    map.insert("host", HeaderValue::from_static("127.0.0.1:8000"));
    for (name, value) in pairs {
        map.insert(*name, HeaderValue::from_str(value).unwrap());
    }
    map
}

fn json_post(extra: &[(&'static str, &str)]) -> HeaderMap {
    let mut all = vec![("content-type", "application/json")];
    all.extend_from_slice(extra);
    headers(&all)
}

fn post(auth: &Auth, route: &str, uri: &str, headers: &HeaderMap) -> Result<Caller, Refusal> {
    auth.admit(&Method::POST, Some(route), &uri.parse::<Uri>().unwrap(), headers, None)
}

fn get(auth: &Auth, route: &str, headers: &HeaderMap) -> Result<Caller, Refusal> {
    auth.admit(&Method::GET, Some(route), &route.parse::<Uri>().unwrap(), headers, None)
}

#[test]
fn loopback_without_tokens_is_open_until_the_first_token_and_stays_closed_after_revoking() {
    let dir = tempfile::tempdir().unwrap();
    let auth = auth_at(dir.path(), LOOPBACK, None).unwrap();
    assert_eq!(auth.mode_now(), "off");
    assert_eq!(post(&auth, "/api/closeall", "/api/closeall", &json_post(&[])), Ok(Caller::open()));

    let file = TokenFile::in_dir(dir.path());
    let (record, token) = file.create(AgentName::Coo, Scope::Execute, clock().now()).unwrap();
    assert_eq!(auth.mode_now(), "tokens", "the first token switches tokens on at once");
    assert_eq!(
        post(&auth, "/api/closeall", "/api/closeall", &json_post(&[])),
        Err(Refusal::NoToken)
    );
    let bearer = format!("Bearer {token}");
    let caller =
        post(&auth, "/api/closeall", "/api/closeall", &json_post(&[("authorization", &bearer)]))
            .unwrap();
    assert_eq!(caller.agent, Some(AgentName::Coo));
    assert_eq!(caller.token_id.as_deref(), Some(record.id.as_str()));

    file.revoke(&record.id, clock().now()).unwrap();
    assert_eq!(
        post(&auth, "/api/closeall", "/api/closeall", &json_post(&[("authorization", &bearer)])),
        Err(Refusal::Revoked),
        "a revoked token fails on its next request"
    );
    assert_eq!(auth.mode_now(), "tokens", "revoking every token never reopens the API");
    assert!(auth_at(dir.path(), LOOPBACK, None).unwrap_err().contains("no active one"));
}

#[test]
fn beyond_loopback_the_service_needs_a_token_or_an_explicit_off_which_warns() {
    let dir = tempfile::tempdir().unwrap();
    let refused = auth_at(dir.path(), ANY, None).unwrap_err();
    assert!(refused.contains("beyond loopback") && refused.contains("spotbot token create"));
    assert!(refused.contains("auth = \"off\""), "{refused}");
    let refused = auth_at(dir.path(), LOOPBACK, Some(AuthMode::Tokens)).unwrap_err();
    assert!(refused.contains("[api] auth = \"tokens\""), "{refused}");

    let open = auth_at(dir.path(), ANY, Some(AuthMode::Off)).unwrap();
    assert!(open.warning().unwrap().contains("anyone who reaches the port can trade"));
    assert_eq!(open.mode_now(), "off");
    assert!(auth_at(dir.path(), LOOPBACK, Some(AuthMode::Off)).unwrap().warning().is_none());

    TokenFile::in_dir(dir.path()).create(AgentName::Scout, Scope::Propose, clock().now()).unwrap();
    let closed = auth_at(dir.path(), ANY, None).unwrap();
    assert_eq!(closed.mode_now(), "tokens");
    assert!(closed.warning().is_none());
}

#[test]
fn scopes_agents_and_public_routes() {
    let dir = tempfile::tempdir().unwrap();
    let file = TokenFile::in_dir(dir.path());
    let (_, scout) = file.create(AgentName::Scout, Scope::Propose, clock().now()).unwrap();
    let auth = auth_at(dir.path(), LOOPBACK, None).unwrap();
    let with = |token: &str| json_post(&[("authorization", &format!("Bearer {token}"))]);

    assert!(post(&auth, "/api/signal", "/api/signal", &with(&scout)).is_ok());
    assert!(get(&auth, "/api/signal/pending", &with(&scout)).is_ok(), "propose includes read");
    assert_eq!(
        post(&auth, "/api/closeall", "/api/closeall", &with(&scout)),
        Err(Refusal::Scope { needs: Scope::Execute, has: Scope::Propose, agent: AgentName::Scout })
    );
    assert_eq!(
        post(&auth, "/api/signal", "/api/signal?agent=coo", &with(&scout)),
        Err(Refusal::AgentMismatch { asked: "coo".into(), token: AgentName::Scout })
    );
    assert!(post(&auth, "/api/signal", "/api/signal?agent=scout", &with(&scout)).is_ok());
    assert!(matches!(
        post(&auth, "/api/agent/{name}", "/api/agent/coo", &with(&scout)),
        Err(Refusal::AgentMismatch { .. })
    ));
    assert!(post(&auth, "/api/agent/{name}", "/api/agent/scout", &with(&scout)).is_ok());
    assert_eq!(get(&auth, "/api/health", &headers(&[])).unwrap().token_id, None);
    assert_eq!(get(&auth, "/api/state", &headers(&[])), Err(Refusal::NoToken));
    let basic = headers(&[("authorization", "Basic YWRtaW46YWRtaW4=")]);
    assert_eq!(get(&auth, "/api/state", &basic), Err(Refusal::NoToken));
}

#[test]
fn bad_tokens_from_one_peer_answer_429_for_a_minute() {
    let dir = tempfile::tempdir().unwrap();
    let file = TokenFile::in_dir(dir.path());
    let (_, token) = file.create(AgentName::Coo, Scope::Read, clock().now()).unwrap();
    let clock = clock();
    let config = ApiConfig::default();
    let auth = Auth::start(&config, LOOPBACK.parse().unwrap(), dir.path(), Arc::new(clock.clone()))
        .unwrap();
    let peer = Some("127.0.0.9".parse().unwrap());
    let bad = headers(&[("authorization", "Bearer spotbot_000000000000_00")]);
    let uri: Uri = "/api/state".parse().unwrap();
    let ask = || auth.admit(&Method::GET, Some("/api/state"), &uri, &bad, peer);
    for _ in 0..ApiConfig::default().bad_tokens_per_minute {
        assert_eq!(ask(), Err(Refusal::BadToken));
    }
    assert_eq!(ask(), Err(Refusal::Throttled(60)));
    // A valid token from the same address still passes; a missing one is told it is missing.
    let good = headers(&[("authorization", &format!("Bearer {token}"))]);
    assert!(auth.admit(&Method::GET, Some("/api/state"), &uri, &good, peer).is_ok());
    let none = headers(&[]);
    let missing = auth.admit(&Method::GET, Some("/api/state"), &uri, &none, peer);
    assert_eq!(missing, Err(Refusal::NoToken));
    clock.advance(chrono::Duration::seconds(59));
    assert_eq!(ask(), Err(Refusal::Throttled(1)));
    clock.advance(chrono::Duration::seconds(1));
    assert_eq!(ask(), Err(Refusal::BadToken));
}

#[test]
fn other_hosts_other_origins_and_form_posts_are_refused_in_every_mode() {
    let dir = tempfile::tempdir().unwrap();
    let auth = auth_at(dir.path(), LOOPBACK, None).unwrap();
    let close = |h: &HeaderMap| post(&auth, "/api/closeall", "/api/closeall", h);

    let mut rebound = json_post(&[]);
    rebound.insert("host", HeaderValue::from_static("attacker.example:8000"));
    assert_eq!(close(&rebound), Err(Refusal::HostNotAllowed("attacker.example:8000".into())));
    assert!(matches!(get(&auth, "/api/state", &rebound), Err(Refusal::HostNotAllowed(_))));
    for host in ["localhost:8000", "127.0.0.1", "[::1]:8000", "LOCALHOST"] {
        let mut h = json_post(&[]);
        h.insert("host", HeaderValue::from_str(host).unwrap());
        assert!(close(&h).is_ok(), "{host}");
    }

    let cross = json_post(&[("sec-fetch-site", "same-site")]);
    assert!(matches!(close(&cross), Err(Refusal::CrossSite(_))));
    let other_port = json_post(&[("origin", "http://127.0.0.1:8001")]);
    assert!(matches!(close(&other_port), Err(Refusal::CrossSite(_))));
    let null_origin = json_post(&[("origin", "null")]);
    assert!(matches!(close(&null_origin), Err(Refusal::CrossSite(_))));
    let own_page =
        json_post(&[("origin", "http://127.0.0.1:8000"), ("sec-fetch-site", "same-origin")]);
    assert!(close(&own_page).is_ok());
    // A GET that acts (trailing) is a state change too; a plain read is not.
    let img = headers(&[("sec-fetch-site", "cross-site")]);
    assert!(matches!(get(&auth, "/api/trailing", &img), Err(Refusal::CrossSite(_))));
    assert!(get(&auth, "/api/state", &img).is_ok());

    // A method the route does not have is the router's 405, whoever asks.
    let put = auth.admit(
        &Method::PUT,
        Some("/api/closeall"),
        &"/api/closeall".parse().unwrap(),
        &headers(&[]),
        None,
    );
    assert_eq!(put, Ok(Caller::anonymous()));
    assert_eq!(close(&headers(&[])), Err(Refusal::NotJson));
    assert_eq!(close(&headers(&[("content-type", "text/plain")])), Err(Refusal::NotJson));
    assert!(close(&headers(&[("content-type", "application/json; charset=utf-8")])).is_ok());
}
