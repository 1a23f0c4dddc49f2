//! `GET /metrics` end to end: requests by route template, orders by purpose and outcome,
//! exchange requests, messages, scheduler runs, signals and the trade and equity gauges after a
//! real trade at the simulator; plugin scans by plugin; `promtool check metrics` accepts the
//! exposition and a real Prometheus server scrapes it.

use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use spotbot_sim::FaultKind;
use spotbot_tests::fake_messenger::Fault;

use super::plugin_support::PluginHost;
use super::trading_support::{Trading, good_signal};

const PROMTOOL: &str = "/usr/bin/promtool";
const PROMETHEUS: &str = "/usr/bin/prometheus";

/// The value of one series (`name{labels}` exactly as exposed), if present.
fn value(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|line| line.strip_prefix(series)?.strip_prefix(' '))
        .map(|v| v.parse().expect("a number"))
}

fn assert_value(text: &str, series: &str, expected: f64) {
    assert_eq!(value(text, series), Some(expected), "{series} in\n{text}");
}

#[tokio::test]
async fn metrics_count_requests_orders_and_trades() {
    let t = Trading::start().await;
    for _ in 0..2 {
        assert_eq!(t.get("/api/health").await.0, 200);
    }
    // A route with a parameter is labelled by its template, never by the raw path.
    assert_eq!(t.get("/api/strategies/no-such-plugin/state").await.0, 404);
    assert_eq!(t.get("/api/no-such-route").await.0, 404);
    t.buy("ETHUSDT").await;
    // The exchange refuses the next entry: one rejected entry, no trade.
    t.fault(FaultKind::Reject { code: -2010, msg: None }, 1, Some("/api/v3/order"));
    let (status, _) = t
        .post_empty(
            "/api/trade?symbol=SOLUSDT&direction=buy&bot=mr_combined&sl=2&tp=5&ev=30&confidence=9",
        )
        .await;
    assert_ne!(status, 200);
    // The trade's "opened" message is sent in the background: wait until it arrived.
    t.messenger.wait_for_messages(1, Duration::from_secs(5)).await;
    // One approval request delivered, one the messenger refuses (a 400 is not retried).
    t.create_signal(good_signal("SOLUSDT")).await;
    let chat_not_found =
        Fault::Error { code: 400, description: "Bad Request: chat not found".into() };
    t.messenger.fail_next(chat_not_found, 1);
    let (_, failed) = t.post("/api/signal", good_signal("BTCUSDT")).await;
    assert_eq!(failed["status"], "messenger_failed", "{failed}");
    // The minute jobs run once: drawdown_check measures equity.
    t.rig.advance_minutes(1);
    let ran = t.host.app.state.scheduler.tick(&t.host.app.state).await;
    assert!(ran.contains(&"drawdown_check"), "{ran:?}");

    let response = t.host.http.get(t.host.url("/metrics")).send().await.unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let content_type = response.headers()["content-type"].to_str().unwrap().to_string();
    assert!(content_type.starts_with("text/plain; version=0.0.4"), "{content_type}");
    let text = response.text().await.unwrap();

    assert_value(
        &text,
        r#"spotbot_http_requests_total{method="GET",route="/api/health",status="200"}"#,
        2.0,
    );
    assert_value(
        &text,
        r#"spotbot_http_requests_total{method="GET",route="/api/strategies/{name}/state",status="404"}"#,
        1.0,
    );
    assert_value(
        &text,
        r#"spotbot_http_requests_total{method="GET",route="unmatched",status="404"}"#,
        1.0,
    );
    assert!(!text.contains("no-such"), "a raw path leaked into a label:\n{text}");
    assert_value(
        &text,
        r#"spotbot_http_request_duration_seconds_count{method="GET",route="/api/health"}"#,
        2.0,
    );
    assert_value(
        &text,
        r#"spotbot_http_request_duration_seconds_bucket{method="GET",route="/api/health",le="+Inf"}"#,
        2.0,
    );

    let orders = |purpose: &str, outcome: &str| {
        value(
            &text,
            &format!(
                r#"spotbot_orders_total{{exchange="exchange_a",purpose="{purpose}",outcome="{outcome}"}}"#
            ),
        )
    };
    assert_eq!(orders("entry", "placed"), Some(1.0), "{text}");
    assert_eq!(orders("oco", "placed"), Some(1.0), "{text}");
    assert_eq!(orders("entry", "rejected"), Some(1.0), "{text}");

    assert_value(&text, r#"spotbot_open_trades{protection="protected"}"#, 1.0);
    assert_value(&text, r#"spotbot_open_trades{protection="unprotected"}"#, 0.0);
    assert_value(&text, r#"spotbot_open_trades{protection="pending"}"#, 0.0);
    assert_value(&text, "spotbot_trades_today", 1.0);
    assert_value(&text, "spotbot_consecutive_losses", 0.0);
    assert_value(&text, "spotbot_realised_pnl_today", 0.0);
    assert_value(&text, "spotbot_drawdown_paused", 0.0);
    assert_value(&text, "spotbot_license_active", 1.0);
    let limit = value(&text, r#"spotbot_exchange_request_weight{kind="limit"}"#);
    assert!(limit.is_some_and(|l| l > 0.0), "{text}");
    assert!(value(&text, "spotbot_exchange_refused_reads_total").is_some(), "{text}");
    assert!(!text.contains(super::trading_support::SECRET), "a secret in the metrics");

    let exchange = |method: &str, endpoint: &str, outcome: &str| {
        value(
            &text,
            &format!(
                r#"spotbot_exchange_requests_total{{exchange="exchange_a",method="{method}",endpoint="{endpoint}",outcome="{outcome}"}}"#
            ),
        )
    };
    // The entry, its OCO and the exits' lookups go to /api/v3/order(List); the refused entry
    // is the one rejected request.
    assert!(exchange("POST", "/api/v3/order", "ok").is_some_and(|n| n >= 1.0), "{text}");
    assert_eq!(exchange("POST", "/api/v3/order", "rejected"), Some(1.0), "{text}");
    assert!(exchange("GET", "/api/v3/account", "ok").is_some_and(|n| n >= 1.0), "{text}");
    let sent = value(
        &text,
        r#"spotbot_exchange_request_duration_seconds_count{exchange="exchange_a",method="POST",endpoint="/api/v3/order"}"#,
    );
    assert!(sent.is_some_and(|n| n >= 2.0), "{text}");
    assert!(!text.contains("signature"), "a query string leaked into a label:\n{text}");

    let messages = |outcome: &str| {
        value(&text, &format!(r#"spotbot_messenger_messages_total{{outcome="{outcome}"}}"#))
    };
    assert!(messages("sent").is_some_and(|n| n >= 2.0), "{text}");
    assert_eq!(messages("refused"), Some(1.0), "{text}");
    assert_value(&text, r#"spotbot_signals{status="pending"}"#, 2.0);
    assert_value(&text, r#"spotbot_signals{status="confirmed"}"#, 0.0);
    assert_value(&text, "spotbot_dashboard_event_streams", 0.0);
    assert!(value(&text, "spotbot_candle_cache_series").is_some(), "{text}");
    assert!(value(&text, "spotbot_candle_cache_candles").is_some(), "{text}");
    // The process gauges: under the host's tests the process is the test binary, which is
    // alive and has files open and tasks running.
    for gauge in
        ["process_resident_memory_bytes", "process_open_fds", "spotbot_runtime_alive_tasks"]
    {
        assert!(value(&text, gauge).is_some_and(|n| n > 0.0), "{gauge}:\n{text}");
    }

    assert_value(
        &text,
        r#"spotbot_scheduler_job_runs_total{job="drawdown_check",status="ok"}"#,
        1.0,
    );
    assert!(
        value(&text, r#"spotbot_scheduler_job_runs_total{job="trailing_stop",status="ok"}"#)
            .is_some()
    );
    // 10 000 USDT less the entry's fee, the ETH position at 3000: no drawdown yet.
    let equity = value(&text, "spotbot_equity").expect("equity measured");
    assert!((9_900.0..=10_100.0).contains(&equity), "{text}");
    assert_value(&text, "spotbot_equity_high_water_mark", equity);
    assert_value(&text, "spotbot_drawdown_ratio", 0.0);
    let unrealised = value(&text, "spotbot_unrealised_pnl").expect("unrealised pnl");
    assert!(unrealised.abs() < 10.0, "only fees: {text}");
    let measured = value(&text, "spotbot_equity_measured_timestamp_seconds").unwrap();
    assert_eq!(measured, t.rig.now().timestamp() as f64, "{text}");
    let grace = value(&text, "spotbot_license_grace_remaining_seconds").unwrap();
    assert!(grace > 0.0 && grace <= 72.0 * 3600.0, "{text}");
    let money = value(&text, r#"spotbot_exchange_request_weight{kind="money_limit"}"#);
    assert!(money.is_some_and(|m| m > 0.0), "{text}");

    promtool_accepts(&text);
}

#[tokio::test]
async fn plugin_scans_are_timed_and_their_failures_counted_per_plugin() {
    let h = PluginHost::start(
        &[("echo.wasm", "guest-echo"), ("panic.wasm", "guest-panic")],
        "",
        "[market]\nwatchlist = [\"BTCUSDT\"]\n",
    )
    .await;
    assert_eq!(h.scan("guest_echo", None).await.0, 200);
    assert_eq!(h.scan("guest_echo", None).await.0, 200);
    assert_eq!(h.scan("guest_panic", None).await.0, 422);

    let (status, text) = h.get_text("/metrics").await;
    assert_eq!(status, 200);
    assert_value(&text, r#"spotbot_plugin_scan_duration_seconds_count{plugin="guest_echo"}"#, 2.0);
    let echo_seconds =
        value(&text, r#"spotbot_plugin_scan_duration_seconds_sum{plugin="guest_echo"}"#).unwrap();
    assert!(echo_seconds > 0.0 && echo_seconds < 10.0, "{text}");
    assert_value(&text, r#"spotbot_plugin_scan_duration_seconds_count{plugin="guest_panic"}"#, 1.0);
    assert_value(
        &text,
        r#"spotbot_plugin_scan_errors_total{plugin="guest_panic",error="plugin_trapped"}"#,
        1.0,
    );
    assert!(!text.contains(r#"spotbot_plugin_scan_errors_total{plugin="guest_echo""#), "{text}");
    promtool_accepts(&text);
}

/// A Prometheus server scraping the service every second, killed when dropped (also when the
/// test fails).
struct PrometheusServer {
    child: Child,
    api: String,
    _storage: tempfile::TempDir,
}

impl PrometheusServer {
    /// Starts Debian's `prometheus` on a free loopback port, scraping `target` (host:port) as
    /// job `spotbot`.
    fn start(target: &str) -> PrometheusServer {
        let storage = tempfile::tempdir().unwrap();
        let config = storage.path().join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: spotbot\n    static_configs:\n      \
                 - targets: [\"{target}\"]\n"
            ),
        )
        .unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let listen = format!("127.0.0.1:{port}");
        let child = Command::new(PROMETHEUS)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!("--storage.tsdb.path={}", storage.path().join("data").display()))
            .arg(format!("--web.listen-address={listen}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("prometheus starts");
        PrometheusServer { child, api: format!("http://{listen}/api/v1/query"), _storage: storage }
    }

    /// The value of the instant query's first sample, once Prometheus answers one.
    async fn query(&self, http: &reqwest::Client, query: &str) -> Option<f64> {
        let answer: serde_json::Value =
            http.get(&self.api).query(&[("query", query)]).send().await.ok()?.json().await.ok()?;
        answer["data"]["result"][0]["value"][1].as_str()?.parse().ok()
    }
}

impl Drop for PrometheusServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prometheus_server_scrapes_the_service() {
    if !std::path::Path::new(PROMETHEUS).is_file() {
        println!("skipped: {PROMETHEUS} is absent (Debian's prometheus package)");
        return;
    }
    let host = spotbot_tests::TestHost::start("").await;
    assert_eq!(host.http.get(host.url("/api/health")).send().await.unwrap().status(), 200);
    let target = host.app.base_url().trim_start_matches("http://").to_string();
    let prometheus = PrometheusServer::start(&target);
    let deadline = Instant::now() + Duration::from_secs(60);
    let (mut up, mut requests) = (None, None);
    while Instant::now() < deadline && (up != Some(1.0) || requests.is_none()) {
        tokio::time::sleep(Duration::from_millis(500)).await;
        up = prometheus.query(&host.http, r#"up{job="spotbot"}"#).await;
        requests = prometheus
            .query(
                &host.http,
                r#"spotbot_http_requests_total{job="spotbot",route="/api/health",status="200"}"#,
            )
            .await;
    }
    assert_eq!(up, Some(1.0), "Prometheus never scraped {target} successfully");
    assert!(requests.is_some_and(|n| n >= 1.0), "no spotbot metric in Prometheus: {requests:?}");
}

/// `promtool check metrics` reads the exposition on stdin and prints nothing when it is
/// valid and follows the naming conventions. Skipped with one line where promtool is absent
/// (`cargo xtask test` installs it).
fn promtool_accepts(text: &str) {
    if !std::path::Path::new(PROMTOOL).is_file() {
        println!("skipped promtool check: {PROMTOOL} is absent (Debian's prometheus package)");
        return;
    }
    let mut child = Command::new(PROMTOOL)
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool starts");
    child.stdin.take().unwrap().write_all(text.as_bytes()).unwrap();
    let out = child.wait_with_output().unwrap();
    let said =
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success() && said.trim().is_empty(), "promtool: {said}\n{text}");
}
