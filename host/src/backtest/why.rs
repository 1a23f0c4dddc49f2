//! Why the plugin's results did not become trades, for the whole run and per symbol: the
//! plugin's skips by reason and by failing checklist line, the service's gates that refused
//! its buys, and the steps a symbol was not scanned because its market had no candle (closed).
//! A run without trades is a question ("is the strategy wrong, or the data?"): these counts
//! answer it in the summary, the JSON and the HTML.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::plugins::model::ScanResult;

/// The counts of one symbol, or of the whole run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NoTrade {
    /// Skip results by the reason's first part (the plugin's failing gate, e.g. `regime`).
    pub skips: BTreeMap<String, usize>,
    /// Checklist lines that failed in skip results, by name.
    pub failed_checks: BTreeMap<String, usize>,
    /// Buy results the service did not open, by its gate (`gates`, `trade_exists`,
    /// `daily_limit_reached`, `refused`, ...).
    pub service: BTreeMap<String, usize>,
    /// Steps at which the symbol was not scanned: its market had no candle then.
    pub market_closed: usize,
}

/// [`NoTrade`] for the whole run and per symbol.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct WhyNoTrade {
    pub run: NoTrade,
    pub by_symbol: BTreeMap<String, NoTrade>,
}

/// The key a skip's reason is counted under: its part before the first `:`, at most 60
/// characters (`regime: 4h ADX 38.2 >= 25` → `regime`).
pub fn reason_key(reason: &str) -> String {
    reason.split(':').next().unwrap_or(reason).trim().chars().take(60).collect()
}

/// Counts one more `key` (a key is copied only the first time: a year of steps counts the same
/// few keys hundreds of thousands of times).
fn add_one(counts: &mut BTreeMap<String, usize>, key: &str) {
    match counts.get_mut(key) {
        Some(n) => *n += 1,
        None => {
            counts.insert(key.to_string(), 1);
        }
    }
}

impl WhyNoTrade {
    fn both(&mut self, symbol: &str, count: impl Fn(&mut NoTrade)) {
        count(&mut self.run);
        match self.by_symbol.get_mut(symbol) {
            Some(counts) => count(counts),
            None => count(self.by_symbol.entry(symbol.to_string()).or_default()),
        }
    }

    /// Counts a skip result: its reason and every checklist line it failed.
    pub fn skip(&mut self, result: &ScanResult) {
        let key = reason_key(result.reason.as_deref().unwrap_or("skip"));
        self.both(&result.symbol, |n| {
            add_one(&mut n.skips, &key);
            for check in result.checklist.iter().filter(|c| !c.pass) {
                add_one(&mut n.failed_checks, &check.name);
            }
        });
    }

    /// Counts a buy result the service did not open, by the gate that refused it.
    pub fn refused(&mut self, symbol: &str, gate: &str) {
        self.both(symbol, |n| *n.service.entry(gate.to_string()).or_default() += 1);
    }

    /// Counts a step at which `symbol`'s market had no candle (not scanned).
    pub fn market_closed(&mut self, symbol: &str) {
        self.both(symbol, |n| n.market_closed += 1);
    }

    /// The summary's lines: the run, then each symbol when there are several.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!("why no trade: {}", self.run.describe())];
        if self.by_symbol.len() > 1 {
            for (symbol, counts) in &self.by_symbol {
                out.push(format!("  {symbol}: {}", counts.describe()));
            }
        }
        out
    }
}

impl NoTrade {
    /// One line: each kind of count, most frequent first.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        for (label, counts) in [
            ("skips", &self.skips),
            ("failed checks", &self.failed_checks),
            ("service gates", &self.service),
        ] {
            if !counts.is_empty() {
                parts.push(format!("{label} {}", most_first(counts)));
            }
        }
        if self.market_closed > 0 {
            parts.push(format!("market closed at {} steps", self.market_closed));
        }
        if parts.is_empty() { "nothing refused".to_string() } else { parts.join("; ") }
    }
}

/// `name count` pairs, most frequent first (ties by name).
pub fn most_first(counts: &BTreeMap<String, usize>) -> String {
    let mut sorted: Vec<(&String, &usize)> = counts.iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    sorted.iter().map(|(name, n)| format!("{name} {n}")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn skip(symbol: &str, reason: &str, failed: &[&str]) -> ScanResult {
        let checklist: Vec<_> = ["regime", "range", "touches"]
            .iter()
            .map(|name| json!({"name": name, "pass": !failed.contains(name), "detail": ""}))
            .collect();
        serde_json::from_value(json!({
            "symbol": symbol, "bot": "probe", "direction": "skip", "price": 1.0,
            "checklist": checklist, "passed": 3 - failed.len(), "total": 3, "ask_coo": true,
            "sl_pct": 0.0, "tp_pct": 0.0, "reason": reason,
        }))
        .unwrap()
    }

    #[test]
    fn skips_are_counted_by_reason_and_failed_line_per_symbol_and_for_the_run() {
        let mut why = WhyNoTrade::default();
        why.skip(&skip("AUSDT", "regime: 4h ADX 38.2 >= 25", &["regime"]));
        why.skip(&skip("AUSDT", "range: 2 touches", &["range", "touches"]));
        why.skip(&skip("BUSDT", "regime: trend", &["regime"]));
        why.refused("BUSDT", "trade_exists");
        why.market_closed("AUSDT");
        assert_eq!(why.run.skips, BTreeMap::from([("regime".into(), 2), ("range".into(), 1)]));
        assert_eq!(why.run.failed_checks["regime"], 2);
        assert_eq!(why.by_symbol["AUSDT"].failed_checks["touches"], 1);
        assert_eq!(why.by_symbol["BUSDT"].service["trade_exists"], 1);
        assert_eq!((why.run.market_closed, why.by_symbol["BUSDT"].market_closed), (1, 0));
        let lines = why.lines();
        assert_eq!(
            lines[0],
            "why no trade: skips regime 2, range 1; failed checks regime 2, range 1, touches 1; \
             service gates trade_exists 1; market closed at 1 steps"
        );
        assert!(lines[1].starts_with("  AUSDT: skips range 1, regime 1"), "{lines:?}");
    }
}
