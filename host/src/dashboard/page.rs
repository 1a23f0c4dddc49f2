//! The dashboard page as one self-contained HTML document: the page, its script and style,
//! and the vendored chart library (uPlot, see `assets/vendor/VENDOR.md`) are compiled into
//! the binary and inlined once, so the page needs nothing but the service's JSON API — no
//! CDN, no second request, and it works on a machine without internet access.

use std::sync::LazyLock;

const PAGE: &str = include_str!("assets/page.html");
const STYLE: &str = include_str!("assets/page.css");
const CHARTS: &str = include_str!("assets/charts.js");
const SCRIPT: &str = include_str!("assets/page.js");
const HISTORY: &str = include_str!("assets/history.js");
const ACTIONS: &str = include_str!("assets/actions.js");
const CHART_STYLE: &str = include_str!("assets/vendor/uPlot.min.css");
const CHART_SCRIPT: &str = include_str!("assets/vendor/uPlot.iife.min.js");

/// Where `page.html` takes each part; every marker is present exactly once.
const PARTS: [(&str, &str); 7] = [
    ("/*CHART_STYLE*/", CHART_STYLE),
    ("/*STYLE*/", STYLE),
    ("/*CHART_SCRIPT*/", CHART_SCRIPT),
    ("/*CHARTS*/", CHARTS),
    ("/*SCRIPT*/", SCRIPT),
    ("/*HISTORY*/", HISTORY),
    ("/*ACTIONS*/", ACTIONS),
];

/// The assembled page.
pub fn html() -> &'static str {
    static HTML: LazyLock<String> = LazyLock::new(|| {
        PARTS.iter().fold(PAGE.to_string(), |page, (marker, part)| page.replacen(marker, part, 1))
    });
    &HTML
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    use super::*;

    #[test]
    fn every_part_is_inlined_once_and_nothing_is_loaded_from_elsewhere() {
        for (marker, _) in PARTS {
            assert_eq!(PAGE.matches(marker).count(), 1, "{marker} in page.html");
        }
        let page = html();
        assert!(page.contains("uPlot"));
        for external in ["src=\"http", "href=\"http", "src=\"//", "@import"] {
            assert!(!page.contains(external), "the page loads {external}…");
        }
    }

    #[test]
    fn the_vendored_files_are_the_ones_vendor_md_records() {
        let table = include_str!("assets/vendor/VENDOR.md");
        let files: [(&str, &[u8]); 3] = [
            ("uPlot.iife.min.js", CHART_SCRIPT.as_bytes()),
            ("uPlot.min.css", CHART_STYLE.as_bytes()),
            ("LICENSE", include_bytes!("assets/vendor/LICENSE")),
        ];
        for (name, bytes) in files {
            let digest = hex::encode(Sha256::digest(bytes));
            let row = format!("| {name} |");
            let line = table.lines().find(|l| l.starts_with(&row)).expect("a row per file");
            assert!(line.ends_with(&format!("| {digest} |")), "{name}: {digest} vs {line}");
        }
    }
}
