//! What the simulator's HTTP tests share: a simulator on loopback whose default account (key
//! [`KEY`], secret [`SECRET`]) holds 100 000 USDT.

use spotbot_sim::{RunningSim, SimConfig, serve};

pub const KEY: &str = "test-key";
pub const SECRET: &str = "test-secret";

/// A seeded simulator on a free loopback port, with the TLS provider the HTTP client needs.
pub async fn funded_sim() -> RunningSim {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut config = SimConfig::new(42, KEY, SECRET);
    config.initial_funds = vec![("USDT".into(), 100_000.into())];
    serve(config, "127.0.0.1:0").await.expect("bind")
}
