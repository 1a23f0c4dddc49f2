//! The dashboard page and the panels it shows: trades, PnL curve, protection and the footer,
//! read from the areas' own state, plus the agent cards and activity log of
//! [`crate::activity`], and the live view that tells an open page what changed. Above every
//! area it reads; nothing below depends on it.

pub mod chart;
pub mod live;
pub mod page;
pub mod panels;
