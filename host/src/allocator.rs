//! The `spotbot` binary's allocator (a module of `main.rs`, not of the library): mimalloc,
//! with settings for a long-running service when the command is `serve`.
//!
//! mimalloc was chosen for the backtest: glibc's malloc and free took about a sixth of its
//! time (docs/benchmarks.md). Its defaults suit that burst of work and not a service that
//! idles for months: it commits whole arenas eagerly and gives freed memory back to the
//! system only during later allocations, so an idle service kept what its busiest minute
//! used (about 80–130 MB where 40 MB suffice; docs/benchmarks.md, idle footprint).
//! mimalloc reads its options from the environment when the process starts, before `main`,
//! so `serve` restarts itself once (an `exec`, same process id) with them set.

use std::cell::Cell;
use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::time::{Duration, Instant};

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The service's settings: freed memory goes back at once (`PURGE_DELAY=0`) and arenas are
/// committed as they are used (`ARENA_EAGER_COMMIT=0`). A variable the operator set wins.
const SERVICE_SETTINGS: [(&str, &str); 2] =
    [("MIMALLOC_PURGE_DELAY", "0"), ("MIMALLOC_ARENA_EAGER_COMMIT", "0")];

/// Set in the restarted process, so that it never restarts again.
const RESTARTED: &str = "SPOTBOT_ALLOCATOR_SETTINGS";

/// Restarts the process with [`SERVICE_SETTINGS`] when one is missing. Call it before any
/// thread starts. Returns only when no restart was needed or the restart failed (then the
/// service runs on mimalloc's defaults, with a line on stderr).
pub fn settle_for_service() {
    if std::env::var_os(RESTARTED).is_some() {
        return;
    }
    let missing: Vec<_> =
        SERVICE_SETTINGS.iter().filter(|(name, _)| std::env::var_os(name).is_none()).collect();
    if missing.is_empty() {
        return;
    }
    let Ok(exe) = std::env::current_exe() else {
        return;
    };
    let mut args = std::env::args_os();
    let arg0 = args.next().unwrap_or_else(|| OsString::from("spotbot"));
    let mut command = std::process::Command::new(exe);
    command.arg0(arg0).args(args).env(RESTARTED, "1");
    for (name, value) in missing {
        command.env(name, value);
    }
    let err = command.exec();
    eprintln!(
        "spotbot: running on the allocator's defaults (cannot restart with its settings: {err})"
    );
}

/// How often a thread gives back its empty pages at most (see [`collect_when_idle`]).
const COLLECT_EVERY: Duration = Duration::from_secs(1);

thread_local! {
    static LAST_COLLECT: Cell<Option<Instant>> = const { Cell::new(None) };
}

/// Gives the calling thread's empty and retired pages back to the system now.
///
/// mimalloc keeps the pages it freed in the thread that owns them until that thread allocates
/// again in the same size class; a thread that goes quiet after a burst (the main thread after
/// start, a worker after a busy minute) holds them indefinitely. Collecting is per thread: no
/// call reaches another thread's pages.
pub fn collect_this_thread() {
    // SAFETY: `mi_collect` only walks the calling thread's own heap.
    unsafe { libmimalloc_sys::mi_collect(true) };
    LAST_COLLECT.with(|last| last.set(Some(Instant::now())));
}

/// [`collect_this_thread`] at most once per [`COLLECT_EVERY`]: the runtime's workers call it
/// when they run out of work (`on_thread_park`), so a busy worker pays nothing and an idle one
/// returns what its last burst left.
pub fn collect_when_idle() {
    let due = LAST_COLLECT.with(|last| last.get().is_none_or(|at| at.elapsed() >= COLLECT_EVERY));
    if due {
        collect_this_thread();
    }
}
