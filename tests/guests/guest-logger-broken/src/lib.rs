//! `guest-logger` at 2.0.0 (same plugin name): a build that fails on every scan the way its
//! config `break_with` says (`panic`, `loop`, `invalid`), for the canary tests.
#[path = "../../guest-logger/src/lib.rs"]
mod logger;
pub use logger::Guest;
