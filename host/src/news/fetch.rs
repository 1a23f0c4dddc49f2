//! Reads one feed over HTTP within its deadline and a size cap; outcomes other than a 2xx body
//! become a [`SourceError`] that says why without quoting the body.

use std::time::Duration;

use super::SourceError;

/// Larger answers are refused: a feed of 20 headlines is far smaller, even with full content.
const MAX_FEED_BYTES: usize = 8 * 1024 * 1024;
/// Longest transport reason kept in an error (errors are returned by the API).
const MAX_REASON_CHARS: usize = 200;

#[derive(Debug)]
pub struct Fetcher {
    http: reqwest::Client,
    timeout: Duration,
}

impl Fetcher {
    pub fn new(timeout: Duration) -> Fetcher {
        // reqwest is built without a default TLS provider; install ring once per process.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(timeout)
            // Some feed hosts refuse requests without a user agent.
            .user_agent(concat!("spotbot/", env!("CARGO_PKG_VERSION"), " (news)"))
            .build()
            .unwrap_or_default();
        Fetcher { http, timeout }
    }

    /// The body of `url`, or why there is none; the whole exchange (connect, answer, body)
    /// must fit in the deadline.
    pub async fn get(&self, url: &str) -> Result<Vec<u8>, SourceError> {
        tokio::time::timeout(self.timeout, self.read(url))
            .await
            .unwrap_or(Err(SourceError::Timeout(self.timeout.as_secs())))
    }

    async fn read(&self, url: &str) -> Result<Vec<u8>, SourceError> {
        let mut response = self
            .http
            .get(url)
            .header(
                reqwest::header::ACCEPT,
                "application/rss+xml, application/atom+xml, application/feed+json, \
                 application/xml;q=0.9, text/xml;q=0.9, */*;q=0.8",
            )
            .send()
            .await
            .map_err(transport)?;
        let status = response.status();
        if !status.is_success() {
            return Err(SourceError::Status(status.to_string()));
        }
        if response.content_length().is_some_and(|length| length > MAX_FEED_BYTES as u64) {
            return Err(SourceError::TooLarge(MAX_FEED_BYTES));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(transport)? {
            if body.len() + chunk.len() > MAX_FEED_BYTES {
                return Err(SourceError::TooLarge(MAX_FEED_BYTES));
            }
            body.extend_from_slice(&chunk);
        }
        Ok(body)
    }
}

/// The reason of a transport failure with its causes (DNS, refused, TLS, ...), without the
/// URL, which the caller names already.
fn transport(err: reqwest::Error) -> SourceError {
    let err = err.without_url();
    let mut reason = err.to_string();
    let mut cause = std::error::Error::source(&err);
    while let Some(inner) = cause {
        reason.push_str(": ");
        reason.push_str(&inner.to_string());
        cause = inner.source();
    }
    SourceError::Transport(reason.chars().take(MAX_REASON_CHARS).collect())
}
