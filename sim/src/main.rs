//! `spotbot-sim --addr HOST:PORT [--streams-addr HOST:PORT] [--seed N]`: serves the exchange
//! simulator: exchange A's REST and exchange B's `/info` and `/exchange` on one port, exchange
//! A's WebSocket services on another.

use clap::Parser;
use spotbot_sim::SimConfig;

#[derive(Parser)]
#[command(
    name = "spotbot-sim",
    about = "Exchange A and exchange B spot simulator with a matching engine and fault injection"
)]
struct Args {
    /// Address to listen on (the admin API under /sim/ only answers loopback clients).
    #[arg(long, default_value = "127.0.0.1:9100")]
    addr: String,
    /// Address of the WebSocket services (`/ws-api/v3`, `/ws/<stream>`, `/stream`).
    #[arg(long, default_value = "127.0.0.1:9101")]
    streams_addr: String,
    /// Seed of the synthetic market.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// USDT the default account starts with.
    #[arg(long, default_value = "10000")]
    usdt: String,
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .init();
    let args = Args::parse();
    let mut config = match SimConfig::from_env(args.seed) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("EXCHANGE_PRIVATE_KEY: {e}");
            return std::process::ExitCode::from(2);
        }
    };
    let usdt = match args.usdt.parse() {
        Ok(v) => v,
        Err(_) => {
            eprintln!("--usdt must be a decimal");
            return std::process::ExitCode::from(2);
        }
    };
    config.initial_funds = vec![("USDT".to_string(), usdt)];
    let generated = std::env::var("EXCHANGE_API_KEY").map_or(true, |k| k.is_empty());
    let key = config.api_key.clone();
    let secret = config.api_secret.clone();
    let b_account = config.exchange_b.account;
    let running = match spotbot_sim::serve(config, &args.addr).await {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot listen on {}: {e}", args.addr);
            return std::process::ExitCode::from(1);
        }
    };
    let streams = match spotbot_sim::serve_streams(running.sim.clone(), &args.streams_addr).await {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot listen on {}: {e}", args.streams_addr);
            return std::process::ExitCode::from(1);
        }
    };
    println!("spotbot-sim listening on http://{} (seed {})", running.addr, args.seed);
    println!("WebSocket API and market streams on {}", streams.base_url());
    // The address only: a key, given or derived from the seed, is never printed.
    println!("exchange B: POST /info and /exchange; default account address {b_account}");
    if generated {
        // Generated test credentials of a local simulator: printing them is how a user gets them.
        println!("EXCHANGE_API_KEY={key}");
        println!("EXCHANGE_API_SECRET={secret}");
    } else {
        println!("using EXCHANGE_API_KEY / EXCHANGE_API_SECRET from the environment");
    }
    let _ = tokio::signal::ctrl_c().await;
    drop(streams);
    running.stop().await;
    std::process::ExitCode::SUCCESS
}
