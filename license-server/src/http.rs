//! HTTP routes of the license server. Handlers parse, call [`Db`], sign, answer.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};

use axum::extract::rejection::JsonRejection;
use axum::extract::{ConnectInfo, DefaultBodyLimit, FromRequest, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use chrono::{DateTime, Duration, Utc};
use ed25519_dalek::SigningKey;
use serde::de::DeserializeOwned;
use sha2::{Digest as _, Sha256};

use crate::Clock;
use crate::db::{Db, DbError, Lookup};
use crate::wire::{
    self, AnswerBody, AnswerPayload, ErrorBody, FieldError, PublicKeyBody, RegisterRequest,
    RegisterResponse, RevokeRequest, SignedAnswer, ValidateRequest, Verdict,
};

/// Largest request body accepted.
const BODY_LIMIT: usize = 16 * 1024;
/// Length of the register rate-limit window.
const RATE_WINDOW: Duration = Duration::hours(1);

pub(crate) struct Inner {
    pub db: Db,
    pub signing: SigningKey,
    pub clock: Clock,
    pub admin_token: Option<String>,
    pub register_per_hour: u32,
    pub limiter: Mutex<HashMap<IpAddr, (DateTime<Utc>, u32)>>,
}

pub(crate) type AppState = Arc<Inner>;

pub(crate) fn router(state: AppState) -> Router {
    Router::new()
        .route("/v1/health", get(health))
        .route("/v1/public-key", get(public_key))
        .route("/v1/register", post(register))
        .route("/v1/activate", post(activate))
        .route("/v1/validate", post(validate))
        .route("/v1/revoke", post(revoke))
        .fallback(not_found)
        .layer(DefaultBodyLimit::max(BODY_LIMIT))
        .with_state(state)
}

/// An error answer: the status code and the one error body.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    body: ErrorBody,
    retry_after: Option<i64>,
}

impl ApiError {
    fn new(status: StatusCode, error: &str, detail: impl Into<String>) -> Self {
        ApiError {
            status,
            body: ErrorBody {
                ok: false,
                error: error.to_string(),
                detail: detail.into(),
                field: None,
            },
            retry_after: None,
        }
    }

    fn internal(err: impl std::fmt::Display) -> Self {
        tracing::error!(error = %err, "license server internal error");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "internal error")
    }
}

impl From<FieldError> for ApiError {
    fn from(err: FieldError) -> Self {
        let mut e = ApiError::new(
            StatusCode::BAD_REQUEST,
            &format!("invalid_{}", err.field),
            err.to_string(),
        );
        e.body.field = Some(err.field.to_string());
        e
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, Json(self.body)).into_response();
        if let Some(secs) = self.retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(secs.max(1)));
        }
        response
    }
}

/// `Json` whose rejection is the error body (400 `invalid_body`, naming the field serde names).
pub(crate) struct Body<T>(T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        match Json::<T>::from_request(req, state).await {
            Ok(Json(value)) => Ok(Body(value)),
            Err(rejection) => Err(body_rejection(&rejection)),
        }
    }
}

fn body_rejection(rejection: &JsonRejection) -> ApiError {
    let status = match rejection {
        JsonRejection::MissingJsonContentType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
        JsonRejection::BytesRejection(_) => StatusCode::PAYLOAD_TOO_LARGE,
        _ => StatusCode::BAD_REQUEST,
    };
    ApiError::new(status, "invalid_body", rejection.body_text())
}

async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "not_found", "no such route")
}

async fn health() -> Json<serde_json::Value> {
    Json(serde_json::json!({ "ok": true }))
}

async fn public_key(State(state): State<AppState>) -> Json<PublicKeyBody> {
    Json(PublicKeyBody {
        algorithm: "ed25519".into(),
        public_key: wire::public_key_hex(&state.signing.verifying_key()),
    })
}

/// Runs blocking storage work off the async workers.
async fn blocking<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce(&Db) -> Result<T, DbError> + Send + 'static,
) -> Result<T, DbError> {
    let state = state.clone();
    tokio::task::spawn_blocking(move || work(&state.db))
        .await
        .unwrap_or_else(|join| Err(DbError::Storage(redb::Error::Corrupted(join.to_string()))))
}

async fn register(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    Body(req): Body<RegisterRequest>,
) -> Result<(StatusCode, Json<RegisterResponse>), ApiError> {
    check_rate(&state, peer.ip())?;
    let email = wire::validate_email(&req.email)?;
    let name = wire::validate_name(&req.name)?;
    let now = (state.clock)();
    let key = blocking(&state, move |db| {
        db.register(&email, &name, now, || {
            let mut random = [0u8; wire::KEY_GROUPS * wire::KEY_GROUP_LEN];
            getrandom::fill(&mut random).expect("system randomness is available");
            wire::key_from_random(&random)
        })
    })
    .await
    .map_err(|e| match e {
        DbError::EmailTaken => ApiError::new(
            StatusCode::CONFLICT,
            "email_registered",
            "a license is already registered for this e-mail address; activate the key you \
             received then, or ask the license administrator",
        ),
        other => ApiError::internal(other),
    })?;
    tracing::info!(key_id = %wire::key_id(&key), "license registered");
    Ok((
        StatusCode::CREATED,
        Json(RegisterResponse {
            ok: true,
            license_key: key,
            plan: wire::PLAN_FREE.into(),
            features: wire::Features::FREE,
            message: "free license registered; activate it with your machine id".into(),
        }),
    ))
}

/// Counts a register attempt from `ip`; refuses it once the hourly budget is spent.
fn check_rate(state: &AppState, ip: IpAddr) -> Result<(), ApiError> {
    let now = (state.clock)();
    let mut buckets = state.limiter.lock().unwrap_or_else(|p| p.into_inner());
    if buckets.len() > 10_000 {
        buckets.retain(|_, (start, _)| now - *start < RATE_WINDOW);
    }
    let (start, count) = buckets.entry(ip).or_insert((now, 0));
    if now - *start >= RATE_WINDOW {
        *start = now;
        *count = 0;
    }
    if *count >= state.register_per_hour {
        let mut err = ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "rate_limited",
            format!("at most {} registrations per hour from one address", state.register_per_hour),
        );
        err.retry_after = Some((*start + RATE_WINDOW - now).num_seconds());
        return Err(err);
    }
    *count += 1;
    Ok(())
}

struct Checked {
    key: String,
    machine_id: String,
    nonce: String,
}

fn check_validate_request(req: &ValidateRequest) -> Result<Checked, ApiError> {
    Ok(Checked {
        key: wire::normalize_key(&req.license_key)?,
        machine_id: wire::validate_machine_id(&req.machine_id)?,
        nonce: wire::validate_nonce(&req.nonce)?,
    })
}

/// Binds the key to the asking machine (the last activation wins) and answers signed.
async fn activate(
    State(state): State<AppState>,
    Body(req): Body<ValidateRequest>,
) -> Result<Response, ApiError> {
    lookup_and_answer(state, &req, "activate", |db, key, machine, now| {
        db.activate(key, machine, now)
    })
    .await
}

/// Says whether the key is valid on the asking machine, changing nothing, and answers signed.
async fn validate(
    State(state): State<AppState>,
    Body(req): Body<ValidateRequest>,
) -> Result<Response, ApiError> {
    lookup_and_answer(state, &req, "validate", |db, key, machine, _| db.validate(key, machine))
        .await
}

async fn lookup_and_answer(
    state: AppState,
    req: &ValidateRequest,
    what: &'static str,
    lookup: impl FnOnce(&Db, &str, &str, DateTime<Utc>) -> Result<Lookup, DbError> + Send + 'static,
) -> Result<Response, ApiError> {
    let c = check_validate_request(req)?;
    let now = (state.clock)();
    let (key, machine) = (c.key.clone(), c.machine_id.clone());
    let result = blocking(&state, move |db| lookup(db, &key, &machine, now))
        .await
        .map_err(ApiError::internal)?;
    tracing::info!(key_id = %wire::key_id(&c.key), verdict = result.verdict.as_str(), "{what}");
    Ok(answer(&state, &c, result, now))
}

/// Builds the signed answer; negative verdicts are signed too, so a man in the middle cannot
/// fake a revocation any more than an activation.
fn answer(state: &AppState, c: &Checked, lookup: Lookup, now: DateTime<Utc>) -> Response {
    let (status, message) = match lookup.verdict {
        Verdict::Active => (StatusCode::OK, "license active on this machine"),
        Verdict::UnknownKey => (StatusCode::NOT_FOUND, "no license with this key"),
        Verdict::Revoked => (StatusCode::CONFLICT, "this license was revoked"),
        Verdict::BoundElsewhere => (
            StatusCode::CONFLICT,
            "this license was activated on another machine; activate it again here to move it",
        ),
        Verdict::NotActivated => {
            (StatusCode::CONFLICT, "this license was never activated; activate it first")
        }
    };
    let active = lookup.verdict == Verdict::Active;
    let record = lookup.record.filter(|_| active);
    let payload = AnswerPayload {
        version: wire::PAYLOAD_VERSION,
        verdict: lookup.verdict,
        key_id: wire::key_id(&c.key),
        machine_id: c.machine_id.clone(),
        nonce: c.nonce.clone(),
        plan: record.as_ref().map(|r| r.plan.clone()),
        features: record.as_ref().map(|r| r.features),
        expires_at: None,
        issued_at: now,
        message: message.into(),
    };
    let body = AnswerBody {
        ok: active,
        status: lookup.verdict.as_str().into(),
        error: (!active).then(|| lookup.verdict.as_str().to_string()),
        detail: (!active).then(|| message.to_string()),
        answer: SignedAnswer::sign(&payload, &state.signing),
    };
    (status, Json(body)).into_response()
}

async fn revoke(
    State(state): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: HeaderMap,
    Body(req): Body<RevokeRequest>,
) -> Result<Json<serde_json::Value>, ApiError> {
    check_admin(&state, peer.ip(), &headers)?;
    let key = wire::normalize_key(&req.license_key)?;
    let now = (state.clock)();
    let key_id = wire::key_id(&key);
    let record = blocking(&state, move |db| db.revoke(&key, now)).await.map_err(|e| match e {
        DbError::UnknownKey => {
            ApiError::new(StatusCode::NOT_FOUND, "unknown_key", "no license with this key")
        }
        other => ApiError::internal(other),
    })?;
    tracing::info!(%key_id, "license revoked");
    Ok(Json(serde_json::json!({
        "ok": true,
        "status": "revoked",
        "revoked_at": record.revoked_at,
    })))
}

/// Admin routes: with an admin token configured the token is required (from any address);
/// without one only loopback callers are admitted.
fn check_admin(state: &AppState, ip: IpAddr, headers: &HeaderMap) -> Result<(), ApiError> {
    match &state.admin_token {
        Some(token) => {
            let given = headers
                .get(header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.strip_prefix("Bearer "))
                .unwrap_or_default();
            // Compare digests so the comparison time does not depend on the secret.
            if Sha256::digest(given.as_bytes()) == Sha256::digest(token.as_bytes()) {
                Ok(())
            } else {
                Err(ApiError::new(
                    StatusCode::UNAUTHORIZED,
                    "admin_required",
                    "send Authorization: Bearer <admin token>",
                ))
            }
        }
        None if ip.is_loopback() => Ok(()),
        None => Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "admin_required",
            "without an admin token, revocation is accepted from loopback only",
        )),
    }
}
