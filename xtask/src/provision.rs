//! Installs what the later steps of `cargo xtask test` need (Chromium, promtool, the Python
//! tools and the official exchange clients, Node and OpenClaw, Docker and debootstrap) on a
//! thread of its own while cargo compiles: the installs wait on the network and the disk, the
//! compiles on both cores, so a fresh machine does the two at once instead of one after the
//! other. Every install is also made (as a no-op when done) by the step that needs it, so the
//! steps stay runnable alone.

use std::thread::JoinHandle;

use anyhow::Context;

/// The installs running in the background.
pub struct Provisioning(JoinHandle<anyhow::Result<()>>);

/// Starts the installs.
pub fn start() -> Provisioning {
    Provisioning(std::thread::spawn(|| {
        crate::chromium::ensure()?;
        crate::promtool::ensure()?;
        crate::venv::ensure()?;
        crate::venv::ensure_env(&spotbot_sim_compat::VENV)?;
        spotbot_openclaw_check::install()?;
        spotbot_compose_test::install();
        Ok(())
    }))
}

impl Provisioning {
    /// Waits for the installs; their first failure.
    pub fn finish(self) -> anyhow::Result<()> {
        match self.0.join() {
            Ok(result) => result.context("installing the test tools"),
            Err(_) => anyhow::bail!("the installing thread panicked"),
        }
    }
}
