//! Messages to the boss by outcome, counted once per message (a long text split into several
//! Bot API messages is one), after the messenger's own retries: a failure here is a message
//! the boss did not get.

use metrics::{Label, Recorder};

use super::{MetricLabel, Metrics};

const MESSAGES: &str = "spotbot_messenger_messages_total";

pub(super) fn describe(recorder: &impl Recorder) {
    recorder.describe_counter(
        MESSAGES.into(),
        None,
        "Messages to the boss, by outcome (sent, refused, unreachable, not_configured)".into(),
    );
}

pub(super) fn record(metrics: &Metrics, outcome: Result<(), &dyn MetricLabel>) {
    let outcome = outcome.err().map_or("sent", |e| e.metric_label());
    metrics.counter(MESSAGES, vec![Label::from_static_parts("outcome", outcome)]).increment(1);
}
