//! Optional handling of the boss's replies (`[messenger] handle_replies = true`), for operators
//! without an agent platform: long-polls the bot's updates and turns `1-YES <SYMBOL>` /
//! `0-NO <SYMBOL>`, typed or pressed on the approval request's buttons, into confirm / reject.
//! An inbound adapter of the signal flow: it lives with the signals it drives and uses the
//! messenger's Bot API call, so the messenger (outbound) does not depend on the signals.
//!
//! Owns: the one `getUpdates` loop of the bot token and the check of every update (the boss's
//! chat AND the boss's user id). Must never: run beside another consumer of the same token (a
//! token has one; `409 Conflict` stops the loop for good instead of fighting the agent platform
//! for updates), act on or answer anyone but the boss, or confirm without an active license
//! (the confirm route needs one; saying NO never does).

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::{Approver, ConfirmAnswer, SignalError, SignalStatus, Signals};
use crate::activity::Dashboard;
use crate::audit::{Acting, Audit, Done};
use crate::background::Background;
use crate::config::{MessengerConfig, Secrets};
use crate::license::License;
use crate::messenger::bot_api::{BotApi, CallError};
use crate::messenger::{Messenger, Outgoing, templates};

/// Who approves through the reply reader, in the approval record and the audit log.
const BOSS_IN_THE_MESSENGER: &str = "the boss in the messenger";

/// Long-poll duration of one `getUpdates`: the messenger holds the request this long when no
/// update is waiting (Freqtrade polls with 20 s).
const POLL_TIMEOUT_S: u64 = 25;
/// The HTTP timeout of a poll sits above the long-poll duration, so an idle poll ends with an
/// empty answer, not with a client timeout.
const POLL_HTTP_TIMEOUT: Duration = Duration::from_secs(POLL_TIMEOUT_S + 10);
/// `answerCallbackQuery` and `editMessageText`.
const CALL_TIMEOUT: Duration = Duration::from_secs(10);
/// Pause after a failed poll; doubled per failure in a row up to the maximum.
const BACKOFF_MIN: Duration = Duration::from_secs(1);
const BACKOFF_MAX: Duration = Duration::from_secs(60);
/// Only the two kinds of update we act on. The Bot API keeps this setting between calls.
const ALLOWED_UPDATES: [&str; 2] = ["message", "callback_query"];
/// How long `stop` waits for the loop to notice before aborting it.
pub const STOP_GRACE: Duration = Duration::from_secs(5);

/// The boss's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Yes,
    No,
}

impl Decision {
    fn as_str(self) -> &'static str {
        match self {
            Self::Yes => "YES",
            Self::No => "NO",
        }
    }
}

/// A reply: the decision, the symbol, and the signal's id when the reply names one (the
/// approval request's buttons do).
pub type Reply = (Decision, String, Option<String>);

/// Reads `1-YES <SYMBOL>` or `0-NO <SYMBOL>`, optionally followed by the signal's id (the
/// buttons send it), case-insensitively and with any spacing; the symbol comes back
/// upper-cased. Anything else (more words, a symbol that is not 2-20 letters or digits, an id
/// that is not 1-16 letters or digits) is not a reply.
pub fn parse_reply(text: &str) -> Option<Reply> {
    let mut words = text.split_whitespace();
    let (verb, symbol, id) = (words.next()?, words.next()?, words.next());
    if words.next().is_some() {
        return None;
    }
    let id = match id {
        Some(id)
            if (1..=16).contains(&id.len()) && id.chars().all(|c| c.is_ascii_alphanumeric()) =>
        {
            Some(id.to_ascii_lowercase())
        }
        Some(_) => return None,
        None => None,
    };
    let decision = if verb.eq_ignore_ascii_case("1-YES") {
        Decision::Yes
    } else if verb.eq_ignore_ascii_case("0-NO") {
        Decision::No
    } else {
        return None;
    };
    let well_formed =
        (2..=20).contains(&symbol.len()) && symbol.chars().all(|c| c.is_ascii_alphanumeric());
    well_formed.then(|| (decision, symbol.to_ascii_uppercase(), id))
}

/// Who may answer: the chat of MESSENGER_CHAT_ID and, in it, one user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Boss {
    pub chat_id: i64,
    pub user_id: i64,
}

impl Boss {
    /// From MESSENGER_CHAT_ID and `[messenger] boss_user_id`; `Err` says why replies cannot
    /// be handled with them.
    pub fn from_config(chat_id: &str, boss_user_id: Option<i64>) -> Result<Boss, String> {
        let chat_id = chat_id.trim().parse::<i64>().map_err(|_| {
            format!(
                "MESSENGER_CHAT_ID `{chat_id}` is not a numeric chat id (a @channel cannot reply)"
            )
        })?;
        // A private chat's id is its user's id; groups have negative ids.
        let user_id = match boss_user_id {
            Some(id) => id,
            None if chat_id > 0 => chat_id,
            None => {
                return Err("MESSENGER_CHAT_ID is a group; set [messenger] boss_user_id to the \
                            boss's user id"
                    .into());
            }
        };
        Ok(Boss { chat_id, user_id })
    }

    /// Both the chat and the sender must be the boss's; a missing sender is nobody.
    fn authorizes(&self, chat_id: Option<i64>, from_id: Option<i64>) -> bool {
        chat_id == Some(self.chat_id) && from_id == Some(self.user_id)
    }
}

/// What [`spawn`] needs from the other areas.
pub struct Parts<'a> {
    pub config: &'a MessengerConfig,
    pub secrets: &'a Secrets,
    /// Sends the outcome to the boss.
    pub messenger: Messenger,
    pub signals: Signals,
    pub license: Arc<License>,
    pub dashboard: Arc<Dashboard>,
    /// Every YES and NO the boss gives here is a row of the audit log.
    pub audit: Audit,
    pub clock: crate::clock::SharedClock,
}

/// Starts the loop when `handle_replies` is on and the messenger is configured for it;
/// otherwise nothing polls. A configuration that cannot work is logged and put on the
/// dashboard, and the service runs without it.
///
/// Stop it with `stop_within(`[`STOP_GRACE`]`)`: a poll or a reply in progress is dropped; a
/// confirm already executing goes on in its own task.
pub fn spawn(parts: Parts<'_>) -> Option<Background> {
    if !parts.config.handle_replies {
        return None;
    }
    let refuse = |why: String| {
        tracing::error!("[messenger] handle_replies is on but cannot work: {why}");
        parts.dashboard.record("bot-ops", &format!("boss replies not handled: {why}"), "error");
        None
    };
    let (Some(token), Some(chat_id)) =
        (&parts.secrets.messenger_bot_token, &parts.secrets.messenger_chat_id)
    else {
        return refuse("set MESSENGER_BOT_TOKEN and MESSENGER_CHAT_ID".into());
    };
    let boss = match Boss::from_config(chat_id, parts.config.boss_user_id) {
        Ok(boss) => boss,
        Err(why) => return refuse(why),
    };
    let api = BotApi::new(&parts.config.api_base, token.expose());
    let poller = Poller {
        api,
        boss,
        messenger: parts.messenger,
        signals: parts.signals,
        license: parts.license,
        dashboard: parts.dashboard,
        audit: parts.audit,
        clock: parts.clock,
    };
    tracing::info!(
        chat_id = boss.chat_id,
        user_id = boss.user_id,
        "handling the boss's replies: polling getUpdates (no other consumer may poll this bot token)"
    );
    Some(Background::spawn(|stopped| poller.run(stopped)))
}

/// The parts of an update we read; unknown fields and other kinds of update are ignored.
#[derive(Debug, Deserialize)]
struct Update {
    message: Option<Message>,
    callback_query: Option<CallbackQuery>,
}

#[derive(Debug, Deserialize)]
struct Message {
    message_id: i64,
    chat: Chat,
    /// Absent for channel posts: nobody, never authorized.
    from: Option<User>,
    text: Option<String>,
}

#[derive(Debug, Deserialize)]
struct Chat {
    id: i64,
}

#[derive(Debug, Deserialize)]
struct User {
    id: i64,
}

#[derive(Debug, Deserialize)]
struct CallbackQuery {
    id: String,
    from: User,
    /// The message carrying the button (an old one may come back as "inaccessible": chat
    /// and id only).
    message: Option<Message>,
    data: Option<String>,
}

/// What a reply came to.
struct Outcome {
    reply: templates::BossReply,
    /// The signal cannot be answered any more (confirmed, rejected, expired, gone): the
    /// approval request's buttons are removed.
    settled: bool,
}

struct Poller {
    api: BotApi,
    boss: Boss,
    messenger: Messenger,
    signals: Signals,
    license: Arc<License>,
    dashboard: Arc<Dashboard>,
    audit: Audit,
    clock: crate::clock::SharedClock,
}

impl Poller {
    /// Drops the updates that waited while the service was down, then polls until stopped
    /// or until the messenger says another consumer has the token.
    async fn run(self, mut stop: oneshot::Receiver<()>) {
        // None until the pending updates are dropped; then the next update_id to fetch.
        let mut offset: Option<i64> = None;
        let mut backoff = BACKOFF_MIN;
        loop {
            let polled = tokio::select! {
                _ = &mut stop => return,
                polled = self.poll(offset) => polled,
            };
            let updates = match polled {
                Ok(updates) => updates,
                Err(CallError::Api { code: 409, description, .. }) => {
                    self.conflict(&description);
                    return;
                }
                Err(err) => {
                    let wait = match &err {
                        CallError::Api { code: 429, retry_after: Some(s), .. } => {
                            Duration::from_secs(*s).min(BACKOFF_MAX)
                        }
                        _ => backoff,
                    };
                    tracing::warn!(%err, wait_s = wait.as_secs(), "getUpdates failed; polling again later");
                    tokio::select! {
                        _ = &mut stop => return,
                        _ = tokio::time::sleep(wait) => {}
                    }
                    backoff = (backoff * 2).min(BACKOFF_MAX);
                    continue;
                }
            };
            backoff = BACKOFF_MIN;
            let next =
                updates.iter().filter_map(|u| u["update_id"].as_i64()).max().map(|id| id + 1);
            if offset.is_none() {
                // Answers meant for signals of a previous run are not acted on (Freqtrade drops
                // pending updates at start too); the next poll confirms the last one.
                offset = Some(next.unwrap_or(0));
                tracing::debug!("pending updates dropped; waiting for the boss's replies");
                continue;
            }
            if let Some(next) = next {
                offset = Some(next);
            }
            for update in updates {
                tokio::select! {
                    _ = &mut stop => return,
                    _ = self.handle(update) => {}
                }
            }
        }
    }

    /// One `getUpdates`: at start `offset = -1` without waiting (keeps only the last update,
    /// forgets the rest), then long polls from `offset`.
    async fn poll(&self, offset: Option<i64>) -> Result<Vec<Value>, CallError> {
        let (body, timeout) = match offset {
            None => (
                json!({ "offset": -1, "timeout": 0, "allowed_updates": ALLOWED_UPDATES }),
                CALL_TIMEOUT,
            ),
            Some(offset) => {
                let mut body =
                    json!({ "timeout": POLL_TIMEOUT_S, "allowed_updates": ALLOWED_UPDATES });
                if offset > 0 {
                    body["offset"] = json!(offset);
                }
                (body, POLL_HTTP_TIMEOUT)
            }
        };
        let result = self.api.call("getUpdates", &body, timeout).await?;
        match result {
            Value::Array(updates) => Ok(updates),
            _ => Err(CallError::Transport {
                status: 200,
                text: "getUpdates answered without a list of updates".into(),
            }),
        }
    }

    /// Another consumer polls the token (or a webhook is set): retrying would take updates
    /// away from it in turn, so the loop stops and says so once.
    fn conflict(&self, description: &str) {
        tracing::error!(
            description,
            "getUpdates answered 409 Conflict: another consumer (agent platform, second instance, \
             webhook) uses this bot token. Boss replies are NOT handled; set [messenger] \
             handle_replies = false or give the service its own bot token"
        );
        self.dashboard.record(
            "bot-ops",
            &format!(
                "boss replies stopped: getUpdates 409 ({description}); another consumer uses the \
                 bot token"
            ),
            "error",
        );
    }

    async fn handle(&self, update: Value) {
        let update_id = update["update_id"].as_i64();
        let update = match serde_json::from_value::<Update>(update) {
            Ok(update) => update,
            Err(err) => {
                tracing::debug!(?update_id, %err, "update not understood; ignored");
                return;
            }
        };
        if let Some(message) = update.message {
            self.on_message(message).await;
        } else if let Some(query) = update.callback_query {
            self.on_button(query).await;
        } else {
            tracing::debug!(?update_id, "update of another kind ignored");
        }
    }

    async fn on_message(&self, message: Message) {
        let from = message.from.as_ref().map(|u| u.id);
        if !self.boss.authorizes(Some(message.chat.id), from) {
            tracing::debug!(chat_id = message.chat.id, ?from, "message not from the boss ignored");
            return;
        }
        let Some(text) = message.text else {
            return;
        };
        match parse_reply(&text) {
            Some((decision, symbol, id)) => {
                let outcome = self.decide_audited(decision, &symbol, id.as_deref()).await;
                self.send(templates::boss_reply(&outcome.reply)).await;
            }
            None => self.send(templates::reply_help()).await,
        }
    }

    async fn on_button(&self, query: CallbackQuery) {
        let chat = query.message.as_ref().map(|m| m.chat.id);
        if !self.boss.authorizes(chat, Some(query.from.id)) {
            tracing::debug!(?chat, from = query.from.id, "button press not from the boss ignored");
            return;
        }
        let Some((decision, symbol, id)) = query.data.as_deref().and_then(parse_reply) else {
            // Not one of our buttons; the press still needs an answer to stop the spinner.
            self.answer_button(&query.id, None).await;
            return;
        };
        // Answered before the confirm runs: a late answer is refused by the messenger.
        let toast = templates::button_toast(&symbol, decision.as_str());
        self.answer_button(&query.id, Some(&toast)).await;
        let outcome = self.decide_audited(decision, &symbol, id.as_deref()).await;
        if outcome.settled
            && let Some(message) = &query.message
            && let Some(text) = message.text.as_deref().filter(|t| !t.is_empty())
        {
            let edited = templates::approval_decided(text, &outcome.reply);
            self.edit(message.message_id, &edited).await;
        }
        self.send(templates::boss_reply(&outcome.reply)).await;
    }

    /// [`Poller::decide`] as a row of the audit log, with the orders it sent.
    async fn decide_audited(&self, decision: Decision, symbol: &str, id: Option<&str>) -> Outcome {
        let acting = Acting::new(BOSS_IN_THE_MESSENGER.into(), None);
        let mark = self.audit.journal_mark();
        let outcome = acting.clone().scope(self.decide(decision, symbol, id)).await;
        let reply = &outcome.reply;
        let done = Done {
            at: self.clock.now().to_rfc3339(),
            route: format!("messenger {}", decision.as_str()),
            target: format!(
                "{} {symbol}{}",
                decision.as_str(),
                id.map(|i| format!(" {i}")).unwrap_or_default()
            ),
            symbol: Some(symbol.to_string()),
            approval: (decision == Decision::Yes).then(|| BOSS_IN_THE_MESSENGER.to_string()),
            status: 200,
            outcome: if reply.ok { "ok".into() } else { "refused".into() },
            detail: Some(reply.detail.clone()),
        };
        self.audit.write(&acting, mark, done);
        outcome
    }

    /// Confirms or rejects exactly as `POST /api/signal/{symbol}/confirm` / `reject` do; a
    /// YES here is the boss's own (`[signals] approval = "boss"`). A reply that names a
    /// signal id (a button) acts on that signal only.
    async fn decide(&self, decision: Decision, symbol: &str, id: Option<&str>) -> Outcome {
        tracing::info!(%symbol, decision = decision.as_str(), "the boss replied in the chat");
        self.dashboard.record(
            "coo",
            &format!("boss replied {} {symbol} in the messenger", decision.as_str()),
            "ok",
        );
        let reply = |ok: bool, detail: String| templates::BossReply {
            symbol: symbol.to_string(),
            decision: decision.as_str().to_string(),
            ok,
            detail,
        };
        let refused = |err: SignalError| {
            // Executing: an earlier confirm is running, the buttons stay until it ends.
            let settled = matches!(
                err,
                SignalError::NotFound(_)
                    | SignalError::NotPending { .. }
                    | SignalError::Expired { .. }
            );
            Outcome { reply: reply(false, err.to_string()), settled }
        };
        if let Some(id) = id
            && let Some(current) = self.signals.current_id(symbol)
            && current != id
        {
            let detail = format!(
                "this answer was given on signal {id}; the signal for {symbol} is now {current} \
                 and needs its own answer (its own message)"
            );
            return Outcome { reply: reply(false, detail), settled: true };
        }
        match decision {
            Decision::No => match self.signals.reject(symbol, id) {
                Ok(_) => Outcome {
                    reply: reply(true, "rejected; nothing is placed".into()),
                    settled: true,
                },
                Err(err) => refused(err),
            },
            Decision::Yes if !self.license.is_active() => Outcome {
                reply: reply(
                    false,
                    "not confirmed: the license is not active (GET /api/license/status); \
                     0-NO still works"
                        .into(),
                ),
                settled: false,
            },
            Decision::Yes => {
                match self.signals.confirm(symbol, Approver::Boss, BOSS_IN_THE_MESSENGER, id).await
                {
                    Ok(answer) => confirmed(answer, reply),
                    Err(err) => refused(err),
                }
            }
        }
    }

    async fn send(&self, message: Outgoing) {
        if let Err(err) = self.messenger.send(&message).await {
            tracing::warn!(%err, "reply to the boss not sent");
        }
    }

    async fn answer_button(&self, query_id: &str, text: Option<&str>) {
        let mut body = json!({ "callback_query_id": query_id });
        if let Some(text) = text {
            body["text"] = json!(text);
        }
        if let Err(err) = self.api.call("answerCallbackQuery", &body, CALL_TIMEOUT).await {
            tracing::debug!(%err, "button press not answered");
        }
    }

    /// Shows the decision on the approval request and removes its buttons (an edit without
    /// `reply_markup` drops the keyboard).
    async fn edit(&self, message_id: i64, message: &Outgoing) {
        let body = json!({
            "chat_id": self.boss.chat_id,
            "message_id": message_id,
            "text": message.html,
            "parse_mode": "HTML",
            "link_preview_options": { "is_disabled": true },
        });
        match self.api.call("editMessageText", &body, CALL_TIMEOUT).await {
            Ok(_) => {}
            Err(CallError::Api { description, .. })
                if description.contains("message is not modified") => {}
            Err(err) => tracing::warn!(%err, "approval request not updated with the decision"),
        }
    }
}

/// The outcome of a confirm that was answered (not refused with an error).
fn confirmed(
    answer: ConfirmAnswer,
    reply: impl Fn(bool, String) -> templates::BossReply,
) -> Outcome {
    let reason = answer.reason.clone().unwrap_or_default();
    if answer.already_confirmed {
        return Outcome {
            reply: reply(true, "already confirmed; nothing new is placed".into()),
            settled: true,
        };
    }
    if answer.ok {
        let trade = answer.trade.as_ref();
        let detail =
            match (trade.and_then(|t| t.opened.as_ref()), trade.and_then(|t| t.closed.as_ref())) {
                (Some(opened), _) => format!(
                    "confirmed; bought {} at {}, stop-loss {} ({})",
                    opened.size, opened.entry_px, opened.sl_px, opened.protection
                ),
                (None, Some(_)) => "confirmed; the position is closed".to_string(),
                (None, None) => "confirmed".to_string(),
            };
        return Outcome { reply: reply(true, detail), settled: true };
    }
    if answer.status == SignalStatus::Confirmed {
        // The order went out without a clear answer; it is looked up, never sent again.
        return Outcome {
            reply: reply(false, format!("confirmed, but the outcome is not known yet: {reason}")),
            settled: true,
        };
    }
    Outcome {
        reply: reply(false, format!("nothing placed: {reason}; the signal stays pending")),
        settled: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::messenger::html::to_plain;

    #[test]
    fn the_two_reply_forms_are_read_case_insensitively_with_the_symbol_upper_cased() {
        assert_eq!(parse_reply("1-YES ETHUSDT"), Some((Decision::Yes, "ETHUSDT".into(), None)));
        assert_eq!(
            parse_reply("  1-yes   ethusdt \n"),
            Some((Decision::Yes, "ETHUSDT".into(), None))
        );
        assert_eq!(
            parse_reply("0-No 1000shibusdt"),
            Some((Decision::No, "1000SHIBUSDT".into(), None))
        );
        assert_eq!(
            parse_reply("1-YES ETHUSDT mi2k3x9z"),
            Some((Decision::Yes, "ETHUSDT".into(), Some("mi2k3x9z".into())))
        );
        for not_a_reply in [
            "",
            "yes",
            "1-YES",
            "1-YES ETHUSDT now!",
            "1-YES ETHUSDT mi2k3x9z extra",
            "YES ETHUSDT",
            "1-YESETHUSDT",
            "2-YES ETHUSDT",
            "1-YES ETH/USDT",
            "0-NO E",
            "/start",
        ] {
            assert_eq!(parse_reply(not_a_reply), None, "{not_a_reply:?}");
        }
    }

    #[test]
    fn only_the_boss_in_the_boss_chat_is_authorized() {
        let boss = Boss::from_config("4242", None).unwrap();
        assert_eq!(boss, Boss { chat_id: 4242, user_id: 4242 });
        assert!(boss.authorizes(Some(4242), Some(4242)));
        assert!(!boss.authorizes(Some(4242), Some(7)), "another user in the chat");
        assert!(!boss.authorizes(Some(7), Some(4242)), "the boss in another chat");
        assert!(!boss.authorizes(Some(4242), None), "no sender (channel post)");
        assert!(!boss.authorizes(None, Some(4242)), "button press without its message");

        let group = Boss::from_config("-1001234", Some(4242)).unwrap();
        assert!(group.authorizes(Some(-1001234), Some(4242)));
        assert!(!group.authorizes(Some(-1001234), Some(99)));
        assert!(Boss::from_config("-1001234", None).unwrap_err().contains("boss_user_id"));
        assert!(Boss::from_config("@channel", None).unwrap_err().contains("numeric"));
    }

    #[test]
    fn outcome_templates_escape_and_show_the_decision() {
        let reply = templates::BossReply {
            symbol: "ETHUSDT".into(),
            decision: "NO".into(),
            ok: false,
            detail: "no signal for <x>&".into(),
        };
        let out = templates::boss_reply(&reply);
        assert!(out.html.contains("&lt;x&gt;&amp;"), "{}", out.html);
        assert_eq!(to_plain(&out.html), "⚠️ NO ETHUSDT: no signal for <x>&");
        let edited = templates::approval_decided("Approve BUY a<b?", &reply);
        assert!(edited.buttons.is_empty());
        assert_eq!(to_plain(&edited.html), "Approve BUY a<b?\n\n⚠️ NO ETHUSDT: no signal for <x>&");
        let long = "x".repeat(5000);
        assert!(templates::approval_decided(&long, &reply).html.chars().count() < 4000);
        assert_eq!(templates::button_toast("ETHUSDT", "YES"), "YES ETHUSDT: received");
        assert!(to_plain(&templates::reply_help().html).contains("1-YES SYMBOL"));
    }
}
