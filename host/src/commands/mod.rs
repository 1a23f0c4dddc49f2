//! The research commands of `spotbot` (`backtest`, `optimize`, `check-bias`): their command lines and what
//! they print and write. The work itself is the library's `backtest` area.

pub mod backtest;
pub mod bias;
pub mod optimize;

use std::path::{Path, PathBuf};

use spotbot::config::Config;

/// What a research command replays: the same flags for `backtest` and `optimize`.
#[derive(Debug, clap::Args)]
pub struct ReplayArgs {
    /// The plugin's .wasm file (the same artifact the service loads).
    #[arg(long)]
    plugin: PathBuf,
    /// Symbols to scan and trade, comma-separated (BTCUSDT,ETHUSDT).
    #[arg(long, value_delimiter = ',', required = true)]
    symbols: Vec<String>,
    /// First step: YYYY-MM-DD, RFC 3339 or epoch ms (UTC).
    #[arg(long)]
    from: String,
    /// Last step, same forms.
    #[arg(long)]
    to: String,
    /// Folder of <SYMBOL>_<timeframe>.csv files (open_time,open,high,low,close,volume);
    /// without it, the configured exchange's klines, cached under <data_dir>.
    #[arg(long)]
    candles: Option<PathBuf>,
    /// Config file ([strategy.<name>], [risk], [exchange] paper_usdt apply); the defaults
    /// when the default file does not exist.
    #[arg(long, default_value = "config.toml")]
    config: PathBuf,
    /// Folder of the kline cache and compiled plugins (default: [server] data_dir).
    #[arg(long)]
    data_dir: Option<String>,
}

impl ReplayArgs {
    /// The config and the backtest's spec these flags name.
    fn load(self) -> anyhow::Result<(Config, spotbot::backtest::Spec)> {
        use spotbot::backtest::history::parse_time;
        let mut config = if self.config.exists() || self.config != Path::new("config.toml") {
            Config::load(&self.config)?
        } else {
            eprintln!("no config.toml here: using the defaults");
            let mut config = Config::default();
            config.secrets = spotbot::config::Secrets::from_env();
            config
        };
        if let Some(data_dir) = self.data_dir {
            config.server.data_dir = data_dir;
        }
        let time = |flag: &str, text: &str| {
            parse_time(text).ok_or_else(|| {
                anyhow::anyhow!("--{flag} {text:?}: use YYYY-MM-DD, RFC 3339 or epoch milliseconds")
            })
        };
        let spec = spotbot::backtest::Spec {
            plugin: self.plugin,
            symbols: self.symbols.iter().map(|s| s.trim().to_uppercase()).collect(),
            from_ms: time("from", &self.from)?,
            to_ms: time("to", &self.to)?,
            candles: self.candles,
        };
        Ok((config, spec))
    }
}

/// Writes `text` to `path`, creating its folder.
fn write(path: &Path, text: &str) -> anyhow::Result<()> {
    if let Some(folder) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(folder)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", folder.display()))?;
    }
    std::fs::write(path, text).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}
