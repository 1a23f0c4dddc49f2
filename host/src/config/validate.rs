//! Checks of values that parse but cannot work (a negative cap, size_pct over 100, an unknown
//! timeframe, ...). Each failure names the dotted key so the error can point into the file.

use std::net::SocketAddr;

use super::Config;

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

    fn non_negative(&self, name: &str, value: f64) -> Result<(), Invalid> {
        if value.is_finite() && value >= 0.0 {
            Ok(())
        } else {
            Err(invalid(self.key(name), format!("must be a number >= 0, got {value}")))
        }
    }

    fn positive(&self, name: &str, value: f64) -> Result<(), Invalid> {
        if value.is_finite() && value > 0.0 {
            Ok(())
        } else {
            Err(invalid(self.key(name), format!("must be a number > 0, got {value}")))
        }
    }

    fn in_range(&self, name: &str, value: f64, low: f64, high: f64) -> Result<(), Invalid> {
        if value.is_finite() && value > low && value <= high {
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

/// `HH:MM-HH:MM` in UTC.
fn check_window(key: &str, window: &str) -> Result<(), Invalid> {
    let parse_time = |text: &str| chrono::NaiveTime::parse_from_str(text.trim(), "%H:%M").ok();
    match window.split_once('-') {
        Some((start, end)) if parse_time(start).is_some() && parse_time(end).is_some() => Ok(()),
        _ => Err(invalid(key, format!("`{window}` is not a window of the form HH:MM-HH:MM"))),
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
    let exchange = Checker { prefix: "exchange" };
    exchange.in_range("paper_usdt", config.exchange.paper_usdt, 0.0, 1e12)?;
    exchange.in_range(
        "request_timeout_ms",
        config.exchange.request_timeout_ms as f64,
        99.0,
        60_000.0,
    )?;

    Checker { prefix: "risk" }.non_negative("max_trading_usdt", config.risk.max_trading_usdt)?;
    Checker { prefix: "protection" }.in_range(
        "max_drawdown_pct",
        config.protection.max_drawdown_pct,
        0.0,
        100.0,
    )?;

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
    if config.market.timezone.parse::<chrono_tz::Tz>().is_err() {
        return Err(invalid(
            market.key("timezone"),
            format!(
                "`{}` is not an IANA time zone such as UTC or Europe/Berlin",
                config.market.timezone
            ),
        ));
    }

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
        spotbot_license_server::wire::parse_public_key(key)
            .map_err(|err| invalid("license.public_key", err.reason))?;
    }

    check_mr_combined(config)?;
    check_pump_momentum(config)?;
    check_plugin_section_names(config)
}

fn check_mr_combined(config: &Config) -> Result<(), Invalid> {
    let mr = &config.strategy.mr_combined;
    let c = Checker { prefix: "strategy.mr_combined" };
    if mr.timeframes.is_empty() {
        return Err(invalid(c.key("timeframes"), "must list at least one timeframe"));
    }
    // Each timeframe is a `Timeframe`, checked when the file is read.
    c.in_range("size_pct", mr.size_pct, 0.0, 100.0)?;
    c.positive("trailing_trigger_pct", mr.trailing_trigger_pct)?;
    c.in_range("trailing_distance_pct", mr.trailing_distance_pct, 0.0, 100.0)?;
    for (name, value) in [
        ("risk_normal", mr.risk_normal),
        ("risk_aplus", mr.risk_aplus),
        ("risk_aplusplus", mr.risk_aplusplus),
        ("sl_atr_multiplier", mr.sl_atr_multiplier),
        ("tp2_atr_multiplier", mr.tp2_atr_multiplier),
        ("min_rr", mr.min_rr),
        ("range_min_atr_multiplier", mr.range_min_atr_multiplier),
        ("vol_increase_min", mr.vol_increase_min),
    ] {
        c.positive(name, value)?;
    }
    for (name, value) in
        [("tp1_ratio", mr.tp1_ratio), ("tp2_ratio", mr.tp2_ratio), ("tp3_ratio", mr.tp3_ratio)]
    {
        c.non_negative(name, value)?;
    }
    let ratio_sum = mr.tp1_ratio + mr.tp2_ratio + mr.tp3_ratio;
    if (ratio_sum - 1.0).abs() > 1e-9 {
        return Err(invalid(
            c.key("tp3_ratio"),
            format!("tp1_ratio + tp2_ratio + tp3_ratio must be 1.0, got {ratio_sum}"),
        ));
    }
    c.non_negative("zone_proximity_atr_min", mr.zone_proximity_atr_min)?;
    // NaN fails `partial_cmp`, so it is refused together with a max below the min.
    let ordered = mr.zone_proximity_atr_max.partial_cmp(&mr.zone_proximity_atr_min);
    if !matches!(ordered, Some(std::cmp::Ordering::Greater | std::cmp::Ordering::Equal)) {
        return Err(invalid(
            c.key("zone_proximity_atr_max"),
            "must be >= strategy.mr_combined.zone_proximity_atr_min",
        ));
    }
    mr.news_blackout_windows_utc
        .iter()
        .try_for_each(|window| check_window(&c.key("news_blackout_windows_utc"), window))
}

fn check_pump_momentum(config: &Config) -> Result<(), Invalid> {
    let pump = &config.strategy.pump_momentum;
    let c = Checker { prefix: "strategy.pump_momentum" };
    c.symbols("watchlist_override", &pump.watchlist_override)?;
    if !(1..=1000).contains(&pump.scan_limit_15m) {
        return Err(invalid(c.key("scan_limit_15m"), "must be between 1 and 1000"));
    }
    for (name, value) in [
        ("vol_ratio_threshold", pump.vol_ratio_threshold),
        ("candle_return_min_pct", pump.candle_return_min_pct),
        ("rel_strength_15m_min", pump.rel_strength_15m_min),
        ("rel_strength_1h_min", pump.rel_strength_1h_min),
        ("follow_vol_ratio_min", pump.follow_vol_ratio_min),
        ("late_entry_atr_mult", pump.late_entry_atr_mult),
    ] {
        c.positive(name, value)?;
    }
    c.in_range("close_strength_min", pump.close_strength_min, 0.0, 1.0)?;
    c.non_negative("min_quote_volume_usd", pump.min_quote_volume_usd)?;
    if pump.stage2_expiry_candles == 0 {
        return Err(invalid(c.key("stage2_expiry_candles"), "must be at least 1"));
    }
    Ok(())
}

/// Plugin names are identifiers: `[strategy.<name>]` must be able to name a plugin.
fn check_plugin_section_names(config: &Config) -> Result<(), Invalid> {
    for name in config.strategy.others.keys() {
        let ok = !name.is_empty()
            && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !ok {
            return Err(invalid(
                format!("strategy.{name}"),
                "a plugin name uses lower-case letters, digits and underscores only",
            ));
        }
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
