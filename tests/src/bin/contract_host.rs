//! The service as the API contract check sees it (`cargo xtask contract`): one process with
//! the reference license server, a fake messenger, the host in paper mode (in-process exchange
//! simulator), a licensed install, the template strategy plugin when it is built, and a
//! temporary data folder, and API tokens on (one admin token). Prints `TOKEN=<the admin token>`
//! and `BASE_URL=http://127.0.0.1:PORT` on stdout once every route answers, then
//! serves until it is killed, gets Ctrl-C, or its standard input closes.
//!
//! The plugin comes from `plugins/strategy_template.wasm` (what `cargo xtask plugins` builds)
//! or `target/test-guests/strategy_template.wasm` (what the plugin tests build); without one,
//! `GET /api/strategies` lists no plugin and scans answer 404.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use spotbot::activity::AgentName;
use spotbot::auth::Scope;
use spotbot::auth::tokens::TokenFile;
use spotbot::clock::{Clock, SharedClock, SystemClock};
use spotbot::config::{Config, LogFormat, Secret};
use spotbot_license_server::LicenseServer;
use spotbot_tests::fake_messenger::FakeMessenger;

const PLUGIN_FILE: &str = "strategy_template.wasm";
const BOT_TOKEN: &str = "123456:contract-host";
const CHAT_ID: i64 = 4242;

/// A failure of the start, as one sentence.
type Result<T> = std::result::Result<T, String>;

/// Adds what was being done to an error.
fn context<T, E: std::fmt::Display>(result: std::result::Result<T, E>, doing: &str) -> Result<T> {
    result.map_err(|err| format!("{doing}: {err:#}"))
}

fn main() -> std::process::ExitCode {
    spotbot::logging::init(LogFormat::Human);
    let result = context(tokio::runtime::Runtime::new(), "tokio runtime")
        .and_then(|runtime| runtime.block_on(run()));
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("contract host: {err}");
            std::process::ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<()> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let temp = context(tempfile::tempdir(), "temporary folder")?;
    let license_server = start_license_server(&temp.path().join("license-server")).await?;
    let messenger = FakeMessenger::start(BOT_TOKEN, CHAT_ID).await;

    let plugins_dir = temp.path().join("plugins");
    context(std::fs::create_dir_all(&plugins_dir), "plugins folder")?;
    match built_plugin() {
        Some(plugin) => {
            let copied = std::fs::copy(&plugin, plugins_dir.join(PLUGIN_FILE));
            context(copied, &format!("cannot copy {}", plugin.display()))?;
        }
        None => eprintln!(
            "contract host: {PLUGIN_FILE} is not built (cargo xtask plugins); no plugin is loaded"
        ),
    }

    let config = host_config(temp.path(), &plugins_dir, &license_server, &messenger)?;
    // The API runs with tokens, as a deployed one does: the contract shows the security scheme
    // and schemathesis sends the boss's admin token (and checks that a request without it, or
    // with a bad one, is refused: thousands of bad tokens by design, so the per-address limit
    // of `[api] bad_tokens_per_minute` is off here).
    let tokens = TokenFile::in_dir(Path::new(&config.server.data_dir));
    let created = tokens.create(AgentName::Boss, Scope::Admin, SystemClock.now());
    let (_, token) = context(created, "cannot create the contract host's API token")?;
    let clock: SharedClock = Arc::new(SystemClock);
    let app = context(spotbot::app::start(config, clock).await, "the host does not start")?;
    let license = &app.state.license;
    let registered = license.register("contract@spotbot.local", "Contract host").await;
    let registered = context(registered, "cannot register the contract host's license")?;
    context(registered.activation, "cannot activate the contract host's license")?;
    if !license.status().is_active() {
        return Err("the contract host's license is not active after registering".into());
    }

    let mut stdout = std::io::stdout().lock();
    let printed = writeln!(stdout, "TOKEN={token}")
        .and_then(|()| writeln!(stdout, "BASE_URL={}", app.base_url()))
        .and_then(|()| stdout.flush());
    context(printed, "stdout")?;
    drop(stdout);

    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = stdin_closed() => {}
    }
    context(app.stop().await, "stopping the host")?;
    drop(messenger);
    context(license_server.stop().await, "stopping the license server")
}

/// The license server on a free loopback port; registrations are not rate limited, because
/// the contract check registers many times from the same address.
async fn start_license_server(dir: &Path) -> Result<LicenseServer> {
    let mut config = spotbot_license_server::Config::new(dir);
    config.register_per_hour = u32::MAX;
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    context(LicenseServer::bind(config, addr).await, "the license server does not start")
}

/// The host's config: paper mode (the in-process simulator), the license server and the fake
/// messenger above, no scheduled jobs (the check drives the routes itself). Plugin scans read synthetic candles:
/// the check scans hundreds of times a minute, far over the simulator's (the exchange's)
/// request-weight budget of 6000 per minute, which would turn valid scans into 503
/// `market_data_unavailable`.
/// No news sources: the machine may be offline, and `GET /api/news` then answers its
/// `ok: false` shape at once instead of waiting for feed timeouts.
fn host_config(
    data: &Path,
    plugins_dir: &Path,
    license_server: &LicenseServer,
    messenger: &FakeMessenger,
) -> Result<Config> {
    let toml = format!(
        "[exchange]\nmode = \"paper\"\n\n\
         [plugins]\ndir = {plugins:?}\nmarket_data = \"synthetic\"\n\n\
         [scheduler]\nenabled = false\n\n\
         [news]\nsources = []\n\n\
         [messenger]\napi_base = {messenger:?}\n\n\
         [api]\nbad_tokens_per_minute = 0\n\n\
         [license]\nserver_url = {url:?}\npublic_key = {key:?}\npoll_seconds = 0\n",
        plugins = plugins_dir.display().to_string(),
        url = license_server.url(),
        key = license_server.public_key_hex(),
        messenger = messenger.base_url(),
    );
    let mut config = context(Config::parse(&toml, "contract-host.toml".as_ref()), "config")?;
    config.server.addr = "127.0.0.1:0".into();
    config.server.data_dir = data.join("host").display().to_string();
    config.secrets.messenger_bot_token = Some(Secret::new(BOT_TOKEN));
    config.secrets.messenger_chat_id = Some(CHAT_ID.to_string());
    Ok(config)
}

/// The built template plugin, if any.
fn built_plugin() -> Option<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent()?;
    [root.join("plugins").join(PLUGIN_FILE), root.join("target/test-guests").join(PLUGIN_FILE)]
        .into_iter()
        .find(|path| path.is_file())
}

/// Resolves when standard input reaches its end (the parent closed the pipe or went away).
async fn stdin_closed() {
    let _ = tokio::task::spawn_blocking(|| {
        let mut sink = [0u8; 256];
        let mut stdin = std::io::stdin();
        while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
    })
    .await;
}
