//! On-disk cache of compiled plugins, so a restart does not recompile unchanged files.
//!
//! A cache file is named `<sha256 of the .wasm>-<engine key>.cwasm`, where the engine key is a
//! digest of wasmtime's precompile-compatibility hash (wasmtime version, target, compiler
//! flags, engine tunables and features). It holds a header, the SHA-256 of the artifact and the
//! artifact from `Component::serialize`. Deserializing runs native code, so the host only
//! deserializes files that it wrote itself: the folder is created by the host inside its data
//! folder (mode 0700 on Unix), files are written to a temporary name and renamed, and a file is
//! used only if its header and digest check out; anything else is recompiled and replaced.

use std::hash::Hasher;
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;

use super::compiler::compile_in_child;
use super::{Limits, LoadError};

/// Compiles a component without the cache (the runtime's path when no cache folder is set,
/// and this cache's path on a miss).
pub(crate) fn compile_component(engine: &Engine, wasm: &[u8]) -> Result<Component, LoadError> {
    Component::new(engine, wasm).map_err(|e| LoadError::BadBytes(format!("{e:#}")))
}

const MAGIC: &[u8; 16] = b"spotbot-cwasm-1\n";

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

    /// The component for `wasm`: from the cache when a valid artifact exists, else compiled and
    /// stored. The bool says whether the cache served it.
    pub fn component(
        &self,
        engine: &Engine,
        limits: &Limits,
        wasm: &[u8],
    ) -> Result<(Component, bool), LoadError> {
        let path = self.path_for(wasm);
        if let Some(artifact) = read_verified(&path) {
            // SAFETY: the bytes were produced by `Component::serialize` of this host (header and
            // digest verified, file in the host's own folder); wasmtime additionally refuses
            // artifacts of another version or engine configuration.
            match unsafe { Component::deserialize(engine, &artifact) } {
                Ok(component) => return Ok((component, true)),
                Err(err) => {
                    tracing::warn!(path = %path.display(), %err, "discarding cached plugin artifact")
                }
            }
        }
        let component = match &self.compiler {
            Some(executable) => compile_in_child(executable, engine, limits, wasm)?,
            None => compile_component(engine, wasm)?,
        };
        if let Err(err) = self.store(&path, &component) {
            tracing::warn!(path = %path.display(), %err, "cannot cache the compiled plugin");
        }
        Ok((component, false))
    }

    fn store(&self, path: &Path, component: &Component) -> anyhow::Result<()> {
        create_private_dir(&self.dir)?;
        let artifact = component.serialize().map_err(|e| anyhow::anyhow!("{e}"))?;
        let mut bytes = Vec::with_capacity(MAGIC.len() + 32 + artifact.len());
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&Sha256::digest(&artifact));
        bytes.extend_from_slice(&artifact);
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, &bytes)?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    }
}

fn read_verified(path: &Path) -> Option<Vec<u8>> {
    let bytes = std::fs::read(path).ok()?;
    let body = bytes.strip_prefix(MAGIC.as_slice())?;
    if body.len() < 32 {
        return None;
    }
    let (digest, artifact) = body.split_at(32);
    (Sha256::digest(artifact).as_slice() == digest).then(|| artifact.to_vec())
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
