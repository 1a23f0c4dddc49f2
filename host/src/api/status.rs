//! Status, portfolio and notify: `GET /api/status` (the bot's state and a config summary
//! without secrets; needs a license), `GET /api/portfolio` (balances valued in the quote
//! asset) and `GET /api/notify` (a text to the boss), both free.

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use rust_decimal::Decimal;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

use super::error::{ApiError, ErrorBody};
use super::extract::ApiQuery;
use super::trades::HistoryRow;
use crate::activity::AgentName;
use crate::auth::Caller;
use crate::config::{Config, ExchangeMode};
use crate::exchange::account::{Account, Prices};
use crate::execution::TradeView;
use crate::messenger::{MessengerError, templates};
use crate::money::json_amount;
use crate::state::AppState;

/// Closed trades shown in `recent_trades`.
const RECENT_TRADES: usize = 10;

/// Paper mode runs the simulator: like testnet, it is not real money.
pub(super) fn is_testnet(config: &Config) -> bool {
    config.exchange.mode != ExchangeMode::Mainnet
}

/// Query of `GET /api/status`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct StatusQuery {
    /// Agent card that logs the call; without it nothing is logged.
    pub agent: Option<AgentName>,
}

/// The configuration as status shows it: settings only, never a key, token or secret.
#[derive(Debug, Serialize, ToSchema)]
pub struct ConfigSummary {
    /// `[exchange] active`.
    pub exchange: String,
    /// `[exchange] mode`: `paper`, `testnet` or `mainnet`.
    pub mode: String,
    /// Whether the active exchange has a client (trading is possible).
    pub exchange_client: bool,
    /// `[risk] max_trading_usdt`: the capital base cap; 0 means the whole balance.
    pub max_trading_usdt: f64,
    /// `[risk] max_consecutive_losses` (0 = off).
    pub max_consecutive_losses: u32,
    /// MR Combined's effective `size_pct`: percent of the capital base per trade (the default
    /// for strategies without their own).
    pub size_pct: f64,
    /// MR Combined's effective `max_trades_per_day` (the default daily limit).
    pub max_trades_per_day: u32,
    pub trailing_enabled: bool,
    pub trailing_trigger_pct: f64,
    pub trailing_distance_pct: f64,
    /// `[market] quote_asset`.
    pub quote_asset: String,
    /// `[market] timezone`: the day of the daily counters and reports.
    pub timezone: String,
    /// `[market] watchlist`.
    pub watchlist: Vec<String>,
    /// Whether the messenger token and chat id are set (their values are never shown).
    pub messenger_configured: bool,
    /// In paper mode: the in-process exchange simulator's base URL (loopback). Its admin
    /// routes move the synthetic market, e.g. `POST /sim/price {"symbol", "price"}`
    /// (docs/exchange-simulator.md).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paper_simulator: Option<String>,
}

impl ConfigSummary {
    fn of(state: &AppState) -> Self {
        let config = &state.config;
        let mr = state.plugins.strategy_keys(crate::config::DEFAULT_STRATEGY);
        ConfigSummary {
            exchange: config.exchange.active.as_str().to_string(),
            mode: config.exchange.mode.as_str().to_string(),
            exchange_client: state.exchange.is_some(),
            max_trading_usdt: json_amount(config.risk.max_trading_usdt),
            max_consecutive_losses: config.risk.max_consecutive_losses,
            size_pct: json_amount(mr.size_pct),
            max_trades_per_day: mr.max_trades_per_day,
            trailing_enabled: mr.trailing_enabled,
            trailing_trigger_pct: json_amount(mr.trailing_trigger_pct),
            trailing_distance_pct: json_amount(mr.trailing_distance_pct),
            quote_asset: config.market.quote_asset.clone(),
            timezone: config.market.timezone.clone(),
            watchlist: config.market.watchlist.clone(),
            messenger_configured: state.messenger.is_configured(),
            paper_simulator: state.paper.as_ref().map(|sim| sim.base_url()),
        }
    }
}

/// The answer of `GET /api/status`.
#[derive(Debug, Serialize, ToSchema)]
pub struct StatusAnswer {
    /// The active exchange (`exchange_a`).
    pub exchange: String,
    /// True unless `[exchange] mode` is `mainnet` (paper mode counts as testnet).
    pub testnet: bool,
    /// Entries today (in `[market] timezone`).
    pub trades_today: i64,
    /// Losing closes in a row today.
    pub consecutive_losses: i64,
    /// The open trades.
    pub open_trades: Vec<TradeView>,
    /// The 10 most recently closed trades, newest first.
    pub recent_trades: Vec<HistoryRow>,
    pub config: ConfigSummary,
}

/// The bot's state: exchange, counters, open and recent trades, and a summary of the
/// configuration without any secret. Reads only the store (never the exchange).
#[utoipa::path(get, path = "/api/status",
    operation_id = "bot_status", tag = "bot actions", params(StatusQuery),
    responses(
        (status = 200, description = "The status", body = StatusAnswer),
        (status = 422, description = "`invalid_query`: unknown agent", body = ErrorBody),
        (status = 500, description = "The store could not be read", body = ErrorBody),
    ))]
async fn status(
    State(state): State<AppState>,
    caller: Caller,
    ApiQuery(q): ApiQuery<StatusQuery>,
) -> Result<Json<StatusAnswer>, ApiError> {
    Ok(Json(status_of(&state, caller.agent.or(q.agent))?))
}

/// The status, logged on `agent`'s card when one is given: `GET /api/status` and the earlier
/// `GET /status` (which always logs, default coo).
pub(super) fn status_of(
    state: &AppState,
    agent: Option<AgentName>,
) -> Result<StatusAnswer, ApiError> {
    let execution = &state.execution;
    let counters = execution.counters()?;
    let open_trades = execution.book().open_trades()?.iter().map(|t| t.view()).collect();
    let closed = crate::execution::stats::chronological(execution.book())?;
    let recent_trades = closed.iter().rev().take(RECENT_TRADES).map(HistoryRow::of).collect();
    if let Some(agent) = agent {
        state.dashboard.record(agent.as_str(), "status", "ok");
    }
    Ok(StatusAnswer {
        exchange: execution.exchange_name().to_string(),
        testnet: is_testnet(&state.config),
        trades_today: counters.trades_today,
        consecutive_losses: counters.consecutive_losses,
        open_trades,
        recent_trades,
        config: ConfigSummary::of(state),
    })
}

/// One asset held.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Holding {
    pub asset: String,
    /// free + locked (coin locked by open orders such as an OCO is still owned).
    pub qty: f64,
    pub free: f64,
    pub locked: f64,
    /// qty × price in the quote asset; 0 when the asset has no pair with the quote asset.
    pub value: f64,
    /// Last price of `<ASSET><QUOTE>` (1 for the quote asset itself); null without such a
    /// pair.
    #[schema(required = true)]
    pub price: Option<f64>,
}

/// The answer of `GET /api/portfolio`. On failure `ok` is false, `balance` null, `holdings`
/// left out and `error` says why (status 200: the portfolio is informational).
#[derive(Debug, Serialize, ToSchema)]
pub struct PortfolioAnswer {
    pub ok: bool,
    /// Total value of every holding in `currency`; null on failure.
    #[schema(required = true)]
    pub balance: Option<f64>,
    /// The quote asset the values are in: the one the account holds on the active exchange
    /// (`[market] quote_asset` on exchange A; USDC on exchange B).
    pub currency: String,
    /// Largest value first.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub holdings: Option<Vec<Holding>>,
    /// The active exchange.
    pub exchange: String,
    /// True unless `[exchange] mode` is `mainnet` (paper mode counts as testnet).
    pub testnet: bool,
    /// Why the balances could not be read (failure only).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schema(nullable = false)]
    pub error: Option<String>,
}

/// Every holding of `account` valued at its last price in the account's quote: the total and
/// the holdings, largest value first.
fn value_holdings(account: &Account) -> (Decimal, Vec<Holding>) {
    let mut valued: Vec<_> = account
        .balances
        .iter()
        .filter(|b| !(b.free + b.locked).is_zero())
        .map(|b| {
            let price = account.unit_value(&b.asset);
            let value = price.map_or(Decimal::ZERO, |p| (b.free + b.locked) * p);
            (value, b, price)
        })
        .collect();
    valued.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.asset.cmp(&b.1.asset)));
    let total = valued.iter().map(|(value, ..)| *value).sum();
    let holdings = valued
        .into_iter()
        .map(|(value, b, price)| Holding {
            asset: b.asset.clone(),
            qty: json_amount(b.free + b.locked),
            free: json_amount(b.free),
            locked: json_amount(b.locked),
            value: json_amount(value),
            price: price.map(json_amount),
        })
        .collect();
    (total, holdings)
}

/// Balance and holdings on the active exchange, valued in the quote asset at last prices.
/// Never needs a license. A failure to read them is an answer with `ok: false` (status 200).
#[utoipa::path(get, path = "/api/portfolio", tag = "news and portfolio",
    responses(
        (status = 200, description = "The portfolio, or `ok: false` with `error` when the \
            exchange could not be read", body = PortfolioAnswer),
    ))]
async fn portfolio(State(state): State<AppState>) -> Json<PortfolioAnswer> {
    let market = &state.config.market;
    let mut currency = market.quote_asset.clone();
    let exchange_name = state.execution.exchange_name().to_string();
    let testnet = is_testnet(&state.config);
    let valued = match &state.exchange {
        Some(exchange) => match Account::read(exchange.as_ref(), market, Prices::All).await {
            Ok(account) => {
                currency = account.quote.clone();
                Ok(value_holdings(&account))
            }
            Err(e) => {
                tracing::warn!(error = %e, "portfolio: the exchange could not be read");
                Err(format!("exchange error: {e}"))
            }
        },
        None => Err(format!("no exchange client for the active exchange {exchange_name}")),
    };
    Json(match valued {
        Ok((total, holdings)) => PortfolioAnswer {
            ok: true,
            balance: Some(json_amount(total)),
            currency,
            holdings: Some(holdings),
            exchange: exchange_name,
            testnet,
            error: None,
        },
        Err(error) => PortfolioAnswer {
            ok: false,
            balance: None,
            currency,
            holdings: None,
            exchange: exchange_name,
            testnet,
            error: Some(error),
        },
    })
}

/// The `message` pattern (the attribute below needs it as a literal): at least one character
/// outside the class of what Rust's `char::is_whitespace` (Unicode White_Space) counts, spelled
/// so JSON Schema (ECMA 262) and Python regular expressions read it the same way.
#[cfg(test)]
const NOT_BLANK: &str =
    r"[^\t\n\u000b\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]";
const MAX_MESSAGE_CHARS: usize = 4000;

/// Query of `GET /api/notify`.
#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub struct NotifyQuery {
    /// The text, 1-4000 characters, not only whitespace; sent as written (HTML is escaped).
    #[param(
        min_length = 1,
        max_length = 4000,
        pattern = r"[^\t\n\u000b\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
    )]
    pub message: String,
}

/// The answer of notify.
#[derive(Debug, Serialize, ToSchema)]
pub struct NotifyAnswer {
    pub ok: bool,
}

/// Sends a text to the boss through the messenger. Never needs a license.
#[utoipa::path(get, path = "/api/notify", tag = "messenger and report", params(NotifyQuery),
    responses(
        (status = 200, description = "Sent", body = NotifyAnswer),
        (status = 422, description = "`invalid_query`: message is missing, empty, only \
            whitespace or longer than 4000 characters", body = ErrorBody),
        (status = 502, description = "`messenger_error`: the messenger refused the message or \
            could not be reached", body = ErrorBody),
        (status = 503, description = "`messenger_not_configured`: MESSENGER_BOT_TOKEN or \
            MESSENGER_CHAT_ID is not set", body = ErrorBody),
    ))]
async fn notify(
    State(state): State<AppState>,
    ApiQuery(q): ApiQuery<NotifyQuery>,
) -> Result<Json<NotifyAnswer>, ApiError> {
    let chars = q.message.chars().count();
    if chars == 0 || chars > MAX_MESSAGE_CHARS {
        return Err(ApiError::unprocessable(
            "invalid_query",
            format!("`message` must be 1-{MAX_MESSAGE_CHARS} characters, got {chars}"),
        ));
    }
    if q.message.chars().all(char::is_whitespace) {
        return Err(ApiError::unprocessable(
            "invalid_query",
            "`message` must contain a character that is not whitespace",
        ));
    }
    state.messenger.send(&templates::plain(&q.message)).await.map_err(messenger_error)?;
    Ok(Json(NotifyAnswer { ok: true }))
}

fn messenger_error(err: MessengerError) -> ApiError {
    let detail = err.to_string();
    match err {
        MessengerError::NotConfigured => {
            ApiError::service_unavailable("messenger_not_configured", detail)
        }
        MessengerError::Api { .. } | MessengerError::Transport(_) => {
            ApiError::new(StatusCode::BAD_GATEWAY, "messenger_error", detail)
        }
    }
}

pub fn routes() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(status)).routes(routes!(portfolio)).routes(routes!(notify))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every whitespace character of Rust, and only those, is in the pattern's class.
    #[test]
    fn the_pattern_names_exactly_what_the_handler_calls_whitespace() {
        let listed: Vec<char> =
            ['\t', '\n', '\u{b}', '\u{c}', '\r', ' ', '\u{85}', '\u{a0}', '\u{1680}']
                .into_iter()
                .chain('\u{2000}'..='\u{200a}')
                .chain(['\u{2028}', '\u{2029}', '\u{202f}', '\u{205f}', '\u{3000}'])
                .collect();
        let all: Vec<char> =
            (0..=0x10ffff).filter_map(char::from_u32).filter(|c| c.is_whitespace()).collect();
        assert_eq!(listed, all);
        for c in &listed {
            let escaped = match c {
                '\t' => r"\t".to_string(),
                '\n' => r"\n".to_string(),
                '\u{c}' => r"\f".to_string(),
                '\r' => r"\r".to_string(),
                ' ' => " ".to_string(),
                c => format!(r"\u{:04x}", *c as u32),
            };
            let range_member = ('\u{2000}'..='\u{200a}').contains(c);
            assert!(range_member || NOT_BLANK.contains(&escaped), "{escaped} missing");
        }
        assert!(NOT_BLANK.contains(r"\u2000-\u200a"));
    }

    #[test]
    fn the_document_carries_that_pattern() {
        use utoipa::openapi::{RefOr, Schema};
        let params = NotifyQuery::into_params(|| None);
        let Some(RefOr::T(Schema::Object(schema))) = &params[0].schema else {
            panic!("message has an inline schema");
        };
        assert_eq!(schema.pattern.as_deref(), Some(NOT_BLANK));
        assert_eq!((schema.min_length, schema.max_length), (Some(1), Some(MAX_MESSAGE_CHARS)));
    }
}
