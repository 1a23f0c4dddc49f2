//! One test per kind of config error, plus the documented example.

use std::path::Path;

use super::{AuthMode, Config, ConfigError, ExchangeMode};

fn parse(source: &str) -> Result<Config, ConfigError> {
    Config::parse(source, Path::new("test.toml"))
}

fn error(source: &str) -> ConfigError {
    parse(source).expect_err("config must be refused")
}

#[test]
fn the_documented_example_is_valid_and_equals_the_defaults() {
    let source = include_str!("../../../examples/config.toml");
    let example = parse(source).expect("examples/config.toml is valid");
    let defaults = parse("").expect("an empty file is valid");
    assert_eq!(example.exchange.mode, ExchangeMode::Paper);
    // The [strategy.*] sections repeat each plugin's defaults (tests/tests/e2e/strategy_defaults.rs
    // compares them with the plugins themselves).
    assert_eq!(example.market.watchlist, defaults.market.watchlist);
    assert_eq!(example.server.addr, defaults.server.addr);
    assert_eq!(example.server.max_body_bytes, defaults.server.max_body_bytes);
    assert_eq!(example.protection.max_drawdown_pct, defaults.protection.max_drawdown_pct);
    assert_eq!(example.scheduler, defaults.scheduler);
    assert_eq!(example.news, defaults.news);
}

#[test]
fn malformed_toml_names_the_position() {
    let err = error("[risk]\nmax_trading_usdt = = 3\n");
    assert_eq!(err.position.map(|(line, _)| line), Some(2));
    assert!(err.to_string().starts_with("config error in test.toml:2:"), "{err}");
    assert!(!err.to_string().contains('\n'), "one line: {err}");
}

#[test]
fn an_unknown_key_is_named_with_its_position() {
    let err = error("[risk]\nmax_trading_usdt = 5.0\nmax_tradng = 1\n");
    assert_eq!(err.position, Some((3, 1)));
    assert!(err.message.contains("max_tradng"), "{err}");
}

#[test]
fn an_unknown_section_is_refused() {
    let err = error("[riskk]\nx = 1\n");
    assert!(err.message.contains("riskk"), "{err}");
    assert_eq!(err.position.map(|(line, _)| line), Some(1));
}

#[test]
fn a_wrong_type_names_the_key() {
    let err = error("[risk]\nmax_trading_usdt = \"lots\"\n");
    assert_eq!(err.key, "risk.max_trading_usdt");
    assert_eq!(err.position.map(|(line, _)| line), Some(2));
}

#[test]
fn a_negative_cap_is_refused() {
    let err = error("[risk]\nmax_trading_usdt = -10.0\n");
    assert_eq!(err.key, "risk.max_trading_usdt");
    assert_eq!(err.position, Some((2, 1)));
    assert!(err.to_string().contains(">= 0"), "{err}");
}

#[test]
fn amounts_and_percents_are_the_decimals_written() {
    let config = parse("[risk]\nmax_trading_usdt = 0.1\n").expect("valid");
    assert_eq!(config.risk.max_trading_usdt, rust_decimal::Decimal::new(1, 1), "exactly 0.1");
    let err = error("[risk]\nmax_trading_usdt = inf\n");
    assert_eq!(err.key, "risk.max_trading_usdt");
    assert_eq!(err.position.map(|(line, _)| line), Some(2));
    assert!(err.message.contains("decimal"), "{err}");
}

#[test]
fn size_pct_over_100_is_refused() {
    let err = error("[strategy.mr_combined]\nsize_pct = 150.0\n");
    assert_eq!(err.key, "strategy.mr_combined.size_pct");
    assert_eq!(err.position, Some((2, 1)));
}

#[test]
fn an_unknown_exchange_is_refused() {
    let err = error("[exchange]\nactive = \"exchange_c\"\n");
    assert_eq!(err.key, "exchange.active");
    assert!(err.message.contains("exchange_c"), "{err}");
}

#[test]
fn an_unknown_mode_is_refused() {
    let err = error("[exchange]\nmode = \"live\"\n");
    assert_eq!(err.key, "exchange.mode");
}

#[test]
fn host_keys_of_any_strategy_section_are_checked() {
    let err = error("[strategy.my_plugin]\nmax_trades_per_day = 2.5\n");
    assert_eq!(err.key, "strategy.my_plugin.max_trades_per_day");
    assert_eq!(err.position.map(|(line, _)| line), Some(2));
    let err = error("[strategy.pump_momentum]\nwatchlist_override = [\"sol\"]\n");
    assert_eq!(err.key, "strategy.pump_momentum.watchlist_override");
    let err = error("[strategy.mr_combined]\ntrailing_enabled = \"yes\"\n");
    assert_eq!(err.key, "strategy.mr_combined.trailing_enabled");
    let err = error("[strategy.Bad-Name]\nx = 1\n");
    assert_eq!(err.key, "strategy.Bad-Name");
    // Keys only the plugin knows are checked when the plugin loads, not here.
    assert!(parse("[strategy.mr_combined]\ntp3_ratio = 0.5\n").is_ok());
}

#[test]
fn a_bad_symbol_or_time_zone_is_refused() {
    assert_eq!(error("[market]\nwatchlist = [\"btc/usdt\"]\n").key, "market.watchlist");
    assert_eq!(error("[market]\ntimezone = \"Mars/Olympus\"\n").key, "market.timezone");
    assert_eq!(error("[market]\nwatchlist = []\n").key, "market.watchlist");
}

#[test]
fn a_bad_address_or_url_is_refused() {
    assert_eq!(error("[server]\naddr = \"localhost\"\n").key, "server.addr");
    assert_eq!(error("[exchange]\nbase_url = \"ftp://x\"\n").key, "exchange.base_url");
    let err = error("[exchange]\naccount_address = \"0x1234\"\n");
    assert_eq!(err.key, "exchange.account_address");
    assert!(err.message.contains("40 hex digits"), "{}", err.message);
}

#[test]
fn a_value_that_is_only_defaulted_has_no_position() {
    // The cap is fine, but the reference symbol is not quoted in the configured quote asset.
    let err = error("[market]\nquote_asset = \"EUR\"\n");
    assert_eq!(err.key, "market.reference_symbol");
    assert_eq!(err.position, None);
}

#[test]
fn other_plugin_sections_are_passed_through_as_json() {
    let config = parse("[strategy.my_plugin]\nthreshold = 1.5\nname = \"x\"\n").unwrap();
    let section = config.strategy.section_json("my_plugin").unwrap();
    assert_eq!(section["threshold"], 1.5);
    assert_eq!(config.strategy.section_json("mr_combined"), None, "defaults live in plugins");
    assert_eq!(config.strategy.section_json("nobody"), None);
}

#[test]
fn a_missing_file_is_one_clear_line() {
    let err = Config::load(Path::new("/nonexistent/spotbot.toml")).unwrap_err();
    assert!(err.to_string().contains("cannot read the file"), "{err}");
}

#[test]
fn boss_replies_are_off_by_default_and_boss_user_id_must_be_a_user_id() {
    let defaults = parse("").unwrap();
    let example = parse(include_str!("../../../examples/config.toml")).unwrap();
    assert!(!defaults.messenger.handle_replies);
    assert_eq!(defaults.messenger.boss_user_id, None);
    assert_eq!(example.messenger.handle_replies, defaults.messenger.handle_replies);
    assert_eq!(example.messenger.boss_user_id, defaults.messenger.boss_user_id);
    let on = parse("[messenger]\nhandle_replies = true\nboss_user_id = 4242\n").unwrap();
    assert_eq!((on.messenger.handle_replies, on.messenger.boss_user_id), (true, Some(4242)));
    let err = error("[messenger]\nboss_user_id = -5\n");
    assert_eq!(err.key, "messenger.boss_user_id");
    assert_eq!(err.position, Some((2, 1)));
}

#[test]
fn a_scheduler_poll_over_a_minute_is_refused() {
    let err = error("[scheduler]\npoll_seconds = 61\n");
    assert_eq!(err.key, "scheduler.poll_seconds");
    assert!(err.message.contains("0 (off) to 60"), "{err}");
    let config = parse("[scheduler]\npoll_seconds = 0\npump_scan = true\n").expect("valid");
    assert_eq!((config.scheduler.poll_seconds, config.scheduler.pump_scan), (0, true));
}

#[test]
fn news_sources_must_be_http_urls_and_the_limits_usable() {
    let defaults = parse("").unwrap();
    assert_eq!((defaults.news.timeout_secs, defaults.news.max_items), (5, 20));
    assert!(!defaults.news.sources.is_empty());
    let empty = parse("[news]\nsources = []\n").expect("no sources is valid");
    assert!(empty.news.sources.is_empty());
    let err =
        error("[news]\nsources = [\"https://ok.example/rss\", \"ftp://feeds.example/rss\"]\n");
    assert_eq!(err.key, "news.sources");
    assert_eq!(err.position, Some((2, 1)));
    assert!(err.message.contains("ftp://feeds.example/rss"), "{err}");
    assert_eq!(error("[news]\nsources = [\"https://\"]\n").key, "news.sources");
    assert_eq!(error("[news]\ntimeout_secs = 0\n").key, "news.timeout_secs");
    assert_eq!(error("[news]\nmax_items = 0\n").key, "news.max_items");
    assert_eq!(error("[news]\nmax_items = 101\n").key, "news.max_items");
    assert_eq!(error("[news]\nsources = \"https://one.example\"\n").key, "news.sources");
}

#[test]
fn the_api_allows_loopback_hosts_and_an_allowed_host_must_be_a_host() {
    let defaults = parse("").unwrap();
    assert!(defaults.mcp.enabled);
    assert_eq!(defaults.api.allowed_hosts, ["127.0.0.1", "localhost", "::1"]);
    assert_eq!(defaults.api.auth, None);
    let example = parse(include_str!("../../../examples/config.toml")).unwrap();
    assert_eq!(example.mcp, defaults.mcp);
    assert_eq!(example.api, defaults.api);
    let compose = parse("[api]\nallowed_hosts = [\"spotbot\", \"spotbot:8000\", \"[::1]\"]\n");
    assert!(compose.is_ok(), "{compose:?}");
    let err = error("[api]\nallowed_hosts = []\n");
    assert_eq!(err.key, "api.allowed_hosts");
    assert_eq!(err.position, Some((2, 1)));
    for bad in ["http://spotbot", "spot bot", "*", "user@spotbot", "spotbot/mcp", ""] {
        let err = error(&format!("[api]\nallowed_hosts = [{bad:?}]\n"));
        assert_eq!(err.key, "api.allowed_hosts", "{bad:?}");
    }
    let moved = error("[mcp]\nallowed_hosts = [\"spotbot\"]\n");
    assert_eq!(moved.key, "mcp.allowed_hosts");
    assert!(moved.message.contains("moved to [api] allowed_hosts"), "{}", moved.message);
    assert_eq!(parse("[api]\nauth = \"off\"\n").unwrap().api.auth, Some(AuthMode::Off));
    assert_eq!(error("[api]\nauth = \"none\"\n").key, "api.auth");
    assert!(parse("[mcp]\nenabled = false\n").is_ok_and(|c| !c.mcp.enabled));
}
