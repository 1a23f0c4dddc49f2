//! Messenger: reaches the boss through the messenger's Bot API (Telegram's wire format) —
//! approval requests, trade results, alerts and reports, all worded in [`templates`].
//!
//! Owns: sending (`sendMessage`), HTML escaping and splitting ([`html`]), retries on flood
//! control and server errors. Never: polls `getUpdates` or sets a webhook by default — the
//! agent platform is the one consumer of updates for the bot token, and the boss's replies
//! reach the service as confirm/reject calls from the coo agent; only the opt-in replies
//! loop (`signals::replies`) polls, for a token nothing else consumes. Never logs the bot
//! token or puts it in an error.

pub(crate) mod bot_api;
mod client;
pub mod html;
pub mod templates;

pub use client::Messenger;

/// One message as the templates build it. Longer texts are sent as several messages.
#[derive(Debug, Clone, PartialEq)]
pub struct Outgoing {
    /// Text in the Bot API's HTML parse mode; every dynamic value already escaped.
    pub html: String,
    /// One row of inline buttons under the (last) message; empty for none.
    pub buttons: Vec<Button>,
}

/// An inline button. A press reaches whoever polls the bot (the agent platform) as
/// `callback_data`, so the data carries the same words as the typed reply (`1-YES BTCUSDT`).
#[derive(Debug, Clone, PartialEq)]
pub struct Button {
    pub text: String,
    /// 1-64 bytes; checked before sending.
    pub callback_data: String,
}

/// What the messenger accepted: one id per message, in order (a long text is several).
#[derive(Debug, Clone, PartialEq)]
pub struct Sent {
    pub message_ids: Vec<i64>,
}

/// Why a message did not reach the boss. None of the texts contains the bot token.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MessengerError {
    /// MESSENGER_BOT_TOKEN or MESSENGER_CHAT_ID is not set (the API answers 503).
    #[error("messenger not configured: set MESSENGER_BOT_TOKEN and MESSENGER_CHAT_ID")]
    NotConfigured,
    /// The messenger answered `ok: false` (the API answers 502).
    #[error("messenger refused the message ({code}): {description}")]
    Api { code: i64, description: String },
    /// No usable answer after the retries: connection, timeout, not a Bot API answer (502).
    #[error("messenger unreachable: {0}")]
    Transport(String),
}

/// The `outcome` label of `spotbot_messenger_messages_total` for a message the boss did not
/// get.
impl crate::metrics::MetricLabel for MessengerError {
    fn metric_label(&self) -> &'static str {
        match self {
            MessengerError::Api { .. } => "refused",
            MessengerError::Transport(_) => "unreachable",
            MessengerError::NotConfigured => "not_configured",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::MetricLabel;

    #[test]
    fn an_undelivered_message_is_counted_by_why() {
        let refused = MessengerError::Api { code: 400, description: "bad".into() };
        assert_eq!(refused.metric_label(), "refused");
        assert_eq!(MessengerError::Transport("down".into()).metric_label(), "unreachable");
        assert_eq!(MessengerError::NotConfigured.metric_label(), "not_configured");
    }
}
