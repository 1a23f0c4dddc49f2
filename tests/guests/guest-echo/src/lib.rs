//! Sandbox test guest that behaves: one result per symbol whose `reason` is a JSON echo of
//! what the host sent (config, now, candle counts, state), and a `scans` counter in its
//! persisted state; config `spin` keeps it busy. `guest-echo-next` compiles this same file with another version.
use spotbot_sdk::*;

pub struct Guest;

impl Strategy for Guest {
    fn describe() -> Manifest {
        let mut m =
            Manifest::new("guest_echo", env!("CARGO_PKG_VERSION"), PluginKind::Strategy, "echo")
                .with_candles("1h", 24)
                .with_candles("4h", 6);
        m.default_config = r#"{"greeting":"hello","threshold":1,"spin":0}"#.to_string();
        m
    }

    fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let scans =
            state_value(&request.state, "scans").and_then(|v| v.parse::<u64>().ok()).unwrap_or(0)
                + 1;
        let config: serde_json::Value = parse_config(&request.config)?;
        // `spin`: burn this many iterations first, so tests can keep a scan in flight (not in
        // the host's canary at load, whose synthetic symbols are CANARY1USDT...).
        let spin = config.get("spin").and_then(serde_json::Value::as_u64).unwrap_or(0);
        let canary = request.symbols.iter().all(|s| s.symbol.starts_with("CANARY"));
        let spin = if canary { 0 } else { spin };
        let mut x = 0u64;
        for i in 0..spin {
            x = std::hint::black_box(x.wrapping_add(i));
        }
        let results = request
            .symbols
            .iter()
            .map(|s| {
                let echo = serde_json::json!({
                    "version": env!("CARGO_PKG_VERSION"),
                    "config": config,
                    "now_ms": request.now_ms,
                    "scans": scans,
                    "candles": s.candles.iter().map(|c| (c.timeframe.clone(), c.len())).collect::<Vec<_>>(),
                    "state_keys": request.state.iter().map(|e| e.key.clone()).collect::<Vec<_>>(),
                    "reference": request.reference.as_ref().map(|r| r.symbol.clone()),
                });
                let mut r = ScanResult::new(&s.symbol, "guest_echo", Direction::Skip, s.last_price);
                r.reason = Some(echo.to_string());
                r
            })
            .collect();
        Ok(ScanResponse {
            results,
            alerts: Vec::new(),
            state_updates: vec![set_state("scans", scans.to_string())],
        })
    }
}

export_strategy!(Guest);
