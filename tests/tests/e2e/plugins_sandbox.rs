//! The plugin sandbox over real HTTP: every misbehaving guest fails only its own scan, with a
//! clear error and within the deadline, while `/api/health` keeps answering and the other
//! plugins keep scanning. Broken or incompatible files are refused with a clear status.

use std::time::Duration;

use crate::plugin_support::{PluginHost, deploy, wasm};
use serde_json::Value;

const LIMITS: &str =
    "scan_timeout_ms = 300\nmemory_mib = 32\nmax_result_kib = 256\nmax_stack_kib = 256\n";

fn files() -> Vec<(&'static str, &'static str)> {
    vec![
        ("template.wasm", "strategy-template"),
        ("echo.wasm", "guest-echo"),
        ("loop.wasm", "guest-loop"),
        ("memory.wasm", "guest-memory"),
        ("panic.wasm", "guest-panic"),
        ("oversized.wasm", "guest-oversized"),
        ("stack.wasm", "guest-stack"),
    ]
}

async fn healthy_and_others_scan(h: &PluginHost) {
    let (status, body) = h.get("/api/health").await;
    assert_eq!((status, &body["ok"]), (200, &Value::Bool(true)), "{body}");
    let (status, body, _) = h.scan("template", Some(&["BTCUSDT", "ETHUSDT"])).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["results"].as_array().unwrap().len(), 2, "{body}");
    let (status, body, _) = h.scan("guest_echo", None).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn each_misbehaving_guest_fails_only_its_own_scan_within_the_deadline() {
    let h = PluginHost::start(&files(), LIMITS, "").await;
    let (_, list) = h.get("/api/strategies").await;
    for row in list["plugins"].as_array().unwrap() {
        assert_eq!(row["status"], "loaded", "{row}");
    }

    // (plugin, error code, words the detail must contain)
    let cases: &[(&str, &str, &[&str])] = &[
        ("guest_loop", "plugin_deadline_exceeded", &["deadline of 300 ms"]),
        ("guest_memory", "plugin_memory_exceeded", &["memory cap of 32 MiB"]),
        ("guest_panic", "plugin_trapped", &["gave up on purpose"]),
        ("guest_oversized", "plugin_result_too_large", &["cap of 262144"]),
        ("guest_stack", "plugin_stack_overflow", &["stack of 256 KiB"]),
    ];
    for (name, code, words) in cases {
        // The bad scan runs while health checks and other plugins' scans are made.
        let bad = {
            let h = &h;
            async move { h.scan(name, Some(&["BTCUSDT"])).await }
        };
        let ((status, body, elapsed), ()) = tokio::join!(bad, healthy_and_others_scan(&h));
        assert_eq!(status, 422, "{name}: {body}");
        assert_eq!(body["ok"], false, "{name}: {body}");
        assert_eq!(body["error"], *code, "{name}: {body}");
        let detail = body["detail"].as_str().unwrap();
        for w in *words {
            assert!(detail.contains(w), "{name}: {detail:?} lacks {w:?}");
        }
        // Fails within the deadline (300 ms) plus scheduling slack, never hangs.
        assert!(elapsed < Duration::from_millis(1_500), "{name} took {elapsed:?}");
    }
    // Several bad scans at once, next to good ones.
    let bad = futures_all(&h).await;
    for (status, body) in bad {
        assert_eq!(status, 422, "{body}");
    }
    healthy_and_others_scan(&h).await;
    // The failed plugins are still loaded and fail the same way again (fresh instance per call).
    let (status, body, _) = h.scan("guest_panic", None).await;
    assert_eq!((status, body["error"].as_str()), (422, Some("plugin_trapped")));
}

async fn futures_all(h: &PluginHost) -> Vec<(u16, Value)> {
    let (a, b, c, d) = tokio::join!(
        h.scan("guest_loop", None),
        h.scan("guest_memory", None),
        h.scan("guest_stack", None),
        h.scan("guest_panic", None),
    );
    [a, b, c, d].into_iter().map(|(s, b, _)| (s, b)).collect()
}

/// A plugin that hangs on the canary never serves, not even on a first load (where other
/// canary failures are tolerated): it would hold a call slot for its whole deadline on every
/// scan.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_that_hangs_on_its_canary_is_refused_on_a_first_load() {
    let h = PluginHost::start(
        &[("loop.wasm", "guest-loop")],
        LIMITS,
        "[strategy.guest_loop]\nhang_on_canary = true\n",
    )
    .await;
    let row = h.row("loop.wasm").await.unwrap();
    assert_eq!(row["status"], "failed", "{row}");
    let error = row["last_error"].as_str().unwrap();
    assert!(error.contains("deadline of 300 ms") && error.contains("CANARY1USDT"), "{error}");
    let (status, body, _) = h.scan("guest_loop", Some(&["BTCUSDT"])).await;
    assert_eq!((status, body["error"].as_str()), (404, Some("plugin_not_found")), "{body}");
}

/// One plugin's calls cannot hold up another's: eight scans of a plugin that hangs until its
/// deadline run at most two at a time (half of `max_concurrent_calls` = 4) and queue for
/// their own share, so a scan of another plugin answers while none of them has finished.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hanging_plugin_cannot_hold_up_another_plugins_scan() {
    let h = PluginHost::start(
        &[("loop.wasm", "guest-loop"), ("echo.wasm", "guest-echo")],
        "scan_timeout_ms = 1000\nmax_concurrent_calls = 4\n",
        "",
    )
    .await;
    let hanging_done = std::sync::atomic::AtomicUsize::new(0);
    let hanging = futures_util::future::join_all((0..8).map(|_| async {
        let answer = h.scan("guest_loop", Some(&["BTCUSDT"])).await;
        hanging_done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        answer
    }));
    let other = async {
        // Not a timing rule: only lets the eight requests reach the plugin area first, so the
        // scan below queues behind them if anything makes it.
        tokio::time::sleep(Duration::from_millis(200)).await;
        let answer = h.scan("guest_echo", Some(&["BTCUSDT"])).await;
        (answer, hanging_done.load(std::sync::atomic::Ordering::SeqCst))
    };
    let (hanging, ((status, body, _), finished_before)) = tokio::join!(hanging, other);
    assert_eq!(status, 200, "{body}");
    assert_eq!(finished_before, 0, "the other plugin's scan waited for the hanging ones");
    for (status, body, _) in hanging {
        assert_eq!((status, body["error"].as_str()), (422, Some("plugin_deadline_exceeded")));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_gets_no_file_environment_socket_clock_or_randomness() {
    let secret = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(secret.path(), "top secret").unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let section = format!(
        "[strategy.guest_capabilities]\nfile = {:?}\nenv = \"PATH\"\naddr = \"{}\"\n",
        secret.path().display().to_string(),
        listener.local_addr().unwrap()
    );
    assert!(std::env::var("PATH").is_ok(), "the host process has the variable");
    let h = PluginHost::start(&[("caps.wasm", "guest-capabilities")], LIMITS, &section).await;

    let (status, body, _) = h.scan("guest_capabilities", Some(&["BTCUSDT"])).await;
    assert_eq!(status, 422, "the guest reports success only if something escaped: {body}");
    assert_eq!(body["error"], "plugin_error", "{body}");
    let detail = body["detail"].as_str().unwrap().to_string();
    for attempt in ["file: ", "dir: ", "env: ", "socket: "] {
        assert!(detail.contains(attempt), "{detail}");
    }
    assert!(!detail.contains("top secret"), "{detail}");
    // The wall clock is frozen at the epoch and the monotonic clock does not move.
    assert!(detail.contains("clock_ms=0 elapsed_ns=0"), "{detail}");
    assert!(matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock));

    // "Randomness" is fixed: the same hash seed on every call.
    let (_, again, _) = h.scan("guest_capabilities", Some(&["BTCUSDT"])).await;
    let hash = |d: &str| d.rsplit("hash=").next().unwrap().to_string();
    assert_eq!(hash(&detail), hash(again["detail"].as_str().unwrap()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_incompatible_and_conflicting_files_are_refused_with_a_clear_status() {
    let h = PluginHost::start(
        &[
            ("echo.wasm", "guest-echo"),
            ("echo_dup.wasm", "guest-echo-next"),
            ("v2.wasm", "guest-v2"),
            ("describe_trap.wasm", "guest-describe-trap"),
        ],
        LIMITS,
        "",
    )
    .await;
    deploy(h.dir(), "garbage.wasm", b"\0asm\x01\0\0\0 this is not wasm");
    deploy(h.dir(), "text.wasm", b"hello");
    std::fs::write(h.dir().join("notes.txt"), "ignored").unwrap();
    let refused = |needle: &'static str| {
        move |row: Option<&Value>| {
            row.is_some_and(|r| {
                r["status"] == "failed"
                    && r["last_error"].as_str().is_some_and(|e| e.contains(needle))
            })
        }
    };
    let limit = Duration::from_secs(5);
    h.wait_for("garbage.wasm", limit, refused("not a valid WebAssembly component")).await;
    h.wait_for("text.wasm", limit, refused("no \\0asm header")).await;
    h.wait_for("v2.wasm", limit, refused("built for spotbot:strategy@2.0.0")).await;
    h.wait_for("describe_trap.wasm", limit, refused("describe() failed")).await;
    h.wait_for("echo_dup.wasm", limit, refused("already served by echo.wasm")).await;
    let (_, list) = h.get("/api/strategies").await;
    assert_eq!(list["plugins"].as_array().unwrap().len(), 6, "notes.txt is not a plugin: {list}");
    let echo = h.row("echo.wasm").await.unwrap();
    assert_eq!(
        (echo["status"].as_str(), echo["version"].as_str()),
        (Some("loaded"), Some("1.0.0"))
    );
    assert_eq!(echo["name"], "guest_echo");
    assert_eq!(echo["sha256"].as_str().unwrap().len(), 64);
    assert!(echo["loaded_at"].is_string());
    let (status, _, _) = h.scan("guest_echo", None).await;
    assert_eq!(status, 200);

    // Once echo.wasm is gone the name is free and the refused file is taken.
    std::fs::remove_file(h.dir().join("echo.wasm")).unwrap();
    h.wait_for("echo_dup.wasm", limit, |r| r.is_some_and(|r| r["status"] == "loaded")).await;
    let (_, body, _) = h.scan("guest_echo", None).await;
    assert_eq!(body["version"], "1.1.0", "{body}");

    let (status, body, _) = h.scan("no_such_plugin", None).await;
    assert_eq!((status, body["error"].as_str()), (404, Some("plugin_not_found")));
    // Scanning a refused file's would-be plugin is impossible.
    let (status, _, _) = h.scan("guest_describe_trap", None).await;
    assert_eq!(status, 404);
    assert!(wasm("guest-v2").starts_with(b"\0asm"));
}
