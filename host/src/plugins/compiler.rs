//! Compiling plugins in a child process. `spotbot serve` runs its own binary as
//! `spotbot compile-plugin` for every file its artifact cache does not hold yet: the compiler's
//! code and its tens of megabytes of working memory never enter the long-running service, which
//! only deserializes the artifact as it does one from the cache (docs/benchmarks.md, idle
//! footprint: a first start kept about 18 MB of the compilation), and a compiler that crashes
//! refuses that file instead of ending the service. Tests and backtests compile in-process.
//! Either way the artifact goes to the cache and is mapped from there ([`super::cache`]);
//! [`super::artifact`] builds the engine both sides compile for.
//!
//! The child builds its engine from the same [`Limits`] (passed as `--limits`), so the
//! artifact matches the parent's engine; wasmtime refuses one that does not.

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

use wasmtime::Engine;

use super::artifact::{compile_component, engine, serialize};
use super::{Limits, LoadError};

/// The hidden subcommand of `spotbot` that compiles one plugin.
pub const COMMAND: &str = "compile-plugin";

/// Compiles `wasm` in a child process running `executable`: the artifact (the bytes of
/// `Component::serialize`). When the child cannot start, the plugin is compiled here (with a
/// warning).
pub(crate) fn compile_in_child(
    executable: &Path,
    engine: &Engine,
    limits: &Limits,
    wasm: &[u8],
) -> Result<Vec<u8>, LoadError> {
    let started = std::time::Instant::now();
    match run_child(executable, limits, wasm) {
        Ok(artifact) => {
            let artifact = artifact?;
            let ms = started.elapsed().as_millis();
            tracing::info!(bytes = artifact.len(), ms, "plugin compiled in a child process");
            Ok(artifact)
        }
        Err(err) => {
            tracing::warn!(compiler = %executable.display(), %err, "cannot run the plugin compiler; compiling in the service's process");
            serialize(&compile_component(engine, wasm)?)
        }
    }
}

/// The child's answer: the artifact, or the compiler's refusal as a load error. The outer
/// error is the child's own failure to run.
fn run_child(
    executable: &Path,
    limits: &Limits,
    wasm: &[u8],
) -> std::io::Result<Result<Vec<u8>, LoadError>> {
    let mut child = Command::new(executable)
        .args([COMMAND, "--limits", &encode(limits)])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    let mut stdin = child.stdin.take().expect("stdin is piped");
    let input = wasm.to_vec();
    // Written from another thread: the child may answer on stdout before it read everything.
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output()?;
    let written = writer.join().unwrap_or_else(|_| Err(std::io::Error::other("writer panicked")));
    if output.status.success() {
        written?;
        return Ok(Ok(output.stdout));
    }
    let refusal = String::from_utf8_lossy(&output.stderr).trim().to_string();
    Ok(Err(LoadError::BadBytes(if refusal.is_empty() {
        format!("the plugin compiler ended with {}", output.status)
    } else {
        refusal
    })))
}

/// `spotbot compile-plugin --limits <limits>`: the `.wasm` on stdin, the artifact on stdout;
/// a refusal on stderr with exit code 1.
pub fn child_main(limits: &str) -> ExitCode {
    let result = decode(limits).and_then(|limits| {
        let mut wasm = Vec::new();
        std::io::stdin().read_to_end(&mut wasm).map_err(|e| format!("reading the plugin: {e}"))?;
        let engine = engine(&limits).map_err(|e| e.to_string())?;
        let component = compile_component(&engine, &wasm).map_err(|e| match e {
            // The parent wraps the text in the same variant.
            LoadError::BadBytes(detail) => detail,
            other => other.to_string(),
        })?;
        serialize(&component).map_err(|e| e.to_string())
    });
    match result.and_then(|artifact| {
        std::io::stdout().write_all(&artifact).map_err(|e| format!("writing the artifact: {e}"))
    }) {
        Ok(()) => ExitCode::SUCCESS,
        Err(refusal) => {
            eprintln!("{refusal}");
            ExitCode::FAILURE
        }
    }
}

/// The limits the engine's configuration depends on, as `name=value` pairs.
fn encode(limits: &Limits) -> String {
    format!(
        "memory_bytes={},max_stack_bytes={},max_concurrent_calls={},memory_keep_resident={}",
        limits.memory_bytes,
        limits.max_stack_bytes,
        limits.max_concurrent_calls,
        limits.memory_keep_resident
    )
}

fn decode(text: &str) -> Result<Limits, String> {
    let mut limits = Limits::default();
    for pair in text.split(',') {
        let (name, value) = pair.split_once('=').ok_or_else(|| format!("bad limit {pair:?}"))?;
        let number =
            |what: &str| value.parse::<u64>().map_err(|_| format!("bad {what}: {value:?}"));
        match name {
            "memory_bytes" => limits.memory_bytes = number(name)?,
            "max_stack_bytes" => limits.max_stack_bytes = number(name)? as usize,
            "max_concurrent_calls" => limits.max_concurrent_calls = number(name)? as usize,
            "memory_keep_resident" => limits.memory_keep_resident = number(name)? as usize,
            other => return Err(format!("unknown limit {other:?}")),
        }
    }
    Ok(limits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_travel_to_the_child_unchanged() {
        let limits = Limits {
            memory_bytes: 32 << 20,
            max_stack_bytes: 256 << 10,
            max_concurrent_calls: 3,
            ..Limits::default().for_replay()
        };
        let back = decode(&encode(&limits)).expect("decodes");
        assert_eq!(
            (back.memory_bytes, back.max_stack_bytes, back.max_concurrent_calls),
            (limits.memory_bytes, limits.max_stack_bytes, limits.max_concurrent_calls)
        );
        assert_eq!(back.memory_keep_resident, limits.memory_keep_resident);
        assert!(decode("memory_bytes=x").unwrap_err().contains("memory_bytes"));
        assert!(decode("color=1").unwrap_err().contains("color"));
    }
}
