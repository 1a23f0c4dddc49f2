//! Orders sent to the exchange by exchange, purpose (the journal's kind) and outcome: the
//! rate of rejects, and of sends whose outcome is unknown, is what an operator alerts on.

use metrics::{Label, Recorder};

use super::{MetricLabel, Metrics};

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

/// Counts one order: `kind` names its purpose (`entry`, `oco`, ...), a failed send's outcome
/// names itself (`rejected`, `unknown`, or `placed` when the exchange had it after all).
pub(super) fn record(
    metrics: &Metrics,
    exchange: &'static str,
    kind: impl MetricLabel,
    outcome: Result<(), &dyn MetricLabel>,
) {
    let outcome = outcome.err().map_or("placed", |e| e.metric_label());
    let labels = vec![
        Label::from_static_parts("exchange", exchange),
        Label::from_static_parts("purpose", kind.metric_label()),
        Label::from_static_parts("outcome", outcome),
    ];
    metrics.counter(ORDERS, labels).increment(1);
}
