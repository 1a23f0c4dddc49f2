//! Repeated bad tokens from one peer: after `limit` (`[api] bad_tokens_per_minute`) within a
//! minute the peer's bad
//! tokens answer 429 for [`BLOCK_MS`] (a valid token still passes), so a misconfigured agent
//! or a guesser is told to back off, and its neighbours on the same address are not locked
//! out. Time comes from the service clock.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

pub const WINDOW_MS: i64 = 60_000;
/// How long a peer over the limit is refused.
pub const BLOCK_MS: i64 = 60_000;
/// Peers remembered at most; older entries are dropped first when a new one would pass it.
const MAX_PEERS: usize = 4096;

#[derive(Debug, Clone, Copy)]
struct Record {
    window_start_ms: i64,
    strikes: u32,
    blocked_until_ms: i64,
}

/// The peers that presented bad tokens lately.
#[derive(Debug, Default)]
pub struct Strikes {
    /// Bad tokens a peer may present within [`WINDOW_MS`]; 0: no limit.
    limit: u32,
    peers: Mutex<HashMap<IpAddr, Record>>,
}

impl Strikes {
    pub fn new(limit: u32) -> Self {
        Self { limit, peers: Mutex::default() }
    }

    fn peers(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, Record>> {
        self.peers.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Milliseconds `peer` is still refused for, when it is.
    pub fn blocked_for(&self, peer: IpAddr, now_ms: i64) -> Option<i64> {
        let peers = self.peers();
        let left = peers.get(&peer)?.blocked_until_ms - now_ms;
        (left > 0).then_some(left)
    }

    /// Counts a bad token from `peer`; the strike that reaches the limit starts the block.
    pub fn strike(&self, peer: IpAddr, now_ms: i64) {
        if self.limit == 0 {
            return;
        }
        let mut peers = self.peers();
        if peers.len() >= MAX_PEERS && !peers.contains_key(&peer) {
            peers.retain(|_, r| {
                r.blocked_until_ms > now_ms || now_ms - r.window_start_ms < WINDOW_MS
            });
            if peers.len() >= MAX_PEERS {
                let oldest = peers.iter().min_by_key(|(_, r)| r.window_start_ms).map(|(ip, _)| *ip);
                if let Some(oldest) = oldest {
                    peers.remove(&oldest);
                }
            }
        }
        let record = peers.entry(peer).or_insert(Record {
            window_start_ms: now_ms,
            strikes: 0,
            blocked_until_ms: 0,
        });
        if now_ms - record.window_start_ms >= WINDOW_MS {
            record.window_start_ms = now_ms;
            record.strikes = 0;
        }
        record.strikes += 1;
        if record.strikes >= self.limit {
            record.blocked_until_ms = now_ms + BLOCK_MS;
            record.window_start_ms = now_ms;
            record.strikes = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tenth_bad_token_in_a_minute_blocks_the_peer_for_a_minute() {
        const MAX_STRIKES: u32 = 10;
        let strikes = Strikes::new(MAX_STRIKES);
        let (peer, other): (IpAddr, IpAddr) = ("10.0.0.7".parse().unwrap(), "::1".parse().unwrap());
        for n in 0..MAX_STRIKES - 1 {
            strikes.strike(peer, 1_000 + i64::from(n));
        }
        assert_eq!(strikes.blocked_for(peer, 2_000), None);
        strikes.strike(peer, 2_000);
        assert_eq!(strikes.blocked_for(peer, 2_000), Some(BLOCK_MS));
        assert_eq!(strikes.blocked_for(peer, 2_000 + BLOCK_MS - 1), Some(1));
        assert_eq!(strikes.blocked_for(peer, 2_000 + BLOCK_MS), None);
        assert_eq!(strikes.blocked_for(other, 2_000), None, "other peers are not affected");

        // Strikes spread over more than a minute never add up.
        for n in 0..3 * MAX_STRIKES {
            strikes.strike(other, 200_000 + i64::from(n) * 7_000);
        }
        assert_eq!(strikes.blocked_for(other, 200_000 + 21 * 7_000), None);

        let unlimited = Strikes::new(0);
        for n in 0..100 {
            unlimited.strike(peer, n);
        }
        assert_eq!(unlimited.blocked_for(peer, 100), None);
    }

    #[test]
    fn many_addresses_never_grow_it_past_its_bound() {
        let strikes = Strikes::new(2);
        for n in 0..3 * MAX_PEERS as u32 {
            strikes.strike(IpAddr::from(std::net::Ipv6Addr::from(u128::from(n) + 1)), 1);
        }
        assert_eq!(strikes.peers().len(), MAX_PEERS);
        let newest = IpAddr::from(std::net::Ipv6Addr::from(u128::from(3 * MAX_PEERS as u32)));
        strikes.strike(newest, 2);
        assert_eq!(strikes.blocked_for(newest, 2), Some(BLOCK_MS), "the newest are kept");
    }
}
