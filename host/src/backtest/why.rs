//! Why the plugin's results did not become trades, for the whole run and per symbol: the
//! plugin's skips by reason and by failing checklist line, the service's gates that refused
//! its buys, and the steps a symbol was not scanned because its market had no candle (closed).
//! A run without trades is a question ("is the strategy wrong, or the data?"): these counts
//! answer it in the summary, the JSON and the HTML.
//!
//! Reasons are counted by their **kind**, not their text: a plugin that writes numbers in its
//! reasons (`newest close 137.8800 vs 137.8800`) would otherwise make every skip a line of its
//! own. A kind is the reason's part before the first `:`, with every number written `#`
//! (`newest close # vs #`); one full reason is kept per kind as its example. Every count map
//! keeps at most [`MAX_KINDS`] kinds (later ones are counted under [`OTHER`]), and the summary
//! names the [`SHOWN_KINDS`] most frequent, so the report stays small whatever a plugin writes.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::plugins::model::ScanResult;

/// Kinds a count map keeps at most; the kinds seen after them are counted under [`OTHER`].
pub const MAX_KINDS: usize = 64;
/// The key of the kinds past [`MAX_KINDS`].
pub const OTHER: &str = "(other kinds)";
/// Kinds a summary line names; the rest are summed up as "and N more kinds".
pub const SHOWN_KINDS: usize = 8;
/// Characters of a kind at most.
const KIND_CHARS: usize = 60;

/// The counts of one symbol, or of the whole run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct NoTrade {
    /// Skip results by the kind of their reason ([`reason_key`]: the plugin's failing gate,
    /// e.g. `regime`, or the reason with its numbers as `#`).
    pub skips: BTreeMap<String, usize>,
    /// One full reason of each kind in `skips` (the first seen).
    pub skip_examples: BTreeMap<String, String>,
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

/// The kind a skip's reason is counted under: its part before the first `:`, every number in
/// it written `#`, white space collapsed, at most 60 characters (`regime: 4h ADX 38.2 >= 25`
/// → `regime`; `newest close 137.88 vs 137.9` → `newest close # vs #`).
pub fn reason_key(reason: &str) -> String {
    let head = reason.split(':').next().unwrap_or(reason);
    let mut kind = String::new();
    let mut in_number = false;
    let mut chars = head.trim().chars().peekable();
    while let Some(c) = chars.next() {
        // A point or comma between digits is part of the number (137.88, 1,000).
        let inner =
            in_number && (c == '.' || c == ',') && chars.peek().is_some_and(char::is_ascii_digit);
        if c.is_ascii_digit() || inner {
            if !in_number {
                kind.push('#');
                in_number = true;
            }
            continue;
        }
        in_number = false;
        if c.is_whitespace() {
            if !kind.ends_with(' ') {
                kind.push(' ');
            }
        } else {
            kind.push(c);
        }
    }
    kind.trim().chars().take(KIND_CHARS).collect()
}

/// Counts one more `key`, under [`OTHER`] when the map holds [`MAX_KINDS`] kinds already (a key
/// is copied only the first time: a year of steps counts the same few keys hundreds of
/// thousands of times). Answers the key it was counted under.
pub fn add_one<'a>(counts: &mut BTreeMap<String, usize>, key: &'a str) -> &'a str {
    if let Some(n) = counts.get_mut(key) {
        *n += 1;
        return key;
    }
    let key = if counts.len() >= MAX_KINDS && key != OTHER { OTHER } else { key };
    *counts.entry(key.to_string()).or_default() += 1;
    key
}

impl WhyNoTrade {
    fn both(&mut self, symbol: &str, count: impl Fn(&mut NoTrade)) {
        count(&mut self.run);
        match self.by_symbol.get_mut(symbol) {
            Some(counts) => count(counts),
            None => count(self.by_symbol.entry(symbol.to_string()).or_default()),
        }
    }

    /// Counts a skip result: its reason's kind (with an example) and every checklist line it
    /// failed.
    pub fn skip(&mut self, result: &ScanResult) {
        let reason = result.reason.as_deref().unwrap_or("skip");
        let key = reason_key(reason);
        self.both(&result.symbol, |n| {
            let counted = add_one(&mut n.skips, &key);
            if counted != OTHER && !n.skip_examples.contains_key(counted) {
                n.skip_examples.insert(counted.to_string(), reason.chars().take(200).collect());
            }
            for check in result.checklist.iter().filter(|c| !c.pass) {
                add_one(&mut n.failed_checks, &check.name);
            }
        });
    }

    /// Counts a buy result the service did not open, by the gate that refused it.
    pub fn refused(&mut self, symbol: &str, gate: &str) {
        self.both(symbol, |n| {
            add_one(&mut n.service, gate);
        });
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

/// `name count` pairs, most frequent first (ties by name), the first [`SHOWN_KINDS`], then
/// `and N more kinds (M times)` for the rest.
pub fn most_first(counts: &BTreeMap<String, usize>) -> String {
    let mut sorted: Vec<(&String, &usize)> = counts.iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    let mut shown: Vec<String> =
        sorted.iter().take(SHOWN_KINDS).map(|(name, n)| format!("{name} {n}")).collect();
    let rest = &sorted[sorted.len().min(SHOWN_KINDS)..];
    if !rest.is_empty() {
        let times: usize = rest.iter().map(|(_, n)| **n).sum();
        shown.push(format!("and {} more kinds ({times} times)", rest.len()));
    }
    shown.join(", ")
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
        assert_eq!(why.run.skip_examples["regime"], "regime: 4h ADX 38.2 >= 25");
    }

    #[test]
    fn numbers_in_reasons_make_one_kind_with_an_example() {
        assert_eq!(reason_key("newest close 137.8800 vs 137.8800"), "newest close # vs #");
        assert_eq!(reason_key("regime: 4h ADX 38.2 >= 25"), "regime");
        assert_eq!(reason_key("  rsi  -3.5 below\t30 "), "rsi -# below #");
        assert_eq!(
            reason_key("SMA(10) 101.2345 below SMA(30) 1,002.5, no cross"),
            "SMA(#) # below SMA(#) #, no cross"
        );
        let mut why = WhyNoTrade::default();
        for i in 0..1000 {
            why.skip(&skip("AUSDT", &format!("newest close {i}.5 vs {}.25", i + 1), &[]));
        }
        assert_eq!(why.run.skips, BTreeMap::from([("newest close # vs #".into(), 1000)]));
        assert_eq!(why.run.skip_examples["newest close # vs #"], "newest close 0.5 vs 1.25");
    }

    #[test]
    fn any_number_of_kinds_stays_bounded_and_the_line_short() {
        let mut why = WhyNoTrade::default();
        // 100 000 unique reasons with no numbers to take out: letters only.
        let word = |mut i: usize| {
            let mut w = String::new();
            for _ in 0..4 {
                w.push((b'a' + (i % 26) as u8) as char);
                i /= 26;
            }
            w
        };
        for i in 0..100_000 {
            why.skip(&skip("AUSDT", &format!("kind {}", word(i)), &[]));
        }
        assert_eq!(why.run.skips.len(), MAX_KINDS + 1, "64 kinds and the rest");
        assert_eq!(why.run.skips[OTHER], 100_000 - MAX_KINDS);
        assert!(why.run.skip_examples.len() <= MAX_KINDS);
        let json = serde_json::to_string(&why).unwrap();
        assert!(json.len() < 16_000, "{} bytes", json.len());
        let line = &why.lines()[0];
        assert!(line.len() < 400, "{line}");
        assert!(
            line.contains("(other kinds) 99936") && line.contains("and 57 more kinds"),
            "{line}"
        );
    }
}
