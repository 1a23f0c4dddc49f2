//! Orders sent to the exchange by exchange, purpose (the journal's kind) and outcome: the
//! rate of rejects, and of sends whose outcome is unknown, is what an operator alerts on.

use metrics::{Label, Recorder};

use super::Metrics;
use crate::execution::journal::{OrderKind, Outcome};

const ORDERS: &str = "spotbot_orders_total";

pub(super) fn describe(recorder: &impl Recorder) {
    recorder.describe_counter(
        ORDERS.into(),
        None,
        "Orders sent to the exchange, by exchange, purpose (entry, oco, take_profit, exit) and \
         outcome (placed, rejected, unknown)"
            .into(),
    );
}

pub(super) fn record(
    metrics: &Metrics,
    exchange: &'static str,
    kind: OrderKind,
    outcome: Result<(), &Outcome>,
) {
    let labels = vec![
        Label::from_static_parts("exchange", exchange),
        Label::from_static_parts("purpose", purpose(kind)),
        Label::from_static_parts("outcome", result(outcome)),
    ];
    metrics.counter(ORDERS, labels).increment(1);
}

fn purpose(kind: OrderKind) -> &'static str {
    match kind {
        OrderKind::Entry => "entry",
        OrderKind::Oco => "oco",
        OrderKind::TakeProfit => "take_profit",
        OrderKind::WatchedStop => "watched_stop",
        OrderKind::Exit => "exit",
    }
}

fn result(outcome: Result<(), &Outcome>) -> &'static str {
    match outcome {
        Ok(()) | Err(Outcome::Placed { .. }) => "placed",
        Err(Outcome::Rejected { .. }) => "rejected",
        Err(Outcome::Sending | Outcome::Unknown { .. } | Outcome::Absent) => "unknown",
    }
}
