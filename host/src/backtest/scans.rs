//! The plugin's scans of a replay, run ahead of it on a thread of their own, so that the
//! second core scans step `t + 1` while the replay executes step `t`.
//!
//! Nothing a scan reads depends on what execution does: its market data is the history at the
//! scan's own time (each scan sets a clock of the plugins area's own to its step), its config
//! is fixed for the run, and the only thing one scan passes to the next is the plugin's state,
//! which the scans update in step order here exactly as they would one after the other. So
//! every scan gets the request it would get serially, and the replay consumes the outcomes in
//! step order: the trades do not change, only the time does. What stays serial is the replay
//! itself (one account: each entry's size depends on the balance the previous ones left).
//!
//! The thread calls the plugin itself ([`Plugins::scan_on_this_thread`]) and hands the
//! outcomes over in batches of [`BATCH`] steps: a hand-over per step would wake one thread or
//! the other at every step, and on two cores each wake-up is a context switch.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc;

use super::history::History;
use crate::clock::TestClock;
use crate::market::Timeframe;
use crate::plugins::{PluginError, Plugins, ScanOutcome};

/// Steps per hand-over.
const BATCH: usize = 32;

/// Batches the scans may run ahead of the replay (bounds the outcomes held).
const AHEAD: usize = 8;

/// The scan of one step.
pub struct StepScan {
    pub t: i64,
    /// Traded symbols with no candle opening at `t`: their market is closed, nothing scans.
    pub closed: Vec<String>,
    /// `None` when no symbol's market is open at `t`.
    pub outcome: Option<Result<ScanOutcome, PluginError>>,
    /// Seconds the scan took (market data and the plugin call).
    pub seconds: f64,
}

/// The scans in flight; dropping it stops them (after the batch being scanned).
pub struct ScansAhead {
    batches: mpsc::Receiver<Vec<StepScan>>,
    ready: VecDeque<StepScan>,
}

/// What the scans need.
pub struct ScanPlan {
    pub plugins: Plugins,
    /// The plugins area's clock (not the replay's).
    pub clock: TestClock,
    pub name: String,
    pub symbols: Vec<String>,
    pub history: Arc<History>,
    pub finest: Timeframe,
    /// The steps to scan, in order.
    pub steps: Vec<i64>,
}

impl ScansAhead {
    /// Starts the scans' thread (inside a tokio runtime, whose handle it uses).
    pub fn start(plan: ScanPlan) -> std::io::Result<Self> {
        let (send, batches) = mpsc::channel(AHEAD);
        let runtime = tokio::runtime::Handle::current();
        std::thread::Builder::new()
            .name("backtest-scans".into())
            .spawn(move || runtime.block_on(scan_all(plan, send)))?;
        Ok(Self { batches, ready: VecDeque::new() })
    }

    /// The scan of the next step (`None` once every step was handed out).
    pub async fn next(&mut self) -> Option<StepScan> {
        if self.ready.is_empty() {
            self.ready = self.batches.recv().await?.into();
        }
        self.ready.pop_front()
    }
}

/// Scans every step of `plan` in order, sending the outcomes in batches; stops when the
/// replay is gone.
async fn scan_all(plan: ScanPlan, send: mpsc::Sender<Vec<StepScan>>) {
    let mut batch = Vec::with_capacity(BATCH);
    for t in plan.steps.iter().copied() {
        let (open, closed): (Vec<String>, Vec<String>) =
            plan.symbols.iter().cloned().partition(|symbol| {
                let candles = plan.history.get(symbol, plan.finest);
                candles.is_some_and(|c| c.open_time.binary_search(&t).is_ok())
            });
        let started = Instant::now();
        let outcome = if open.is_empty() {
            None
        } else {
            plan.clock.set(chrono::DateTime::from_timestamp_millis(t).unwrap_or_default());
            Some(plan.plugins.scan_on_this_thread(&plan.name, Some(open)).await)
        };
        let seconds = started.elapsed().as_secs_f64();
        batch.push(StepScan { t, closed, outcome, seconds });
        if batch.len() == BATCH && send.send(std::mem::take(&mut batch)).await.is_err() {
            return;
        }
    }
    if !batch.is_empty() {
        let _ = send.send(batch).await;
    }
}
