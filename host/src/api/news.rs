//! News: `GET /api/news`, the headlines of the first `[news] sources` feed with valid items,
//! cached 10 minutes. Free (no license). Every outcome is a 200 in one of three shapes told
//! apart by `ok` and `cached`: the API's error body is only for bad requests.

use axum::Json;
use axum::extract::State;
use serde::{Serialize, Serializer};
use utoipa::ToSchema;
use utoipa::openapi::schema::{Object, ObjectBuilder, Type};
use utoipa_axum::{router::OpenApiRouter, routes};

use crate::news::{Headlines, NewsItem};
use crate::state::AppState;

/// A boolean that can only be `V`: the `ok` and `cached` flags of one answer shape, so an
/// answer cannot claim a shape it does not have, and the document says which value each
/// shape carries.
#[derive(Debug, Clone, Copy)]
pub struct Flag<const V: bool>;

impl<const V: bool> Serialize for Flag<V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bool(V)
    }
}

fn always(value: bool) -> Object {
    ObjectBuilder::new().schema_type(Type::Boolean).enum_values(Some([value])).build()
}

fn always_true() -> Object {
    always(true)
}

fn always_false() -> Object {
    always(false)
}

/// Headlines fetched by this call.
#[derive(Debug, Serialize, ToSchema)]
pub struct FreshNews {
    /// Always `true`.
    #[schema(schema_with = always_true)]
    pub ok: Flag<true>,
    /// At most `[news] max_items`, in the feed's order.
    pub data: Vec<NewsItem>,
    /// Always `false`: fetched now.
    #[schema(schema_with = always_false)]
    pub cached: Flag<false>,
    /// The URL of the source that answered (the first of `[news] sources` with valid items).
    pub source: String,
}

/// Headlines of a fetch less than 10 minutes old; no `source`.
#[derive(Debug, Serialize, ToSchema)]
pub struct CachedNews {
    /// Always `true`.
    #[schema(schema_with = always_true)]
    pub ok: Flag<true>,
    pub data: Vec<NewsItem>,
    /// Always `true`.
    #[schema(schema_with = always_true)]
    pub cached: Flag<true>,
}

/// No source gave valid items (or none is configured); no `cached`, no `source`.
#[derive(Debug, Serialize, ToSchema)]
pub struct FailedNews {
    /// Always `false`.
    #[schema(schema_with = always_false)]
    pub ok: Flag<false>,
    /// Always empty.
    #[schema(max_items = 0)]
    pub data: Vec<NewsItem>,
    /// Each source in order with why it failed (HTTP status, timeout, unreachable, not a feed,
    /// no valid items), or that no source is configured.
    pub error: String,
}

/// The answer of `GET /api/news`: exactly one of the three shapes.
#[derive(Debug, Serialize, ToSchema)]
#[serde(untagged)]
pub enum NewsAnswer {
    Fresh(FreshNews),
    Cached(CachedNews),
    Failed(FailedNews),
}

impl From<Headlines> for NewsAnswer {
    fn from(headlines: Headlines) -> Self {
        match headlines {
            Headlines::Fresh { items, source } => {
                NewsAnswer::Fresh(FreshNews { ok: Flag, data: items, cached: Flag, source })
            }
            Headlines::Cached { items } => {
                NewsAnswer::Cached(CachedNews { ok: Flag, data: items, cached: Flag })
            }
            Headlines::Failed { error } => {
                NewsAnswer::Failed(FailedNews { ok: Flag, data: Vec::new(), error })
            }
        }
    }
}

/// Crypto headlines from the first news source with valid items.
///
/// The `[news] sources` feeds are tried in order and the first with valid items (a title and
/// an http(s) link) answers; its headlines are served from memory for 10 minutes
/// (`cached: true`). When every source fails the answer is `ok: false` with an `error` naming
/// each source and why; that failure is repeated for 1 minute before the sources are tried
/// again. Never needs a license.
#[utoipa::path(get, path = "/api/news", tag = "news and portfolio",
    responses(
        (status = 200, description = "Fresh headlines (`cached: false`, `source`), cached \
            headlines (`cached: true`), or `ok: false` with `error` when no source answered",
            body = NewsAnswer),
    ))]
async fn news(State(state): State<AppState>) -> Json<NewsAnswer> {
    Json(state.news.headlines().await.into())
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(news))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn item() -> NewsItem {
        NewsItem { title: "t".into(), url: "https://x.example/a".into(), source: "X".into() }
    }

    #[test]
    fn each_shape_carries_exactly_its_fields() {
        let fresh =
            Headlines::Fresh { items: vec![item()], source: "https://x.example/rss".into() };
        let item_json = json!({"title": "t", "url": "https://x.example/a", "source": "X"});
        assert_eq!(
            serde_json::to_value(NewsAnswer::from(fresh)).unwrap(),
            json!({"ok": true, "data": [item_json], "cached": false,
                   "source": "https://x.example/rss"})
        );
        let cached = Headlines::Cached { items: vec![item()] };
        assert_eq!(
            serde_json::to_value(NewsAnswer::from(cached)).unwrap(),
            json!({"ok": true, "data": [item_json], "cached": true})
        );
        let failed = Headlines::Failed { error: "no news sources configured".into() };
        assert_eq!(
            serde_json::to_value(NewsAnswer::from(failed)).unwrap(),
            json!({"ok": false, "data": [], "error": "no news sources configured"})
        );
    }
}
