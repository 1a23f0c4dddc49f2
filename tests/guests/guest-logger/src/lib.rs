//! Plugin test guest for logs, previews, state and the canary. Every scan logs a greeting and
//! one line per symbol with the SDK's `log!`, answers a skip per symbol and counts its scans in
//! its state (`scans`). Config:
//! - `greeting`: the first word of the greeting line; empty is a bad config;
//! - `flood`: log this many extra 100-byte lines (more than the host's per-call buffer holds);
//! - `refuse_prefix`: answer `missing-data` when a symbol starts with it (not when empty);
//! - `break_with`: read by the 2.x build only (`guest-logger-broken`), which fails on every
//!   scan: `panic`, `loop` (until the deadline) or `invalid` (a result for another bot).
use spotbot_sdk::*;

pub struct Guest;

const NAME: &str = "guest_logger";
const VERSION: &str = env!("CARGO_PKG_VERSION");

fn text<'a>(config: &'a serde_json::Value, key: &str) -> &'a str {
    config.get(key).and_then(serde_json::Value::as_str).unwrap_or_default()
}

impl Strategy for Guest {
    fn describe() -> Manifest {
        let mut m = Manifest::new(NAME, VERSION, PluginKind::Strategy, "logs what it sees")
            .with_candles("1h", 24);
        m.default_config =
            r#"{"greeting":"hello","flood":0,"refuse_prefix":"","break_with":"panic"}"#.into();
        m
    }

    fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let config: serde_json::Value = parse_config(&request.config)?;
        let greeting = text(&config, "greeting");
        if greeting.is_empty() {
            return Err(ScanError::BadConfig("greeting must not be empty".into()));
        }
        log!("{greeting} from {NAME} {VERSION}: {} symbols", request.symbols.len());
        if VERSION.starts_with("2.") {
            match text(&config, "break_with") {
                "loop" => loop {
                    std::hint::black_box(&request);
                },
                "invalid" => {
                    let results = request
                        .symbols
                        .iter()
                        .map(|s| ScanResult::new(&s.symbol, "someone_else", Direction::Skip, 1.0))
                        .collect();
                    return Ok(ScanResponse { results, alerts: vec![], state_updates: vec![] });
                }
                _ => panic!("{NAME} {VERSION} is broken on purpose"),
            }
        }
        let prefix = text(&config, "refuse_prefix");
        if let Some(s) =
            request.symbols.iter().find(|s| !prefix.is_empty() && s.symbol.starts_with(prefix))
        {
            return Err(ScanError::MissingData(format!("{} is refused by prefix", s.symbol)));
        }
        for s in &request.symbols {
            log!(
                "{}: last {} over {} candles",
                s.symbol,
                s.last_price,
                s.candles.first().map_or(0, |c| c.len())
            );
        }
        let flood = config.get("flood").and_then(serde_json::Value::as_u64).unwrap_or(0);
        for i in 0..flood {
            log!("flood {i:06} {}", "x".repeat(86));
        }
        let scans =
            state_value(&request.state, "scans").and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        let results = request
            .symbols
            .iter()
            .map(|s| ScanResult::new(&s.symbol, NAME, Direction::Skip, s.last_price))
            .collect();
        Ok(ScanResponse {
            results,
            alerts: Vec::new(),
            state_updates: vec![set_state("scans", (scans + 1).to_string())],
        })
    }
}

export_strategy!(Guest);
