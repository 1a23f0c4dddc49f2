//! The HTTP side of the client: time sync, the request budget and the back-off rules before a
//! request goes out, one signed round trip, and the protocol's retries (-1021, Retry-After,
//! transport trouble on reads).

use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;

use super::{ExchangeAClient, Security, lock, map_error};
use crate::exchange::budget::{self, Admission, Admitted, InFlight, Reported};
use crate::exchange::exchange_a::signer::Params;
use crate::exchange::exchange_a::weights;
use crate::exchange::exchange_a::wire::{self, ErrorBody};
use crate::exchange::{Exchange, ExchangeError, answers};
use crate::metrics::ExchangeOutcome;

impl ExchangeAClient {
    /// Measures the offset between the exchange's clock and ours.
    pub async fn sync_time(&self) -> Result<i64, ExchangeError> {
        let before = self.clock.now_ms();
        let body =
            self.send_once(&Method::GET, "/api/v3/time", &Params::new(), Security::Public).await?;
        let t: wire::ServerTime = serde_json::from_slice(&body)
            .map_err(|e| ExchangeError::Decode { detail: format!("/api/v3/time: {e}") })?;
        let after = self.clock.now_ms();
        let offset = t.server_time - (before + after) / 2;
        self.time_offset_ms.store(offset, Ordering::Relaxed);
        self.time_synced.store(true, Ordering::Relaxed);
        Ok(offset)
    }

    /// Refuses locally while banned or inside a Retry-After window that is too long to wait,
    /// then asks the request budget: a read past its share is refused without sending, a
    /// background read waits for the next minute, a money request at its ceiling waits for
    /// the window to roll over. A request held back unsent comes with its outcome for the
    /// metrics.
    async fn respect_limits(
        &self,
        method: &Method,
        path: &str,
        params: &Params,
    ) -> Result<Admitted, (ExchangeOutcome, ExchangeError)> {
        let now = Instant::now();
        if let Some(until) = *lock(&self.banned_until)
            && until > now
        {
            return Err((
                ExchangeOutcome::Banned,
                ExchangeError::Banned { retry_after: until - now },
            ));
        }
        let blocked = *lock(&self.blocked_until);
        if let Some(until) = blocked.filter(|u| *u > now) {
            let wait = until - now;
            if wait > self.config.max_auto_wait {
                let error = ExchangeError::RateLimited { retry_after: wait };
                return Err((ExchangeOutcome::RateLimited, error));
            }
            tokio::time::sleep(wait).await;
        }
        let weight = weights::weight(method, path, params);
        let order = weights::places_order(method, path);
        let refused = |error| Err((ExchangeOutcome::BudgetRefused, error));
        let class = budget::current_class();
        match self.budget.admit_paced(class, weight, order, || self.server_now_ms()).await {
            Admission::Go => Ok(Admitted { weight, order }),
            Admission::Refuse(retry_after) if class == budget::Class::Read => {
                refused(budget::refused(retry_after))
            }
            Admission::Refuse(retry_after) => refused(ExchangeError::RateLimited { retry_after }),
            Admission::Wait(wait) if wait > self.config.max_auto_wait => {
                refused(ExchangeError::RateLimited { retry_after: wait })
            }
            Admission::Wait(wait) => {
                tracing::warn!(
                    wait_ms = wait.as_millis() as u64,
                    path,
                    "request budget: money paths at their ceiling; waiting for the window"
                );
                tokio::time::sleep(wait + Duration::from_millis(50)).await;
                self.budget.count_after_wait(weight, order, self.server_now_ms());
                Ok(Admitted { weight, order })
            }
        }
    }

    /// One HTTP exchange, no retries. Signed requests carry timestamp, recvWindow and the
    /// signature; every parameter travels in the query string. Counted in the metrics by its
    /// outcome, also when the limits hold it back unsent.
    async fn send_once(
        &self,
        method: &Method,
        path: &'static str,
        params: &Params,
        security: Security,
    ) -> Result<axum::body::Bytes, ExchangeError> {
        let admitted = match self.respect_limits(method, path, params).await {
            Ok(admitted) => admitted,
            Err((outcome, refused)) => {
                self.metrics.exchange_request(self.name().as_str(), method, path, outcome, None);
                return Err(refused);
            }
        };
        let mut in_flight = InFlight::new(&self.budget, admitted, || self.server_now_ms());
        let mut params = params.clone();
        let mut request = match security {
            Security::Public => None,
            Security::Signed => {
                let signer = self.signer.as_ref().ok_or_else(|| ExchangeError::NotConfigured {
                    detail: "EXCHANGE_API_KEY and EXCHANGE_API_SECRET are not set".into(),
                })?;
                let ts = self.clock.now_ms() + self.time_offset_ms();
                signer.sign_params(&mut params, ts, self.config.recv_window_ms);
                Some(signer.api_key().to_string())
            }
        };
        let url = if params.is_empty() {
            format!("{}{}", self.config.base_url, path)
        } else {
            format!("{}{}?{}", self.config.base_url, path, params.as_str())
        };
        let mut builder = self.http.request(method.clone(), url);
        if let Some(key) = request.take() {
            builder = builder.header("X-MBX-APIKEY", key);
        }
        let started = Instant::now();
        let answer = round_trip(builder, &mut in_flight).await;
        let outcome = match &answer {
            Ok((status, ..)) => ExchangeOutcome::of_status(*status),
            Err(failure) => ExchangeOutcome::of_transport(failure.error()),
        };
        self.metrics.exchange_request(
            self.name().as_str(),
            method,
            path,
            outcome,
            Some(started.elapsed()),
        );
        let (status, headers, body) = answer.map_err(Transport::into_exchange_error)?;
        let retry_after = headers
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        if status.is_success() {
            return Ok(body);
        }
        if status == StatusCode::IM_A_TEAPOT {
            let wait = retry_after.unwrap_or(Duration::from_secs(120));
            *lock(&self.banned_until) = Some(Instant::now() + wait);
            tracing::error!(
                retry_after_s = wait.as_secs(),
                "exchange A banned this IP (418); all requests stop until it ends"
            );
            return Err(may_have_executed(method, ExchangeError::Banned { retry_after: wait }));
        }
        if status == StatusCode::TOO_MANY_REQUESTS {
            let wait = retry_after.unwrap_or(Duration::from_secs(1));
            *lock(&self.blocked_until) = Some(Instant::now() + wait);
            tracing::warn!(retry_after_s = wait.as_secs(), "exchange A rate limit (429)");
            return Err(may_have_executed(
                method,
                ExchangeError::RateLimited { retry_after: wait },
            ));
        }
        match serde_json::from_slice::<ErrorBody>(&body) {
            Ok(e) => Err(map_error(status, e.code, e.msg)),
            Err(_) if status.is_server_error() || method != Method::GET => {
                Err(ExchangeError::Unknown {
                    detail: format!("HTTP {status} without an error body"),
                })
            }
            Err(_) => Err(ExchangeError::Decode {
                detail: format!("HTTP {status} without an error body"),
            }),
        }
    }

    /// A request with the protocol's retries: -1021 resyncs the clock and retries once; a
    /// Retry-After short enough is waited out (a 429 means nothing was executed); GETs are also
    /// retried on transport trouble. Anything else is returned as is.
    pub(super) async fn call<T: DeserializeOwned>(
        &self,
        method: Method,
        path: &'static str,
        params: Params,
        security: Security,
    ) -> Result<T, ExchangeError> {
        if security == Security::Signed && !self.time_synced.load(Ordering::Relaxed) {
            self.sync_time().await?;
        }
        let idempotent = method == Method::GET;
        let mut resynced = false;
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            match self.send_once(&method, path, &params, security).await {
                Ok(body) => {
                    // One JSON value, no key twice: a read that fails is unreadable, an order
                    // whose answer fails may have executed (unknown, looked up).
                    return answers::parse(&body)
                        .map_err(|e| if idempotent { e.read(path) } else { e.action(path) });
                }
                Err(ExchangeError::InvalidTimestamp { .. })
                    if !resynced && security == Security::Signed =>
                {
                    resynced = true;
                    tracing::warn!(
                        path,
                        "timestamp outside recvWindow (-1021): resyncing server time and retrying once"
                    );
                    self.sync_time().await?;
                }
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
                Err(e) => return Err(e),
            }
        }
    }
}

/// The error of a 429 or 418 answer to a request that changes something (an order, a list, a
/// cancel): the exchange documents that nothing was executed, but a gateway or proxy in
/// between may have forwarded it first, so the outcome is unknown and the order is looked up
/// by its client id, never sent again on the answer's word. The wait is kept either way.
fn may_have_executed(method: &Method, limited: ExchangeError) -> ExchangeError {
    if *method == Method::GET {
        return limited;
    }
    ExchangeError::Unknown { detail: format!("{limited} on a request that may have executed") }
}

/// A request that got no complete answer.
enum Transport {
    /// No answer at all (connection, timeout).
    Send(reqwest::Error),
    /// An answer with `StatusCode` whose body was lost.
    Body(StatusCode, reqwest::Error),
}

impl Transport {
    fn error(&self) -> &reqwest::Error {
        match self {
            Transport::Send(e) | Transport::Body(_, e) => e,
        }
    }

    fn into_exchange_error(self) -> ExchangeError {
        match self {
            Transport::Send(e) if e.is_connect() => {
                ExchangeError::Unreachable { detail: e.without_url().to_string() }
            }
            Transport::Send(e) => ExchangeError::Unknown { detail: e.without_url().to_string() },
            Transport::Body(status, e) => ExchangeError::Unknown {
                detail: format!("HTTP {status}, body lost: {}", e.without_url()),
            },
        }
    }
}

/// Sends `request` and reads its answer; the budget takes the counts of the answer's headers
/// as soon as they arrive.
async fn round_trip<F: Fn() -> i64>(
    request: reqwest::RequestBuilder,
    in_flight: &mut InFlight<'_, F>,
) -> Result<(StatusCode, reqwest::header::HeaderMap, axum::body::Bytes), Transport> {
    let response = request.send().await.map_err(Transport::Send)?;
    let status = response.status();
    let headers = response.headers().clone();
    let header = |name: &str| {
        headers.get(name).and_then(|v| v.to_str().ok()).and_then(|v| v.parse::<u64>().ok())
    };
    in_flight.answered(Reported {
        weight_1m: header("x-mbx-used-weight-1m"),
        orders_10s: header("x-mbx-order-count-10s"),
        orders_day: header("x-mbx-order-count-1d"),
    });
    let body = response.bytes().await.map_err(|e| Transport::Body(status, e))?;
    Ok((status, headers, body))
}
