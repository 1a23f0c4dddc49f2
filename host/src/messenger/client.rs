//! The Bot API client: `sendMessage` with splitting, bounded retries and the plain-text
//! fallback. It decides on the answer's `ok` field, not on the HTTP status alone.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};

use super::bot_api::{BotApi, CallError};
use super::{Button, MessengerError, Outgoing, Sent, html};
use crate::config::{MessengerConfig, Secrets};
use crate::metrics::{MetricLabel, Metrics};

/// Chunk size: under the Bot API's 4096 characters, with room for characters some clients
/// count twice (UTF-16) — the limit applies to the text after markup is removed, so counting
/// the markup too only adds margin.
const CHUNK_CHARS: usize = 4000;
/// Attempts per message, shared by flood control (429), server errors and transport errors.
const MAX_ATTEMPTS: u32 = 3;
/// A flood-control wait longer than this is reported instead of holding the caller (an API
/// request, a scheduled job) for minutes.
const MAX_RETRY_AFTER_S: u64 = 60;
/// Pause before retrying a server or transport error, times the attempt number.
const BACKOFF: Duration = Duration::from_millis(250);
const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Sends to the boss's chat. Cheap to clone; not configured without a token and a chat id.
#[derive(Clone)]
pub struct Messenger {
    inner: Option<Arc<Inner>>,
    /// Where every message is counted by outcome (`GET /metrics`), configured or not: a
    /// message nobody can receive is worth seeing.
    metrics: Metrics,
}

struct Inner {
    api: BotApi,
    chat_id: Value,
}

/// Shows whether it is configured, never the token.
impl std::fmt::Debug for Messenger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Messenger").field("configured", &self.is_configured()).finish()
    }
}

/// What one request came to.
enum Outcome {
    Sent(i64),
    /// Worth repeating: after `after`, or after the backoff when `None`.
    Retry {
        after: Option<Duration>,
        error: MessengerError,
    },
    /// The HTML was refused ("can't parse entities").
    BadMarkup(MessengerError),
    Failed(MessengerError),
}

impl Messenger {
    /// Configured only when both MESSENGER_BOT_TOKEN and MESSENGER_CHAT_ID are set. Messages
    /// are counted in `metrics`.
    pub fn new(config: &MessengerConfig, secrets: &Secrets, metrics: Metrics) -> Messenger {
        let (Some(token), Some(chat_id)) =
            (&secrets.messenger_bot_token, &secrets.messenger_chat_id)
        else {
            return Messenger { inner: None, metrics };
        };
        let api = BotApi::new(&config.api_base, token.expose());
        // A numeric id goes as a number; `@channel` names stay strings.
        let chat_id = chat_id.parse::<i64>().map_or_else(|_| json!(chat_id), |id| json!(id));
        Messenger { inner: Some(Arc::new(Inner { api, chat_id })), metrics }
    }

    pub fn is_configured(&self) -> bool {
        self.inner.is_some()
    }

    /// Sends `message`, split into several messages when it is long (the buttons go under the
    /// last one). Stops at the first chunk that fails; earlier chunks stay delivered.
    pub async fn send(&self, message: &Outgoing) -> Result<Sent, MessengerError> {
        let sent = self.send_chunks(message).await;
        self.metrics.messenger_send(sent.as_ref().map(|_| ()).map_err(|e| e as &dyn MetricLabel));
        sent
    }

    async fn send_chunks(&self, message: &Outgoing) -> Result<Sent, MessengerError> {
        let inner = self.inner.as_ref().ok_or(MessengerError::NotConfigured)?;
        let keyboard = keyboard(&message.buttons);
        let chunks = html::split(&message.html, CHUNK_CHARS);
        let last = chunks.len() - 1;
        let mut message_ids = Vec::with_capacity(chunks.len());
        for (i, chunk) in chunks.iter().enumerate() {
            let markup = if i == last { keyboard.as_ref() } else { None };
            message_ids.push(inner.send_chunk(chunk, markup).await?);
        }
        Ok(Sent { message_ids })
    }

    /// Whether the Bot API answers for this token, without sending anything to the boss: one
    /// `getMe` call, no retries (the hourly health check asks again next time).
    pub async fn check_reachable(&self) -> Result<(), MessengerError> {
        let inner = self.inner.as_ref().ok_or(MessengerError::NotConfigured)?;
        match inner.api.call("getMe", &json!({}), REQUEST_TIMEOUT).await {
            Ok(_) => Ok(()),
            Err(CallError::Api { code, description, .. }) => {
                Err(MessengerError::Api { code, description })
            }
            Err(CallError::Transport { text, .. }) => Err(MessengerError::Transport(text)),
        }
    }
}

/// One `inline_keyboard` row, or none. A button whose data the Bot API would refuse drops the
/// whole keyboard rather than the message: the text carries the typed reply forms too.
fn keyboard(buttons: &[Button]) -> Option<Value> {
    if buttons.is_empty() {
        return None;
    }
    if let Some(bad) = buttons.iter().find(|b| !(1..=64).contains(&b.callback_data.len())) {
        tracing::warn!(
            callback_data = %bad.callback_data,
            "callback_data must be 1-64 bytes; sending the message without buttons"
        );
        return None;
    }
    let row: Vec<Value> = buttons
        .iter()
        .map(|b| json!({ "text": b.text, "callback_data": b.callback_data }))
        .collect();
    Some(json!({ "inline_keyboard": [row] }))
}

impl Inner {
    async fn send_chunk(&self, chunk: &str, markup: Option<&Value>) -> Result<i64, MessengerError> {
        let mut text = chunk.to_string();
        let mut parse_mode = Some("HTML");
        let mut attempt = 1;
        loop {
            let mut body = json!({
                "chat_id": self.chat_id,
                "text": text,
                "link_preview_options": { "is_disabled": true },
            });
            if let Some(mode) = parse_mode {
                body["parse_mode"] = json!(mode);
            }
            if let Some(markup) = markup {
                body["reply_markup"] = markup.clone();
            }
            match self.post(&body).await {
                Outcome::Sent(id) => return Ok(id),
                Outcome::Retry { after, error } if attempt < MAX_ATTEMPTS => {
                    let wait = after.unwrap_or(BACKOFF * attempt);
                    tracing::warn!(attempt, wait_ms = wait.as_millis() as u64, %error, "messenger send retried");
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                Outcome::BadMarkup(error) if parse_mode.is_some() => {
                    tracing::warn!(%error, "messenger refused the HTML; resending as plain text");
                    text = html::to_plain(chunk);
                    parse_mode = None;
                }
                Outcome::Retry { error, .. }
                | Outcome::BadMarkup(error)
                | Outcome::Failed(error) => return Err(error),
            }
        }
    }

    async fn post(&self, body: &Value) -> Outcome {
        let answer = match self.api.call("sendMessage", body, REQUEST_TIMEOUT).await {
            Ok(answer) => answer,
            Err(CallError::Transport { status, text }) => {
                let error = MessengerError::Transport(text);
                // No answer, or a server's error page: worth another try; anything else is a
                // wrong api_base.
                return if status == 0 || status >= 500 {
                    Outcome::Retry { after: None, error }
                } else {
                    Outcome::Failed(error)
                };
            }
            Err(CallError::Api { code, description, retry_after }) => {
                let bad_markup = code == 400 && description.contains("can't parse entities");
                let retry_after = retry_after.unwrap_or(1);
                let error = MessengerError::Api { code, description };
                return match code {
                    429 if retry_after > MAX_RETRY_AFTER_S => Outcome::Failed(error),
                    429 => Outcome::Retry { after: Some(Duration::from_secs(retry_after)), error },
                    500.. => Outcome::Retry { after: None, error },
                    _ if bad_markup => Outcome::BadMarkup(error),
                    _ => Outcome::Failed(error),
                };
            }
        };
        match answer.get("message_id").and_then(Value::as_i64) {
            Some(id) => Outcome::Sent(id),
            None => Outcome::Failed(MessengerError::Transport(
                "the messenger accepted the message but sent no message_id".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn button(data: &str) -> Button {
        Button { text: "YES".into(), callback_data: data.into() }
    }

    #[test]
    fn buttons_become_one_inline_keyboard_row() {
        let markup = keyboard(&[button("1-YES BTCUSDT"), button("0-NO BTCUSDT")]).unwrap();
        assert_eq!(
            markup,
            json!({ "inline_keyboard": [[
                { "text": "YES", "callback_data": "1-YES BTCUSDT" },
                { "text": "YES", "callback_data": "0-NO BTCUSDT" },
            ]] })
        );
        assert_eq!(keyboard(&[]), None);
    }

    #[test]
    fn callback_data_outside_1_to_64_bytes_drops_the_keyboard() {
        assert!(keyboard(&[button(&"é".repeat(32))]).is_some(), "64 bytes is fine");
        assert_eq!(keyboard(&[button("ok"), button(&"é".repeat(33))]), None);
        assert_eq!(keyboard(&[button("")]), None);
    }

    #[test]
    fn unconfigured_without_token_or_chat_id() {
        let config = MessengerConfig::default();
        let only_token =
            Secrets::from_lookup(|k| (k == "MESSENGER_BOT_TOKEN").then(|| "1:x".into()));
        assert!(!Messenger::new(&config, &only_token, Metrics::default()).is_configured());
        let both = Secrets::from_lookup(|_| Some("123".into()));
        assert!(Messenger::new(&config, &both, Metrics::default()).is_configured());
        assert_eq!(
            format!("{:?}", Messenger::new(&config, &both, Metrics::default())),
            "Messenger { configured: true }"
        );
    }
}
