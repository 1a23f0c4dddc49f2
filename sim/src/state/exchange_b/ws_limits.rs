//! Exchange B's WebSocket limits, counted per client IP across its connections: subscriptions,
//! distinct users of user feeds, and messages per minute (pings included). Past a limit the
//! message is answered with the exchange's error text and not acted on.

use crate::clock::Millis;
use crate::limits::{Admission, Limits};
use spotbot_exchange_b_protocol::Address;
use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

/// The rules of exchange B's WebSocket (the exchange's values by default; tests lower them).
#[derive(Debug, Clone)]
pub struct WsConfig {
    /// A connection on which the client sent nothing this long is closed (exchange: 60 s).
    pub idle_timeout: Duration,
    /// Subscriptions per IP (exchange: 1000).
    pub max_subscriptions: usize,
    /// Distinct users in user feeds per IP (exchange: 10).
    pub max_users: usize,
    /// Messages a client may send per minute, per IP (exchange: 2000).
    pub max_messages_per_minute: u64,
}

impl Default for WsConfig {
    fn default() -> Self {
        Self {
            idle_timeout: Duration::from_secs(60),
            max_subscriptions: 1000,
            max_users: 10,
            max_messages_per_minute: 2000,
        }
    }
}

/// What one IP uses now.
#[derive(Debug)]
struct Usage {
    subscriptions: usize,
    /// Subscriptions per user of the user feeds.
    users: HashMap<Address, usize>,
    messages: Limits,
}

impl Default for Usage {
    fn default() -> Self {
        Self { subscriptions: 0, users: HashMap::new(), messages: Limits::without_bans() }
    }
}

/// The usage of every client IP.
#[derive(Debug, Default)]
pub struct WsLimits {
    per_ip: HashMap<IpAddr, Usage>,
}

impl WsLimits {
    /// Counts one message from `ip`; the error text past the limit.
    pub fn message(&mut self, ip: IpAddr, now: Millis, c: &WsConfig) -> Result<(), String> {
        let usage = self.per_ip.entry(ip).or_default();
        match usage.messages.admit(now, 1, c.max_messages_per_minute) {
            Admission::Admitted { .. } => Ok(()),
            _ => Err(format!(
                "Cannot send more than {} messages per minute.",
                c.max_messages_per_minute
            )),
        }
    }

    /// Takes a place for a feed that follows `user` (a user feed) or none (a market feed); the
    /// error text when none is left. The feed's user, not the feed: the limits live below the
    /// WebSocket's handlers, which read subscriptions.
    pub fn subscribe(
        &mut self,
        ip: IpAddr,
        user: Option<Address>,
        c: &WsConfig,
    ) -> Result<(), String> {
        let usage = self.per_ip.entry(ip).or_default();
        if usage.subscriptions >= c.max_subscriptions {
            return Err(format!("Cannot subscribe to more than {} channels.", c.max_subscriptions));
        }
        if let Some(user) = user {
            if !usage.users.contains_key(&user) && usage.users.len() >= c.max_users {
                return Err(format!("Cannot track more than {} total users.", c.max_users));
            }
            *usage.users.entry(user).or_default() += 1;
        }
        usage.subscriptions += 1;
        Ok(())
    }

    /// Gives back the place of a feed that follows `user` (unsubscribed, or its connection
    /// closed).
    pub fn release(&mut self, ip: IpAddr, user: Option<Address>) {
        let Some(usage) = self.per_ip.get_mut(&ip) else { return };
        usage.subscriptions = usage.subscriptions.saturating_sub(1);
        if let Some(user) = user
            && let Some(n) = usage.users.get_mut(&user)
        {
            *n -= 1;
            if *n == 0 {
                usage.users.remove(&user);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_counted_per_ip_and_given_back() {
        let c = WsConfig { max_subscriptions: 2, max_users: 1, ..WsConfig::default() };
        let (ip, other) = ("127.0.0.1".parse().unwrap(), "127.0.0.2".parse().unwrap());
        let user = |b: u8| Some(Address([b; 20]));
        let mut l = WsLimits::default();
        assert_eq!(l.subscribe(ip, user(1), &c), Ok(()));
        let err = l.subscribe(ip, user(2), &c).unwrap_err();
        assert_eq!(err, "Cannot track more than 1 total users.");
        assert_eq!(l.subscribe(ip, None, &c), Ok(()));
        let err = l.subscribe(ip, None, &c).unwrap_err();
        assert_eq!(err, "Cannot subscribe to more than 2 channels.");
        assert_eq!(l.subscribe(other, user(2), &c), Ok(()));
        l.release(ip, user(1));
        assert_eq!(l.subscribe(ip, user(2), &c), Ok(()));
    }
}
