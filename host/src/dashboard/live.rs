//! The dashboard's live view: one server-sent event stream per open page
//! (`GET /api/dashboard/events`), so prices, fills, orders and the activity log show up within
//! a second instead of at the page's next poll.
//!
//! The stream carries little: which panels changed (the page re-reads those through their
//! own routes, so there is one way to render each), the open trades' last prices with their
//! unrealised pnl (from the exchange's price stream, coalesced to at most one message per
//! [`FLUSH_EVERY`]), and which path protection is on (streams or polling). Changes are learnt
//! from where they happen: the store announces the tables each commit wrote, the activity log
//! its updates, the exchange feed its prices and link states. A page that misses messages
//! (too slow, or reconnected) re-reads every panel.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::response::sse::Event;
use futures_util::Stream;
use redb::TableHandle;
use rust_decimal::Decimal;
use serde::Serialize;
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{broadcast, watch};

use super::panels::Unrealised;
use crate::activity::Dashboard;
use crate::exchange::feed::{ExchangeEvent, Feed, FeedStatus, LinkState};
use crate::execution::{Execution, Trade};
use crate::money::json_amount;
use crate::store::changes::Changed;
use crate::store::{Store, tables};

/// How often pending changes and prices are sent at most.
const FLUSH_EVERY: Duration = Duration::from_millis(250);
/// How long a browser waits before reconnecting a dropped stream, ms.
const RETRY_MS: u64 = 3_000;

/// A panel of the page, by the name the page knows it by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Panel {
    Trades,
    Summary,
    Orders,
    Entries,
    Signals,
    Footer,
    Pnl,
    Activity,
    License,
}

impl Panel {
    const ALL: [Panel; 9] = [
        Panel::Trades,
        Panel::Summary,
        Panel::Orders,
        Panel::Entries,
        Panel::Signals,
        Panel::Footer,
        Panel::Pnl,
        Panel::Activity,
        Panel::License,
    ];
}

/// The panels that show a table's contents.
fn panels_of(changed: &Changed) -> BTreeSet<Panel> {
    let shows: [(&str, &[Panel]); 8] = [
        (tables::OPEN_TRADES.name(), &[Panel::Trades, Panel::Summary, Panel::Footer]),
        (tables::CLOSED_TRADES.name(), &[Panel::Pnl, Panel::Summary, Panel::Footer]),
        (tables::ORDER_JOURNAL.name(), &[Panel::Orders, Panel::Footer]),
        (tables::PENDING_ENTRIES.name(), &[Panel::Entries]),
        (tables::COUNTERS.name(), &[Panel::Footer]),
        (tables::ENTRY_PAUSE.name(), &[Panel::Footer, Panel::Summary]),
        (tables::PROTECTION.name(), &[Panel::Summary]),
        (tables::LICENSE_CACHE.name(), &[Panel::License]),
    ];
    shows
        .iter()
        .filter(|(table, _)| changed.touched(table))
        .flat_map(|(_, panels)| panels.iter().copied())
        .collect()
}

/// Which path protection learns the exchange's news by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Path {
    /// Pushed by the exchange's stream.
    Stream,
    /// Asked for: the minute's run for fills, the watch loop for watched stops.
    Polled,
}

/// The `path` message.
#[derive(Debug, Clone, Serialize)]
struct PathMessage {
    fills: Path,
    prices: Path,
    /// The links as `GET /api/health` shows them; null when streams are not followed.
    streams: Option<FeedStatus>,
}

impl PathMessage {
    fn of(status: Option<&FeedStatus>) -> Self {
        let path = |state: Option<LinkState>| match state {
            Some(LinkState::Live) => Path::Stream,
            _ => Path::Polled,
        };
        Self {
            fills: path(status.map(|s| s.account)),
            prices: path(status.map(|s| s.prices)),
            streams: status.cloned(),
        }
    }
}

/// One open trade at its last streamed price, in the `prices` message.
#[derive(Debug, Clone, Serialize)]
struct LivePrice {
    symbol: String,
    price: f64,
    /// Milliseconds since the epoch, the exchange's time of the trade.
    time: i64,
    unrealised_pnl: f64,
    unrealised_pct: Option<f64>,
}

/// The live view's shared end: ends every stream when the service stops (a server-sent event
/// stream never ends on its own, and a graceful shutdown waits for open responses).
#[derive(Debug)]
pub struct Live {
    closing: watch::Sender<bool>,
    /// Streams open now (each holds a [`StreamSlot`]).
    open: Arc<AtomicUsize>,
}

impl Default for Live {
    fn default() -> Self {
        Self { closing: watch::channel(false).0, open: Arc::default() }
    }
}

/// Streams open at once at most: each holds a connection and a few receivers, and any caller
/// with the read scope can open them. A boss's tabs need a handful.
pub const MAX_STREAMS: usize = 32;

/// Why a stream was not opened.
#[derive(Debug, PartialEq, Eq)]
pub struct TooManyStreams;

/// One open stream's place in [`Live::open`], given back when the stream is dropped.
struct StreamSlot(Arc<AtomicUsize>);

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What a stream follows.
pub struct Sources<'a> {
    pub store: &'a Store,
    pub execution: &'a Execution,
    pub activity: &'a Dashboard,
    pub feed: Option<&'a Arc<Feed>>,
}

impl Live {
    /// Ends every open stream.
    pub fn close(&self) {
        self.closing.send_replace(true);
    }

    /// Streams open now.
    pub fn open_streams(&self) -> usize {
        self.open.load(Ordering::SeqCst)
    }

    /// A new page's stream: the path first, then changes as they happen. Refused while
    /// [`MAX_STREAMS`] are open.
    pub fn stream(
        &self,
        sources: Sources<'_>,
    ) -> Result<impl Stream<Item = Result<Event, Infallible>> + use<>, TooManyStreams> {
        let taken = self.open.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |open| {
            (open < MAX_STREAMS).then_some(open + 1)
        });
        if taken.is_err() {
            return Err(TooManyStreams);
        }
        let mut session = Session {
            _slot: StreamSlot(self.open.clone()),
            closing: self.closing.subscribe(),
            store: sources.store.changes(),
            activity: sources.activity.updates(),
            feed: sources.feed.map(|f| f.subscribe()),
            links: sources.feed.map(|f| f.status_changes()),
            execution: sources.execution.clone(),
            tick: tokio::time::interval(FLUSH_EVERY),
            changed: BTreeSet::new(),
            prices: BTreeMap::new(),
            open: None,
            queue: VecDeque::new(),
        };
        session.queue.push_back(session.path().retry(Duration::from_millis(RETRY_MS)));
        Ok(futures_util::stream::unfold(session, |mut session| async move {
            session.next().await.map(|event| (Ok(event), session))
        }))
    }
}

/// One page's stream.
struct Session {
    _slot: StreamSlot,
    closing: watch::Receiver<bool>,
    store: broadcast::Receiver<Changed>,
    activity: watch::Receiver<u64>,
    feed: Option<broadcast::Receiver<ExchangeEvent>>,
    links: Option<watch::Receiver<FeedStatus>>,
    execution: Execution,
    tick: tokio::time::Interval,
    /// Panels changed since the last flush.
    changed: BTreeSet<Panel>,
    /// The newest streamed price per symbol since the last flush, with its time.
    prices: BTreeMap<String, (Decimal, i64)>,
    /// The open trades by symbol, read again after they changed.
    open: Option<BTreeMap<String, Trade>>,
    queue: VecDeque<Event>,
}

impl Session {
    /// The next message, or none when the service is stopping.
    async fn next(&mut self) -> Option<Event> {
        loop {
            if let Some(event) = self.queue.pop_front() {
                return Some(event);
            }
            if *self.closing.borrow() {
                return None;
            }
            tokio::select! {
                _ = self.closing.changed() => return None,
                changed = self.store.recv() => match changed {
                    Ok(changed) => {
                        let panels = panels_of(&changed);
                        if panels.contains(&Panel::Trades) {
                            self.open = None;
                        }
                        self.changed.extend(panels);
                    }
                    Err(RecvError::Lagged(_)) => self.missed(),
                    Err(RecvError::Closed) => return None,
                },
                updated = self.activity.changed() => {
                    if updated.is_err() {
                        return None;
                    }
                    // Signals are kept in memory; every change of one is logged here.
                    self.changed.extend([Panel::Activity, Panel::Signals]);
                }
                event = next_feed_event(self.feed.as_mut()) => match event {
                    Ok(ExchangeEvent::Price { symbol, price, time_ms }) => {
                        self.prices.insert(symbol, (price, time_ms));
                    }
                    Ok(_) => {}
                    Err(RecvError::Lagged(_)) => self.missed(),
                    Err(RecvError::Closed) => self.feed = None,
                },
                status = next_link_change(self.links.as_mut()) => match status {
                    Some(()) => self.queue.push_back(self.path()),
                    None => self.links = None,
                },
                _ = self.tick.tick() => self.flush(),
            }
        }
    }

    /// Messages were lost: everything may have changed.
    fn missed(&mut self) {
        self.open = None;
        self.changed.extend(Panel::ALL);
    }

    fn path(&self) -> Event {
        let status = self.links.as_ref().map(|l| l.borrow().clone());
        json_event(PATH, &PathMessage::of(status.as_ref()))
    }

    /// Queues what gathered since the last flush.
    fn flush(&mut self) {
        if !self.changed.is_empty() {
            let panels = std::mem::take(&mut self.changed);
            self.queue.push_back(json_event(CHANGED, &serde_json::json!({ "panels": panels })));
        }
        if self.prices.is_empty() {
            return;
        }
        if self.open.is_none() {
            // A store that cannot be read now leaves the prices for the next flush.
            let Ok(trades) = self.execution.book().open_trades() else { return };
            self.open = Some(trades.into_iter().map(|t| (t.symbol.clone(), t)).collect());
        }
        let Some(open) = self.open.as_ref() else { return };
        let trades: Vec<LivePrice> = std::mem::take(&mut self.prices)
            .into_iter()
            .filter_map(|(symbol, (price, time))| {
                let trade = open.get(&symbol)?;
                let unrealised = Unrealised::at(trade, price);
                Some(LivePrice {
                    symbol,
                    price: json_amount(price),
                    time,
                    unrealised_pnl: unrealised.pnl_amount(),
                    unrealised_pct: unrealised.pct_amount(),
                })
            })
            .collect();
        if !trades.is_empty() {
            self.queue.push_back(json_event(PRICES, &serde_json::json!({ "trades": trades })));
        }
    }
}

async fn next_feed_event(
    feed: Option<&mut broadcast::Receiver<ExchangeEvent>>,
) -> Result<ExchangeEvent, RecvError> {
    match feed {
        Some(feed) => feed.recv().await,
        None => std::future::pending().await,
    }
}

/// Some when the links' state changed, none when the feed is gone.
async fn next_link_change(links: Option<&mut watch::Receiver<FeedStatus>>) -> Option<()> {
    match links {
        Some(links) => links.changed().await.ok(),
        None => std::future::pending().await,
    }
}

/// The event names of the stream, in the API document's per-event schema too.
pub const PATH: &str = "path";
pub const CHANGED: &str = "changed";
pub const PRICES: &str = "prices";
pub const EVENTS: [&str; 3] = [PATH, CHANGED, PRICES];

fn json_event(name: &str, data: &impl Serialize) -> Event {
    let data = serde_json::to_string(data).unwrap_or_else(|_| "{}".to_string());
    Event::default().event(name).data(data)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_maps_to_the_panels_that_show_it() {
        let changed = |names: &[&str]| {
            let set: BTreeSet<String> = names.iter().map(|n| n.to_string()).collect();
            panels_of(&Changed::new(set))
        };
        assert_eq!(
            changed(&[tables::OPEN_TRADES.name()]),
            BTreeSet::from([Panel::Trades, Panel::Summary, Panel::Footer])
        );
        assert_eq!(
            changed(&[tables::ORDER_JOURNAL.name(), tables::PENDING_ENTRIES.name()]),
            BTreeSet::from([Panel::Orders, Panel::Footer, Panel::Entries])
        );
        assert!(changed(&[tables::MARKET_SNAPSHOTS.name()]).is_empty(), "not on the page");
    }

    #[test]
    fn the_path_is_the_stream_only_while_its_link_is_live() {
        let path = PathMessage::of(None);
        assert_eq!((path.fills, path.prices), (Path::Polled, Path::Polled));
        let status =
            FeedStatus { account: LinkState::Live, prices: LinkState::Reconnecting, reconnects: 2 };
        let path = PathMessage::of(Some(&status));
        assert_eq!((path.fills, path.prices), (Path::Stream, Path::Polled));
    }
}
