//! The HTTP side of the client: the request budget and the 429 back-off before a request goes
//! out, one round trip, the answer's HTTP status as a typed error, signing an action with a
//! fresh nonce, and the retries that cannot place anything twice (reads on transport trouble
//! and after a short Retry-After, an action once after a refused nonce). An action answered
//! 429 or 418 is not sent again: a proxy or a gateway may answer so after forwarding it, so
//! its outcome is unknown (the wait is still held).

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use reqwest::{Method, StatusCode};
use serde::de::DeserializeOwned;
use serde_json::Value;
use spotbot_exchange_b_protocol::{Action, Envelope};

use super::ExchangeBClient;
use super::{action_answer, errors};
use crate::exchange::answers;
use crate::exchange::budget::{self, Admission, Admitted, InFlight, Reported};
use crate::exchange::exchange_b::weights;
use crate::exchange::exchange_b::wire::StatusEntry;
use crate::exchange::{Exchange, ExchangeError};
use crate::metrics::ExchangeOutcome;

const INFO: &str = "/info";
const EXCHANGE: &str = "/exchange";

impl ExchangeBClient {
    /// Waits out (or refuses during) a running Retry-After, then asks the request budget: a
    /// read past its share is refused unsent, a background read waits for the next minute, a
    /// money request at its ceiling waits for the window to roll over.
    async fn admit(&self, weight: u64, order: bool) -> Result<Admitted, ExchangeError> {
        self.wait_out(&self.blocked_until_ms).await?;
        let admitted = Admitted { weight, order };
        let class = budget::current_class();
        match self.budget.admit_paced(class, weight, order, || self.clock.now_ms()).await {
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
                self.metrics.exchange_request(
                    self.name().as_str(),
                    &Method::POST,
                    path,
                    outcome,
                    None,
                );
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
            self.name().as_str(),
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
            tracing::warn!(retry_after_s = wait.as_secs(), %status, path, "exchange B rate limit");
            return Err(errors::limited(status, wait, path == EXCHANGE));
        }
        Err(errors::http_error(status, text))
    }

    /// A request with the retries that cannot place anything twice: a Retry-After short
    /// enough is waited out (a read's 429, or the budget's refusal before anything was sent;
    /// an action's 429 is `Unknown`, see [`errors::limited`]), and reads (`idempotent`) are
    /// retried on transport trouble.
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
        answers::parse(&answer).map_err(|e| e.read(&format!("/info {kind}")))
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
            self.budget.charge(budget::current_class(), extra, self.clock.now_ms());
        }
        Ok(list)
    }

    /// Signs `action` (one order or one cancel) with a fresh nonce and sends it once. A
    /// refused nonce (nothing was executed) is retried once with a new one. The answer's
    /// top-level `err` is a typed error, a well-formed `ok` gives the action's status, and any
    /// other answer is `Unknown` (see [`action_answer::status`]).
    pub(super) async fn act(&self, action: &Action) -> Result<StatusEntry, ExchangeError> {
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
            match action_answer::status(&answer, action) {
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

#[cfg(test)]
mod tests {
    //! The transport against a scripted exchange on loopback: what each HTTP-level damage to
    //! an action's answer becomes, and how often the action was sent.

    use std::sync::{Arc, Mutex};

    use rust_decimal_macros::dec;
    use spotbot_exchange_b_protocol::{
        Grouping, Network, OrderTypeWire, OrderWire, PrivateKey, Tif, WireDecimal,
    };
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    use super::*;
    use crate::clock::SharedClock;
    use crate::exchange::exchange_b::ClientConfig;
    use crate::exchange::exchange_b::cloid::cloid_of;
    use crate::metrics::Metrics;

    const KEY: &str = "0x0123456789012345678901234567890123456789012345678901234567890123";

    /// How the scripted exchange answers one request.
    #[derive(Clone)]
    enum Reply {
        /// A status line's rest, extra header lines, a body, after a pause.
        Answer { status: &'static str, headers: &'static str, body: &'static str, after: Duration },
        /// The request is read, then the connection closed without an answer.
        Drop,
    }

    fn answer(status: &'static str, headers: &'static str, body: &'static str) -> Reply {
        Reply::Answer { status, headers, body, after: Duration::ZERO }
    }

    /// A server answering its n-th request with `replies[n]` (the last one from then on); the
    /// paths it was asked, in order.
    async fn exchange(replies: Vec<Reply>) -> (String, Arc<Mutex<Vec<String>>>) {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let paths = Arc::new(Mutex::new(Vec::new()));
        let seen = paths.clone();
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(serve(socket, seen.clone(), replies.clone()));
            }
        });
        (url, paths)
    }

    async fn serve(mut socket: TcpStream, seen: Arc<Mutex<Vec<String>>>, replies: Vec<Reply>) {
        let Some(path) = read_request(&mut socket).await else { return };
        let n = {
            let mut seen = seen.lock().unwrap();
            seen.push(path);
            seen.len() - 1
        };
        match replies[n.min(replies.len() - 1)].clone() {
            Reply::Answer { status, headers, body, after } => {
                tokio::time::sleep(after).await;
                let head = format!(
                    "HTTP/1.1 {status}\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n",
                    body.len()
                );
                let _ = socket.write_all(format!("{head}{body}").as_bytes()).await;
                let _ = socket.shutdown().await;
            }
            Reply::Drop => drop(socket),
        }
    }

    /// Reads one request (head and body); its path.
    async fn read_request(socket: &mut TcpStream) -> Option<String> {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        loop {
            let n = socket.read(&mut chunk).await.ok().filter(|n| *n > 0)?;
            buf.extend_from_slice(&chunk[..n]);
            let text = String::from_utf8_lossy(&buf).to_string();
            let Some((head, body)) = text.split_once("\r\n\r\n") else { continue };
            let length = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase().strip_prefix("content-length:").map(String::from)
                })
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if body.len() >= length {
                return head.split_whitespace().nth(1).map(String::from);
            }
        }
    }

    fn client(url: &str) -> ExchangeBClient {
        let mut config = ClientConfig::new(url, Network::Testnet);
        config.timeout = Duration::from_millis(500);
        let clock: SharedClock = Arc::new(crate::clock::SystemClock);
        let key = PrivateKey::from_hex(KEY).unwrap();
        ExchangeBClient::new(config, Some(key), None, clock, Metrics::default()).unwrap()
    }

    fn order() -> Action {
        let wire = OrderWire {
            a: 10142,
            b: true,
            p: WireDecimal(dec!(65000)),
            s: WireDecimal(dec!(0.001)),
            r: false,
            t: OrderTypeWire::Limit { tif: Tif::Gtc },
            c: Some(cloid_of("SE_x_BTCUSDT")),
        };
        Action::Order { orders: vec![wire], grouping: Grouping::Na }
    }

    /// What sending one order against `reply` gives, and how many times it was sent.
    async fn act_against(reply: Reply) -> (Result<StatusEntry, ExchangeError>, usize) {
        let (url, paths) = exchange(vec![reply]).await;
        let result = client(&url).act(&order()).await;
        let sent = paths.lock().unwrap().iter().filter(|p| *p == EXCHANGE).count();
        (result, sent)
    }

    const HTML_502: &str = "<html><body><h1>502 Bad Gateway</h1></body></html>";

    /// Every HTTP-level damage to an action's answer is an unknown outcome, and the action is
    /// sent once: a 429 or 418 too (a proxy may answer so after forwarding it).
    #[tokio::test]
    async fn damaged_answers_to_an_action_are_unknown_and_it_is_sent_once() {
        let cases = [
            (answer("429 Too Many Requests", "Retry-After: 1\r\n", ""), "429"),
            (answer("418 I'm a teapot", "Retry-After: 1\r\n", ""), "418"),
            (answer("502 Bad Gateway", "Content-Type: text/html\r\n", HTML_502), "502 page"),
            (answer("503 Service Unavailable", "", "upstream connect error"), "503"),
            (answer("504 Gateway Timeout", "", ""), "504"),
            (answer("200 OK", "", ""), "an empty 200"),
            (answer("200 OK", "", r#"{"status":"ok","response":{"type":"order","da"#), "cut"),
            (
                Reply::Answer {
                    status: "200 OK",
                    headers: "",
                    body: r#"{"status":"ok","response":{"type":"order","data":{"statuses":[{"resting":{"oid":1}}]}}}"#,
                    after: Duration::from_secs(2),
                },
                "slower than the timeout",
            ),
            (Reply::Drop, "the connection dropped after the request"),
        ];
        for (reply, why) in cases {
            let (result, sent) = act_against(reply).await;
            assert!(matches!(result, Err(ExchangeError::Unknown { .. })), "{why}: {result:?}");
            assert_eq!(sent, 1, "{why}: sent once");
        }
    }

    #[tokio::test]
    async fn a_limit_on_an_action_is_held_before_the_next_request() {
        let (url, paths) = exchange(vec![
            answer("429 Too Many Requests", "Retry-After: 30\r\n", ""),
            answer("200 OK", "", r#"{"@142":"97000"}"#),
        ])
        .await;
        let c = client(&url);
        assert!(c.act(&order()).await.unwrap_err().is_unknown_outcome());
        let read = c.mids().await.unwrap_err();
        assert!(matches!(read, ExchangeError::RateLimited { .. }), "held: {read:?}");
        assert_eq!(paths.lock().unwrap().len(), 1, "nothing sent during the hold");
    }

    /// Reads are idempotent: a 429 is waited out and the read sent again; an unreadable answer
    /// is `Decode`, never a value built from defaults.
    #[tokio::test]
    async fn reads_retry_a_limit_and_refuse_an_unreadable_answer() {
        let (url, paths) = exchange(vec![
            answer("429 Too Many Requests", "Retry-After: 0\r\n", ""),
            answer("200 OK", "", r#"{"@142":"97000"}"#),
        ])
        .await;
        let mids = client(&url).mids().await.unwrap();
        assert_eq!((mids["@142"], paths.lock().unwrap().len()), (dec!(97000), 2));

        for body in [r#"{"@142":"-1"}"#, r#"{"@142":"1e400"}"#, r#"{"@142":97000}"#, "", HTML_502] {
            let (url, _) = exchange(vec![answer("200 OK", "", body)]).await;
            let e = client(&url).mids().await.unwrap_err();
            assert!(matches!(e, ExchangeError::Decode { .. }), "{body}: {e:?}");
        }
    }
}
