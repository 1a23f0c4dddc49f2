//! Test guest that stands in for `mr_combined` and asks not to wait for the boss: every
//! scanned symbol gets a buy with `ask_coo = false`, stop 2 %, target 5 %, and a checklist of
//! `total` lines of which `passed` pass (config), so tests drive the auto-confirm path and
//! its gates.

use serde::Deserialize;
use spotbot_sdk::*;

pub struct Guest;

/// `size_pct` and `max_trades_per_day` are read by the host (the test rig sets them).
#[derive(Deserialize)]
#[serde(default, deny_unknown_fields)]
struct Config {
    passed: u32,
    total: u32,
    #[allow(dead_code)]
    size_pct: f64,
    #[allow(dead_code)]
    max_trades_per_day: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config { passed: 10, total: 10, size_pct: 1.0, max_trades_per_day: 2 }
    }
}

impl Strategy for Guest {
    fn describe() -> Manifest {
        let mut m = Manifest::new(
            "mr_combined",
            env!("CARGO_PKG_VERSION"),
            PluginKind::Strategy,
            "buys everything without asking",
        )
        .with_candles("1h", 2);
        m.default_config =
            r#"{"passed":10,"total":10,"size_pct":1.0,"max_trades_per_day":2}"#.to_string();
        m
    }

    fn scan(request: ScanRequest) -> Result<ScanResponse, ScanError> {
        let config: Config = parse_config(&request.config)?;
        if config.passed > config.total {
            return Err(ScanError::BadConfig("passed: must be <= total".into()));
        }
        let results = request
            .symbols
            .iter()
            .map(|s| {
                let mut checklist = Checklist::new();
                for i in 0..config.total {
                    checklist.check(&format!("line_{i}"), i < config.passed, "");
                }
                let mut r = ScanResult::new(&s.symbol, "mr_combined", Direction::Buy, s.last_price)
                    .with_checklist(checklist);
                r.ask_coo = false;
                r.sl_pct = 2.0;
                r.tp_pct = 5.0;
                r
            })
            .collect();
        Ok(ScanResponse { results, alerts: vec![], state_updates: vec![] })
    }
}

export_strategy!(Guest);
