//! License: the install's machine id, the activated license (cached as the license server
//! signed it), revalidation every 24 h, the 72 h offline grace (the time rules themselves,
//! pure, in [`rules`]), and the table of routes that need a license ([`routes`]).
//!
//! [`License`] is the area's one public face. It never logs or returns the license key: only
//! the answer to `POST /api/license/register` carries a new key, once. Every "now" comes from
//! the [`Clock`](crate::clock::Clock), so tests drive the 24 h / 72 h rules with a test clock
//! and [`License::tick`].

mod cache;
mod client;
mod machine;
pub mod routes;
pub mod rules;

use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, SecondsFormat, Utc};
use ed25519_dalek::VerifyingKey;
use serde::Serialize;
use spotbot_license_protocol::{
    self as wire, AnswerPayload, FieldError, SignedAnswer, ValidateRequest, Verdict,
};
use utoipa::ToSchema;

use crate::clock::SharedClock;
use crate::config::{Config, Secret};
use crate::store::{Store, StoreError};

use rules::Standing;
pub use rules::{OFFLINE_GRACE, RETRY_EVERY, REVALIDATE_EVERY};

/// What every "license required" answer tells the caller.
pub const HOW_TO_GET_A_KEY: &str = "Get a free key with POST /api/license/register \
     {\"email\": ..., \"name\": ...}, activate an existing key with POST /api/license/activate \
     {\"license_key\": ...}, or set TRADER_LICENSE_KEY and restart.";

/// Failures of register and activate that a caller can act on.
#[derive(Debug, thiserror::Error)]
pub enum LicenseError {
    #[error("{0}")]
    Invalid(#[from] FieldError),
    #[error("{0}")]
    NotConfigured(String),
    #[error("the license server cannot be reached: {0}")]
    Unreachable(String),
    #[error("{0}")]
    BadAnswer(String),
    #[error("no license with this key; register to get one")]
    UnknownKey,
    #[error("this license was revoked")]
    Revoked,
    #[error("{0}")]
    EmailRegistered(String),
    #[error("{0}")]
    RateLimited(String),
    #[error("the license server refused the key: {0}")]
    Refused(String),
    #[error("cannot persist the license: {0}")]
    Store(#[from] StoreError),
}

impl LicenseError {
    fn not_configured() -> LicenseError {
        LicenseError::NotConfigured(
            "the license server address is not configured: set TRADER_LICENSE_URL or \
             license.server_url"
                .into(),
        )
    }
}

/// Limits the plan grants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct Features {
    pub max_positions: u32,
    pub max_watchlist: u32,
}

impl From<wire::Features> for Features {
    fn from(f: wire::Features) -> Self {
        Features { max_positions: f.max_positions, max_watchlist: f.max_watchlist }
    }
}

/// `GET /api/license/status`: the spec's License state.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct LicenseStatus {
    /// `active` or `unlicensed`.
    pub status: String,
    /// `free`, or null without an active license.
    pub plan: Option<String>,
    /// What the plan grants; zeros without an active license.
    pub features: Features,
    /// ISO 8601; null for licenses that do not expire (the free plan).
    pub expires_at: Option<String>,
    /// ISO 8601 time of the last successful validation; null if there was none.
    pub validated_at: Option<String>,
    /// This install's machine id (UUID), which the key is bound to.
    pub machine_id: String,
    /// Why there is no active license and how to get one; also set while the license server
    /// is unreachable and the offline grace runs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl LicenseStatus {
    pub fn is_active(&self) -> bool {
        self.status == "active"
    }

    /// The plan in words: the plan while active, else `none`.
    pub fn health_plan(&self) -> String {
        self.plan.clone().filter(|_| self.is_active()).unwrap_or_else(|| "none".into())
    }
}

/// A successful activation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Activated {
    pub plan: String,
    pub features: Features,
}

/// A successful registration; the activation that follows may still have failed.
#[derive(Debug)]
pub struct Registered {
    /// The new key: returned once to the caller, never logged.
    pub license_key: String,
    pub plan: String,
    pub activation: Result<Activated, LicenseError>,
}

/// What one revalidation step did (for the background loop's log and for tests).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tick {
    /// Nothing to do yet.
    NotDue,
    /// Nothing to do at all: no license, or the server refused it.
    Idle,
    /// The server confirmed the license.
    Validated,
    /// A key from TRADER_LICENSE_KEY was activated after an earlier failed attempt.
    Activated,
    /// The server could not be reached or its answer did not verify; the grace runs.
    Unreachable,
    /// The server answered that the key is invalid, revoked or bound elsewhere.
    Rejected,
}

enum Current {
    /// Nothing activated yet.
    None,
    Active {
        key: String,
        payload: AnswerPayload,
        last_ok: DateTime<Utc>,
    },
    /// The server said no (revoked, bound elsewhere, unknown).
    Rejected {
        key: String,
        message: String,
    },
    /// The cache did not verify.
    Untrusted(String),
}

struct State {
    current: Current,
    last_attempt: Option<DateTime<Utc>>,
    last_error: Option<String>,
    /// A TRADER_LICENSE_KEY whose activation could not reach the server yet.
    pending_key: Option<String>,
}

/// The license area.
pub struct License {
    store: Store,
    clock: SharedClock,
    client: client::Client,
    public_key: Option<VerifyingKey>,
    machine_id: String,
    env_key: Option<Secret>,
    state: Mutex<State>,
    /// Serialises activations and validations so an old answer never overwrites a newer one.
    ops: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for License {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("License").field("machine_id", &self.machine_id).finish_non_exhaustive()
    }
}

fn iso(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

impl License {
    /// Loads the machine id (creating it on first run) and the cached license. Does not
    /// contact the license server: see [`License::start_up`].
    pub fn open(config: &Config, store: Store, clock: SharedClock) -> Result<License, StoreError> {
        let machine_id = machine::load_or_create(&store)?;
        let public_key =
            config.license.public_key.as_deref().and_then(|k| wire::parse_public_key(k).ok());
        let url = config.secrets.license_url.clone().or_else(|| config.license.server_url.clone());
        let current = match cache::load(&store, public_key.as_ref(), &machine_id) {
            cache::Loaded::Empty => Current::None,
            cache::Loaded::Untrusted(message) => {
                tracing::warn!(%message, "cached license refused");
                Current::Untrusted(message)
            }
            cache::Loaded::Verified { key, payload, last_ok } => {
                if payload.verdict == Verdict::Active {
                    Current::Active { key, payload, last_ok }
                } else {
                    Current::Rejected { key, message: payload.message }
                }
            }
        };
        Ok(License {
            store,
            clock,
            client: client::Client::new(url),
            public_key,
            machine_id,
            env_key: config.secrets.license_key.clone(),
            state: Mutex::new(State {
                current,
                last_attempt: None,
                last_error: None,
                pending_key: None,
            }),
            ops: tokio::sync::Mutex::new(()),
        })
    }

    /// Activates TRADER_LICENSE_KEY unless the cache already holds an active license for it
    /// (a restart then does not contact the server). If the server cannot be reached, the
    /// background revalidation keeps trying.
    pub async fn start_up(&self) {
        let Some(secret) = self.env_key.clone() else { return };
        let key = match wire::normalize_key(secret.expose()) {
            Ok(key) => key,
            Err(err) => {
                tracing::error!(reason = %err.reason, "TRADER_LICENSE_KEY is malformed; ignored");
                return;
            }
        };
        if matches!(&self.lock().current, Current::Active { key: k, .. } if *k == key) {
            tracing::info!("using the cached license for TRADER_LICENSE_KEY");
            return;
        }
        self.activate_env_key(key).await;
    }

    async fn activate_env_key(&self, key: String) -> Tick {
        let key_id = wire::key_id(&key);
        match self.activate(&key).await {
            Ok(_) => {
                tracing::info!(%key_id, "TRADER_LICENSE_KEY activated");
                self.lock().pending_key = None;
                Tick::Activated
            }
            Err(
                err @ (LicenseError::Unreachable(_)
                | LicenseError::BadAnswer(_)
                | LicenseError::NotConfigured(_)),
            ) => {
                tracing::warn!(%key_id, error = %err, "cannot activate TRADER_LICENSE_KEY yet");
                let mut state = self.lock();
                state.pending_key = Some(key);
                state.last_attempt = Some(self.clock.now());
                state.last_error = Some(err.to_string());
                Tick::Unreachable
            }
            Err(err) => {
                tracing::error!(%key_id, error = %err, "TRADER_LICENSE_KEY was refused");
                self.lock().pending_key = None;
                Tick::Rejected
            }
        }
    }

    pub fn machine_id(&self) -> &str {
        &self.machine_id
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Whether trading routes are allowed now.
    pub fn is_active(&self) -> bool {
        self.with_active(|_, _| ()).is_some()
    }

    /// The plan of the license when it is active now (`none` when its answer named no plan),
    /// `None` when it is not: the health check's question, answered without building
    /// [`Self::status`]'s messages on every request.
    pub fn active_plan(&self) -> Option<String> {
        self.with_active(|payload, _| payload.plan.clone().unwrap_or_else(|| "none".into()))
    }

    /// When the offline grace of the active license ends (its last successful validation
    /// plus [`OFFLINE_GRACE`]): past it, without a validation, the license stops being active.
    /// `None` without an active license.
    pub fn grace_end(&self) -> Option<DateTime<Utc>> {
        self.with_active(|_, grace_end| grace_end)
    }

    /// `read` of the active license's answer and the end of its grace: activated, not
    /// expired, and validated within the offline grace ([`rules::standing`], the same rule
    /// [`Self::status`] explains in words).
    fn with_active<R>(&self, read: impl FnOnce(&AnswerPayload, DateTime<Utc>) -> R) -> Option<R> {
        let now = self.clock.now();
        let state = self.lock();
        let Current::Active { payload, last_ok, .. } = &state.current else {
            return None;
        };
        match rules::standing(payload.expires_at, *last_ok, now) {
            Standing::Active { grace_end } => Some(read(payload, grace_end)),
            Standing::Expired { .. } | Standing::GraceEnded { .. } => None,
        }
    }

    /// The license state as of the clock's now.
    pub fn status(&self) -> LicenseStatus {
        let now = self.clock.now();
        let state = self.lock();
        let unlicensed = |message: String, validated_at: Option<DateTime<Utc>>| LicenseStatus {
            status: "unlicensed".into(),
            plan: None,
            features: Features { max_positions: 0, max_watchlist: 0 },
            expires_at: None,
            validated_at: validated_at.map(iso),
            machine_id: self.machine_id.clone(),
            message: Some(message),
        };
        match &state.current {
            Current::Active { payload, last_ok, .. } => {
                let error = state.last_error.as_deref().unwrap_or("no answer yet");
                let grace_end = match rules::standing(payload.expires_at, *last_ok, now) {
                    Standing::Active { grace_end } => grace_end,
                    Standing::Expired { at } => {
                        let message =
                            format!("The license expired at {}. {HOW_TO_GET_A_KEY}", iso(at));
                        return unlicensed(message, Some(*last_ok));
                    }
                    Standing::GraceEnded { since } => {
                        let message = format!(
                            "The license could not be validated since {} and the {} h offline \
                             grace ended at {} (last error: {error}). It becomes active again \
                             at the next successful validation. {HOW_TO_GET_A_KEY}",
                            iso(*last_ok),
                            OFFLINE_GRACE.num_hours(),
                            iso(since),
                        );
                        return unlicensed(message, Some(*last_ok));
                    }
                };
                let warn = rules::warns_unreachable(*last_ok, state.last_error.is_some(), now);
                let message = warn.then(|| {
                    format!(
                        "The license server could not be reached ({error}); trading \
                             continues until {} unless a validation succeeds.",
                        iso(grace_end)
                    )
                });
                LicenseStatus {
                    status: "active".into(),
                    plan: payload.plan.clone(),
                    features: payload
                        .features
                        .map_or(Features { max_positions: 0, max_watchlist: 0 }, Features::from),
                    expires_at: payload.expires_at.map(iso),
                    validated_at: Some(iso(*last_ok)),
                    machine_id: self.machine_id.clone(),
                    message,
                }
            }
            Current::Rejected { message, .. } => {
                unlicensed(format!("{message}. {HOW_TO_GET_A_KEY}"), None)
            }
            Current::Untrusted(message) => {
                unlicensed(format!("{message}. {HOW_TO_GET_A_KEY}"), None)
            }
            Current::None => {
                let mut message = format!("No license is activated. {HOW_TO_GET_A_KEY}");
                if let Some(error) = &state.last_error {
                    message = format!("{message} Last attempt: {error}.");
                }
                unlicensed(message, None)
            }
        }
    }

    fn ensure_configured(&self) -> Result<(), LicenseError> {
        if !self.client.is_configured() {
            return Err(LicenseError::not_configured());
        }
        if self.public_key.is_none() {
            return Err(LicenseError::NotConfigured(
                "license.public_key is not configured: set it to the license server's public \
                 key (64 hex characters, printed by spotbot-license-server at start)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// Sends activate or validate and verifies the signed answer for this key, machine and
    /// request.
    async fn ask(
        &self,
        path: &str,
        key: &str,
    ) -> Result<(AnswerPayload, SignedAnswer), LicenseError> {
        self.ensure_configured()?;
        let public_key = self.public_key.as_ref().ok_or_else(LicenseError::not_configured)?;
        let nonce = uuid::Uuid::new_v4().simple().to_string();
        let request = ValidateRequest {
            license_key: key.to_string(),
            machine_id: self.machine_id.clone(),
            nonce: nonce.clone(),
        };
        let body = self.client.ask(path, &request).await?;
        let payload = body
            .answer
            .verify_for(public_key, key, &self.machine_id, Some(&nonce))
            .map_err(|e| {
                LicenseError::BadAnswer(format!("the license server's answer was refused: {e}"))
            })?;
        Ok((payload, body.answer))
    }

    /// Stores a verified answer for `key` and makes it the current license state.
    fn apply(
        &self,
        key: &str,
        payload: AnswerPayload,
        answer: &SignedAnswer,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        cache::save(&self.store, key, answer, now)?;
        let mut state = self.lock();
        state.current = if payload.verdict == Verdict::Active {
            Current::Active {
                key: key.to_string(),
                last_ok: cache::last_ok(now, &payload),
                payload,
            }
        } else {
            Current::Rejected { key: key.to_string(), message: payload.message }
        };
        state.last_attempt = Some(now);
        state.last_error = None;
        Ok(())
    }

    fn current_key(&self) -> Option<String> {
        match &self.lock().current {
            Current::Active { key, .. } | Current::Rejected { key, .. } => Some(key.clone()),
            Current::None | Current::Untrusted(_) => None,
        }
    }

    /// Activates `license_key` on this machine (moving its binding here). The current license
    /// stays as it is when the new key is refused.
    pub async fn activate(&self, license_key: &str) -> Result<Activated, LicenseError> {
        let key = wire::normalize_key(license_key)?;
        self.ensure_configured()?;
        let _op = self.ops.lock().await;
        let now = self.clock.now();
        let (payload, answer) = self.ask("/v1/activate", &key).await?;
        match payload.verdict {
            Verdict::Active => {
                let activated = Activated {
                    plan: payload.plan.clone().unwrap_or_else(|| wire::PLAN_FREE.into()),
                    features: payload
                        .features
                        .map_or(Features { max_positions: 0, max_watchlist: 0 }, Features::from),
                };
                self.apply(&key, payload, &answer, now)?;
                tracing::info!(key_id = %wire::key_id(&key), "license activated");
                Ok(activated)
            }
            verdict => {
                // The server is authoritative about the key in use; a refused new key leaves
                // the current license alone.
                if self.current_key().as_deref() == Some(key.as_str()) {
                    self.apply(&key, payload.clone(), &answer, now)?;
                }
                Err(match verdict {
                    Verdict::UnknownKey => LicenseError::UnknownKey,
                    Verdict::Revoked => LicenseError::Revoked,
                    _ => LicenseError::Refused(payload.message),
                })
            }
        }
    }

    /// Registers a free license for `email` and `name`, then activates it here.
    pub async fn register(&self, email: &str, name: &str) -> Result<Registered, LicenseError> {
        let email = wire::validate_email(email)?;
        let name = wire::validate_name(name)?;
        self.ensure_configured()?;
        let registered = self.client.register(&email, &name).await?;
        let license_key = wire::normalize_key(&registered.license_key).map_err(|_| {
            LicenseError::BadAnswer("the license server returned a malformed key".into())
        })?;
        let activation = self.activate(&license_key).await;
        Ok(Registered { license_key, plan: registered.plan, activation })
    }

    /// One step of the background revalidation: validates when the last success is 24 h old
    /// (retrying every 15 minutes after a failure), or retries a pending TRADER_LICENSE_KEY.
    pub async fn tick(&self) -> Tick {
        let now = self.clock.now();
        let due = {
            let state = self.lock();
            match &state.current {
                Current::Active { key, last_ok, .. } => {
                    let other_key = state.pending_key.as_ref().is_some_and(|p| p != key);
                    rules::validation_due(Some(*last_ok), state.last_attempt, other_key, now)
                }
                _ if state.pending_key.is_some() => {
                    rules::validation_due(None, state.last_attempt, false, now)
                }
                _ => return Tick::Idle,
            }
        };
        if !due {
            return Tick::NotDue;
        }
        self.revalidate_now().await
    }

    /// Validates with the server now, whatever the schedule says (tests, operators).
    pub async fn revalidate_now(&self) -> Tick {
        let pending = self.lock().pending_key.clone();
        if let Some(key) = pending {
            return self.activate_env_key(key).await;
        }
        let _op = self.ops.lock().await;
        let Some(key) = (match &self.lock().current {
            Current::Active { key, .. } => Some(key.clone()),
            _ => None,
        }) else {
            return Tick::Idle;
        };
        let now = self.clock.now();
        let key_id = wire::key_id(&key);
        match self.ask("/v1/validate", &key).await {
            Ok((payload, answer)) => {
                let verdict = payload.verdict;
                if let Err(err) = self.apply(&key, payload, &answer, now) {
                    tracing::error!(error = %err, "cannot persist the license answer");
                }
                if verdict == Verdict::Active {
                    tracing::info!(%key_id, "license revalidated");
                    Tick::Validated
                } else {
                    tracing::warn!(%key_id, verdict = verdict.as_str(), "license refused by the server");
                    Tick::Rejected
                }
            }
            Err(err) => {
                tracing::warn!(%key_id, error = %err, "license revalidation failed; offline grace runs");
                let mut state = self.lock();
                state.last_attempt = Some(now);
                state.last_error = Some(err.to_string());
                Tick::Unreachable
            }
        }
    }
}

/// Runs [`License::tick`] every `every` of real time until the license area is dropped. The
/// tick itself reads the clock, so the 24 h / 72 h rules follow the service's clock. A zero
/// interval runs nothing (tests call `tick` themselves).
pub fn spawn_background(license: &Arc<License>, every: std::time::Duration) {
    if every.is_zero() {
        return;
    }
    let weak = Arc::downgrade(license);
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(every);
        interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            interval.tick().await;
            let Some(license) = weak.upgrade() else { break };
            let tick = license.tick().await;
            tracing::debug!(?tick, "license tick");
        }
    });
}

#[cfg(test)]
mod tests {
    use chrono::Duration;
    use ed25519_dalek::SigningKey;

    use super::*;
    use crate::clock::TestClock;

    const KEY: &str = "SPOT-2345-6789-ABCD-EFGH";

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text).unwrap().to_utc()
    }

    fn config(signer: &SigningKey) -> Config {
        let toml = format!(
            "[license]\nserver_url = \"http://127.0.0.1:9\"\npublic_key = \"{}\"\npoll_seconds = 0\n",
            wire::public_key_hex(&signer.verifying_key())
        );
        Config::parse(&toml, "test.toml".as_ref()).unwrap()
    }

    /// Writes a cached answer signed by `signer` for this store's machine id.
    fn cache_answer(store: &Store, signer: &SigningKey, expires_at: Option<DateTime<Utc>>) {
        let machine_id = machine::load_or_create(store).unwrap();
        let issued_at = at("2026-01-01T00:00:00Z");
        let payload = AnswerPayload {
            version: wire::PAYLOAD_VERSION,
            verdict: Verdict::Active,
            key_id: wire::key_id(KEY),
            machine_id,
            nonce: "n".repeat(16),
            plan: Some("free".into()),
            features: Some(wire::Features::FREE),
            expires_at,
            issued_at,
            message: "ok".into(),
        };
        cache::save(store, KEY, &SignedAnswer::sign(&payload, signer), issued_at).unwrap();
    }

    #[test]
    fn a_signed_license_with_an_end_date_lapses_at_that_date() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let signer = SigningKey::from_bytes(&[3u8; 32]);
        cache_answer(&store, &signer, Some(at("2026-01-02T00:00:00Z")));
        let clock = TestClock::new(at("2026-01-01T12:00:00Z"));
        let license = License::open(&config(&signer), store, Arc::new(clock.clone())).unwrap();
        let status = license.status();
        assert!(status.is_active(), "{status:?}");
        assert_eq!(license.active_plan().as_deref(), Some("free"));
        assert_eq!(status.expires_at.as_deref(), Some("2026-01-02T00:00:00Z"));
        assert_eq!(status.validated_at.as_deref(), Some("2026-01-01T00:00:00Z"));
        clock.advance(Duration::hours(12));
        let status = license.status();
        assert_eq!(status.status, "unlicensed");
        assert!(!license.is_active());
        assert_eq!(license.active_plan(), None);
        assert!(status.message.unwrap().contains("expired"));
    }

    #[test]
    fn a_cache_signed_by_another_server_is_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        cache_answer(&store, &SigningKey::from_bytes(&[4u8; 32]), None);
        let configured = SigningKey::from_bytes(&[5u8; 32]);
        let clock = TestClock::new(at("2026-01-01T01:00:00Z"));
        let license = License::open(&config(&configured), store, Arc::new(clock)).unwrap();
        let status = license.status();
        assert_eq!(status.status, "unlicensed");
        assert_eq!(license.active_plan(), None);
        assert_eq!(status.health_plan(), "none");
        assert!(status.message.unwrap().contains("failed verification"));
    }

    #[test]
    fn the_public_key_setting_is_checked_when_the_config_loads() {
        let err =
            Config::parse("[license]\npublic_key = \"abc\"\n", "test.toml".as_ref()).unwrap_err();
        assert_eq!(err.key, "license.public_key");
        assert!(err.to_string().contains("64 hex characters"), "{err}");
    }
}
