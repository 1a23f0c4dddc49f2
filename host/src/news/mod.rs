//! News: the headlines of `GET /api/news`, read from the `[news] sources` RSS/Atom feeds in
//! order (the first with valid items answers) and kept in memory for 10 minutes.
//!
//! Owns the sources, their fetch and the cache; it never logs or returns a response body (a
//! failing source is summarised as a status, a timeout or a parse reason).

mod cache;
mod feed;
mod fetch;

use std::time::Duration;

use serde::Serialize;
use tokio::sync::Mutex;
use utoipa::ToSchema;

use crate::clock::SharedClock;
use crate::config::NewsConfig;
use cache::Cache;
use fetch::Fetcher;

/// One headline (spec: "News item: title, url, source").
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct NewsItem {
    /// The item's title, on one line.
    pub title: String,
    /// The item's link (http or https).
    pub url: String,
    /// The feed's title, or the host of the feed's URL when the feed has none.
    pub source: String,
}

/// What one look at the news gives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Headlines {
    /// Fetched now from `source`, the URL that answered.
    Fresh { items: Vec<NewsItem>, source: String },
    /// A fetch of less than 10 minutes ago.
    Cached { items: Vec<NewsItem> },
    /// No source answered with valid items; `error` names each source and why.
    Failed { error: String },
}

/// Why one source gave no headlines.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    #[error("timed out after {0} s")]
    Timeout(u64),
    #[error("HTTP {0}")]
    Status(String),
    #[error("unreachable: {0}")]
    Transport(String),
    #[error("response larger than {0} bytes")]
    TooLarge(usize),
    #[error("not a feed: {0}")]
    NotAFeed(String),
    #[error("no valid items: each needs a title and an http(s) link")]
    NoValidItems,
}

/// The news area's public face.
#[derive(Debug)]
pub struct News {
    sources: Vec<String>,
    max_items: usize,
    fetcher: Fetcher,
    clock: SharedClock,
    /// Held across a whole round of fetching, so concurrent callers wait for that round and
    /// read its result from the cache instead of fetching the same feeds again.
    cache: Mutex<Cache>,
}

impl News {
    pub fn new(config: &NewsConfig, clock: SharedClock) -> News {
        News {
            sources: config.sources.clone(),
            max_items: config.max_items,
            fetcher: Fetcher::new(Duration::from_secs(config.timeout_secs)),
            clock,
            cache: Mutex::new(Cache::default()),
        }
    }

    /// The cached headlines while they are fresh, else a new round over the sources.
    pub async fn headlines(&self) -> Headlines {
        if self.sources.is_empty() {
            return Headlines::Failed {
                error: "no news sources configured ([news] sources is empty)".into(),
            };
        }
        let mut cache = self.cache.lock().await;
        if let Some(kept) = cache.lookup(self.clock.now()) {
            return kept;
        }
        let answer = self.fetch_round().await;
        cache.store(&answer, self.clock.now());
        answer
    }

    /// Tries each source in order; the first with valid items answers.
    async fn fetch_round(&self) -> Headlines {
        let mut failures = Vec::with_capacity(self.sources.len());
        for url in &self.sources {
            let items = match self.fetcher.get(url).await {
                Ok(body) => feed::headlines(&body, url, self.max_items),
                Err(err) => Err(err),
            };
            match items {
                Ok(items) => {
                    tracing::info!(source = %url, items = items.len(), "news fetched");
                    return Headlines::Fresh { items, source: url.clone() };
                }
                Err(err) => {
                    tracing::warn!(source = %url, reason = %err, "news source failed");
                    failures.push(format!("{url} ({err})"));
                }
            }
        }
        Headlines::Failed { error: format!("all news sources failed: {}", failures.join("; ")) }
    }
}
