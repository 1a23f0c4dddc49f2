//! The auth layer: every request meets [`Auth::admit`](crate::auth::Auth::admit) after routing
//! (it needs the matched route pattern), and the admitted [`Caller`] rides along in the
//! request's extensions for handlers to name the acting agent. A tool call dispatched by
//! `/mcp` already carries the caller admitted on `/mcp`: only its scope for the tool's route
//! is checked.

use std::convert::Infallible;
use std::net::SocketAddr;

use axum::extract::{ConnectInfo, FromRequestParts, MatchedPath, Request, State};
use axum::http::header::{RETRY_AFTER, WWW_AUTHENTICATE};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::error::ApiError;
pub use crate::auth::Caller;
use crate::auth::Refusal;
use crate::state::AppState;

/// The layer.
pub async fn admit(
    State(state): State<AppState>,
    matched: Option<MatchedPath>,
    mut request: Request,
    next: Next,
) -> Response {
    let route = matched.as_ref().map(MatchedPath::as_str);
    if let Some(caller) = request.extensions().get::<Caller>() {
        // Dispatched by `/mcp`, which admitted the caller: only this route's scope is left.
        let allowed = match route {
            Some(route) => state.auth.authorize(caller, request.method(), route, request.uri()),
            None => Ok(()),
        };
        return match allowed {
            Ok(()) => next.run(request).await,
            Err(refusal) => refused(refusal),
        };
    }
    let peer = request.extensions().get::<ConnectInfo<SocketAddr>>().map(|c| c.0.ip());
    let admitted =
        state.auth.admit(request.method(), route, request.uri(), request.headers(), peer);
    match admitted {
        Ok(caller) => {
            request.extensions_mut().insert(caller);
            next.run(request).await
        }
        Err(refusal) => refused(refusal),
    }
}

fn refused(refusal: Refusal) -> Response {
    let throttled = match &refusal {
        Refusal::Throttled(seconds) => Some(*seconds),
        _ => None,
    };
    let unauthorized = matches!(refusal, Refusal::NoToken | Refusal::BadToken | Refusal::Revoked);
    let mut response = ApiError::from(refusal).into_response();
    if let Some(seconds) = throttled {
        response.headers_mut().insert(RETRY_AFTER, HeaderValue::from(seconds));
    }
    if unauthorized {
        response.headers_mut().insert(WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

impl From<Refusal> for ApiError {
    fn from(refusal: Refusal) -> Self {
        const HOW: &str = "create one with `spotbot token create --agent <name> --scope <scope>` \
                           (docs/security.md)";
        match refusal {
            Refusal::HostNotAllowed(host) => ApiError::new(
                StatusCode::FORBIDDEN,
                "host_not_allowed",
                format!(
                    "Host `{host}` is not in [api] allowed_hosts (a guard against DNS \
                     rebinding); add it there if it is your name for this service."
                ),
            ),
            Refusal::CrossSite(what) => ApiError::new(
                StatusCode::FORBIDDEN,
                "cross_site_refused",
                format!(
                    "A web page of another origin cannot change anything here ({what}); call \
                     the API from an agent, or use the service's own dashboard."
                ),
            ),
            Refusal::NotJson => ApiError::new(
                StatusCode::UNSUPPORTED_MEDIA_TYPE,
                "unsupported_media_type",
                "Every POST must carry `Content-Type: application/json`, also without a body \
                 (a web page of another site cannot send it).",
            ),
            Refusal::NoToken => ApiError::new(
                StatusCode::UNAUTHORIZED,
                "unauthorized",
                format!("This route needs `Authorization: Bearer <token>`; {HOW}."),
            ),
            Refusal::BadToken => ApiError::new(
                StatusCode::UNAUTHORIZED,
                "invalid_token",
                format!(
                    "The bearer token is not one of this service's tokens (`spotbot token \
                     list` shows them); {HOW}."
                ),
            ),
            Refusal::Revoked => ApiError::new(
                StatusCode::UNAUTHORIZED,
                "token_revoked",
                format!("The bearer token was revoked; {HOW}."),
            ),
            Refusal::Throttled(seconds) => ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "too_many_bad_tokens",
                format!(
                    "Too many bad tokens from this address; retry after {seconds} s with a \
                     valid token."
                ),
            ),
            Refusal::Scope { needs, has, agent } => ApiError::new(
                StatusCode::FORBIDDEN,
                "insufficient_scope",
                format!(
                    "This route needs the `{needs}` scope; the token of `{}` has `{has}`. \
                     Scopes: read < propose < execute < admin (docs/security.md).",
                    agent.as_str()
                ),
            ),
            Refusal::AgentMismatch { asked, token } => ApiError::new(
                StatusCode::FORBIDDEN,
                "agent_mismatch",
                format!(
                    "The request names agent `{asked}`, but its token acts as `{}`; leave \
                     `agent` out (the token names the agent) or use that agent's token.",
                    token.as_str()
                ),
            ),
            Refusal::TokensUnreadable(why) => ApiError::service_unavailable(
                "auth_unavailable",
                format!("The API tokens cannot be read, so no request is let in: {why}"),
            ),
        }
    }
}

/// The admitted caller, for handlers. A request that did not pass the layer (none in the
/// service) is the open caller.
impl<S: Send + Sync> FromRequestParts<S> for Caller {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, _state: &S) -> Result<Self, Self::Rejection> {
        Ok(parts.extensions.get::<Caller>().cloned().unwrap_or_else(Caller::open))
    }
}

/// Writes the `bearer` security scheme and, from the route table, each operation's security
/// requirement (its scope as the requirement's role; `[]` on public routes), so agents that
/// generate calls from the document send the token, and the contract check tests it.
pub fn document_security(document: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement};

    let scheme = HttpBuilder::new()
        .scheme(HttpAuthScheme::Bearer)
        .description(Some(
            "A token from `spotbot token create --agent <name> --scope <scope>`. Scopes are \
             ordered, each including the ones before it: read < propose < execute < admin. \
             Without any token a service on loopback is open (docs/security.md).",
        ))
        .build();
    document
        .components
        .get_or_insert_with(Default::default)
        .add_security_scheme(BEARER, utoipa::openapi::security::SecurityScheme::Http(scheme));
    super::error::for_each_operation(document, |method, path, operation| {
        operation.security = Some(match crate::auth::needs(&method, path) {
            crate::auth::Needs::Public => Vec::new(),
            crate::auth::Needs::Scope(scope) => {
                vec![SecurityRequirement::new(BEARER, [scope.as_str()])]
            }
        });
    });
}

/// The security scheme's name in the document.
const BEARER: &str = "bearer";
