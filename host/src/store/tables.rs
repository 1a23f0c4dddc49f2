//! One table per persistent thing of the spec's Persistence section, plus the order journal.
//!
//! Values are JSON documents: they evolve with optional fields without a migration, and a
//! record can be read by a human with any redb viewer. Keyed tables use a natural key
//! (symbol, client order id); sequenced tables use an increasing `u64` so history stays in
//! insertion order.

use redb::TableDefinition;

/// A table of JSON documents under a text key.
pub type KeyedTable = TableDefinition<'static, &'static str, &'static [u8]>;
/// A table of JSON documents in insertion order.
pub type SequencedTable = TableDefinition<'static, u64, &'static [u8]>;

/// Schema version and other facts about the database itself.
pub const META: TableDefinition<'static, &'static str, u64> = TableDefinition::new("meta");

/// Open trades by symbol.
pub const OPEN_TRADES: KeyedTable = TableDefinition::new("open_trades");
/// Daily counters (trades_today, consecutive_losses, the day they belong to).
pub const COUNTERS: TableDefinition<'static, &'static str, i64> = TableDefinition::new("counters");
/// Closed-trade history.
pub const CLOSED_TRADES: SequencedTable = TableDefinition::new("closed_trades");
/// Pending LIMIT entries by client order id (prefix MT_).
pub const PENDING_ENTRIES: KeyedTable = TableDefinition::new("pending_entries");
/// Pump alert history.
pub const PUMP_ALERTS: SequencedTable = TableDefinition::new("pump_alerts");
/// Market-context snapshots under `SYMBOL/<computed_at, 12 digits>/<mtf>/<htf>`, so a
/// symbol's history is one key range, newest last (schema 2; schema 1 had an unused sequenced
/// table of this name).
pub const MARKET_SNAPSHOTS: KeyedTable = TableDefinition::new("market_snapshots");
/// The schema-1 definition of [`MARKET_SNAPSHOTS`], deleted by the migration to schema 2.
pub const MARKET_SNAPSHOTS_V1: SequencedTable = TableDefinition::new("market_snapshots");
/// Compression-state memory per symbol.
pub const COMPRESSION_STATE: KeyedTable = TableDefinition::new("compression_state");
/// Watch-state memory per symbol.
pub const WATCH_STATE: KeyedTable = TableDefinition::new("watch_state");
/// The activated license as last validated.
pub const LICENSE_CACHE: KeyedTable = TableDefinition::new("license_cache");
/// The install's machine id, created on first run.
pub const MACHINE_ID: KeyedTable = TableDefinition::new("machine_id");
/// Every order the service sends, written before it is sent, updated with the outcome.
pub const ORDER_JOURNAL: SequencedTable = TableDefinition::new("order_journal");
/// Client order id → the newest journal entry with that id and whether it is settled.
pub const JOURNAL_INDEX: KeyedTable = TableDefinition::new("journal_index");
/// Exchange trade id (`SYMBOL/id`) → the quantity of that fill already copied into the
/// closed-trade history by `POST /api/trades/sync` (so a second sync adds nothing).
pub const SYNCED_FILLS: KeyedTable = TableDefinition::new("synced_fills");
/// Persistent state of each strategy plugin, by plugin name.
pub const PLUGIN_STATE: KeyedTable = TableDefinition::new("plugin_state");
/// State of the protection loop by name (`drawdown`: the equity high-water mark).
pub const PROTECTION: KeyedTable = TableDefinition::new("protection");
/// Why new entries are paused, by cause (`drawdown`): execution's own state, which the
/// drawdown watch sets and clears (schema 3; schema 2 kept the pause in `protection`).
pub const ENTRY_PAUSE: KeyedTable = TableDefinition::new("entry_pause");

/// The account's equity over time, keyed by the minute (20-digit epoch ms): one point a minute,
/// thinned to one an hour after 14 days, deleted after two years (`protection::equity_series`).
pub const EQUITY_SERIES: KeyedTable = TableDefinition::new("equity_series");

/// The audit log of money and operator actions: append-only, never edited through the API.
pub const AUDIT: SequencedTable = TableDefinition::new("audit");

pub const KEYED_TABLES: &[KeyedTable] = &[
    OPEN_TRADES,
    PENDING_ENTRIES,
    MARKET_SNAPSHOTS,
    COMPRESSION_STATE,
    WATCH_STATE,
    LICENSE_CACHE,
    MACHINE_ID,
    PLUGIN_STATE,
    JOURNAL_INDEX,
    SYNCED_FILLS,
    PROTECTION,
    ENTRY_PAUSE,
    EQUITY_SERIES,
];

pub const SEQUENCED_TABLES: &[SequencedTable] = &[CLOSED_TRADES, PUMP_ALERTS, ORDER_JOURNAL, AUDIT];
