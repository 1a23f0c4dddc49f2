//! The limits every plugin call runs under, from `[plugins]`.

use std::time::Duration;

use crate::config::PluginsConfig;

/// Limits every plugin call runs under (`[plugins]` config).
#[derive(Debug, Clone)]
pub struct Limits {
    /// Cap of a plugin instance's linear memory.
    pub memory_bytes: u64,
    /// Deadline of one `scan` call.
    pub scan_timeout: Duration,
    /// Deadline of `describe` while loading a file.
    pub load_timeout: Duration,
    /// Cap of a scan response (approximate bytes of strings, lists and fields).
    pub max_result_bytes: usize,
    /// Cap of one plugin's persisted state (keys + values).
    pub max_state_bytes: usize,
    /// Calls into plugins running at the same time (more wait), all plugins together.
    pub max_concurrent_calls: usize,
    /// Largest `.wasm` file accepted.
    pub max_wasm_bytes: u64,
    /// Wasm stack of a call.
    pub max_stack_bytes: usize,
    /// Quiet time after a file change before it is read.
    pub reload_debounce: Duration,
    /// Captured stderr of a call: the plugin's log lines, also shown with traps.
    pub stderr_bytes: usize,
    /// Bytes of each pooled linear memory that are reset with memset and stay resident when
    /// an instance is dropped; pages beyond are given back (madvise). Each of the pool's warm
    /// slots keeps up to this much: [`SERVICE_KEEP_RESIDENT`] unless [`Self::for_replay`].
    pub memory_keep_resident: usize,
}

/// The service's [`Limits::memory_keep_resident`]: a scan runs every few minutes, so the page
/// faults of a fresh memory cost nothing that matters, while keeping each warm slot's touched
/// pages held about 1 MiB per slot at idle (docs/benchmarks.md, idle footprint).
pub const SERVICE_KEEP_RESIDENT: usize = 64 * 1024;

/// A replay's [`Limits::memory_keep_resident`]: a backtest scans at every step, and a scan over
/// many symbols writes megabytes of candles into a fresh instance, where a page fault per
/// 4 KiB plus the madvise and TLB shootdown on drop cost more than zeroing (measured on the
/// 200-symbol scan: 15.1 -> 13.1 ms; the echo guest 5.3 -> 3.0 ms). The contents are still
/// reset to the component's initial image, so nothing leaks between calls.
pub const REPLAY_KEEP_RESIDENT: usize = 32 * 1024 * 1024;

impl Default for Limits {
    fn default() -> Self {
        Self::from_config(&PluginsConfig::default())
    }
}

impl Limits {
    /// Calls one plugin may run at once: half of [`Self::max_concurrent_calls`] (at least
    /// one), so that a plugin whose calls hang until the deadline, or a burst of scans of one
    /// plugin, leaves the other half of the slots to the other plugins.
    pub fn calls_per_plugin(&self) -> usize {
        (self.max_concurrent_calls / 2).max(1)
    }

    pub fn from_config(c: &PluginsConfig) -> Self {
        Limits {
            memory_bytes: c.memory_mib * 1024 * 1024,
            scan_timeout: Duration::from_millis(c.scan_timeout_ms),
            load_timeout: Duration::from_millis(c.load_timeout_ms),
            max_result_bytes: c.max_result_kib as usize * 1024,
            max_state_bytes: c.max_state_kib as usize * 1024,
            max_concurrent_calls: c.max_concurrent_calls as usize,
            max_wasm_bytes: c.max_wasm_kib * 1024,
            max_stack_bytes: c.max_stack_kib as usize * 1024,
            reload_debounce: Duration::from_millis(c.reload_debounce_ms),
            stderr_bytes: 16 * 1024,
            memory_keep_resident: SERVICE_KEEP_RESIDENT,
        }
    }

    /// These limits for a replay (backtest): scans at every step, so the pool keeps the
    /// memory a scan touched ([`REPLAY_KEEP_RESIDENT`]).
    pub fn for_replay(self) -> Self {
        Limits { memory_keep_resident: REPLAY_KEEP_RESIDENT, ..self }
    }
}
