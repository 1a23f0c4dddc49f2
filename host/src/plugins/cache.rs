//! On-disk cache of compiled plugins, so a restart does not recompile unchanged files.
//!
//! An artifact is named `<sha256 of the .wasm>-<engine key>.cwasm`, where the engine key is a
//! digest of wasmtime's precompile-compatibility hash (wasmtime version, target, compiler
//! flags, engine tunables and features). It holds the artifact from `Component::serialize`;
//! beside it, `<same name>.sum` holds a header and the artifact's SHA-256. Deserializing runs
//! native code, so the host only deserializes files that it wrote itself: the folder is created
//! by the host inside its data folder (mode 0700 on Unix), files are written to a temporary
//! name and renamed (the sum last), and an artifact is used only if its sum checks out;
//! anything else is recompiled and replaced.
//!
//! A verified artifact is mapped from its file rather than copied into memory: its pages are
//! the file's, read when used and shared with the page cache, where a copy kept about 0.9 MB
//! of anonymous memory per plugin for as long as it is loaded (docs/benchmarks.md).

use std::hash::Hasher;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use super::artifact::{compile_component, serialize};
use super::compiler::compile_in_child;
use super::{Limits, LoadError};

const MAGIC: &[u8; 16] = b"spotbot-cwasm-2\n";

/// Feeds `Hash` output into SHA-256 (stable within one build, unlike `DefaultHasher`'s use).
struct ShaHasher(Sha256);

impl Hasher for ShaHasher {
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
    fn finish(&self) -> u64 {
        let digest = self.0.clone().finalize();
        u64::from_le_bytes(digest[..8].try_into().unwrap_or_default())
    }
}

pub struct ArtifactCache {
    dir: PathBuf,
    engine_key: String,
    /// Compiles misses in a child process of this executable (`None`: in this process).
    compiler: Option<PathBuf>,
}

impl ArtifactCache {
    pub fn new(dir: PathBuf, compiler: Option<PathBuf>, engine: &Engine) -> Self {
        let mut hasher = ShaHasher(Sha256::new());
        std::hash::Hash::hash(&engine.precompile_compatibility_hash(), &mut hasher);
        let engine_key = hex::encode(&hasher.0.finalize()[..12]);
        ArtifactCache { dir, engine_key, compiler }
    }

    fn path_for(&self, wasm: &[u8]) -> PathBuf {
        let sha = hex::encode(Sha256::digest(wasm));
        self.dir.join(format!("{sha}-{}.cwasm", self.engine_key))
    }

    /// The component for `wasm`: from the cache when a valid artifact exists, else compiled
    /// (in a child process when a compiler is set), stored and mapped from the stored file.
    /// The bool says whether the cache served it.
    pub fn component(
        &self,
        engine: &Engine,
        limits: &Limits,
        wasm: &[u8],
    ) -> Result<(Component, bool), LoadError> {
        let path = self.path_for(wasm);
        if verified(&path) {
            match map(engine, &path) {
                Ok(component) => return Ok((component, true)),
                Err(err) => {
                    tracing::warn!(path = %path.display(), %err, "discarding cached plugin artifact")
                }
            }
        }
        let artifact = match &self.compiler {
            Some(executable) => compile_in_child(executable, engine, limits, wasm)?,
            None => serialize(&compile_component(engine, wasm)?)?,
        };
        let stored = self.store(&path, &artifact).inspect_err(
            |err| tracing::warn!(path = %path.display(), %err, "cannot cache the compiled plugin"),
        );
        let component = match stored {
            Ok(()) => map(engine, &path),
            // SAFETY: `Component::serialize`'s output of this executable (here or in its child
            // process) for an engine of the same limits; wasmtime also refuses an artifact of
            // another version or engine configuration.
            Err(_) => unsafe { Component::deserialize(engine, &artifact) },
        };
        let component = component.map_err(|e| {
            LoadError::BadBytes(format!("the compiled plugin cannot be loaded: {e:#}"))
        })?;
        Ok((component, false))
    }

    fn store(&self, path: &Path, artifact: &[u8]) -> std::io::Result<()> {
        create_private_dir(&self.dir)?;
        let mut sum = Vec::with_capacity(MAGIC.len() + 32);
        sum.extend_from_slice(MAGIC);
        sum.extend_from_slice(&Sha256::digest(artifact));
        write_renamed(path, artifact)?;
        write_renamed(&sum_path(path), &sum)
    }
}

/// The artifact at `path`, mapped from its file.
fn map(engine: &Engine, path: &Path) -> wasmtime::Result<Component> {
    // SAFETY: the file was written by this host from `Component::serialize` (its sum verified
    // or just written, in the host's own folder); wasmtime additionally refuses artifacts of
    // another version or engine configuration.
    unsafe { Component::deserialize_file(engine, path) }
}

fn write_renamed(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

fn sum_path(artifact: &Path) -> PathBuf {
    artifact.with_extension("sum")
}

/// Whether the artifact at `path` is the one its sum names.
fn verified(path: &Path) -> bool {
    let Ok(sum) = std::fs::read(sum_path(path)) else { return false };
    let Some(digest) = sum.strip_prefix(MAGIC.as_slice()) else { return false };
    let Ok(mut file) = std::fs::File::open(path) else { return false };
    let mut hasher = Sha256::new();
    std::io::copy(&mut file, &mut hasher).is_ok() && hasher.finalize().as_slice() == digest
}

fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)
    }
    #[cfg(not(unix))]
    {
        std::fs::create_dir_all(dir)
    }
}
