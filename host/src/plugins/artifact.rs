//! What a plugin is compiled for and into: the wasmtime engine built from the [`Limits`] (the
//! service's runtime and the compiler's child build the same one, so an artifact matches the
//! engine that maps it; wasmtime refuses one that does not), a component compiled for it, and
//! the artifact's bytes.

use wasmtime::component::Component;
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use super::{Limits, LoadError, PluginError};

/// Bytes of each pooled table reset with memset (kept resident) when an instance is dropped.
const TABLE_KEEP_RESIDENT: usize = 1024 * 1024;

/// The engine plugins run on, configured from `limits`.
pub(crate) fn engine(limits: &Limits) -> Result<Engine, PluginError> {
    let mut config = Config::new();
    config.epoch_interruption(true);
    config.max_wasm_stack(limits.max_stack_bytes);
    // Strategies are synchronous; the concurrent machinery would only cost call overhead.
    config.concurrency_support(false);
    config.parallel_compilation(true);
    let slots = limits.max_concurrent_calls as u32 + 2;
    let mut pool = PoolingAllocationConfig::default();
    pool.total_component_instances(slots)
        .total_core_instances(slots * 32)
        .total_memories(slots * 4)
        .total_tables(slots * 32)
        .max_memory_size(limits.memory_bytes as usize)
        .max_unused_warm_slots(slots)
        // A component has a few small tables (one per core module and adapter shim): reset
        // them with memset when an instance is dropped instead of one madvise each, which
        // on this 2-vCPU VM also costs a TLB-shootdown IPI per call. Measured: per-call
        // overhead of the echo guest 68.7 -> 58.0 µs (docs/benchmarks.md).
        .table_keep_resident(TABLE_KEEP_RESIDENT)
        // Reset linear memory with memset up to this many bytes, the rest with madvise
        // (`Limits::memory_keep_resident`: small for the service, large for a replay).
        .linear_memory_keep_resident(limits.memory_keep_resident.min(limits.memory_bytes as usize));
    config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    Engine::new(&config).map_err(|e| PluginError::Internal(format!("wasm engine: {e}")))
}

/// Compiles a component without the cache (the runtime's path when no cache folder is set,
/// and the cache's path on a miss).
pub(crate) fn compile_component(engine: &Engine, wasm: &[u8]) -> Result<Component, LoadError> {
    Component::new(engine, wasm).map_err(|e| LoadError::BadBytes(format!("{e:#}")))
}

/// The artifact of a compiled component.
pub(crate) fn serialize(component: &Component) -> Result<Vec<u8>, LoadError> {
    component.serialize().map_err(|e| LoadError::BadBytes(format!("cannot serialize: {e:#}")))
}
