//! Who may call the API: per-agent tokens with scopes, the protected mode that keeps an
//! unconfigured service on loopback, and the checks that keep web pages of other sites and
//! rebound host names out (docs/security.md).
//!
//! Owns: the tokens file ([`tokens`]), the route table of scopes ([`routes`]), the count of bad
//! tokens per peer ([`strikes`]) and the decision for one request ([`Auth::admit`]). Must
//! never: keep or log a token (only its SHA-256 is stored), let a route without a row in the
//! table be reached without `admin`, or let an explicitly configured service fall back to
//! open when its tokens are all revoked.

pub mod routes;
mod scope;
mod strikes;
pub mod tokens;

use std::net::IpAddr;
use std::sync::{Arc, RwLock};

use axum::http::{HeaderMap, Method, Uri, header};

use crate::activity::AgentName;
use crate::clock::SharedClock;
use crate::config::{ApiConfig, AuthMode};
pub use routes::{Needs, needs};
pub use scope::Scope;
use tokens::{Rejected, Stamp, TokenFile, TokenSet};

/// Who is calling: the token's agent and scope, or the local operator of an open service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// The token's agent; `None` on an open service (auth off), where `?agent=` names the
    /// card as before.
    pub agent: Option<AgentName>,
    pub scope: Scope,
    /// The token's public id (`None` on an open service).
    pub token_id: Option<String>,
}

impl Caller {
    /// The caller of a service without tokens: everything is allowed, as before tokens.
    pub fn open() -> Self {
        Self { agent: None, scope: Scope::Admin, token_id: None }
    }

    /// A caller without a token on a public route (or one no route matched) of a service
    /// that requires tokens.
    fn anonymous() -> Self {
        Self { agent: None, scope: Scope::Read, token_id: None }
    }

    /// The agent an action is recorded as: the token's, else the one asked for, else the
    /// route's default. (A disagreeing `?agent=` was refused before the handler ran.)
    pub fn agent_or(&self, asked: Option<AgentName>, default: AgentName) -> AgentName {
        self.agent.or(asked).unwrap_or(default)
    }

    /// Who, for the activity log and the audit log: `coo (token 3f9a…)` or `open access`.
    pub fn label(&self) -> String {
        match (&self.agent, &self.token_id) {
            (Some(agent), Some(id)) => format!("{} (token {id})", agent.as_str()),
            _ => "open access".into(),
        }
    }
}

/// Why a request is refused before its handler runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// `Host` is not in `[api] allowed_hosts` (DNS rebinding).
    HostNotAllowed(String),
    /// A browser page of another origin asked for a state change.
    CrossSite(String),
    /// A POST without `Content-Type: application/json`.
    NotJson,
    /// No `Authorization: Bearer` header.
    NoToken,
    /// The token is not one of this service's, or its secret is wrong.
    BadToken,
    Revoked,
    /// Too many bad tokens from this peer; retry after this many seconds.
    Throttled(u64),
    /// The token's scope is below what the route needs.
    Scope {
        needs: Scope,
        has: Scope,
        agent: AgentName,
    },
    /// `?agent=` (or the card of `/api/agent/{name}`) is not the token's agent.
    AgentMismatch {
        asked: String,
        token: AgentName,
    },
    /// The tokens file cannot be read: nobody is let in until it can.
    TokensUnreadable(String),
}

/// The loaded tokens, or why the file could not be read.
type Loaded = Result<TokenSet, String>;

/// The auth area's public face.
pub struct Auth {
    mode: Option<AuthMode>,
    /// The service listens beyond loopback: without `auth = "off"`, tokens are required.
    beyond_loopback: bool,
    allowed_hosts: Vec<String>,
    file: TokenFile,
    loaded: RwLock<(Option<Stamp>, Arc<Loaded>)>,
    strikes: strikes::Strikes,
    clock: SharedClock,
}

impl std::fmt::Debug for Auth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Auth").field("mode", &self.mode).finish_non_exhaustive()
    }
}

impl Auth {
    /// The area for a service whose `[api]` section is `config`, listening on `bound`, with
    /// its tokens in `data_dir`. Refuses (the service must not start) when tokens are required
    /// and none is active, or the file cannot be read.
    pub fn start(
        config: &ApiConfig,
        bound: std::net::SocketAddr,
        data_dir: &std::path::Path,
        clock: SharedClock,
    ) -> Result<Self, String> {
        let file = TokenFile::in_dir(data_dir);
        let auth = Self {
            mode: config.auth,
            beyond_loopback: !bound.ip().is_loopback(),
            allowed_hosts: config.allowed_hosts.clone(),
            loaded: RwLock::new((file.stamp(), Arc::new(load(&file)))),
            file,
            strikes: strikes::Strikes::new(config.bad_tokens_per_minute),
            clock,
        };
        let loaded = auth.current();
        let set = loaded.as_ref().as_ref().map_err(Clone::clone)?;
        if auth.tokens_required(set) && !set.active_any() {
            let why = match auth.mode {
                Some(AuthMode::Tokens) => "[api] auth = \"tokens\"".to_string(),
                _ => format!("it listens on {bound}, beyond loopback"),
            };
            return Err(format!(
                "the API needs tokens ({why}) and {} holds no active one: create one with \
                 `spotbot token create --agent <name> --scope <scope>` (docs/security.md), or \
                 write `[api] auth = \"off\"` to serve without tokens (anyone who reaches the \
                 port can then trade)",
                auth.file.path().display()
            ));
        }
        if let Some(warning) = auth.warning() {
            tracing::warn!("{warning}");
        }
        Ok(auth)
    }

    /// The warning `/api/health` repeats while the API is open beyond loopback.
    pub fn warning(&self) -> Option<String> {
        (self.mode == Some(AuthMode::Off) && self.beyond_loopback).then(|| {
            "[api] auth = \"off\" on an address beyond loopback: anyone who reaches the port can \
             trade. Create tokens and remove the line (docs/security.md)."
                .to_string()
        })
    }

    /// Whether requests need a token now (an unreadable tokens file counts: nobody is let in).
    pub fn tokens_now(&self) -> bool {
        self.current().as_ref().as_ref().map_or(true, |set| self.tokens_required(set))
    }

    /// `tokens` or `off`, for the log.
    pub fn mode_now(&self) -> &'static str {
        if self.tokens_now() { "tokens" } else { "off" }
    }

    fn tokens_required(&self, set: &TokenSet) -> bool {
        match self.mode {
            Some(AuthMode::Off) => false,
            Some(AuthMode::Tokens) => true,
            // Unset: open only on loopback before the first token exists (the two-command
            // demo); a token once created keeps tokens on, even when all are revoked.
            None => self.beyond_loopback || set.any,
        }
    }

    /// The tokens as the file holds them now (read again when the file changed).
    fn current(&self) -> Arc<Loaded> {
        if self.mode == Some(AuthMode::Off) {
            return self.loaded.read().unwrap_or_else(|p| p.into_inner()).1.clone();
        }
        let stamp = self.file.stamp();
        {
            let loaded = self.loaded.read().unwrap_or_else(|p| p.into_inner());
            if loaded.0 == stamp {
                return loaded.1.clone();
            }
        }
        let fresh = Arc::new(load(&self.file));
        if let Err(err) = fresh.as_ref() {
            tracing::error!(%err, "the API tokens cannot be read; every request is refused");
        }
        *self.loaded.write().unwrap_or_else(|p| p.into_inner()) = (stamp, fresh.clone());
        fresh
    }

    /// Decides one request: `route` is the matched route pattern (`None`: no route matched,
    /// the 404 answers after the host check), `peer` the client address when known.
    pub fn admit(
        &self,
        method: &Method,
        route: Option<&str>,
        uri: &Uri,
        headers: &HeaderMap,
        peer: Option<IpAddr>,
    ) -> Result<Caller, Refusal> {
        self.check_host(headers)?;
        let Some(route) = route else {
            return Ok(Caller::anonymous());
        };
        if routes::needs_of(method, route).is_none() && routes::listed_path(route) {
            // A method the route does not have: the router answers 405 and nothing runs.
            return Ok(Caller::anonymous());
        }
        let needs = needs(method, route);
        let changes_state = *method != Method::GET && *method != Method::HEAD
            || matches!(needs, Needs::Scope(s) if s > Scope::Read);
        if changes_state {
            check_same_origin(headers)?;
        }
        if *method == Method::POST && !is_json(headers) {
            return Err(Refusal::NotJson);
        }
        let loaded = self.current();
        let set = match loaded.as_ref() {
            Ok(set) => set,
            Err(err) => return Err(Refusal::TokensUnreadable(err.clone())),
        };
        if !self.tokens_required(set) {
            return Ok(Caller::open());
        }
        if needs == Needs::Public {
            return Ok(Caller::anonymous());
        }
        let token = bearer(headers).ok_or(Refusal::NoToken)?;
        // A valid token always passes: agents behind one address (loopback, one host) are not
        // locked out by a neighbour with a wrong token. A bad one counts against its address,
        // which answers 429 for a while once it presented too many.
        let record = set.check(token).map_err(|rejected| {
            let now = self.clock.now_ms();
            if let Some(peer) = peer {
                if let Some(left_ms) = self.strikes.blocked_for(peer, now) {
                    return Refusal::Throttled((left_ms as u64).div_ceil(1000).max(1));
                }
                self.strikes.strike(peer, now);
            }
            match rejected {
                Rejected::Unknown => Refusal::BadToken,
                Rejected::Revoked => Refusal::Revoked,
            }
        })?;
        let caller = Caller {
            agent: Some(record.agent),
            scope: record.scope,
            token_id: Some(record.id.clone()),
        };
        self.authorize(&caller, method, route, uri)?;
        Ok(caller)
    }

    /// Whether an admitted `caller` may use `route`: its scope, and `?agent=` against its
    /// token. Also for the tool calls `/mcp` dispatches as the caller it admitted.
    pub fn authorize(
        &self,
        caller: &Caller,
        method: &Method,
        route: &str,
        uri: &Uri,
    ) -> Result<(), Refusal> {
        let Needs::Scope(needed) = needs(method, route) else {
            return Ok(());
        };
        let Some(agent) = caller.agent else {
            return if caller.scope.allows(needed) { Ok(()) } else { Err(Refusal::NoToken) };
        };
        if !caller.scope.allows(needed) {
            return Err(Refusal::Scope { needs: needed, has: caller.scope, agent });
        }
        if let Some(asked) = asked_agent(route, uri)
            && asked != agent.as_str()
        {
            return Err(Refusal::AgentMismatch { asked, token: agent });
        }
        Ok(())
    }

    fn check_host(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let host = headers.get(header::HOST).and_then(|h| h.to_str().ok()).unwrap_or("");
        if host_allowed(host, &self.allowed_hosts) {
            Ok(())
        } else {
            Err(Refusal::HostNotAllowed(host.to_string()))
        }
    }
}

fn load(file: &TokenFile) -> Loaded {
    file.load().map(TokenSet::new).map_err(|err| err.to_string())
}

/// `Host` against the allow-list: an entry without a port allows any port of that host.
fn host_allowed(host: &str, allowed: &[String]) -> bool {
    let Ok(authority) = host.parse::<axum::http::uri::Authority>() else {
        return false;
    };
    let name = authority.host().trim_start_matches('[').trim_end_matches(']');
    allowed.iter().any(|entry| {
        if entry.parse::<IpAddr>().is_ok() || !entry.contains(':') || entry.ends_with(']') {
            entry.trim_start_matches('[').trim_end_matches(']').eq_ignore_ascii_case(name)
        } else {
            entry.eq_ignore_ascii_case(authority.as_str())
        }
    })
}

/// A browser sends `Sec-Fetch-Site` (and `Origin` on anything but a simple GET): a state
/// change is only accepted from the service's own page or from outside a browser.
fn check_same_origin(headers: &HeaderMap) -> Result<(), Refusal> {
    let text = |name| headers.get(name).and_then(|v: &axum::http::HeaderValue| v.to_str().ok());
    if let Some(site) = text("sec-fetch-site")
        && !matches!(site, "same-origin" | "none")
    {
        return Err(Refusal::CrossSite(format!("Sec-Fetch-Site: {site}")));
    }
    if let Some(origin) = text(header::ORIGIN.as_str()) {
        let host = text(header::HOST.as_str()).unwrap_or("");
        let origin_host = origin.split_once("://").map(|(_, rest)| rest).unwrap_or("");
        if origin_host.is_empty() || !origin_host.eq_ignore_ascii_case(host) {
            return Err(Refusal::CrossSite(format!("Origin: {origin}")));
        }
    }
    Ok(())
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|media| media.trim().eq_ignore_ascii_case("application/json"))
}

fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim()).filter(|t| !t.is_empty())
}

/// The agent a request names: `?agent=`, or the card `/api/agent/{name}` posts to.
fn asked_agent(route: &str, uri: &Uri) -> Option<String> {
    if route == "/api/agent/{name}" {
        return uri.path().rsplit('/').next().map(str::to_string);
    }
    form_urlencoded::parse(uri.query()?.as_bytes())
        .find(|(key, _)| key == "agent")
        .map(|(_, value)| value.into_owned())
}

#[cfg(test)]
mod tests;
