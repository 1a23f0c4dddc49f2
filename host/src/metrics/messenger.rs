//! Messages to the boss by outcome, counted once per message (a long text split into several
//! Bot API messages is one), after the messenger's own retries: a failure here is a message
//! the boss did not get.

use metrics::{Label, Recorder};

use super::Metrics;
use crate::messenger::MessengerError;

const MESSAGES: &str = "spotbot_messenger_messages_total";

pub(super) fn describe(recorder: &impl Recorder) {
    recorder.describe_counter(
        MESSAGES.into(),
        None,
        "Messages to the boss, by outcome (sent, refused, unreachable, not_configured)".into(),
    );
}

pub(super) fn record(metrics: &Metrics, outcome: Result<(), &MessengerError>) {
    let outcome = match outcome {
        Ok(()) => "sent",
        Err(MessengerError::Api { .. }) => "refused",
        Err(MessengerError::Transport(_)) => "unreachable",
        Err(MessengerError::NotConfigured) => "not_configured",
    };
    metrics.counter(MESSAGES, vec![Label::from_static_parts("outcome", outcome)]).increment(1);
}
