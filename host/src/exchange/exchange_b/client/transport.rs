//! The HTTP side of the client: the request budget and the 429 back-off before a request goes
//! out, one round trip, the answer's HTTP status as a typed error, signing an action with a
//! fresh nonce, and the retries the protocol allows (reads on transport trouble, any request
//! after a short Retry-After, an action once after a refused nonce).

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::Value;
use spotbot_exchange_b_protocol::{Action, Envelope};

use super::ExchangeBClient;
use super::errors;
use crate::exchange::budget::{self, Admission, Admitted, InFlight, Reported};
use crate::exchange::exchange_b::weights;
use crate::exchange::exchange_b::wire::{ExchangeAnswer, StatusEntry};
use crate::exchange::{Exchange, ExchangeError};
use crate::metrics::ExchangeOutcome;

const INFO: &str = "/info";
const EXCHANGE: &str = "/exchange";

impl ExchangeBClient {
    /// Waits out (or refuses during) a running Retry-After, then asks the request budget: a
    /// read past its share is refused unsent, a money request at its ceiling waits for the
    /// window to roll over.
    async fn admit(&self, weight: u64, order: bool) -> Result<Admitted, ExchangeError> {
        self.wait_out(&self.blocked_until_ms).await?;
        let admitted = Admitted { weight, order };
        let class = budget::current_class();
        match self.budget.admit(class, weight, order, self.clock.now_ms()) {
            Admission::Go => Ok(admitted),
            Admission::Refuse(wait) if class == budget::Class::Read => Err(budget::refused(wait)),
            Admission::Refuse(wait) => Err(ExchangeError::RateLimited { retry_after: wait }),
            Admission::Wait(wait) if wait > self.config.max_auto_wait => {
                Err(ExchangeError::RateLimited { retry_after: wait })
            }
            Admission::Wait(wait) => {
                tracing::warn!(
                    wait_ms = wait.as_millis() as u64,
                    "request budget: money paths at their ceiling; waiting for the window"
                );
                tokio::time::sleep(wait + Duration::from_millis(50)).await;
                self.budget.count_after_wait(weight, order, self.clock.now_ms());
                Ok(admitted)
            }
        }
    }

    /// Waits until `until` (service clock, ms) when that is at most `max_auto_wait` away;
    /// else answers RateLimited with the time left.
    async fn wait_out(&self, until: &AtomicI64) -> Result<(), ExchangeError> {
        let left = until.load(Ordering::Relaxed) - self.clock.now_ms();
        if left > 0 {
            let wait = Duration::from_millis(left as u64);
            if wait > self.config.max_auto_wait {
                return Err(ExchangeError::RateLimited { retry_after: wait });
            }
            tokio::time::sleep(wait).await;
        }
        Ok(())
    }

    /// One POST of `body` to `path`, no retries; counted in the metrics by its outcome.
    async fn send_once(
        &self,
        path: &'static str,
        body: Vec<u8>,
        weight: u64,
        order: bool,
    ) -> Result<axum::body::Bytes, ExchangeError> {
        let admitted = match self.admit(weight, order).await {
            Ok(admitted) => admitted,
            Err(refused) => {
                let outcome = match refused {
                    ExchangeError::RateLimited { .. } => ExchangeOutcome::RateLimited,
                    _ => ExchangeOutcome::BudgetRefused,
                };
                self.metrics.exchange_request(self.name(), &Method::POST, path, outcome, None);
                return Err(refused);
            }
        };
        let mut in_flight = InFlight::new(&self.budget, admitted, || self.clock.now_ms());
        let request = self
            .http
            .post(format!("{}{path}", self.config.base_url))
            .header("Content-Type", "application/json")
            .body(body);
        let started = Instant::now();
        let answer = async {
            let response = request.send().await.map_err(|e| (e, None))?;
            let status = response.status();
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.trim().parse::<u64>().ok())
                .map(Duration::from_secs);
            let body = response.bytes().await.map_err(|e| (e, Some(status)))?;
            Ok::<_, (reqwest::Error, Option<StatusCode>)>((status, retry_after, body))
        }
        .await;
        in_flight.answered(Reported::default());
        let outcome = match &answer {
            Ok((status, ..)) => ExchangeOutcome::of_status(*status),
            Err((e, _)) => ExchangeOutcome::of_transport(e),
        };
        self.metrics.exchange_request(
            self.name(),
            &Method::POST,
            path,
            outcome,
            Some(started.elapsed()),
        );
        let (status, retry_after, body) = answer.map_err(|(e, status)| match status {
            None if e.is_connect() => {
                ExchangeError::Unreachable { detail: e.without_url().to_string() }
            }
            None => ExchangeError::Unknown { detail: e.without_url().to_string() },
            Some(s) => ExchangeError::Unknown {
                detail: format!("HTTP {s}, body lost: {}", e.without_url()),
            },
        })?;
        if status.is_success() {
            return Ok(body);
        }
        let text = String::from_utf8_lossy(&body).chars().take(500).collect::<String>();
        if status == StatusCode::TOO_MANY_REQUESTS || status == StatusCode::IM_A_TEAPOT {
            let wait = retry_after.unwrap_or(Duration::from_secs(1));
            let wait_ms = i64::try_from(wait.as_millis()).unwrap_or(i64::MAX);
            let until = self.clock.now_ms().saturating_add(wait_ms);
            self.blocked_until_ms.fetch_max(until, Ordering::Relaxed);
            tracing::warn!(retry_after_s = wait.as_secs(), %status, "exchange B rate limit");
            return Err(if status == StatusCode::IM_A_TEAPOT {
                ExchangeError::Banned { retry_after: wait }
            } else {
                ExchangeError::RateLimited { retry_after: wait }
            });
        }
        Err(errors::http_error(status, text))
    }

    /// A request with the retries that cannot place anything twice: a Retry-After short
    /// enough is waited out (a 429 executed nothing), and reads (`idempotent`) are retried on
    /// transport trouble.
    async fn post(
        &self,
        path: &'static str,
        body: Vec<u8>,
        weight: u64,
        idempotent: bool,
    ) -> Result<axum::body::Bytes, ExchangeError> {
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            match self.send_once(path, body.clone(), weight, path == EXCHANGE).await {
                Err(ExchangeError::RateLimited { retry_after })
                    if retry_after <= self.config.max_auto_wait && attempt < 4 =>
                {
                    tokio::time::sleep(retry_after).await;
                }
                Err(ExchangeError::Unknown { .. } | ExchangeError::Unreachable { .. })
                    if idempotent && attempt < 3 =>
                {
                    tokio::time::sleep(Duration::from_millis(100 * u64::from(attempt))).await;
                }
                other => return other,
            }
        }
    }

    /// `POST /info` of `kind` with the request's other fields in `fields`.
    pub(super) async fn info<T: DeserializeOwned>(
        &self,
        kind: &'static str,
        mut fields: Value,
    ) -> Result<T, ExchangeError> {
        if let Value::Object(map) = &mut fields {
            map.insert("type".into(), Value::String(kind.into()));
        }
        let body = serde_json::to_vec(&fields)
            .map_err(|e| ExchangeError::Decode { detail: format!("{kind}: {e}") })?;
        let answer = self.post(INFO, body, weights::info_weight(kind), true).await?;
        serde_json::from_slice(&answer)
            .map_err(|e| ExchangeError::Decode { detail: format!("/info {kind}: {e}") })
    }

    /// An `/info` list answer of `kind`, with the surcharge its length costs.
    pub(super) async fn info_list<T: DeserializeOwned>(
        &self,
        kind: &'static str,
        fields: Value,
    ) -> Result<Vec<T>, ExchangeError> {
        let list: Vec<T> = self.info(kind, fields).await?;
        let extra = weights::surcharge(kind, list.len());
        if extra > 0 {
            self.budget.charge(extra, self.clock.now_ms());
        }
        Ok(list)
    }

    /// Signs `action` with a fresh nonce and sends it once. A refused nonce (nothing was
    /// executed) is retried once with a new one. The answer's top-level `err` is a typed
    /// error; `ok` gives the statuses.
    pub(super) async fn act(&self, action: &Action) -> Result<Vec<StatusEntry>, ExchangeError> {
        let key = self.key.as_ref().ok_or_else(|| ExchangeError::NotConfigured {
            detail: "EXCHANGE_PRIVATE_KEY is not set".into(),
        })?;
        let weight = weights::exchange_weight(action.batch_len());
        if !action.is_cancel() {
            self.wait_out(&self.orders_held_until_ms).await?;
        }
        let mut renonced = false;
        loop {
            let nonce = self.nonces.next(self.clock.now_ms());
            let signature = key
                .sign_l1(action, nonce, None, self.config.network)
                .map_err(|e| ExchangeError::Refused { reason: e.to_string() })?;
            let envelope = Envelope {
                action: action.clone(),
                nonce,
                signature,
                vault_address: None,
                expires_after: None,
            };
            let body = serde_json::to_vec(&envelope)
                .map_err(|e| ExchangeError::Refused { reason: format!("action: {e}") })?;
            let answer = self.post(EXCHANGE, body, weight, false).await?;
            let answer: ExchangeAnswer = serde_json::from_slice(&answer).map_err(|e| {
                // Sent and answered, but unreadable: it may have been executed.
                ExchangeError::Unknown { detail: format!("/exchange: unreadable answer: {e}") }
            })?;
            match errors::statuses(answer) {
                Err(ExchangeError::InvalidTimestamp { msg, .. }) if !renonced => {
                    renonced = true;
                    tracing::warn!(%msg, "exchange B refused the nonce; signing again with a new one");
                }
                // The address budget is spent: hold orders until the exchange takes one again.
                Err(ExchangeError::RateLimited { retry_after }) => {
                    tracing::warn!(
                        hold_s = retry_after.as_secs(),
                        "exchange B: the account's action budget is spent; orders are held"
                    );
                    let wait_ms = i64::try_from(retry_after.as_millis()).unwrap_or(i64::MAX);
                    let until = self.clock.now_ms().saturating_add(wait_ms);
                    self.orders_held_until_ms.fetch_max(until, Ordering::Relaxed);
                    return Err(ExchangeError::RateLimited { retry_after });
                }
                other => return other,
            }
        }
    }
}
