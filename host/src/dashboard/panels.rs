//! What the dashboard page shows beyond agent cards and the log: the daily footer, the open
//! trades with their last price, trailing state and candle chart, and the cumulative PnL
//! curve. The live view (`live`) sends what changes between two reads of these panels.
//!
//! Read models only: each panel is assembled from the areas' public faces (execution's book,
//! counters and journal; the candle cache; the strategy keys) and never writes anything. A
//! price or candle read that fails leaves that field empty instead of failing the panel, so
//! the page keeps showing the stored facts when the exchange is slow.

use std::sync::Arc;

use chrono::DateTime;
use rust_decimal::Decimal;
use serde::Serialize;
use utoipa::ToSchema;

use super::chart::{ChartCandle, PricePoint, candle, stops_of};
use crate::config::{Config, DEFAULT_STRATEGY};
use crate::execution::stats::chronological;
use crate::execution::{Direction, Execution, Trade, TradeView};
use crate::market::{CandleCache, Timeframe};
use crate::money::json_amount;
use crate::protection::TrailSettings;
use crate::store::StoreError;

/// Candles of an open trade's chart: the last 24 hours in 15-minute steps.
const CHART_TIMEFRAME: Timeframe = Timeframe::M15;
const CHART_CANDLES: u32 = 96;
/// Points of the PnL curve: the most recent closed trades.
const PNL_POINTS: usize = 1000;

/// The daily footer of the spec: order count, win/loss, consecutive losses, trading cap.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct Footer {
    /// The active exchange (`exchange_a`) and `[exchange] mode` (`paper`, `testnet`,
    /// `mainnet`), shown in the page's header.
    pub exchange: String,
    pub mode: String,
    /// Today, YYYY-MM-DD in `[market] timezone`.
    pub date: String,
    /// Orders sent today (entries, OCO lists, exits; any outcome).
    pub orders_today: usize,
    /// Entries today, the daily counter the limit applies to.
    pub trades_today: i64,
    /// The default strategy's `max_trades_per_day`.
    pub max_trades_per_day: u32,
    /// Trades closed today with a profit / a loss.
    pub wins_today: usize,
    pub losses_today: usize,
    /// Net pnl of the trades closed today, in `currency`.
    pub pnl_today: f64,
    /// All closed trades with a profit / a loss.
    pub wins: usize,
    pub losses: usize,
    /// Losing closes in a row today.
    pub consecutive_losses: i64,
    /// `[risk] max_consecutive_losses` (0 = off).
    pub max_consecutive_losses: u32,
    /// `[risk] max_trading_usdt`: the capital base cap; 0 means no cap.
    pub trading_cap: f64,
    /// The account's currency (`[market] quote_asset` on exchange A, USDC on exchange B).
    pub currency: String,
    /// Why new entries are blocked now (`daily_limit_reached: …`, `drawdown_paused: …`), or
    /// null when they are allowed.
    #[schema(required = true)]
    pub entries_blocked: Option<String>,
}

impl Footer {
    pub fn read(execution: &Execution, config: &Config) -> Result<Footer, StoreError> {
        let today = execution.today();
        let counters = execution.counters()?;
        let closed = chronological(execution.book())?;
        let closed_today: Vec<Decimal> = closed
            .iter()
            .filter(|c| {
                DateTime::parse_from_rfc3339(&c.closed_at)
                    .is_ok_and(|t| execution.day_of(t.to_utc()).key == today.key)
            })
            .map(|c| c.pnl)
            .collect();
        let (wins_today, losses_today) = win_loss(closed_today.iter().copied());
        let (wins, losses) = win_loss(closed.iter().map(|c| c.pnl));
        Ok(Footer {
            exchange: execution.exchange_name().to_string(),
            mode: config.exchange.mode.as_str().to_string(),
            date: today.iso(),
            orders_today: execution.orders_today()?.len(),
            trades_today: counters.trades_today,
            max_trades_per_day: execution.strategy_keys(DEFAULT_STRATEGY).max_trades_per_day,
            wins_today,
            losses_today,
            pnl_today: json_amount(closed_today.iter().sum()),
            wins,
            losses,
            consecutive_losses: counters.consecutive_losses,
            max_consecutive_losses: config.risk.max_consecutive_losses,
            trading_cap: json_amount(config.risk.max_trading_usdt),
            currency: crate::exchange::account_currency(config).to_string(),
            entries_blocked: execution.entry_block(DEFAULT_STRATEGY)?.map(|b| b.to_string()),
        })
    }
}

/// Closes with a profit and closes with a loss (a zero pnl is neither).
fn win_loss(pnls: impl Iterator<Item = Decimal>) -> (usize, usize) {
    pnls.fold((0, 0), |(w, l), p| match p.cmp(&Decimal::ZERO) {
        std::cmp::Ordering::Greater => (w + 1, l),
        std::cmp::Ordering::Less => (w, l + 1),
        std::cmp::Ordering::Equal => (w, l),
    })
}

/// The trailing stop of an open trade: its settings, whether it is following the price, and
/// every stop the trade's OCO lists were placed with (the first is the initial stop).
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TrailingState {
    pub enabled: bool,
    pub trigger_pct: f64,
    pub distance_pct: f64,
    /// The profit has reached the trigger: the stop follows the price.
    pub active: bool,
    /// Stop prices over time, oldest first.
    pub stops: Vec<PricePoint>,
}

/// An open trade as the dashboard shows it.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TradePanel {
    #[serde(flatten)]
    pub trade: TradeView,
    /// Last price; null when the exchange could not be read.
    #[schema(required = true)]
    pub price: Option<f64>,
    /// Profit at `price` before the exit fee, in the quote asset; null without a price.
    #[schema(required = true)]
    pub unrealised_pnl: Option<f64>,
    /// The same in percent of the entry.
    #[schema(required = true)]
    pub unrealised_pct: Option<f64>,
    pub trailing: TrailingState,
    /// The last 24 hours in 15-minute candles, oldest first (empty when the exchange could not
    /// be read).
    pub candles: Vec<ChartCandle>,
}

/// An open trade's profit if it closed at `price`, before the exit fee.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unrealised {
    /// In the quote asset.
    pub pnl: Decimal,
    /// In percent of the entry price; none for a trade without an entry price.
    pub pct: Option<Decimal>,
}

impl Unrealised {
    pub fn at(trade: &Trade, price: Decimal) -> Self {
        let per_unit = match trade.direction {
            Direction::Buy => price - trade.entry_px,
            Direction::Sell => trade.entry_px - price,
        };
        let pct =
            (!trade.entry_px.is_zero()).then(|| per_unit / trade.entry_px * Decimal::ONE_HUNDRED);
        Self { pnl: per_unit * trade.size, pct }
    }

    /// The pnl as JSON shows it.
    pub fn pnl_amount(&self) -> f64 {
        json_amount(self.pnl)
    }

    /// The percentage as JSON shows it (4 decimals).
    pub fn pct_amount(&self) -> Option<f64> {
        self.pct.map(|p| json_amount(p.round_dp(4)))
    }
}

/// The open trades with their panels.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct TradePanels {
    pub trades: Vec<TradePanel>,
    pub count: usize,
}

impl TradePanels {
    pub async fn read(
        execution: &Execution,
        candles: Option<&Arc<CandleCache>>,
    ) -> Result<TradePanels, StoreError> {
        let mut trades = Vec::new();
        for trade in execution.book().open_trades()? {
            trades.push(panel(execution, candles, &trade).await?);
        }
        Ok(TradePanels { count: trades.len(), trades })
    }
}

async fn panel(
    execution: &Execution,
    candles: Option<&Arc<CandleCache>>,
    trade: &Trade,
) -> Result<TradePanel, StoreError> {
    let series = match candles {
        Some(cache) => cache
            .klines(&trade.symbol, CHART_TIMEFRAME, CHART_CANDLES, execution.now_ms())
            .await
            .unwrap_or_default(),
        None => Vec::new(),
    };
    // The chart's last close is the price: one read of the exchange per trade, not two.
    let price = series.last().map(|k| k.close.0);
    let unrealised = price.map(|p| Unrealised::at(trade, p));
    let profit_pct = unrealised.and_then(|u| u.pct);
    let settings = TrailSettings::of(&execution.strategy_keys(&trade.bot));
    let trailing = TrailingState {
        enabled: settings.enabled,
        trigger_pct: json_amount(settings.trigger_pct),
        distance_pct: json_amount(settings.distance_pct),
        active: settings.enabled && profit_pct.is_some_and(|p| p >= settings.trigger_pct),
        stops: stops_of(execution, trade)?,
    };
    Ok(TradePanel {
        trade: trade.view(),
        price: price.map(json_amount),
        unrealised_pnl: unrealised.map(|u| u.pnl_amount()),
        unrealised_pct: unrealised.and_then(|u| u.pct_amount()),
        trailing,
        candles: series.iter().map(candle).collect(),
    })
}

/// One closed trade on the cumulative PnL curve.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PnlPoint {
    /// Close time, milliseconds since the epoch.
    pub time: i64,
    pub symbol: String,
    /// This trade's net pnl.
    pub pnl: f64,
    /// Sum of the net pnl of every closed trade up to this one.
    pub cumulative: f64,
}

/// The cumulative PnL of closed trades in the order they closed.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct PnlCurve {
    pub currency: String,
    /// At most the 1000 most recent closes; `cumulative` still counts every earlier one.
    pub points: Vec<PnlPoint>,
    /// Net pnl of every closed trade.
    pub total: f64,
}

impl PnlCurve {
    pub fn read(execution: &Execution, config: &Config) -> Result<PnlCurve, StoreError> {
        let closed = chronological(execution.book())?;
        let mut cumulative = Decimal::ZERO;
        let mut points = Vec::with_capacity(closed.len());
        for c in &closed {
            cumulative += c.pnl;
            let Ok(time) = DateTime::parse_from_rfc3339(&c.closed_at) else { continue };
            points.push(PnlPoint {
                time: time.timestamp_millis(),
                symbol: c.trade.symbol.clone(),
                pnl: json_amount(c.pnl),
                cumulative: json_amount(cumulative),
            });
        }
        let skip = points.len().saturating_sub(PNL_POINTS);
        Ok(PnlCurve {
            currency: crate::exchange::account_currency(config).to_string(),
            points: points.split_off(skip),
            total: json_amount(cumulative),
        })
    }
}
