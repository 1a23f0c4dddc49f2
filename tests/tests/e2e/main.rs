//! The end-to-end tests: real servers on loopback (the host, the exchange simulator, a fake
//! messenger, the license server, feed servers, a headless browser), driven over HTTP like the
//! agents. One module per capability; run one with `cargo test -p spotbot-tests --test e2e
//! <module>::`.
//!
//! They form one test binary on purpose: each binary links the whole service (about 95 MB in
//! a debug build), so one binary instead of 32 saves about 3 GB of disk and minutes of linking
//! on every clean build, and relinks once after a change to the host.

// Shared rigs.
mod exchange_support;
mod license_support;
mod plugin_support;
mod trading_support;

mod api_contract;
mod api_errors;
mod backtest;
mod bias;
mod boss_approval;
mod chaos;
mod close_positions;
mod damaged_answers;
mod dashboard_actions;
mod dashboard_auth;
mod dashboard_first_paint;
mod dashboard_live;
mod dashboard_page;
mod dashboard_state;
mod demo_budget;
mod demo_market;
mod earlier_routes;
mod exchange_b_streams;
mod exchange_b_trading;
mod exchange_conformance;
mod exchange_faults;
mod execution_faults;
mod exits;
mod license_flow;
mod license_routes;
mod live_streams;
mod manual_entries;
mod market_context;
mod mcp;
mod messenger_client;
mod messenger_replies;
mod metrics;
mod news;
mod openclaw_assets;
mod optimize;
mod plugins_authoring;
mod plugins_market;
mod plugins_reload;
mod plugins_sandbox;
mod principals;
mod protection_latency;
mod protection_reports;
mod reconciliation;
mod request_budget;
mod scheduler;
mod signal_flow;
mod strategies_native_wasm;
mod strategy_defaults;
mod strategy_scans;
mod ta_strategies;
mod trade_management;
mod trailing;
mod watched_stops;
