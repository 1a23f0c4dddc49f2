//! A fake of the messenger's Bot API (Telegram's wire format) on loopback, strict where the
//! real one is strict, so a test proves that what the service sends would be accepted.
//!
//! Serves `/bot<token>/<method>` with JSON bodies: `getMe`, `sendMessage`, `editMessageText`,
//! `answerCallbackQuery` and `getUpdates`. A wrong token answers 401; a message is checked like
//! the Bot API checks it (known chat, 1-4096 characters after markup, well-formed HTML with only
//! the supported tags and `&<>` escaped, `callback_data` of 1-64 bytes) and refused with the
//! Bot API's error envelope and description. Every call is recorded; faults (429 with
//! `retry_after`, 5xx, any error, a delay) can be scheduled for the next calls.
//!
//! Updates (what the boss types or presses) are injected by the test with
//! [`FakeMessenger::inject_text`] and [`FakeMessenger::inject_button`]; `getUpdates` hands them
//! out with the Bot API's `offset`, `limit`, `timeout` and sticky `allowed_updates`, and a
//! second poller while one is held gets `409 Conflict`, as a second consumer of a real token
//! does.

use std::collections::{HashMap, HashSet, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::routing::any;
use serde_json::{Value, json};
use tokio::sync::oneshot;

/// A running fake; it serves until dropped.
pub struct FakeMessenger {
    addr: SocketAddr,
    shared: Arc<Shared>,
    /// Dropping it ends the server (graceful shutdown).
    _stop: oneshot::Sender<()>,
}

/// A message the fake accepted through `sendMessage`.
#[derive(Debug, Clone, PartialEq)]
pub struct SentRecord {
    pub chat_id: i64,
    /// What the boss reads: markup removed, entities decoded.
    pub text: String,
    /// The `text` parameter as sent.
    pub html: String,
    pub parse_mode: Option<String>,
    /// (text, callback_data) of every inline button, row after row.
    pub buttons: Vec<(String, String)>,
    pub message_id: i64,
}

/// Any Bot API call, accepted or not (faults included).
#[derive(Debug, Clone, PartialEq)]
pub struct CallRecord {
    /// As in the path (`sendMessage`).
    pub method: String,
    pub params: Value,
    /// The HTTP status answered.
    pub status: u16,
}

/// What the next calls answer instead of their normal result.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// 429 `Too Many Requests: retry after N` with `parameters.retry_after`.
    RateLimit { retry_after_s: u64 },
    /// That 5xx status with a Bot API error body.
    ServerError(u16),
    /// Any error envelope (`error_code` is also the HTTP status).
    Error { code: u16, description: String },
    /// Holds the call this long, then answers normally (longer than a client timeout: a
    /// dropped answer).
    Delay(Duration),
}

struct Shared {
    token: String,
    chat_id: i64,
    state: Mutex<FakeState>,
    /// Wakes held `getUpdates` calls when an update is injected.
    updates_ready: tokio::sync::Notify,
}

#[derive(Default)]
struct FakeState {
    last_message_id: i64,
    messages: HashMap<i64, Stored>,
    sent: Vec<SentRecord>,
    calls: Vec<CallRecord>,
    faults: VecDeque<Fault>,
    answered_queries: HashSet<String>,
    /// Injected updates not yet confirmed by a poller's `offset`.
    updates: VecDeque<Value>,
    last_update_id: i64,
    /// A `getUpdates` is being held (long poll) right now.
    polling: bool,
    /// The last `allowed_updates` a poller sent; the Bot API keeps it between calls.
    allowed_updates: Option<Vec<String>>,
    /// Ids of injected button presses, the only ones `answerCallbackQuery` knows.
    callback_queries: HashSet<String>,
}

/// A message as it stands, to decide whether an edit changes anything.
struct Stored {
    html: String,
    parse_mode: Option<String>,
    reply_markup: Value,
}

/// A refusal: the HTTP status equals `error_code`, as the Bot API does.
struct BotError {
    code: u16,
    description: String,
    retry_after: Option<u64>,
}

fn bad_request(description: impl Into<String>) -> BotError {
    BotError {
        code: 400,
        description: format!("Bad Request: {}", description.into()),
        retry_after: None,
    }
}

impl FakeMessenger {
    /// Serves on 127.0.0.1 with a free port, for one bot `token` and one known `chat_id`.
    /// Runs on the calling tokio runtime.
    pub async fn start(token: &str, chat_id: i64) -> FakeMessenger {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
        let addr = listener.local_addr().expect("bound address");
        let shared = Arc::new(Shared {
            token: token.to_string(),
            chat_id,
            state: Mutex::new(FakeState::default()),
            updates_ready: tokio::sync::Notify::new(),
        });
        let app = Router::new().route("/{bot}/{method}", any(handle)).with_state(shared.clone());
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(async move {
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(async {
                    let _ = stopped.await;
                })
                .await;
        });
        FakeMessenger { addr, shared, _stop: stop }
    }

    /// `http://127.0.0.1:PORT`, the value for `[messenger] api_base` (no `/bot<token>`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every accepted `sendMessage`, in order.
    pub fn sent(&self) -> Vec<SentRecord> {
        self.shared.lock().sent.clone()
    }

    /// Every call, accepted or refused, in order.
    pub fn calls(&self) -> Vec<CallRecord> {
        self.shared.lock().calls.clone()
    }

    /// The next `count` calls answer `fault` (after those already scheduled).
    pub fn fail_next(&self, fault: Fault, count: u32) {
        let mut state = self.shared.lock();
        state.faults.extend((0..count).map(|_| fault.clone()));
    }

    /// Waits until `n` messages were accepted or `timeout` passed; returns what was sent.
    pub async fn wait_for_messages(&self, n: usize, timeout: Duration) -> Vec<SentRecord> {
        let deadline = Instant::now() + timeout;
        loop {
            let sent = self.sent();
            if sent.len() >= n || Instant::now() >= deadline {
                return sent;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// `getUpdates` and the updates a test injects (what the boss, or a stranger, types or presses).
impl FakeMessenger {
    /// A text message from user `from_user_id` in chat `chat_id`; returns its `update_id`.
    pub fn inject_text(&self, from_user_id: i64, chat_id: i64, text: &str) -> i64 {
        let mut state = self.shared.lock();
        state.last_message_id += 1;
        let message = json!({
            "message_id": state.last_message_id,
            "date": unix_now(),
            "chat": chat(chat_id),
            "from": user(from_user_id),
            "text": text,
        });
        drop(state);
        self.shared.push_update("message", message)
    }

    /// A press by user `from_user_id` on a button with `data` under message `message_id` in
    /// chat `chat_id` (a message the fake sent carries its text and keyboard; any other is
    /// "inaccessible": chat and id only). Returns the callback query's id.
    pub fn inject_button(
        &self,
        from_user_id: i64,
        chat_id: i64,
        message_id: i64,
        data: &str,
    ) -> String {
        let mut state = self.shared.lock();
        let id = format!("cbq-{}", state.callback_queries.len() + 1);
        state.callback_queries.insert(id.clone());
        let message = match state.messages.get(&message_id) {
            Some(stored) => {
                let text = match stored.parse_mode.as_deref() {
                    Some(mode) if mode.eq_ignore_ascii_case("html") => {
                        parse_html(&stored.html).unwrap_or_else(|_| stored.html.clone())
                    }
                    _ => stored.html.clone(),
                };
                let mut message = json!({
                    "message_id": message_id,
                    "date": unix_now(),
                    "chat": chat(chat_id),
                    "from": self.shared.bot_user(),
                    "text": text,
                });
                if !stored.reply_markup.is_null() {
                    message["reply_markup"] = stored.reply_markup.clone();
                }
                message
            }
            None => json!({ "message_id": message_id, "date": 0, "chat": chat(chat_id) }),
        };
        drop(state);
        let query = json!({
            "id": id,
            "from": user(from_user_id),
            "message": message,
            "chat_instance": format!("fake-{chat_id}"),
            "data": data,
        });
        self.shared.push_update("callback_query", query);
        id
    }

    /// Injected updates no poller has confirmed yet.
    pub fn pending_updates(&self) -> Vec<Value> {
        self.shared.lock().updates.iter().cloned().collect()
    }

    /// Whether a `getUpdates` is being held right now (a poller waits for updates).
    pub fn is_polling(&self) -> bool {
        self.shared.lock().polling
    }

    /// Waits until a poller holds a `getUpdates` or `timeout` passed; returns whether one does.
    pub async fn wait_until_polling(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        loop {
            if self.is_polling() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The recorded calls of one method (`getUpdates`, `answerCallbackQuery`, ...).
    pub fn calls_of(&self, method: &str) -> Vec<CallRecord> {
        self.calls().into_iter().filter(|c| c.method.eq_ignore_ascii_case(method)).collect()
    }

    /// Waits until `n` calls of `method` were answered or `timeout` passed; returns them.
    pub async fn wait_for_calls(
        &self,
        method: &str,
        n: usize,
        timeout: Duration,
    ) -> Vec<CallRecord> {
        let deadline = Instant::now() + timeout;
        loop {
            let calls = self.calls_of(method);
            if calls.len() >= n || Instant::now() >= deadline {
                return calls;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

fn user(id: i64) -> Value {
    json!({ "id": id, "is_bot": false, "first_name": format!("User {id}") })
}

/// Positive ids are private chats (a user's id), negative ones groups.
fn chat(id: i64) -> Value {
    json!({ "id": id, "type": if id > 0 { "private" } else { "group" } })
}

/// Clears the "a poller is held" flag however the call ends (answered, or dropped when the
/// client goes away).
struct PollGuard<'a>(&'a Shared);

impl Drop for PollGuard<'_> {
    fn drop(&mut self) {
        self.0.lock().polling = false;
    }
}

impl Shared {
    /// `getUpdates` holds the request, so it is the one asynchronous method.
    async fn dispatch(&self, method: &str, params: &Value) -> Result<Value, BotError> {
        if method.eq_ignore_ascii_case("getUpdates") {
            self.get_updates(params).await
        } else {
            self.call(method, params)
        }
    }

    /// Queues an update of `kind` unless the sticky `allowed_updates` excludes it (the Bot
    /// API does not even create those); wakes held polls. Returns its `update_id`.
    fn push_update(&self, kind: &str, payload: Value) -> i64 {
        let mut state = self.lock();
        state.last_update_id += 1;
        let update_id = state.last_update_id;
        let allowed = match &state.allowed_updates {
            Some(kinds) if !kinds.is_empty() => kinds.iter().any(|k| k == kind),
            _ => true,
        };
        if allowed {
            state.updates.push_back(json!({ "update_id": update_id, kind: payload }));
        }
        drop(state);
        self.updates_ready.notify_waiters();
        update_id
    }

    /// `offset` confirms (drops) every update below it; a negative one keeps only the last
    /// `-offset` updates. `limit` 1-100 (default 100). `timeout` seconds: the call is held
    /// until an update is waiting or the time is up, then answers `[]`. A call while another
    /// is held answers 409, as a second consumer of a real token gets.
    async fn get_updates(&self, params: &Value) -> Result<Value, BotError> {
        let offset = params["offset"].as_i64().unwrap_or(0);
        let limit = params["limit"].as_i64().unwrap_or(100).clamp(1, 100) as usize;
        let timeout = Duration::from_secs(params["timeout"].as_u64().unwrap_or(0));
        {
            let mut state = self.lock();
            if state.polling {
                return Err(BotError {
                    code: 409,
                    description: "Conflict: terminated by other getUpdates request; make sure \
                                  that only one bot instance is running"
                        .into(),
                    retry_after: None,
                });
            }
            if let Some(kinds) = params.get("allowed_updates").and_then(Value::as_array) {
                state.allowed_updates =
                    Some(kinds.iter().filter_map(|k| k.as_str().map(String::from)).collect());
            }
            if offset > 0 {
                state.updates.retain(|u| u["update_id"].as_i64().unwrap_or(0) >= offset);
            } else if offset < 0 {
                let keep = offset.unsigned_abs() as usize;
                let drop = state.updates.len().saturating_sub(keep);
                state.updates.drain(..drop);
            }
            state.polling = true;
        }
        let _held = PollGuard(self);
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let ready = self.updates_ready.notified();
            tokio::pin!(ready);
            ready.as_mut().enable();
            {
                let state = self.lock();
                if !state.updates.is_empty() || tokio::time::Instant::now() >= deadline {
                    return Ok(Value::Array(state.updates.iter().take(limit).cloned().collect()));
                }
            }
            let _ = tokio::time::timeout_at(deadline, ready).await;
        }
    }
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    Path((bot, method)): Path<(String, String)>,
    body: Bytes,
) -> (StatusCode, axum::Json<Value>) {
    let params = if body.is_empty() {
        Ok(json!({}))
    } else {
        serde_json::from_slice::<Value>(&body).map_err(|_| bad_request("can't parse JSON body"))
    };
    let result = match (bot.strip_prefix("bot") == Some(shared.token.as_str()), params.as_ref()) {
        (false, _) => {
            Err(BotError { code: 401, description: "Unauthorized".into(), retry_after: None })
        }
        (true, Err(e)) => {
            Err(BotError { code: e.code, description: e.description.clone(), retry_after: None })
        }
        (true, Ok(params)) => {
            let fault = shared.lock().faults.pop_front();
            match fault {
                Some(Fault::Delay(delay)) => {
                    tokio::time::sleep(delay).await;
                    shared.dispatch(&method, params).await
                }
                Some(fault) => Err(fault_error(fault)),
                None => shared.dispatch(&method, params).await,
            }
        }
    };
    let (status, answer) = match result {
        Ok(result) => (StatusCode::OK, json!({ "ok": true, "result": result })),
        Err(e) => {
            let mut answer =
                json!({ "ok": false, "error_code": e.code, "description": e.description });
            if let Some(seconds) = e.retry_after {
                answer["parameters"] = json!({ "retry_after": seconds });
            }
            (StatusCode::from_u16(e.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR), answer)
        }
    };
    shared.lock().calls.push(CallRecord {
        method,
        params: params.unwrap_or(Value::Null),
        status: status.as_u16(),
    });
    (status, axum::Json(answer))
}

fn fault_error(fault: Fault) -> BotError {
    match fault {
        Fault::RateLimit { retry_after_s } => BotError {
            code: 429,
            description: format!("Too Many Requests: retry after {retry_after_s}"),
            retry_after: Some(retry_after_s),
        },
        Fault::ServerError(code) => BotError {
            code,
            description: StatusCode::from_u16(code)
                .ok()
                .and_then(|s| s.canonical_reason())
                .unwrap_or("Internal Server Error")
                .to_string(),
            retry_after: None,
        },
        Fault::Error { code, description } => BotError { code, description, retry_after: None },
        Fault::Delay(_) => unreachable!("a delay answers normally"),
    }
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, FakeState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Method names are case-insensitive, as in the Bot API.
    fn call(&self, method: &str, params: &Value) -> Result<Value, BotError> {
        match method.to_ascii_lowercase().as_str() {
            "getme" => Ok(self.bot_user()),
            "sendmessage" => self.send_message(params),
            "editmessagetext" => self.edit_message_text(params),
            "answercallbackquery" => self.answer_callback_query(params),
            _ => Err(BotError { code: 404, description: "Not Found".into(), retry_after: None }),
        }
    }

    /// The bot's id is the number before `:` in its token, as with real tokens.
    fn bot_user(&self) -> Value {
        let id = self.token.split(':').next().and_then(|id| id.parse::<i64>().ok()).unwrap_or(1);
        json!({ "id": id, "is_bot": true, "first_name": "Fake Bot", "username": "fake_bot" })
    }

    fn send_message(&self, params: &Value) -> Result<Value, BotError> {
        self.check_chat(params)?;
        let content = Content::from_params(params)?;
        let mut state = self.lock();
        state.last_message_id += 1;
        let message_id = state.last_message_id;
        state.sent.push(SentRecord {
            chat_id: self.chat_id,
            text: content.text.clone(),
            html: content.html.clone(),
            parse_mode: content.parse_mode.clone(),
            buttons: content.buttons.clone(),
            message_id,
        });
        let message = self.message(message_id, &content);
        state.messages.insert(message_id, content.stored());
        Ok(message)
    }

    fn edit_message_text(&self, params: &Value) -> Result<Value, BotError> {
        self.check_chat(params)?;
        let message_id = params["message_id"].as_i64().unwrap_or_default();
        let content = Content::from_params(params)?;
        let mut state = self.lock();
        let stored = state
            .messages
            .get_mut(&message_id)
            .ok_or_else(|| bad_request("message to edit not found"))?;
        let new = content.stored();
        if stored.html == new.html
            && stored.parse_mode == new.parse_mode
            && stored.reply_markup == new.reply_markup
        {
            return Err(bad_request(
                "message is not modified: specified new message content and reply markup are \
                 exactly the same as a current content and reply markup of the message",
            ));
        }
        *stored = new;
        Ok(self.message(message_id, &content))
    }

    /// `true` once per injected query id; a repeated or unknown id is "too old", as a late
    /// answer is.
    fn answer_callback_query(&self, params: &Value) -> Result<Value, BotError> {
        let id = params["callback_query_id"].as_str().unwrap_or_default();
        let mut state = self.lock();
        if state.callback_queries.contains(id) && state.answered_queries.insert(id.to_string()) {
            return Ok(json!(true));
        }
        Err(bad_request("query is too old and response timeout expired or query ID is invalid"))
    }

    /// The one known chat, given as a number or as a numeric string.
    fn check_chat(&self, params: &Value) -> Result<(), BotError> {
        let chat = &params["chat_id"];
        let id = chat.as_i64().or_else(|| chat.as_str().and_then(|s| s.parse().ok()));
        match id {
            Some(id) if id == self.chat_id => Ok(()),
            _ => Err(bad_request("chat not found")),
        }
    }

    /// A `Message` as the Bot API returns it; absent optional fields are left out.
    fn message(&self, message_id: i64, content: &Content) -> Value {
        let date = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let mut message = json!({
            "message_id": message_id,
            "date": date,
            "chat": { "id": self.chat_id, "type": "private" },
            "from": self.bot_user(),
            "text": content.text,
        });
        if !content.reply_markup.is_null() {
            message["reply_markup"] = content.reply_markup.clone();
        }
        message
    }
}

/// A message's content, validated like the Bot API does.
struct Content {
    html: String,
    text: String,
    parse_mode: Option<String>,
    reply_markup: Value,
    buttons: Vec<(String, String)>,
}

impl Content {
    fn from_params(params: &Value) -> Result<Content, BotError> {
        let html = params["text"].as_str().unwrap_or_default().to_string();
        let parse_mode = params["parse_mode"].as_str().map(str::to_string);
        let text = match parse_mode.as_deref() {
            None | Some("") | Some("Markdown") | Some("MarkdownV2") => html.clone(),
            Some(mode) if mode.eq_ignore_ascii_case("html") => {
                parse_html(&html).map_err(|e| bad_request(format!("can't parse entities: {e}")))?
            }
            Some(_) => return Err(bad_request("unsupported parse_mode")),
        };
        if text.trim().is_empty() {
            return Err(bad_request("message text is empty"));
        }
        if text.chars().count() > 4096 {
            return Err(bad_request("message is too long"));
        }
        let reply_markup = params["reply_markup"].clone();
        let buttons = buttons(&reply_markup)?;
        Ok(Content { html, text, parse_mode, reply_markup, buttons })
    }

    fn stored(&self) -> Stored {
        Stored {
            html: self.html.clone(),
            parse_mode: self.parse_mode.clone(),
            reply_markup: self.reply_markup.clone(),
        }
    }
}

/// The inline keyboard's buttons; each needs a text and `callback_data` of 1-64 bytes.
fn buttons(reply_markup: &Value) -> Result<Vec<(String, String)>, BotError> {
    let Some(rows) = reply_markup.get("inline_keyboard") else {
        return Ok(Vec::new());
    };
    let invalid = || bad_request("BUTTON_DATA_INVALID");
    let mut buttons = Vec::new();
    for row in rows.as_array().ok_or_else(invalid)? {
        for button in row.as_array().ok_or_else(invalid)? {
            let text = button["text"].as_str().ok_or_else(invalid)?;
            let data = button["callback_data"].as_str().ok_or_else(invalid)?;
            if !(1..=64).contains(&data.len()) {
                return Err(invalid());
            }
            buttons.push((text.to_string(), data.to_string()));
        }
    }
    Ok(buttons)
}

/// The tags the Bot API's HTML parse mode accepts.
const SUPPORTED_TAGS: &[&str] = &[
    "b",
    "strong",
    "i",
    "em",
    "u",
    "ins",
    "s",
    "strike",
    "del",
    "tg-spoiler",
    "span",
    "a",
    "code",
    "pre",
    "blockquote",
    "tg-emoji",
];

/// Parses HTML parse mode strictly; returns the text a reader sees, or why it is refused
/// (worded like the Bot API, with byte offsets).
fn parse_html(html: &str) -> Result<String, String> {
    let mut text = String::new();
    let mut open: Vec<String> = Vec::new();
    let mut at = 0;
    while let Some(c) = html[at..].chars().next() {
        let rest = &html[at..];
        match c {
            '<' => {
                let end =
                    rest.find('>').ok_or(format!("unclosed start tag at byte offset {at}"))?;
                let tag = &rest[1..end];
                if let Some(name) = tag.strip_prefix('/') {
                    let name = name.trim().to_ascii_lowercase();
                    match open.pop() {
                        Some(expected) if expected == name => {}
                        Some(expected) => {
                            return Err(format!(
                                "Unmatched end tag at byte offset {at}, expected \"</{expected}>\", found \"</{name}>\""
                            ));
                        }
                        None => return Err(format!("Unexpected end tag at byte offset {at}")),
                    }
                } else {
                    let name = tag.split_whitespace().next().unwrap_or("").to_ascii_lowercase();
                    let attributes = tag[name.len().min(tag.len())..].trim();
                    let allowed = SUPPORTED_TAGS.contains(&name.as_str())
                        && (name != "span" || attributes.contains("class=\"tg-spoiler\""))
                        && (name != "a" || attributes.starts_with("href="));
                    if !allowed {
                        return Err(format!(
                            "Unsupported start tag \"{name}\" at byte offset {at}"
                        ));
                    }
                    open.push(name);
                }
                at += end + 1;
            }
            '&' => {
                let end = rest.find(';').filter(|end| *end <= 10).ok_or(format!(
                    "Character '&' is reserved and must be escaped at byte offset {at}"
                ))?;
                text.push(decode_entity(&rest[1..end]).ok_or(format!(
                    "Unsupported HTML entity \"{}\" at byte offset {at}",
                    &rest[..=end]
                ))?);
                at += end + 1;
            }
            '>' => {
                return Err(format!(
                    "Character '>' is reserved and must be escaped at byte offset {at}"
                ));
            }
            c => {
                text.push(c);
                at += c.len_utf8();
            }
        }
    }
    match open.last() {
        Some(name) => Err(format!("Can't find end tag corresponding to start tag \"{name}\"")),
        None => Ok(text),
    }
}

/// `&amp; &lt; &gt; &quot;` and numeric entities: all the Bot API knows.
fn decode_entity(name: &str) -> Option<char> {
    match name {
        "amp" => Some('&'),
        "lt" => Some('<'),
        "gt" => Some('>'),
        "quot" => Some('"'),
        _ => {
            let number = name.strip_prefix('#')?;
            let code = match number.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => number.parse().ok()?,
            };
            char::from_u32(code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_html;

    #[test]
    fn html_is_checked_like_the_bot_api() {
        assert_eq!(parse_html("<b>a &lt;b&gt; &amp;</b> <code>x</code>").unwrap(), "a <b> & x");
        assert_eq!(parse_html("<span class=\"tg-spoiler\">s</span>&#9989;").unwrap(), "s✅");
        for bad in ["a < b", "a & b", "a > b", "<div>x</div>", "<b>x", "<b>x</i>", "</b>", "&nbsp;"]
        {
            assert!(parse_html(bad).is_err(), "{bad:?} accepted");
        }
    }
}
