//! `guest-echo` at another version (1.1.0, same plugin name): hot-reload and duplicate-name
//! tests swap between the two.
#[path = "../../guest-echo/src/lib.rs"]
mod echo;
pub use echo::Guest;
