//! The exchange B demo's built-in scans stay inside the reads' share of the request budget:
//! an hour of its scheduler on a test clock (Pump Momentum over the liquid universe every
//! 5 minutes, the pump outcomes at :30, the every-minute protection jobs) and the service never
//! refuses itself a read, nor does the exchange answer 429.

use std::path::PathBuf;
use std::time::Duration;

use crate::plugin_support::workspace_plugins;
use crate::trading_support::{Trading, Venue};

/// The demo's `[market]`, `[strategy.pump_momentum]` and `[scheduler]` sections from
/// `examples/config.toml`, with the scheduler's changes the demo makes (`cargo xtask demo`:
/// `pump_scan = true`); the scheduler is driven by the test (`poll_seconds = 0`).
fn demo_sections() -> String {
    let example = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/config.toml");
    let text = std::fs::read_to_string(example).unwrap();
    let section = |name: &str| {
        let start = text.find(&format!("\n[{name}]\n")).unwrap_or_else(|| panic!("[{name}]"));
        let rest = &text[start + 1..];
        let end = rest[1..].find("\n[").map_or(rest.len(), |i| i + 2);
        rest[..end].to_string()
    };
    let scheduler = section("scheduler")
        .replace("pump_scan = false", "pump_scan = true")
        .replace("poll_seconds = 1", "poll_seconds = 0");
    format!("{}{}{scheduler}", section("market"), section("strategy.pump_momentum"))
}

/// The sum of every job run's failures so far, by name (a later success hides a failure in
/// the job's status, so each minute is looked at).
fn failed_jobs(t: &Trading) -> Vec<String> {
    let view = serde_json::to_value(t.host.app.state.scheduler.view()).unwrap();
    let jobs = view["jobs"].as_array().unwrap().iter();
    jobs.filter(|j| j["last_status"] == "error")
        .map(|j| format!("{}: {}", j["name"], j["last_error"]))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_hour_of_the_exchange_b_demos_scans_never_gets_a_429() {
    let (_plugins, plugins_toml) = workspace_plugins(&["mr_combined.wasm", "pump_momentum.wasm"]);
    let extra = format!("\n{plugins_toml}{}", demo_sections());
    let t = Trading::start_on(Venue::B, &extra).await;
    let state = t.host.app.state.clone();
    let exchange = state.exchange.clone().expect("exchange client");
    let budget = || exchange.budget_use().expect("exchange B counts its weight");
    let mut running = Vec::new();
    let mut failures = Vec::new();
    let mut agent_scans = 0;
    let mut minute = 0;
    while minute < 60 || !running.is_empty() {
        assert!(minute < 75, "the scans never finished: {:?}", running.len());
        t.rig.clock.advance(chrono::Duration::seconds(60));
        minute += 1;
        // The scout's MR Combined scan every 5 minutes (the OpenClaw cron's), at the very
        // minute the built-in Pump Momentum scan is due: the two compete for the read share.
        if minute % 5 == 0 && minute <= 60 {
            let (status, answer) =
                t.post("/api/mr-combined/scan-and-signal", serde_json::json!({})).await;
            assert_eq!(status, 200, "minute {minute}: {answer}");
            agent_scans += 1;
        }
        let waits = budget().background_waits;
        if minute <= 60 {
            running.extend(state.scheduler.start_due(&state).into_iter().map(|(_, task)| task));
        }
        // Until every run has finished or a scan waits for the next minute again.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            running.retain(|task| !task.is_finished());
            let paced = budget().background_waiting > 0 && budget().background_waits > waits;
            if running.is_empty() || paced {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "minute {minute}: a run hangs");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        failures.extend(failed_jobs(&t));
    }

    assert!(failures.is_empty(), "every built-in job ran without an error: {failures:?}");
    let view = serde_json::to_value(state.scheduler.view()).unwrap();
    let pump = view["jobs"].as_array().unwrap().iter().find(|j| j["name"] == "pump_scan").unwrap();
    assert_eq!(pump["runs"], 12, "{pump}");
    assert!(pump["last_result"].as_str().unwrap().starts_with("pump scan: 19 symbols"), "{pump}");
    assert_eq!(agent_scans, 12);
    let used = budget();
    assert_eq!(used.refused_reads, 0, "no read of the service's own was refused: {used:?}");
    assert!(used.background_waits > 0, "the pump scans were paced across minutes: {used:?}");
    let refused: Vec<_> =
        t.sim.sim.requests().into_iter().filter(|r| r.status == 429 || r.status == 418).collect();
    assert!(refused.is_empty(), "the exchange never refused a request: {refused:?}");
}
