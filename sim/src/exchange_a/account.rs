//! Exchange A's account endpoints: `GET /api/v3/account` and `GET /api/v3/rateLimit/order`.

use super::exchange_info::{ORDERS_PER_10S, ORDERS_PER_DAY};
use super::params::{ApiError, Params};
use super::wire::{AccountJson, BalanceJson, CommissionRatesJson, fmt8, to_value};
use crate::clock::Millis;
use crate::core::Engine;
use rust_decimal::Decimal;
use serde_json::Value;

/// `GET /api/v3/account`.
pub fn account(e: &mut Engine, account: usize, p: &Params, now: Millis) -> Result<Value, ApiError> {
    e.catch_up(now);
    let omit_zero = p.get("omitZeroBalances") == Some("true");
    let acc = e.accounts.get(account).ok_or_else(|| {
        ApiError::new(401, -2015, "Invalid API-key, IP, or permissions for action.")
    })?;
    let bps =
        |d: Decimal| (d * Decimal::from(10_000)).trunc().to_string().parse::<i64>().unwrap_or(0);
    let balances = acc
        .balances
        .iter()
        .filter(|(_, b)| !(omit_zero && b.free.is_zero() && b.locked.is_zero()))
        .map(|(a, b)| BalanceJson { asset: a.clone(), free: fmt8(b.free), locked: fmt8(b.locked) })
        .collect();
    Ok(to_value(&AccountJson {
        maker_commission: bps(e.config.maker_fee),
        taker_commission: bps(e.config.taker_fee),
        buyer_commission: 0,
        seller_commission: 0,
        commission_rates: CommissionRatesJson {
            maker: fmt8(e.config.maker_fee),
            taker: fmt8(e.config.taker_fee),
            buyer: fmt8(Decimal::ZERO),
            seller: fmt8(Decimal::ZERO),
        },
        can_trade: true,
        can_withdraw: true,
        can_deposit: true,
        brokered: false,
        require_self_trade_prevention: false,
        prevent_sor: false,
        update_time: acc.update_time,
        account_type: "SPOT",
        balances,
        permissions: vec!["SPOT"],
        uid: 100_000 + account as i64,
    }))
}

/// `GET /api/v3/rateLimit/order`: the account's order counts against both limits.
pub fn order_rate_limits(e: &Engine, account: usize, now: Millis) -> Value {
    let (c10, c1d) = order_counts(e, account, now);
    serde_json::json!([
        {"rateLimitType": "ORDERS", "interval": "SECOND", "intervalNum": 10, "limit": ORDERS_PER_10S, "count": c10},
        {"rateLimitType": "ORDERS", "interval": "DAY", "intervalNum": 1, "limit": ORDERS_PER_DAY, "count": c1d}
    ])
}

/// Orders of `account` in the last 10 s and the last day.
pub fn order_counts(e: &Engine, account: usize, now: Millis) -> (usize, usize) {
    (e.order_count_since(account, now - 10_000), e.order_count_since(account, now - 86_400_000))
}
