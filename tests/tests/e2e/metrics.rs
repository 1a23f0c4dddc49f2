//! `GET /metrics` end to end: requests by route template, orders by purpose and outcome, and
//! the trade gauges after a real trade at the simulator; `promtool check metrics` accepts the
//! exposition.

use std::io::Write;
use std::process::{Command, Stdio};

use spotbot_sim::FaultKind;

use super::trading_support::Trading;

const PROMTOOL: &str = "/usr/bin/promtool";

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

    promtool_accepts(&text);
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
