//! Benchmark (ignored in the suite; `cargo test -p spotbot-tests --test e2e
//! dashboard_first_paint -- --ignored --nocapture`): how long the dashboard takes to be usable
//! in headless Chromium on loopback with 20 open trades (a 24 h candle chart each) and a year of
//! equity series — from the navigation's start until the open trades, their charts, the
//! account tiles and the equity chart are drawn. Target: within 1 s (docs/benchmarks.md).

use std::time::Duration;

use rust_decimal::Decimal;
use spotbot_tests::browser::{Browser, INSTALL_HINT, chromium_path};

use crate::trading_support::Trading;

const SYMBOLS: [&str; 20] = [
    "BTC", "ETH", "BNB", "SOL", "XRP", "ADA", "DOGE", "AVAX", "LINK", "DOT", "LTC", "TRX", "ATOM",
    "NEAR", "APT", "ARB", "OP", "FIL", "INJ", "PEPE",
];

/// Milliseconds from the navigation's start until the page is usable, as the page measures it.
const USABLE: &str = "new Promise((resolve) => { const look = () => { \
    const rows = document.querySelectorAll('#trades tbody tr:not(.empty)').length; \
    const charts = document.querySelectorAll('#trade-charts canvas').length; \
    const equity = document.getElementById('s-equity').textContent !== '–'; \
    const series = document.getElementById('equity-range').textContent.includes('points'); \
    if (rows === 20 && charts === 20 && equity && series) resolve(performance.now()); \
    else requestAnimationFrame(look); }; look(); })";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "benchmark: run with --ignored --nocapture"]
async fn first_paint_with_20_open_trades_and_a_year_of_equity() {
    let t = Trading::start_with("").await;
    for (i, base) in SYMBOLS.iter().enumerate() {
        if i % 4 == 0 {
            assert_eq!(t.post_empty("/api/reset-daily").await.0, 200);
        }
        t.buy(&format!("{base}USDT")).await;
    }
    assert_eq!(t.open_trades().await.len(), 20);
    // A year of equity, a point a minute, stored as the scheduler would have (thinned to
    // hours after two weeks): written in one transaction through the series' own writer.
    let now = t.host.app.state.clock.now_ms();
    let store = &t.host.app.state.store;
    let year = 365 * 24 * 60;
    store
        .write(|w| {
            for minute in (0..=year).rev() {
                // Older than the minute tier only an hour's last point is kept anyway.
                if minute > 14 * 24 * 60 && minute % 60 != 0 {
                    continue;
                }
                let at = now - minute * 60_000;
                let equity = Decimal::from(10_000) + Decimal::from(minute % 500);
                spotbot::protection::equity_series::record(w, at, equity)?;
            }
            Ok(())
        })
        .unwrap();
    let kept = store
        .read(|r| spotbot::protection::equity_series::read(r, 0, now, usize::MAX))
        .unwrap()
        .len();
    let (_, week) = t.get("/api/equity?days=7&points=800").await;
    let served = week["points"].as_array().unwrap().len();
    eprintln!("equity series: {kept} points stored for the year, {served} served for 7 days");

    assert!(chromium_path().is_some(), "the benchmark needs Chromium: {INSTALL_HINT}");
    let browser = Browser::launch().await.expect("Chromium starts");
    let mut runs = Vec::new();
    for _ in 0..5 {
        browser.open(&t.host.url("/dashboard")).await.unwrap();
        let ms = browser.eval(USABLE).await.unwrap().as_f64().unwrap();
        runs.push(ms);
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    runs.sort_by(f64::total_cmp);
    eprintln!(
        "first paint, usable (ms from navigation start): runs {runs:?}, median {:.0}",
        runs[runs.len() / 2]
    );
    browser.close().await;
}
