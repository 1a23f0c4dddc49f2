//! The `spotbot` command: parse the command line, load the config, start the areas, run until
//! SIGTERM or SIGINT.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use spotbot::activity::AgentName;
use spotbot::auth::Scope;
use spotbot::auth::tokens::TokenFile;
use spotbot::clock::Clock;
use spotbot::clock::SystemClock;
use spotbot::config::{Config, LogFormat};

mod allocator;
mod commands;

#[derive(Debug, Parser)]
#[command(name = "spotbot", version, about = "Spot-trading service for AI agents")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Compile one plugin for `serve`, which runs this in a child process: the `.wasm` on
    /// stdin, the artifact on stdout.
    #[command(name = "compile-plugin", hide = true)]
    CompilePlugin {
        /// The engine's limits, as `serve` passes them.
        #[arg(long)]
        limits: String,
    },
    /// Serve the API (flags override the config file).
    Serve {
        #[arg(long, default_value = "config.toml")]
        config: PathBuf,
        /// HOST:PORT to listen on.
        #[arg(long)]
        addr: Option<String>,
        /// Folder of the database and caches.
        #[arg(long)]
        data_dir: Option<String>,
        /// human or json log lines.
        #[arg(long, value_parser = parse_log_format)]
        log_format: Option<LogFormat>,
    },
    /// Validate a config file and exit (0 when valid).
    CheckConfig {
        path: PathBuf,
    },
    /// API tokens, one per agent with its scope (docs/security.md). Works while the service
    /// runs: it reads the tokens file again on the next request.
    Token {
        #[command(subcommand)]
        action: TokenAction,
        /// Config file whose [server] data_dir holds the tokens (defaults when it is absent).
        #[arg(long, default_value = "config.toml", global = true)]
        config: PathBuf,
        /// Folder of the tokens file, instead of the config's [server] data_dir.
        #[arg(long, global = true)]
        data_dir: Option<PathBuf>,
    },
    /// Fill the outcome fields (price 1h/4h/24h after, MFE/MAE, reach/reversal flags) of
    /// stored pump alerts, through the running service (it owns the database). A service that
    /// needs tokens gets the one in SPOTBOT_API_TOKEN (scope propose or above).
    PumpOutcomes {
        #[arg(long, default_value = "config.toml")]
        config: PathBuf,
        /// Base URL of the running service; default: http://<[server] addr>.
        #[arg(long)]
        url: Option<String>,
    },
    Backtest(commands::backtest::BacktestArgs),
    Optimize(commands::optimize::OptimizeArgs),
    #[command(name = "check-bias")]
    CheckBias(commands::bias::BiasArgs),
}

#[derive(Debug, Subcommand)]
enum TokenAction {
    /// Create a token and print it once (only its SHA-256 is stored).
    Create {
        /// The agent the token acts as: coo, finance, scout, bot-ops, tech, ops or boss.
        #[arg(long)]
        agent: AgentName,
        /// read < propose < execute < admin; each includes the ones before it.
        #[arg(long)]
        scope: Scope,
    },
    /// List the tokens (ids, agents, scopes; never the tokens themselves).
    List,
    /// Revoke a token by its id: its next request is refused.
    Revoke { id: String },
}

fn parse_log_format(text: &str) -> Result<LogFormat, String> {
    match text {
        "human" => Ok(LogFormat::Human),
        "json" => Ok(LogFormat::Json),
        other => Err(format!("`{other}` is not a log format; use human or json")),
    }
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::CheckConfig { path } => match Config::load(&path) {
            Ok(config) => check_plugins(&path, &config),
            Err(err) => {
                eprintln!("{err}");
                ExitCode::FAILURE
            }
        },
        Command::Token { action, config, data_dir } => {
            let data_dir = match data_dir {
                Some(dir) => dir,
                None if config.exists() => match Config::load(&config) {
                    Ok(loaded) => PathBuf::from(loaded.server.data_dir),
                    Err(err) => {
                        eprintln!("{err}");
                        return ExitCode::FAILURE;
                    }
                },
                None => PathBuf::from(spotbot::config::ServerConfig::default().data_dir),
            };
            match token(&TokenFile::in_dir(&data_dir), action) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    eprintln!("spotbot token: {err}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::PumpOutcomes { config, url } => {
            let url = match url {
                Some(url) => url,
                None => match Config::load(&config) {
                    Ok(loaded) => local_url(&loaded.server.addr),
                    Err(err) => {
                        eprintln!("{err}");
                        return ExitCode::FAILURE;
                    }
                },
            };
            match pump_outcomes(&url) {
                Ok(report) => {
                    println!("{report}");
                    ExitCode::SUCCESS
                }
                Err(err) => {
                    eprintln!("spotbot pump-outcomes: {err:#}");
                    ExitCode::FAILURE
                }
            }
        }
        Command::Backtest(args) => report_failure("backtest", commands::backtest::run(args)),
        Command::Optimize(args) => report_failure("optimize", commands::optimize::run(args)),
        Command::CheckBias(args) => report_failure("check-bias", commands::bias::run(args)),
        Command::CompilePlugin { limits } => spotbot::plugins::compiler::child_main(&limits),
        Command::Serve { config, addr, data_dir, log_format } => {
            allocator::settle_for_service();
            let mut loaded = match Config::load(&config) {
                Ok(loaded) => loaded,
                Err(err) => {
                    eprintln!("{err}");
                    return ExitCode::FAILURE;
                }
            };
            if let Some(addr) = addr {
                loaded.server.addr = addr;
            }
            if let Some(data_dir) = data_dir {
                loaded.server.data_dir = data_dir;
            }
            if let Some(format) = log_format {
                loaded.server.log_format = format;
            }
            // Plugins are compiled by this binary in a child process (plugins::compiler).
            loaded.plugins.compiler = std::env::current_exe().ok();
            // ... and checked for bias by it (plugins::bias), with the same config file.
            loaded.plugins.config_file = Some(config.clone());
            spotbot::logging::init(loaded.server.log_format);
            match serve(loaded) {
                Ok(()) => ExitCode::SUCCESS,
                Err(err) => {
                    tracing::error!("{err:#}");
                    eprintln!("spotbot: {err:#}");
                    ExitCode::FAILURE
                }
            }
        }
    }
}

fn serve(config: Config) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_park(allocator::collect_when_idle)
        .build()?;
    runtime.block_on(async {
        // Listen for signals before announcing the address: a supervisor that reads the line and
        // stops us at once must get a graceful shutdown, not the default signal death.
        let stop = shutdown_signal()?;
        let app = spotbot::app::start(config, Arc::new(SystemClock)).await?;
        // Start-up's temporary memory (config, plugin loads, the API document) was this
        // thread's, which now only waits for the stop signal.
        allocator::collect_this_thread();
        println!(
            "spotbot API on {}/api (OpenAPI: {}/api/openapi.json)",
            app.base_url(),
            app.base_url()
        );
        stop.await;
        tracing::info!("shutting down");
        app.stop().await
    })
}

/// `spotbot token …`: the token goes to stdout alone (for `TOKEN=$(spotbot token create …)`),
/// what it is to stderr.
fn token(file: &TokenFile, action: TokenAction) -> Result<(), spotbot::auth::tokens::TokenError> {
    let now = SystemClock.now();
    match action {
        TokenAction::Create { agent, scope } => {
            let (record, token) = file.create(agent, scope, now)?;
            eprintln!(
                "token {} for agent {} with scope {scope} added to {}; it is shown only now. \
                 Send it as `Authorization: Bearer <token>`.",
                record.id,
                agent.as_str(),
                file.path().display()
            );
            println!("{token}");
        }
        TokenAction::List => {
            let tokens = file.load()?;
            if tokens.is_empty() {
                eprintln!("no tokens in {}", file.path().display());
            }
            for t in tokens {
                let state = t.revoked_at.map_or("active".to_string(), |at| format!("revoked {at}"));
                println!(
                    "{}  {:<8} {:<8} created {}  {state}",
                    t.id,
                    t.agent.as_str(),
                    t.scope.as_str(),
                    t.created_at
                );
            }
        }
        TokenAction::Revoke { id } => {
            let record = file.revoke(&id, now)?;
            println!(
                "token {} of agent {} revoked; its next request is refused",
                record.id,
                record.agent.as_str()
            );
        }
    }
    Ok(())
}

/// The exit code of a research command, its error printed.
fn report_failure(command: &str, outcome: anyhow::Result<()>) -> ExitCode {
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("spotbot {command}: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Loads the plugins folder against the config's `[strategy.*]` sections and prints one line
/// per plugin file, then the secrets the mode still lacks; fails when a file is refused or a
/// secret the mode requires is missing.
fn check_plugins(path: &std::path::Path, config: &Config) -> ExitCode {
    let (plugins, orphans) = match spotbot::plugins::check_folder(config) {
        Ok(found) => found,
        Err(err) => {
            eprintln!("{err:#}");
            return ExitCode::FAILURE;
        }
    };
    let mut refused = false;
    for p in &plugins {
        match (&p.name, &p.last_error) {
            (Some(name), None) => println!("plugin {name} ({}): ok", p.file),
            (_, error) => {
                refused = true;
                let why = error.as_deref().unwrap_or("refused");
                eprintln!("plugin file {} refused: {why}", p.file);
            }
        }
    }
    for name in orphans {
        println!(
            "note: [strategy.{name}] names no plugin in {}; it applies once one loads",
            config.plugins.dir
        );
    }
    if refused {
        return ExitCode::FAILURE;
    }
    let needs = config.missing_secrets();
    for need in &needs {
        let label = if need.required { "missing" } else { "note" };
        eprintln!("{label}: {} not set ({})", need.what, need.why);
    }
    if needs.iter().any(|need| need.required) {
        eprintln!(
            "config {} is valid, but mode `{}` still needs the secrets marked missing (from the \
             environment; with docker compose: spotbot.env)",
            path.display(),
            config.exchange.mode.as_str()
        );
        return ExitCode::FAILURE;
    }
    println!("config ok: {}", path.display());
    ExitCode::SUCCESS
}

/// `http://HOST:PORT` of a listen address, with a wildcard host replaced by loopback.
fn local_url(addr: &str) -> String {
    let addr = addr.replace("0.0.0.0", "127.0.0.1").replace("[::]", "[::1]");
    format!("http://{addr}")
}

/// Asks the running service to evaluate the outcomes and returns its JSON answer. The
/// database is the service's (one process holds it), so the work happens there.
fn pump_outcomes(base_url: &str) -> anyhow::Result<String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_park(allocator::collect_when_idle)
        .build()?;
    runtime.block_on(async {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let url = format!("{}/api/pump-momentum/outcomes", base_url.trim_end_matches('/'));
        let mut request =
            reqwest::Client::new().post(&url).header("content-type", "application/json");
        if let Ok(token) = std::env::var("SPOTBOT_API_TOKEN") {
            request = request.bearer_auth(token.trim());
        }
        let response = request.send().await.map_err(|err| {
            anyhow::anyhow!(
                "the service does not answer at {url} ({err}); start it, or pass --url. While \
                 it runs, its hourly pump_outcomes job fills the outcomes too"
            )
        })?;
        let status = response.status();
        let body = response.text().await?;
        anyhow::ensure!(status.is_success(), "{url} answered {status}: {body}");
        Ok(body)
    })
}

/// Installs the SIGINT (Ctrl-C) and SIGTERM (docker stop) handlers now and returns a future
/// that resolves on the first of them.
fn shutdown_signal() -> std::io::Result<impl std::future::Future<Output = ()>> {
    #[cfg(unix)]
    let (mut interrupt, mut terminate) = {
        use tokio::signal::unix::{SignalKind, signal};
        (signal(SignalKind::interrupt())?, signal(SignalKind::terminate())?)
    };
    Ok(async move {
        #[cfg(unix)]
        tokio::select! {
            _ = interrupt.recv() => {},
            _ = terminate.recv() => {},
        }
        #[cfg(not(unix))]
        let _ = tokio::signal::ctrl_c().await;
    })
}
