//! Checks of values that parse but cannot work (a negative cap, size_pct over 100, an unknown
//! timeframe, ...). Each failure names the dotted key so the error can point into the file.

use std::net::SocketAddr;

use rust_decimal::Decimal;

use super::Config;
use crate::money::Number;

#[derive(Debug)]
pub struct Invalid {
    pub key: String,
    pub message: String,
}

fn invalid(key: impl Into<String>, message: impl Into<String>) -> Invalid {
    Invalid { key: key.into(), message: message.into() }
}

/// Collects checks of one section under its key prefix.
struct Checker {
    prefix: &'static str,
}

impl Checker {
    fn key(&self, name: &str) -> String {
        format!("{}.{name}", self.prefix)
    }

    fn non_negative(&self, name: &str, value: Decimal) -> Result<(), Invalid> {
        if value >= Decimal::ZERO {
            Ok(())
        } else {
            Err(invalid(self.key(name), format!("must be a number >= 0, got {value}")))
        }
    }

    /// `low < value <= high`; amounts, percents and whole numbers alike, as decimals.
    fn in_range(
        &self,
        name: &str,
        value: impl Into<Decimal>,
        low: impl Into<Decimal>,
        high: impl Into<Decimal>,
    ) -> Result<(), Invalid> {
        let (value, low, high) = (value.into(), low.into(), high.into());
        if value > low && value <= high {
            Ok(())
        } else {
            Err(invalid(self.key(name), format!("must be > {low} and <= {high}, got {value}")))
        }
    }

    fn symbols(&self, name: &str, symbols: &[String]) -> Result<(), Invalid> {
        symbols.iter().try_for_each(|symbol| check_symbol(&self.key(name), symbol))
    }
}

fn check_symbol(key: &str, symbol: &str) -> Result<(), Invalid> {
    let well_formed = (2..=20).contains(&symbol.len())
        && symbol.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit());
    if well_formed {
        Ok(())
    } else {
        Err(invalid(key, format!("`{symbol}` is not a symbol (2-20 upper-case letters or digits)")))
    }
}

fn check_url(key: &str, url: &str) -> Result<(), Invalid> {
    if url.starts_with("http://") || url.starts_with("https://") {
        Ok(())
    } else {
        Err(invalid(key, format!("`{url}` must start with http:// or https://")))
    }
}

pub fn check(config: &Config) -> Result<(), Invalid> {
    let server = Checker { prefix: "server" };
    if config.server.addr.parse::<SocketAddr>().is_err() {
        return Err(invalid(server.key("addr"), "must be HOST:PORT with an IP address"));
    }
    if config.server.max_body_bytes < 1024 {
        return Err(invalid(server.key("max_body_bytes"), "must be at least 1024"));
    }
    if config.server.data_dir.trim().is_empty() {
        return Err(invalid(server.key("data_dir"), "must not be empty"));
    }

    if let Some(url) = &config.exchange.base_url {
        check_url("exchange.base_url", url)?;
    }
    let account = config.exchange.account_address.as_deref().filter(|a| !a.is_empty());
    if let Some(address) = account
        && address.parse::<spotbot_exchange_b_protocol::Address>().is_err()
    {
        return Err(invalid(
            "exchange.account_address",
            format!("`{address}` is not an address (0x followed by 40 hex digits)"),
        ));
    }
    let exchange = Checker { prefix: "exchange" };
    exchange.in_range("paper_usdt", config.exchange.paper_usdt, 0, 1_000_000_000_000_u64)?;
    exchange.in_range("request_timeout_ms", config.exchange.request_timeout_ms, 99, 60_000)?;
    exchange.in_range("read_share_pct", config.exchange.read_share_pct, 10, 80)?;
    exchange.in_range("stream_silence_ms", config.exchange.stream_silence_ms, 499, 300_000)?;

    Checker { prefix: "risk" }.non_negative("max_trading_usdt", config.risk.max_trading_usdt)?;
    let protection = Checker { prefix: "protection" };
    protection.in_range("max_drawdown_pct", config.protection.max_drawdown_pct, 0, 100)?;
    protection.in_range("watch_interval_ms", config.protection.watch_interval_ms, 100, 1000)?;
    protection.in_range("trail_interval_ms", config.protection.trail_interval_ms, 999, 300_000)?;
    protection.in_range(
        "stream_outage_alert_s",
        config.protection.stream_outage_alert_s,
        9,
        3600,
    )?;
    protection.in_range("adopt_sl_pct", config.protection.adopt_sl_pct, 0, 100)?;
    protection.in_range("adopt_tp_pct", config.protection.adopt_tp_pct, 0, 1000)?;

    let market = Checker { prefix: "market" };
    if config.market.watchlist.is_empty() {
        return Err(invalid(market.key("watchlist"), "must list at least one symbol"));
    }
    market.symbols("watchlist", &config.market.watchlist)?;
    check_symbol(&market.key("reference_symbol"), &config.market.reference_symbol)?;
    if !config.market.reference_symbol.ends_with(&config.market.quote_asset) {
        return Err(invalid(
            market.key("reference_symbol"),
            format!("must be quoted in the quote asset `{}`", config.market.quote_asset),
        ));
    }
    if !(1..=5000).contains(&config.market.universe_max_symbols) {
        return Err(invalid(market.key("universe_max_symbols"), "must be 1-5000"));
    }
    if config.market.snapshot_retention_days == 0 {
        return Err(invalid(market.key("snapshot_retention_days"), "must be at least 1"));
    }
    if config.market.timezone.parse::<chrono_tz::Tz>().is_err() {
        return Err(invalid(
            market.key("timezone"),
            format!(
                "`{}` is not an IANA time zone such as UTC or Europe/Berlin",
                config.market.timezone
            ),
        ));
    }

    check_news(&config.news)?;

    if config.plugins.dir.trim().is_empty() {
        return Err(invalid("plugins.dir", "must not be empty"));
    }
    check_plugin_limits(&config.plugins)?;
    check_url("messenger.api_base", &config.messenger.api_base)?;
    if let Some(id) = config.messenger.boss_user_id
        && id <= 0
    {
        return Err(invalid("messenger.boss_user_id", format!("must be a user id > 0, got {id}")));
    }
    if config.scheduler.poll_seconds > 60 {
        return Err(invalid(
            "scheduler.poll_seconds",
            format!(
                "must be 0 (off) to 60, got {}: the every-minute jobs would run late",
                config.scheduler.poll_seconds
            ),
        ));
    }
    if let Some(url) = &config.license.server_url {
        check_url("license.server_url", url)?;
    }
    if let Some(key) = &config.license.public_key {
        spotbot_license_protocol::parse_public_key(key)
            .map_err(|err| invalid("license.public_key", err.reason))?;
    }

    check_api(&config.api, &config.mcp)?;
    check_strategy_sections(config)
}

/// `[api] allowed_hosts`: at least one entry (the MCP transport reads an empty list as "any
/// host", which would switch the DNS-rebinding guard off), each a bare host or `host:port`.
/// `[mcp] allowed_hosts` moved there.
fn check_api(api: &super::ApiConfig, mcp: &super::McpConfig) -> Result<(), Invalid> {
    const KEY: &str = "api.allowed_hosts";
    if mcp.allowed_hosts.is_some() {
        return Err(invalid(
            "mcp.allowed_hosts",
            "moved to [api] allowed_hosts, which now guards the whole API; move the list there",
        ));
    }
    if api.allowed_hosts.is_empty() {
        return Err(invalid(KEY, "must list at least one host, e.g. \"127.0.0.1\""));
    }
    for host in &api.allowed_hosts {
        // A bare IPv6 address (`::1`) is no URI authority, but the transport takes it as is.
        let well_formed = host.parse::<std::net::IpAddr>().is_ok()
            || axum::http::uri::Authority::try_from(host.as_str()).is_ok();
        if !well_formed || host.contains('@') || host.trim() != host || host == "*" {
            return Err(invalid(
                KEY,
                format!("`{host}` is not a host or host:port (no scheme, path or wildcard)"),
            ));
        }
    }
    Ok(())
}

/// Every `[strategy.<name>]`: `<name>` must be able to name a plugin, and the keys the host
/// acts on ([`super::StrategyKeys`]) must have a usable value where the section sets them.
/// The plugin checks the rest of its section when it is loaded.
fn check_strategy_sections(config: &Config) -> Result<(), Invalid> {
    for (name, section) in &config.strategy.sections {
        if !super::is_strategy_name(name) {
            return Err(invalid(
                format!("strategy.{name}"),
                "a plugin name is a lower-case letter, then lower-case letters, digits and \
                 underscores (at most 64)",
            ));
        }
        let key = |k: &str| format!("strategy.{name}.{k}");
        // Read as the host reads them (StrategyKeys): decimals, through the one conversion.
        let number = |k: &str| -> Result<Option<Number>, Invalid> {
            match section.get(k) {
                None => Ok(None),
                Some(toml::Value::Float(f)) => Ok(Some(Number::from(*f))),
                Some(toml::Value::Integer(i)) => Ok(Some(Number::from(*i as f64))),
                Some(other) => Err(invalid(key(k), format!("must be a number, got {other}"))),
            }
        };
        let check = |k: &str, ok: fn(Number) -> bool, rule: &str| -> Result<(), Invalid> {
            match number(k)? {
                Some(v) if !ok(v) => Err(invalid(key(k), format!("must be {rule}, got {v}"))),
                _ => Ok(()),
            }
        };
        let hundred = |v: Number| positive_up_to(v, Decimal::ONE_HUNDRED);
        check("size_pct", hundred, "> 0 and <= 100")?;
        check(
            "trailing_trigger_pct",
            |v| v.decimal_if(|d| d > Decimal::ZERO).is_some(),
            "a number > 0",
        )?;
        check("trailing_distance_pct", hundred, "> 0 and <= 100")?;
        // A liquidity floor compared with market data, which stays a float.
        check(
            "min_quote_volume_usd",
            |v| v.to_f64().is_finite() && v.to_f64() >= 0.0,
            "a number >= 0",
        )?;
        for risk in ["risk_normal", "risk_aplus", "risk_aplusplus"] {
            check(risk, |v| positive_up_to(v, Decimal::TEN), "> 0 and <= 10")?;
        }
        match section.get("max_trades_per_day") {
            None | Some(toml::Value::Integer(0..=1000)) => {}
            Some(other) => {
                return Err(invalid(
                    key("max_trades_per_day"),
                    format!("must be a whole number 0-1000, got {other}"),
                ));
            }
        }
        for flag in ["enabled", "use_universe", "trailing_enabled"] {
            if let Some(value) = section.get(flag).filter(|v| !v.is_bool()) {
                return Err(invalid(key(flag), format!("must be true or false, got {value}")));
            }
        }
        if let Some(list) = section.get("watchlist_override") {
            let symbols: Option<Vec<String>> = list
                .as_array()
                .and_then(|items| items.iter().map(|i| i.as_str().map(String::from)).collect());
            match symbols {
                Some(symbols) => {
                    symbols.iter().try_for_each(|s| check_symbol(&key("watchlist_override"), s))?
                }
                None => {
                    return Err(invalid(key("watchlist_override"), "must be a list of symbols"));
                }
            }
        }
    }
    Ok(())
}

/// A decimal with `0 < value <= high`.
fn positive_up_to(value: Number, high: Decimal) -> bool {
    value.decimal_if(|d| d > Decimal::ZERO && d <= high).is_some()
}

/// `[news]`: every source must be an http(s) URL with a host (an empty list is valid: the
/// route then says no source is configured); the deadline and the item cap must be usable.
fn check_news(news: &super::NewsConfig) -> Result<(), Invalid> {
    for source in &news.sources {
        check_url("news.sources", source)?;
        let has_host = reqwest::Url::parse(source).is_ok_and(|url| url.host_str().is_some());
        if !has_host {
            return Err(invalid("news.sources", format!("`{source}` is not a URL with a host")));
        }
    }
    if !(1..=60).contains(&news.timeout_secs) {
        return Err(invalid(
            "news.timeout_secs",
            format!("must be 1-60 seconds, got {}", news.timeout_secs),
        ));
    }
    if !(1..=100).contains(&news.max_items) {
        return Err(invalid("news.max_items", format!("must be 1-100, got {}", news.max_items)));
    }
    Ok(())
}

fn check_plugin_limits(p: &super::PluginsConfig) -> Result<(), Invalid> {
    let ranges: [(&str, u64, u64, u64); 9] = [
        ("plugins.memory_mib", p.memory_mib, 1, 4096),
        ("plugins.scan_timeout_ms", p.scan_timeout_ms, 10, 600_000),
        ("plugins.load_timeout_ms", p.load_timeout_ms, 10, 600_000),
        ("plugins.max_result_kib", p.max_result_kib, 1, 1024 * 1024),
        ("plugins.max_state_kib", p.max_state_kib, 1, 64 * 1024),
        ("plugins.max_concurrent_calls", u64::from(p.max_concurrent_calls), 1, 256),
        ("plugins.max_wasm_kib", p.max_wasm_kib, 1, 1024 * 1024),
        ("plugins.max_stack_kib", p.max_stack_kib, 64, 64 * 1024),
        ("plugins.reload_debounce_ms", p.reload_debounce_ms, 10, 10_000),
    ];
    for (key, value, min, max) in ranges {
        if !(min..=max).contains(&value) {
            return Err(invalid(key, format!("{value} is outside {min}..={max}")));
        }
    }
    if !["exchange", "synthetic"].contains(&p.market_data.as_str()) {
        return Err(invalid("plugins.market_data", "must be `exchange` or `synthetic`"));
    }
    Ok(())
}
