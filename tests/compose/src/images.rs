//! The images of the compose test, built without any image registry:
//! 1. a Debian base of this machine's release, made with `debootstrap --variant=minbase` from
//!    the Debian mirror and `docker import`ed (kept between runs);
//! 2. the Dockerfile's `runtime` stage on that base (`--target runtime`, so the Dockerfile the
//!    operators build is the one tested);
//! 3. `docker/host-built.Dockerfile`: the runtime plus the binaries and plugins this machine's
//!    cargo built, instead of the Dockerfile's compile stage (its Rust image cannot be pulled
//!    here, and compiling everything again in a container would double the test's time).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail};

use super::engine::{Engine, output, run};
use xtask_support::{apt, path_str, workspace_root};

const MIRROR: &str = "http://deb.debian.org/debian";
/// The plugin the image leaves out, so that the test can drop it into the plugins volume and
/// watch it hot-load.
pub const WITHHELD_PLUGIN: &str = "strategy_template.wasm";

/// The service image, and what it measures.
pub struct Image {
    pub tag: String,
    pub bytes: u64,
}

/// Builds the three images; `binaries` holds `spotbot` and `spotbot-license-server`.
pub fn build(engine: &Engine, work: &Path, binaries: &Path, tag: &str) -> anyhow::Result<Image> {
    let base = base_image(engine, work)?;
    let runtime = format!("{tag}-runtime");
    run(engine
        .docker(&[
            "build",
            "--network",
            "host",
            "--target",
            "runtime",
            "--build-arg",
            &format!("RUNTIME_IMAGE={base}"),
            "--tag",
            &runtime,
            path_str(&workspace_root())?,
        ])
        .stdout(Stdio::null()))?;

    let context = work.join("context");
    lay_out_context(&context, binaries)?;
    let dockerfile = workspace_root().join("docker/host-built.Dockerfile");
    run(engine
        .docker(&[
            "build",
            "--file",
            path_str(&dockerfile)?,
            "--build-arg",
            &format!("RUNTIME={runtime}"),
            "--tag",
            tag,
            path_str(&context)?,
        ])
        .stdout(Stdio::null()))?;
    let size = output(&mut engine.docker(&["image", "inspect", "--format", "{{.Size}}", tag]))?;
    let bytes = size.trim().parse().with_context(|| format!("image size {size:?}"))?;
    Ok(Image { tag: tag.to_string(), bytes })
}

/// `spotbot-compose-test/debian:<codename>`, made once per machine.
fn base_image(engine: &Engine, work: &Path) -> anyhow::Result<String> {
    let codename = os_release("VERSION_CODENAME")?;
    let tag = format!("spotbot-compose-test/debian:{codename}");
    let mut exists = engine.docker(&["image", "inspect", &tag]);
    exists.stdout(Stdio::null()).stderr(Stdio::null());
    if exists.status().is_ok_and(|status| status.success()) {
        return Ok(tag);
    }
    install_debootstrap()?;
    let root = work.join("rootfs");
    if root.exists() {
        std::fs::remove_dir_all(&root)?;
    }
    println!("making the base image {tag} with debootstrap (about a minute)");
    run(Command::new("debootstrap")
        .args(["--variant=minbase", &codename, path_str(&root)?, MIRROR])
        .stdout(Stdio::null()))?;
    slim(&root)?;
    let tar = Command::new("tar")
        .args(["-C", path_str(&root)?, "-c", "."])
        .stdout(Stdio::piped())
        .spawn()
        .context("cannot run tar")?;
    let imported = engine
        .docker(&["import", "-", &tag])
        .stdin(tar.stdout.context("tar's output")?)
        .stdout(Stdio::null())
        .status()?;
    std::fs::remove_dir_all(&root)?;
    if !imported.success() {
        bail!("docker import of the debootstrap root failed ({imported})");
    }
    Ok(tag)
}

/// Leaves out of the base what Debian's `-slim` images leave out (documentation, manual pages,
/// translations, apt's caches), so the image sizes measured here are close to an operator's.
fn slim(root: &Path) -> anyhow::Result<()> {
    for folder in [
        "usr/share/doc",
        "usr/share/man",
        "usr/share/info",
        "usr/share/locale",
        "var/cache/apt",
        "var/lib/apt/lists",
    ] {
        let folder = root.join(folder);
        if folder.is_dir() {
            for entry in std::fs::read_dir(&folder)? {
                let path = entry?.path();
                if path.is_dir() {
                    std::fs::remove_dir_all(&path)?;
                } else {
                    std::fs::remove_file(&path)?;
                }
            }
        }
    }
    Ok(())
}

/// Installs Debian's debootstrap when missing.
pub fn install_debootstrap() -> anyhow::Result<()> {
    if Path::new("/usr/sbin/debootstrap").is_file() {
        return Ok(());
    }
    apt::install("debootstrap", "the compose test's base image", "install Debian's debootstrap")
}

/// bin/ with the two binaries, plugins/ with every built plugin but [`WITHHELD_PLUGIN`].
fn lay_out_context(context: &Path, binaries: &Path) -> anyhow::Result<()> {
    if context.exists() {
        std::fs::remove_dir_all(context)?;
    }
    let bin = context.join("bin");
    let plugins = context.join("plugins");
    std::fs::create_dir_all(&bin)?;
    std::fs::create_dir_all(&plugins)?;
    for name in ["spotbot", "spotbot-license-server"] {
        std::fs::copy(binaries.join(name), bin.join(name))
            .with_context(|| format!("cannot copy {}", binaries.join(name).display()))?;
    }
    for plugin in built_plugins()? {
        let name = plugin.file_name().context("a plugin file name")?;
        if name != WITHHELD_PLUGIN {
            std::fs::copy(&plugin, plugins.join(name))?;
        }
    }
    Ok(())
}

/// The `.wasm` files of the plugins folder (`cargo xtask plugins` writes them).
pub fn built_plugins() -> anyhow::Result<Vec<PathBuf>> {
    let folder = workspace_root().join("plugins");
    let mut found = Vec::new();
    for entry in std::fs::read_dir(&folder)
        .with_context(|| format!("cannot read {} (run cargo xtask plugins)", folder.display()))?
    {
        let path = entry?.path();
        if path.extension().is_some_and(|ext| ext == "wasm") {
            found.push(path);
        }
    }
    if !found.iter().any(|p| p.file_name().is_some_and(|n| n == WITHHELD_PLUGIN)) {
        bail!("{} has no {WITHHELD_PLUGIN} (run cargo xtask plugins)", folder.display());
    }
    Ok(found)
}

fn os_release(key: &str) -> anyhow::Result<String> {
    let text = std::fs::read_to_string("/etc/os-release").context("cannot read /etc/os-release")?;
    text.lines()
        .find_map(|line| line.strip_prefix(&format!("{key}=")))
        .map(|value| value.trim_matches('"').to_string())
        .filter(|value| !value.is_empty())
        .with_context(|| format!("/etc/os-release has no {key}: the compose test needs Debian"))
}
