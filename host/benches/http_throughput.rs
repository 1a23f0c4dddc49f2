//! API throughput with `/metrics` recording on: `wrk` on the service's `GET /api/health`
//! against a bare axum hello-world server, in the same run and the same process (one tokio
//! runtime serves all three), alternating so that machine load hits them alike. A third
//! server, the hello-world behind the service's HTTP metrics layer, isolates what recording
//! costs from what the service's own stack (tracing span, license and budget layers, the
//! health handler) costs. Two more measure API tokens (issue 37): the hello-world behind the
//! service's auth layer on a route that needs the `read` scope, called with a valid token
//! (Host check, token file stamp, SHA-256 and constant-time compare, scope), and the service's
//! own `GET /api/license/status` (scope `read`) with that token; the service runs with tokens.
//!
//! `cargo xtask bench-http` installs wrk when missing and runs it; by hand:
//! `cargo bench -p spotbot --bench http_throughput` (`BENCH_ROUNDS` (5), `BENCH_SECONDS` (10),
//! `BENCH_CONNECTIONS` tune it). The numbers go to docs/benchmarks.md.

use std::process::Command;
use std::sync::Arc;

use axum::routing::get;
use axum::{Json, Router};
use spotbot::clock::SystemClock;
use spotbot::config::{Config, LogFormat};
use spotbot::metrics::Metrics;

const WRK: &str = "wrk";

fn env(name: &str, default: u32) -> u32 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Serves `router` on a free loopback port; returns its `GET /api/health` URL.
async fn serve(router: Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    let addr = listener.local_addr().expect("bound address");
    tokio::spawn(async move { axum::serve(listener, router).await });
    format!("http://{addr}/api/health")
}

/// The baseline: the same axum and tokio the service runs, no layers, `GET /api/health`
/// answering a small JSON body.
fn hello() -> Router {
    hello_at("/api/health")
}

/// The baseline's handler at `path`.
fn hello_at(path: &str) -> Router {
    let body = || async { Json(serde_json::json!({"ok": true, "license_status": "active"})) };
    Router::new().route(path, get(body))
}

/// Requests per second `wrk` measured on `url`, sending `header` when given.
fn wrk(url: &str, seconds: u32, connections: u32, header: Option<&str>) -> f64 {
    let mut args = vec!["-t1".to_string(), format!("-c{connections}"), format!("-d{seconds}s")];
    if let Some(header) = header {
        args.extend(["-H".to_string(), header.to_string()]);
    }
    args.push(url.to_string());
    let out = Command::new(WRK)
        .args(&args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {WRK} ({e}): install it (cargo xtask bench-http)"));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "wrk failed: {text}{}", String::from_utf8_lossy(&out.stderr));
    let errors = text.lines().find(|l| l.contains("Non-2xx") || l.contains("Socket errors"));
    assert!(errors.is_none(), "wrk saw errors on {url}:\n{text}");
    text.lines()
        .find_map(|l| l.strip_prefix("Requests/sec:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or_else(|| panic!("no Requests/sec in wrk's output:\n{text}"))
}

/// Nanoseconds one `GET /api/health` takes through `router` in process, without a socket:
/// the user-space cost of routing, layers and handler, which `wrk` cannot separate from the
/// kernel's loopback TCP and the machine's load. The best of three runs of `calls` requests.
async fn in_process_ns(router: Router, calls: u32) -> f64 {
    use tower::ServiceExt;
    let request = || {
        // The service answers only the hosts of `[api] allowed_hosts`, as over a socket.
        axum::http::Request::get("/api/health")
            .header("host", "127.0.0.1")
            .body(axum::body::Body::empty())
            .expect("request")
    };
    let mut best = f64::INFINITY;
    for _ in 0..3 {
        let started = std::time::Instant::now();
        for _ in 0..calls {
            let response = router.clone().oneshot(request()).await.expect("infallible");
            assert!(response.status().is_success(), "GET /api/health: {}", response.status());
            axum::body::to_bytes(response.into_body(), 1 << 16).await.expect("body");
        }
        best = best.min(started.elapsed().as_nanos() as f64 / f64::from(calls));
    }
    best
}

fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let rounds = env("BENCH_ROUNDS", 5);
    let seconds = env("BENCH_SECONDS", 10);
    let connections = env("BENCH_CONNECTIONS", 16);
    // The service logs as `spotbot serve` does (info, stderr), so its request spans cost what
    // they cost in production.
    spotbot::logging::init(LogFormat::Human);
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().expect("runtime");
    let data = tempfile::tempdir().expect("data folder");
    let tokens = spotbot::auth::tokens::TokenFile::in_dir(data.path());
    let (_, token) = tokens
        .create(spotbot::activity::AgentName::Ops, spotbot::auth::Scope::Read, chrono::Utc::now())
        .expect("a read token");
    let bearer = format!("Authorization: Bearer {token}");
    let (app, targets) = runtime.block_on(async {
        let mut config = Config::parse("", "bench.toml".as_ref()).expect("default config");
        config.server.addr = "127.0.0.1:0".into();
        config.server.data_dir = data.path().display().to_string();
        config.plugins.dir = data.path().join("plugins").display().to_string();
        let app = spotbot::app::start(config, Arc::new(SystemClock)).await.expect("service");
        let service = format!("{}/api/health", app.base_url());
        let bare = serve(hello()).await;
        let recorded = serve(hello().layer(axum::middleware::from_fn_with_state(
            Metrics::default(),
            spotbot::metrics::record_http,
        )))
        .await;
        let guarded = serve(hello_at("/api/state").layer(axum::middleware::from_fn_with_state(
            app.state.clone(),
            spotbot::api::auth::admit,
        )))
        .await
        .replace("/api/health", "/api/state");
        let licensed = format!("{}/api/license/status", app.base_url());
        let targets = [
            ("service GET /api/health", service, false),
            ("bare axum hello", bare, false),
            ("hello + metrics layer", recorded, false),
            ("hello + auth layer, token", guarded, true),
            ("service read route, token", licensed, true),
        ];
        (app, targets)
    });
    let calls = env("BENCH_IN_PROCESS_CALLS", 100_000);
    let routers = [
        ("service GET /api/health", spotbot::api::router(app.state.clone())),
        ("bare axum hello", hello()),
        (
            "hello + metrics layer",
            hello().layer(axum::middleware::from_fn_with_state(
                Metrics::default(),
                spotbot::metrics::record_http,
            )),
        ),
    ];
    println!("in process, no socket (best of 3 x {calls} requests):");
    for (name, router) in routers {
        let ns = runtime.block_on(in_process_ns(router, calls));
        println!("  {name:<26} {:>8.2} µs per request", ns / 1000.0);
    }
    let mut results: Vec<Vec<f64>> = vec![Vec::new(); targets.len()];
    for round in 1..=rounds {
        for ((name, url, with_token), samples) in targets.iter().zip(&mut results) {
            let rps = wrk(url, seconds, connections, with_token.then_some(bearer.as_str()));
            println!("round {round}: {name:<26} {rps:>10.0} req/s");
            samples.push(rps);
        }
    }
    // Ratios are taken round by round (the servers of one round ran under the same machine
    // load), then their median: the machine's load drifts more between rounds than the
    // servers differ.
    let ratio = |of: usize| {
        let mut per_round: Vec<f64> =
            results[of].iter().zip(&results[1]).map(|(rps, bare)| rps / bare).collect();
        median(&mut per_round)
    };
    let (service, recorded, guarded, licensed) = (ratio(0), ratio(2), ratio(3), ratio(4));
    let medians: Vec<f64> = results.iter_mut().map(|s| median(s)).collect();
    println!("\nmedian of {rounds} rounds, wrk -t1 -c{connections} -d{seconds}s:");
    for ((name, _, _), rps) in targets.iter().zip(&medians) {
        println!("  {name:<26} {rps:>10.0} req/s");
    }
    println!("  service / bare hello (median of the rounds' ratios):       {service:.2}x");
    println!("  hello+metrics / bare hello (median of the rounds' ratios): {recorded:.2}x");
    println!("  hello+auth with a token / bare hello (median of ratios):  {guarded:.2}x");
    println!("  service read route with a token / bare hello (median):    {licensed:.2}x");
    runtime.block_on(app.stop()).expect("the service stops");
}
