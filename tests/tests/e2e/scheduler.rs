//! The built-in scheduler on the test clock, over HTTP against the exchange simulator and the
//! fake messenger: each job runs when the clock reaches its time and not before, jobs switched
//! off never run, a job is never started twice at once, and `GET /api/scheduler` shows the
//! next runs computed from the clock. The rig turns the background loop off
//! (`poll_seconds = 0`), so every run here is started by `Scheduler::tick`; one test turns the
//! loop on to check that the service runs the jobs by itself.

use crate::trading_support::{Trading, good_signal};
use chrono::{DateTime, Duration, Utc};
use serde_json::Value;
use spotbot_sim::FaultKind;

const BUY_2950: &str =
    "/api/trade/manual?symbol=ETHUSDT&direction=buy&entry_px=2950&sl_pct=2&rr=1:2.5";

fn at(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

/// Runs the jobs due at the clock's now and waits for them.
async fn tick(t: &Trading) -> Vec<&'static str> {
    let state = &t.host.app.state;
    state.scheduler.tick(state).await
}

async fn scheduler(t: &Trading) -> Value {
    let (status, body) = t.get("/api/scheduler").await;
    assert_eq!(status, 200, "{body}");
    body
}

async fn job(t: &Trading, name: &str) -> Value {
    let body = scheduler(t).await;
    body["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["name"] == name)
        .unwrap_or_else(|| panic!("no job {name} in {body}"))
        .clone()
}

async fn pending_entries(t: &Trading) -> Vec<Value> {
    let (status, body) = t.get("/api/pending-entries").await;
    assert_eq!(status, 200, "{body}");
    body["pending"].as_array().unwrap().clone()
}

async fn signal_status(t: &Trading, symbol: &str) -> String {
    let (_, body) = t.get("/api/signal/list").await;
    let signal = body["signals"].as_array().unwrap().iter().find(|s| s["symbol"] == symbol);
    signal.map_or("gone".into(), |s| s["status"].as_str().unwrap().to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn get_scheduler_lists_every_job_with_next_runs_from_the_clock() {
    let t = Trading::start_with("[market]\ntimezone = \"Europe/Berlin\"\n").await;
    assert_eq!(t.rig.now(), at("2026-03-02T08:00:00Z"));
    let body = scheduler(&t).await;
    assert_eq!(body["enabled"], true);
    assert_eq!(body["polling"], false, "the rig drives the scheduler with tick: {body}");
    assert_eq!(body["timezone"], "Europe/Berlin");
    assert_eq!(body["now"], "2026-03-02T08:00:00Z");
    let jobs = body["jobs"].as_array().unwrap();
    let rows: Vec<(&str, &str, bool, Option<&str>)> = jobs
        .iter()
        .map(|j| {
            (
                j["name"].as_str().unwrap(),
                j["schedule"]["cron"].as_str().unwrap(),
                j["enabled"].as_bool().unwrap(),
                j["next_run"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("trailing_stop", "* * * * *", true, Some("2026-03-02T08:01:00Z")),
            ("drawdown_check", "* * * * *", true, Some("2026-03-02T08:01:00Z")),
            ("pending_entries_check", "* * * * *", true, Some("2026-03-02T08:01:00Z")),
            ("reconciliation", "* * * * *", true, Some("2026-03-02T08:01:00Z")),
            // 21:00 in Berlin is 20:00 UTC in March (UTC+1).
            ("daily_pnl", "0 21 * * *", true, Some("2026-03-02T20:00:00Z")),
            ("health_check", "0 * * * *", true, Some("2026-03-02T09:00:00Z")),
            ("signal_cleanup", "*/5 * * * *", true, Some("2026-03-02T08:05:00Z")),
            ("pump_scan", "*/5 * * * *", false, None),
            ("pump_outcomes", "30 * * * *", true, Some("2026-03-02T08:30:00Z")),
        ]
    );
    for j in jobs {
        assert_eq!(j["schedule"]["timezone"], "Europe/Berlin", "{j}");
        assert!(j["schedule"]["human"].as_str().is_some_and(|h| !h.is_empty()), "{j}");
        assert_eq!((j["running"].as_bool(), j["runs"].as_u64()), (Some(false), Some(0)), "{j}");
        assert!(j["last_run"].is_null() && j["last_result"].is_null(), "{j}");
        assert!(j.get("last_error").is_none(), "{j}");
    }
    assert_eq!(jobs[4]["schedule"]["human"], "daily at 21:00");

    // The next runs move with the clock, and only a due job runs.
    t.rig.clock.advance(Duration::seconds(59));
    assert!(tick(&t).await.is_empty(), "nothing is due before 08:01");
    t.rig.clock.advance(Duration::seconds(1));
    let ran = tick(&t).await;
    assert_eq!(ran, ["trailing_stop", "drawdown_check", "pending_entries_check", "reconciliation"]);
    let trailing = job(&t, "trailing_stop").await;
    assert_eq!(trailing["last_run"], "2026-03-02T08:01:00Z");
    assert_eq!(trailing["next_run"], "2026-03-02T08:02:00Z");
    assert_eq!(trailing["runs"], 1);
    assert_eq!(job(&t, "signal_cleanup").await["next_run"], "2026-03-02T08:05:00Z");
    let drawdown = job(&t, "drawdown_check").await;
    assert_eq!(drawdown["last_status"], "ok", "{drawdown}");
    assert!(drawdown["last_result"].as_str().unwrap().starts_with("drawdown 0.00%"), "{drawdown}");

    // Reading it needs no license.
    let unlicensed = t.rig.new_host().await;
    let (status, body) = unlicensed.get("/api/scheduler").await;
    assert_eq!(status, 200, "{body}");
    unlicensed.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pending_entries_job_protects_a_filled_entry_when_the_clock_passes_its_minute() {
    let t = Trading::start().await;
    let (status, placed) = t.post_empty(BUY_2950).await;
    assert_eq!(status, 200, "{placed}");
    assert_eq!(placed["status"], "NEW");
    t.set_price("ETHUSDT", "2940");
    assert_eq!(t.orders_of("LIMIT", "BUY")[0]["status"], "FILLED");

    t.rig.clock.advance(Duration::seconds(30));
    assert!(tick(&t).await.is_empty());
    assert_eq!(pending_entries(&t).await.len(), 1, "not checked before its minute");
    assert!(t.orders_of("LIMIT_MAKER", "SELL").is_empty());

    t.rig.clock.advance(Duration::seconds(30));
    assert!(tick(&t).await.contains(&"pending_entries_check"));
    assert!(pending_entries(&t).await.is_empty());
    let trades = t.open_trades().await;
    assert_eq!(trades.len(), 1);
    assert_eq!(
        (trades[0]["source"].as_str(), trades[0]["protection"].as_str()),
        (Some("manual"), Some("protected"))
    );
    assert_eq!(t.orders_of("LIMIT_MAKER", "SELL").len(), 1, "the OCO, placed by the job");
    assert_eq!(t.orders_of("STOP_LOSS_LIMIT", "SELL").len(), 1);
    t.message_containing("LIMIT entry filled").await;

    let entry_job = job(&t, "pending_entries_check").await;
    assert_eq!(entry_job["last_status"], "ok", "{entry_job}");
    assert!(entry_job["last_result"].as_str().unwrap().contains("1 filled"), "{entry_job}");
    let (_, state) = t.get("/api/state").await;
    assert!(
        state["log"].as_array().unwrap().iter().any(|e| e["agent"] == "finance"
            && e["action"].as_str().unwrap().contains("scheduler pending_entries_check")),
        "a run that settled something is in the activity log: {state}"
    );

    t.rig.clock.advance(Duration::minutes(1));
    assert!(tick(&t).await.contains(&"pending_entries_check"));
    assert_eq!(t.orders_of("LIMIT_MAKER", "SELL").len(), 1, "one OCO, never two");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pending_entries_job_cancels_an_entry_whose_ttl_elapsed_once_after_a_clock_jump() {
    let t = Trading::start().await;
    let (status, placed) = t.post_empty(&format!("{BUY_2950}&ttl_hours=1")).await;
    assert_eq!(status, 200, "{placed}");
    t.rig.advance_minutes(59);
    tick(&t).await;
    assert_eq!(pending_entries(&t).await.len(), 1, "59 minutes: still waiting");
    // The clock jumps 3 hours: the job runs once, not 180 times, and keeps its rhythm.
    t.rig.advance_hours(3);
    assert!(tick(&t).await.contains(&"pending_entries_check"));
    assert!(pending_entries(&t).await.is_empty());
    assert_eq!(t.orders_of("LIMIT", "BUY")[0]["status"], "CANCELED");
    let entry_job = job(&t, "pending_entries_check").await;
    assert_eq!(entry_job["runs"], 2);
    assert_eq!(entry_job["next_run"], "2026-03-02T12:00:00Z");
    t.message_containing("expired and cancelled").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_trailing_job_raises_the_stop_of_a_profitable_trade_at_the_next_minute() {
    let t = Trading::start().await;
    t.buy("ETHUSDT").await;
    let open_stops = |t: &Trading| -> Vec<f64> {
        t.orders_of("STOP_LOSS_LIMIT", "SELL")
            .into_iter()
            .filter(|o| o["status"] == "NEW")
            .map(|o| o["stopPrice"].as_str().unwrap().parse().unwrap())
            .collect()
    };
    let first = open_stops(&t);
    assert!(first.len() == 1 && first[0] < 2950.0, "2 % below the entry: {first:?}");

    t.set_price("ETHUSDT", "3100");
    t.rig.clock.advance(Duration::seconds(59));
    assert!(tick(&t).await.is_empty());
    assert_eq!(open_stops(&t), first, "not before the minute");

    t.rig.clock.advance(Duration::seconds(1));
    assert!(tick(&t).await.contains(&"trailing_stop"));
    assert_eq!(open_stops(&t), [3069.0], "one OCO, its stop 1 % below 3100");
    let trailing = job(&t, "trailing_stop").await;
    assert_eq!(trailing["last_status"], "ok", "{trailing}");
    assert_eq!(trailing["last_result"], "trailing: 1 stops moved, 0 gaps");
    t.message_containing("Trailing stop").await;

    // The next minute finds nothing to raise.
    t.rig.clock.advance(Duration::minutes(1));
    tick(&t).await;
    assert_eq!(job(&t, "trailing_stop").await["last_result"], "trailing: 0 stops moved, 0 gaps");
    assert_eq!(open_stops(&t).len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn signal_cleanup_expires_a_pending_signal_older_than_5_minutes() {
    let t = Trading::start().await;
    t.rig.clock.advance(Duration::seconds(30));
    t.create_signal(good_signal("ETHUSDT")).await;
    t.rig.clock.set(at("2026-03-02T08:05:00Z"));
    assert!(tick(&t).await.contains(&"signal_cleanup"));
    assert_eq!(signal_status(&t, "ETHUSDT").await, "pending", "4.5 minutes old");
    assert_eq!(job(&t, "signal_cleanup").await["last_result"], "signals: 0 expired, 0 deleted");

    t.rig.clock.set(at("2026-03-02T08:10:00Z"));
    assert!(tick(&t).await.contains(&"signal_cleanup"));
    assert_eq!(signal_status(&t, "ETHUSDT").await, "expired");
    assert_eq!(job(&t, "signal_cleanup").await["last_result"], "signals: 1 expired, 0 deleted");
    let (status, body) = t.confirm("ETHUSDT").await;
    assert_eq!((status, body["error"].as_str()), (409, Some("signal_not_pending")), "{body}");
    assert!(t.orders().is_empty(), "nothing was placed");

    // Expired for 30 minutes: deleted by a later run.
    t.rig.clock.set(at("2026-03-02T08:45:00Z"));
    tick(&t).await;
    assert_eq!(signal_status(&t, "ETHUSDT").await, "gone");
}

fn daily_reports(t: &Trading) -> Vec<String> {
    t.messenger
        .sent()
        .into_iter()
        .map(|m| m.text)
        .filter(|text| text.contains("Daily PnL"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_daily_report_runs_at_21_in_the_configured_zone_and_not_before() {
    let t = Trading::start_with("[market]\ntimezone = \"Asia/Tokyo\"\n").await;
    // 21:00 in Tokyo (UTC+9, no daylight saving) is 12:00 UTC.
    assert_eq!(job(&t, "daily_pnl").await["next_run"], "2026-03-02T12:00:00Z");
    t.rig.clock.set(at("2026-03-02T11:59:00Z"));
    assert!(!tick(&t).await.contains(&"daily_pnl"), "20:59 in Tokyo");
    assert!(job(&t, "daily_pnl").await["last_run"].is_null());
    assert!(daily_reports(&t).is_empty());

    t.rig.clock.set(at("2026-03-02T12:00:00Z"));
    assert!(tick(&t).await.contains(&"daily_pnl"));
    let sent = daily_reports(&t);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].contains("Daily PnL 2026-03-02") && sent[0].contains("Asia/Tokyo"), "{sent:?}");
    let report = job(&t, "daily_pnl").await;
    assert_eq!(report["last_run"], "2026-03-02T12:00:00Z");
    assert_eq!(report["next_run"], "2026-03-03T12:00:00Z");
    assert_eq!((report["runs"].as_u64(), report["last_status"].as_str()), (Some(1), Some("ok")));
    assert!(report["last_result"].as_str().unwrap().starts_with("daily report 2026-03-02 sent"));

    t.rig.clock.set(at("2026-03-02T12:00:30Z"));
    assert!(!tick(&t).await.contains(&"daily_pnl"), "once a day");
    t.rig.clock.set(at("2026-03-03T11:59:59Z"));
    assert!(!tick(&t).await.contains(&"daily_pnl"));
    assert_eq!(daily_reports(&t).len(), 1);
    t.rig.clock.set(at("2026-03-03T12:00:00Z"));
    assert!(tick(&t).await.contains(&"daily_pnl"), "and again the next day");
    let sent = daily_reports(&t);
    assert_eq!(sent.len(), 2);
    assert!(sent[1].contains("Daily PnL 2026-03-03"), "{sent:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn jobs_switched_off_do_not_run() {
    let t =
        Trading::start_with("[scheduler]\npending_entries_check = false\nsignal_cleanup = false\n")
            .await;
    let (status, _) = t.post_empty(BUY_2950).await;
    assert_eq!(status, 200);
    t.set_price("ETHUSDT", "2940");
    t.create_signal(good_signal("SOLUSDT")).await;
    for name in ["pending_entries_check", "signal_cleanup"] {
        let off = job(&t, name).await;
        assert_eq!((off["enabled"].as_bool(), off["next_run"].as_str()), (Some(false), None));
    }

    t.rig.advance_minutes(10);
    let ran = tick(&t).await;
    assert!(!ran.contains(&"pending_entries_check") && !ran.contains(&"signal_cleanup"), "{ran:?}");
    assert!(ran.contains(&"trailing_stop"), "the other jobs run: {ran:?}");
    assert_eq!(pending_entries(&t).await.len(), 1, "nobody checked the entry");
    assert!(t.orders_of("LIMIT_MAKER", "SELL").is_empty());
    assert_eq!(signal_status(&t, "SOLUSDT").await, "pending", "nobody cleaned up");
    assert_eq!(job(&t, "signal_cleanup").await["runs"], 0);

    // An agent drives the same work through the routes instead.
    let (status, report) = t.get("/api/pending-entries/check").await;
    assert_eq!(status, 200, "{report}");
    assert_eq!(report["filled"].as_array().unwrap().len(), 1, "{report}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_master_switch_turns_every_job_off() {
    let t = Trading::start_with("[scheduler]\nenabled = false\n").await;
    let body = scheduler(&t).await;
    assert_eq!((body["enabled"].as_bool(), body["polling"].as_bool()), (Some(false), Some(false)));
    assert!(body["jobs"].as_array().unwrap().iter().all(|j| j["enabled"] == false), "{body}");
    t.rig.advance_hours(24);
    assert!(tick(&t).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_pump_scan_is_skipped_while_no_pump_momentum_plugin_is_loaded() {
    let t = Trading::start_with("[scheduler]\npump_scan = true\n").await;
    let pump = job(&t, "pump_scan").await;
    assert_eq!((pump["enabled"].as_bool(), pump["runner"].as_str()), (Some(true), Some("scout")));
    t.rig.advance_minutes(5);
    assert!(tick(&t).await.contains(&"pump_scan"));
    let pump = job(&t, "pump_scan").await;
    assert_eq!(pump["last_status"], "skipped", "{pump}");
    assert_eq!(pump["last_result"], "skipped: no pump_momentum plugin loaded");
    assert!(pump.get("last_error").is_none(), "a skip is not a failure: {pump}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_is_not_started_again_while_its_previous_run_is_still_going() {
    let t = Trading::start().await;
    let (status, _) = t.post_empty(BUY_2950).await;
    assert_eq!(status, 200);
    t.set_price("ETHUSDT", "2940");
    // The OCO the check places hangs 800 ms at the exchange (only it: the other jobs due at
    // the same minute talk to the exchange too).
    t.fault(FaultKind::Delay { ms: 800, before: true }, 1, Some("/api/v3/orderList/oco"));
    let state = &t.host.app.state;

    t.rig.advance_minutes(1);
    let first = state.scheduler.start_due(state);
    assert!(first.iter().any(|(name, _)| *name == "pending_entries_check"));
    t.rig.advance_minutes(1);
    let second = state.scheduler.start_due(state);
    let names: Vec<&str> = second.iter().map(|(name, _)| *name).collect();
    assert!(!names.contains(&"pending_entries_check"), "{names:?}");
    let running = job(&t, "pending_entries_check").await;
    assert_eq!(running["running"], true, "{running}");
    assert_eq!(running["next_run"], "2026-03-02T08:03:00Z", "the overlapping time is skipped");

    for (_, task) in first.into_iter().chain(second) {
        task.await.unwrap();
    }
    let done = job(&t, "pending_entries_check").await;
    assert_eq!((done["running"].as_bool(), done["runs"].as_u64()), (Some(false), Some(1)));
    assert_eq!(t.orders_of("LIMIT_MAKER", "SELL").len(), 1, "one OCO");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_background_loop_runs_due_jobs_by_itself_and_stops_with_the_service() {
    let rig = crate::license_support::Rig::new().await;
    let dir = tempfile::tempdir().unwrap();
    let mut config = rig.config_with("", dir.path(), None);
    config.scheduler.poll_seconds = 1;
    let host = rig.start_config(config, dir).await;
    let (_, body) = host.get("/api/scheduler").await;
    assert_eq!(body["polling"], true, "{body}");

    rig.advance_minutes(5);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let (_, body) = host.get("/api/scheduler").await;
        let cleanup =
            body["jobs"].as_array().unwrap().iter().find(|j| j["name"] == "signal_cleanup");
        if cleanup.is_some_and(|j| j["runs"] == 1) {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the loop did not run the job: {body}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    // Stopping waits for the loop, so the store is released (the stop would fail otherwise).
    host.stop().await;
}
