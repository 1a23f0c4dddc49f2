//! `spotbot-license-server --addr HOST:PORT --data-dir DIR`
//!
//! Prints the public key (for the host's `license.public_key`) and the address, then serves
//! until Ctrl-C or SIGTERM.

use std::io::IsTerminal;
use std::net::SocketAddr;
use std::path::PathBuf;

use clap::Parser;
use spotbot_license_server::{Config, LicenseServer};

/// Reference license server for spotbot installs.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Address to listen on, e.g. 127.0.0.1:8090.
    #[arg(long, default_value = "127.0.0.1:8090")]
    addr: SocketAddr,
    /// Directory for the database and the signing key pair (created if missing).
    #[arg(long)]
    data_dir: PathBuf,
    /// Register attempts accepted per client address per hour.
    #[arg(long, default_value_t = 5)]
    register_per_hour: u32,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()),
        )
        // Colours only on a terminal: a log file or a container's log driver keeps them as text.
        .with_ansi(std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none())
        .with_writer(std::io::stderr)
        .init();
    let args = Args::parse();
    let mut config = Config::new(args.data_dir);
    config.register_per_hour = args.register_per_hour;
    // The admin token is a secret: read from the environment only, never from the command line
    // (which other users of the machine can see).
    config.admin_token = std::env::var("SPOTBOT_LICENSE_ADMIN_TOKEN").ok();
    let server = LicenseServer::bind(config, args.addr).await?;
    println!("public key: {}", server.public_key_hex());
    println!("listening on {}", server.url());
    server.run_until(shutdown_signal()).await
}

async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}
