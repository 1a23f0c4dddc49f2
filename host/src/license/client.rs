//! HTTP client of the license server (`/v1/register`, `/v1/activate`, `/v1/validate`).
//!
//! It only moves bytes and maps HTTP outcomes to [`LicenseError`]; whether an answer is
//! trusted is decided by the caller from the signature.

use std::time::Duration;

use reqwest::StatusCode;
use serde::Serialize;
use serde::de::DeserializeOwned;
use spotbot_license_protocol::{
    AnswerBody, ErrorBody, FieldError, RegisterRequest, RegisterResponse, ValidateRequest,
};

use super::LicenseError;

/// Talks to one license server.
#[derive(Debug, Clone)]
pub struct Client {
    http: reqwest::Client,
    base_url: Option<String>,
}

impl Client {
    pub fn new(base_url: Option<String>) -> Client {
        // reqwest is built without a default TLS provider; install ring once per process.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(15))
            // License calls are rare: never reuse a connection to a server that may be gone.
            .pool_max_idle_per_host(0)
            .build()
            .unwrap_or_default();
        let base_url = base_url.map(|u| u.trim_end_matches('/').to_string());
        Client { http, base_url }
    }

    pub fn is_configured(&self) -> bool {
        self.base_url.is_some()
    }

    pub async fn register(
        &self,
        email: &str,
        name: &str,
    ) -> Result<RegisterResponse, LicenseError> {
        let body = RegisterRequest { email: email.into(), name: name.into() };
        let (status, bytes) = self.post("/v1/register", &body).await?;
        if status.is_success() {
            return parse(&bytes);
        }
        Err(refusal(status, &bytes))
    }

    /// `/v1/activate` or `/v1/validate`: the answer body for 200, 404 and 409 (all signed).
    pub async fn ask(
        &self,
        path: &str,
        request: &ValidateRequest,
    ) -> Result<AnswerBody, LicenseError> {
        let (status, bytes) = self.post(path, request).await?;
        if matches!(status, StatusCode::OK | StatusCode::NOT_FOUND | StatusCode::CONFLICT)
            && let Ok(body) = serde_json::from_slice::<AnswerBody>(&bytes)
        {
            return Ok(body);
        }
        Err(refusal(status, &bytes))
    }

    async fn post(
        &self,
        path: &str,
        body: &impl Serialize,
    ) -> Result<(StatusCode, Vec<u8>), LicenseError> {
        let base = self.base_url.as_deref().ok_or_else(LicenseError::not_configured)?;
        let response = self
            .http
            .post(format!("{base}{path}"))
            .json(body)
            .send()
            .await
            .map_err(|e| LicenseError::Unreachable(e.without_url().to_string()))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| LicenseError::Unreachable(e.without_url().to_string()))?;
        Ok((status, bytes.to_vec()))
    }
}

fn parse<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, LicenseError> {
    serde_json::from_slice(bytes).map_err(|e| {
        LicenseError::BadAnswer(format!("unexpected answer from the license server: {e}"))
    })
}

/// Maps an error answer of the server onto what the host's caller can act on.
fn refusal(status: StatusCode, bytes: &[u8]) -> LicenseError {
    let body: Option<ErrorBody> = serde_json::from_slice(bytes).ok();
    let code = body.as_ref().map_or("", |b| b.error.as_str());
    let detail = body
        .as_ref()
        .map_or_else(|| format!("the license server answered HTTP {status}"), |b| b.detail.clone());
    match (status, code) {
        (StatusCode::CONFLICT, "email_registered") => LicenseError::EmailRegistered(detail),
        (StatusCode::TOO_MANY_REQUESTS, _) => LicenseError::RateLimited(detail),
        (StatusCode::BAD_REQUEST, _) => {
            let field = match body.as_ref().and_then(|b| b.field.as_deref()) {
                Some("email") => "email",
                Some("name") => "name",
                Some("license_key") => "license_key",
                _ => "body",
            };
            LicenseError::Invalid(FieldError { field, reason: detail })
        }
        (s, _) if s.is_server_error() => LicenseError::Unreachable(detail),
        _ => LicenseError::BadAnswer(detail),
    }
}
