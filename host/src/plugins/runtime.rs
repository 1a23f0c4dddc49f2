//! The sandbox: one wasmtime [`Engine`] (component model, pooling allocator, epoch
//! interruption, no concurrency support), one [`Linker`] with WASI p2 bound to an empty
//! context, and the call path "fresh store → instantiate → call → drop".
//!
//! A plugin gets no capability: no preopened directory, no environment, no arguments, no
//! network (TCP, UDP and name lookup denied), stdin closed, stdout discarded, stderr captured
//! into a small bounded buffer per call (the plugin's log, and the text of a trap), a wall
//! clock frozen at the Unix epoch, a
//! monotonic clock that never moves, and fixed "random" bytes. The time comes only from the
//! scan request.

use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::{Component, Linker, ResourceTable};
use wasmtime::{Engine, ResourceLimiter, Store, Trap};
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{
    Deterministic, HostMonotonicClock, HostWallClock, WasiCtx, WasiCtxBuilder, WasiCtxView,
    WasiView,
};

use super::artifact::{compile_component, engine};
use super::bindings::{Strategy, StrategyPre};
use super::cache::ArtifactCache;
use super::errors::CallFailure;
use super::logs::PluginLog;
use super::model;
use super::{Limits, LoadError, PluginError};

/// How often the epoch ticker advances the engine's epoch.
const EPOCH_TICK: Duration = Duration::from_millis(5);

/// The WIT package major version this host speaks.
pub const WIT_MAJOR: u64 = 1;
const WIT_EXPORT_PREFIX: &str = "spotbot:strategy/plugin@";

/// Host state of one call's store.
struct Sandbox {
    wasi: WasiCtx,
    table: ResourceTable,
    memory_cap: usize,
    /// Set when the guest asked for more memory than the cap.
    memory_refused: Option<usize>,
    /// Table elements a guest may have.
    table_cap: usize,
}

impl WasiView for Sandbox {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.wasi, table: &mut self.table }
    }
}

impl ResourceLimiter for Sandbox {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_cap {
            self.memory_refused = Some(desired);
            return Ok(false);
        }
        Ok(true)
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(desired <= self.table_cap)
    }
}

struct FrozenWallClock;

impl HostWallClock for FrozenWallClock {
    fn resolution(&self) -> Duration {
        Duration::from_secs(1)
    }
    fn now(&self) -> Duration {
        Duration::ZERO
    }
}

struct FrozenMonotonicClock;

impl HostMonotonicClock for FrozenMonotonicClock {
    fn resolution(&self) -> u64 {
        1_000_000_000
    }
    fn now(&self) -> u64 {
        0
    }
}

/// A compiled, linked plugin component, ready to instantiate any number of times.
#[derive(Clone)]
pub struct Compiled {
    pre: StrategyPre<Sandbox>,
}

/// The outcome of one call and what the plugin wrote to stderr during it.
pub(crate) struct Call<R> {
    pub result: Result<R, CallFailure>,
    pub log: PluginLog,
}

/// Where compiled plugins are kept, and what compiles the ones not kept yet.
pub struct Compilation {
    /// The artifact cache's folder.
    pub cache_dir: std::path::PathBuf,
    /// The executable that compiles in a child process (`spotbot`, see [`super::compiler`]);
    /// `None` compiles in this process.
    pub compiler: Option<std::path::PathBuf>,
}

/// The engine, linker and limits shared by every plugin.
pub struct Runtime {
    engine: Engine,
    linker: Linker<Sandbox>,
    limits: Limits,
    cache: Option<ArtifactCache>,
}

impl Runtime {
    /// Builds the engine (and starts its epoch ticker thread, which ends with the engine).
    pub fn new(limits: Limits, compiled: Option<Compilation>) -> Result<Arc<Self>, PluginError> {
        let engine = engine(&limits)?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_sync(&mut linker)
            .map_err(|e| PluginError::Internal(format!("linking WASI: {e}")))?;
        let weak = engine.weak();
        std::thread::Builder::new()
            .name("plugin-epoch".into())
            .spawn(move || {
                while let Some(engine) = weak.upgrade() {
                    engine.increment_epoch();
                    drop(engine);
                    std::thread::sleep(EPOCH_TICK);
                }
            })
            .map_err(|e| PluginError::Internal(format!("epoch ticker: {e}")))?;
        let cache = compiled.map(|c| ArtifactCache::new(c.cache_dir, c.compiler, &engine));
        Ok(Arc::new(Runtime { engine, linker, limits, cache }))
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Compiles (or loads from the artifact cache) and links a component. Returns the
    /// compiled plugin and whether the cache served it.
    pub fn compile(&self, wasm: &[u8]) -> Result<(Compiled, bool), LoadError> {
        if wasm.len() as u64 > self.limits.max_wasm_bytes {
            return Err(LoadError::TooLarge {
                size: wasm.len() as u64,
                cap: self.limits.max_wasm_bytes,
            });
        }
        if !wasm.starts_with(b"\0asm") {
            return Err(LoadError::BadBytes("not a WebAssembly file (no \\0asm header)".into()));
        }
        let (component, cached) = match &self.cache {
            Some(cache) => cache.component(&self.engine, &self.limits, wasm)?,
            None => (compile_component(&self.engine, wasm)?, false),
        };
        check_wit_version(&self.engine, &component)?;
        let instance_pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|e| LoadError::Incompatible(format!("{e:#}")))?;
        let pre = StrategyPre::new(instance_pre)
            .map_err(|e| LoadError::Incompatible(format!("{e:#}")))?;
        Ok((Compiled { pre }, cached))
    }

    fn store(&self, timeout: Duration) -> (Store<Sandbox>, MemoryOutputPipe) {
        let stderr = MemoryOutputPipe::new(self.limits.stderr_bytes);
        let wasi = WasiCtxBuilder::new()
            .stderr(stderr.clone())
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .wall_clock(FrozenWallClock)
            .monotonic_clock(FrozenMonotonicClock)
            .secure_random(Deterministic::new(vec![0x5A; 32]))
            .insecure_random(Deterministic::new(vec![0xA5; 32]))
            .insecure_random_seed(0)
            .build();
        let sandbox = Sandbox {
            wasi,
            table: ResourceTable::new(),
            memory_cap: self.limits.memory_bytes as usize,
            memory_refused: None,
            table_cap: 100_000,
        };
        let mut store = Store::new(&self.engine, sandbox);
        store.limiter(|s| s as &mut dyn ResourceLimiter);
        let ticks = timeout.as_millis().div_ceil(EPOCH_TICK.as_millis()).max(1) as u64 + 1;
        store.set_epoch_deadline(ticks);
        store.epoch_deadline_trap();
        (store, stderr)
    }

    /// Calls `describe()` in a fresh instance under the load deadline.
    pub(crate) fn describe(&self, compiled: &Compiled) -> Result<model::Manifest, CallFailure> {
        self.call(compiled, self.limits.load_timeout, |plugin, store| {
            plugin.spotbot_strategy_plugin().call_describe(store)
        })
        .result
        .map(Into::into)
    }

    /// Calls `scan(request)` in a fresh instance under the scan deadline.
    pub(crate) fn scan(
        &self,
        compiled: &Compiled,
        request: model::ScanRequest,
    ) -> Call<Result<model::ScanResponse, model::ScanError>> {
        let request = request.into();
        let call = self.call(compiled, self.limits.scan_timeout, |plugin, store| {
            plugin.spotbot_strategy_plugin().call_scan(store, &request)
        });
        Call { result: call.result.map(|r| r.map(Into::into).map_err(Into::into)), log: call.log }
    }

    fn call<R>(
        &self,
        compiled: &Compiled,
        timeout: Duration,
        f: impl FnOnce(&Strategy, &mut Store<Sandbox>) -> wasmtime::Result<R>,
    ) -> Call<R> {
        let (mut store, stderr) = self.store(timeout);
        let outcome =
            compiled.pre.instantiate(&mut store).and_then(|plugin| f(&plugin, &mut store));
        let result = outcome.map_err(|err| classify(err, store.data().memory_refused, &stderr));
        Call { result, log: PluginLog::from_capture(&stderr.contents(), self.limits.stderr_bytes) }
    }
}

fn classify(
    err: wasmtime::Error,
    memory_refused: Option<usize>,
    stderr: &MemoryOutputPipe,
) -> CallFailure {
    let stderr = String::from_utf8_lossy(&stderr.contents()).trim().to_string();
    match err.downcast_ref::<Trap>() {
        Some(Trap::Interrupt) => CallFailure::Deadline,
        Some(Trap::StackOverflow) => CallFailure::StackOverflow,
        Some(_) if memory_refused.is_some() => {
            CallFailure::Memory { refused_bytes: memory_refused.unwrap_or_default() }
        }
        Some(trap) => CallFailure::Trap { trap: trap.to_string(), stderr },
        None if memory_refused.is_some() => {
            CallFailure::Memory { refused_bytes: memory_refused.unwrap_or_default() }
        }
        None => CallFailure::Host(format!("{err:#}")),
    }
}

/// Refuses components that are not spotbot strategies or speak another major version of the
/// WIT package, before type checking gives a less readable error.
fn check_wit_version(engine: &Engine, component: &Component) -> Result<(), LoadError> {
    let ty = component.component_type();
    let exports: Vec<String> = ty.exports(engine).map(|(name, _)| name.to_string()).collect();
    let Some(version) = exports.iter().find_map(|n| n.strip_prefix(WIT_EXPORT_PREFIX)) else {
        return Err(LoadError::NotAPlugin(format!(
            "the component does not export spotbot:strategy/plugin (it exports: {})",
            if exports.is_empty() { "nothing".to_string() } else { exports.join(", ") }
        )));
    };
    let major = version.split('.').next().and_then(|m| m.parse::<u64>().ok());
    if major != Some(WIT_MAJOR) {
        return Err(LoadError::WitVersion {
            found: version.to_string(),
            supported: format!("{WIT_MAJOR}.x"),
        });
    }
    Ok(())
}
