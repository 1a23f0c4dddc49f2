//! One Bot API call (`{api_base}/bot<token>/<method>`, POST + JSON) and its answer envelope,
//! shared by sending and by reply polling. The URL holds the token: it is never logged and no
//! error text leaves here with it.

use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

/// The Bot API's answer envelope (`ok`, `result` or `error_code` + `description`).
#[derive(Deserialize)]
struct Answer {
    ok: bool,
    #[serde(default)]
    result: Value,
    error_code: Option<i64>,
    description: Option<String>,
    parameters: Option<ResponseParameters>,
}

#[derive(Deserialize)]
struct ResponseParameters {
    retry_after: Option<u64>,
}

/// Why a call failed; no text contains the token.
#[derive(Debug)]
pub enum CallError {
    /// The messenger answered `ok: false`.
    Api { code: i64, description: String, retry_after: Option<u64> },
    /// No usable answer: connection, timeout, or a body that is not a Bot API answer
    /// (`status` is the HTTP status then, 0 when there was no answer at all).
    Transport { status: u16, text: String },
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Api { code, description, .. } => write!(f, "{code} {description}"),
            Self::Transport { text, .. } => f.write_str(text),
        }
    }
}

/// The Bot API of one bot token.
pub struct BotApi {
    http: reqwest::Client,
    /// `{api_base}/bot{token}`.
    base: String,
    token: String,
}

impl BotApi {
    pub fn new(api_base: &str, token: &str) -> Self {
        // reqwest is built without a default TLS provider; install ring once per process.
        let _ = rustls::crypto::ring::default_provider().install_default();
        Self {
            http: reqwest::Client::builder().build().unwrap_or_default(),
            base: format!("{}/bot{token}", api_base.trim_end_matches('/')),
            token: token.to_string(),
        }
    }

    /// Calls `method` with `body`; the `result` on `ok: true`.
    pub async fn call(
        &self,
        method: &str,
        body: &Value,
        timeout: Duration,
    ) -> Result<Value, CallError> {
        let url = format!("{}/{method}", self.base);
        let sent = self.http.post(url).timeout(timeout).json(body).send().await;
        let response = sent.map_err(|e| self.transport(e, timeout))?;
        let status = response.status();
        let bytes = response.bytes().await.map_err(|e| self.transport(e, timeout))?;
        let Ok(answer) = serde_json::from_slice::<Answer>(&bytes) else {
            return Err(CallError::Transport {
                status: status.as_u16(),
                text: format!(
                    "HTTP {status} without a Bot API answer (check [messenger] api_base)"
                ),
            });
        };
        if answer.ok {
            return Ok(answer.result);
        }
        Err(CallError::Api {
            code: answer.error_code.unwrap_or(i64::from(status.as_u16())),
            description: self.redact(answer.description.unwrap_or_default()),
            retry_after: answer.parameters.and_then(|p| p.retry_after),
        })
    }

    /// A transport error without the URL (it holds the token), with its causes.
    fn transport(&self, e: reqwest::Error, timeout: Duration) -> CallError {
        let timed_out = e.is_timeout();
        let e = e.without_url();
        let mut text = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(cause) = source {
            text = format!("{text}: {cause}");
            source = cause.source();
        }
        if timed_out {
            text = format!("no answer within {} s ({text})", timeout.as_secs());
        }
        CallError::Transport { status: 0, text: self.redact(text) }
    }

    /// Belt and braces: no text leaves this module with the token in it.
    fn redact(&self, text: String) -> String {
        if text.contains(&self.token) { text.replace(&self.token, "***") } else { text }
    }
}
