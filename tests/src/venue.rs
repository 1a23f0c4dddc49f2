//! Which exchange a test drives, and the account it trades with on exchange B. The simulator
//! speaks both exchanges' wires on one engine, so every money-path test can run on either.

/// Which exchange's client a test drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Venue {
    A,
    B,
}

impl Venue {
    /// The venue as a config's `[exchange] active`.
    pub fn active(self) -> &'static str {
        match self {
            Venue::A => "exchange_a",
            Venue::B => "exchange_b",
        }
    }
}

/// The private key of the simulator's default exchange B account (the official SDK's test
/// key; it signs nothing outside loopback).
pub const B_KEY: &str = "0x0123456789012345678901234567890123456789012345678901234567890123";
