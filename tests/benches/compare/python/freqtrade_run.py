"""The SMA(10)/SMA(30) benchmark of `cargo xtask bench-backtest` in Freqtrade.

The rules of backtesting_py.py (the spotbot test guest `sma_cross`): on each closed 1h bar,
buy at the next bar's open when SMA(10) crossed above SMA(30), with a stop 5 % and a target
10 % from the entry, commission 0.1 % per side, one position per symbol. In Freqtrade: the
strategy `SmaCross` (an entry signal, no exit signal), `stoploss` -0.05 and a `minimal_roi`
that exits at +10 % of the price — Freqtrade's ROI is a profit net of both fees, so its ratio
is 1.10 * (1 - fee) / (1 + fee) - 1. Freqtrade never enters on the first bar it backtests
(that bar's signal would come from the bar before, which it drops), so instead of a
`--timerange` the backtest starts after `startup_candle_count` 30 bars, the SMA(30)'s
warm-up: the first entry can then be the 32nd bar, as in backtesting.py.

Freqtrade loads the exchange's market list at startup even to backtest from files
(freqtrade/freqtrade issue 5526), and the benchmark runs offline. So this script serves
the one request it makes, binance's `GET /api/v3/exchangeInfo` listing the symbols of the
CSVs, from an HTTP server on 127.0.0.1, and points every ccxt binance API url at it; any
other request is logged to stderr.

Usage: freqtrade_run.py CANDLES_DIR OUT.json [WORK_DIR] — run it with the Python of the
venv Freqtrade is installed in. It converts every `<SYMBOL>_1h.csv` of the folder (open_time
in RFC 3339 UTC, open, high, low, close, volume) to Freqtrade's feather files in WORK_DIR
(default: a temporary folder next to OUT.json, deleted afterwards), writes the config and
the strategy there, runs `freqtrade backtesting` and writes the timings and every trade's
symbol and entry/exit time. total_s is the whole `freqtrade` process; the rest come from the
timestamps of its log, as its result stores whole seconds only: import_s is the startup
(imports, config, markets, strategy), read_s the data load, run_s the backtest (indicators,
signals, simulation and statistics, like backtesting.py's `Backtest.run`).

freqtrade_hyperopt.py imports this file for the data, the local binance, the config, the
strategy `SmaCross` (which its hyperopt strategy extends) and the run of `freqtrade`.
"""

import datetime
import http.server
import json
import pathlib
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import zipfile

import pandas as pd

FEE = 0.001
QUOTE = "USDT"
# The script run, for its messages (this file is imported by freqtrade_hyperopt.py too).
SCRIPT = pathlib.Path(sys.argv[0]).name


def net_roi(target_pct):
    """Freqtrade's ROI ratio that exits `target_pct` % above the entry price: its ROI is a
    profit net of both fees."""
    return (1 + target_pct / 100) * (1 - FEE) / (1 + FEE) - 1


STRATEGY = f"""
from freqtrade.strategy import IStrategy


class SmaCross(IStrategy):
    INTERFACE_VERSION = 3
    timeframe = "1h"
    startup_candle_count = 30
    minimal_roi = {{"0": {net_roi(10)!r}}}
    stoploss = -0.05
    use_exit_signal = False

    def populate_indicators(self, dataframe, metadata):
        dataframe["fast"] = dataframe["close"].rolling(10).mean()
        dataframe["slow"] = dataframe["close"].rolling(30).mean()
        return dataframe

    def populate_entry_trend(self, dataframe, metadata):
        dataframe["enter_long"] = self.cross_up(dataframe["fast"], dataframe["slow"])
        return dataframe

    @staticmethod
    def cross_up(fast, slow):
        # backtesting.lib.crossover: below on the previous bar, above on this one.
        return ((fast.shift() < slow.shift()) & (fast > slow)).astype(int)

    def populate_exit_trend(self, dataframe, metadata):
        dataframe["exit_long"] = 0
        return dataframe
"""
# ccxt's binance `urls.api`, every entry redirected to the local server.
CCXT_API_PATHS = {
    "public": "api/v3",
    "private": "api/v3",
    "v1": "api/v1",
    "sapi": "sapi/v1",
    "sapiV2": "sapi/v2",
    "sapiV3": "sapi/v3",
    "sapiV4": "sapi/v4",
    "fapiPublic": "fapi/v1",
    "fapiPublicV2": "fapi/v2",
    "fapiPublicV3": "fapi/v3",
    "fapiPrivate": "fapi/v1",
    "fapiPrivateV2": "fapi/v2",
    "fapiPrivateV3": "fapi/v3",
    "fapiData": "futures/data",
    "dapiPublic": "dapi/v1",
    "dapiPrivate": "dapi/v1",
    "dapiPrivateV2": "dapi/v2",
    "dapiData": "futures/data",
    "eapiPublic": "eapi/v1",
    "eapiPrivate": "eapi/v1",
    "papi": "papi/v1",
    "papiV2": "papi/v2",
}
TINY = "0.00000001"


def exchange_info(symbols):
    """Binance's spot exchangeInfo for `symbols`, the fields ccxt reads."""
    return {
        "timezone": "UTC",
        "serverTime": int(time.time() * 1000),
        "rateLimits": [],
        "exchangeFilters": [],
        "symbols": [
            {
                "symbol": symbol,
                "status": "TRADING",
                "baseAsset": symbol[: -len(QUOTE)],
                "baseAssetPrecision": 8,
                "quoteAsset": QUOTE,
                "quotePrecision": 8,
                "quoteAssetPrecision": 8,
                "orderTypes": ["LIMIT", "LIMIT_MAKER", "MARKET", "STOP_LOSS_LIMIT"],
                "isSpotTradingAllowed": True,
                "isMarginTradingAllowed": False,
                "permissions": ["SPOT"],
                "permissionSets": [["SPOT"]],
                "filters": [
                    {
                        "filterType": "PRICE_FILTER",
                        "minPrice": TINY,
                        "maxPrice": "1000000.00000000",
                        "tickSize": TINY,
                    },
                    {
                        "filterType": "LOT_SIZE",
                        "minQty": TINY,
                        "maxQty": "9000000000.00000000",
                        "stepSize": TINY,
                    },
                    {"filterType": "NOTIONAL", "minNotional": "1.00000000"},
                ],
            }
            for symbol in symbols
        ],
    }


def serve_exchange(symbols):
    """Start the local binance on a free port; return its base url."""
    info = json.dumps(exchange_info(symbols)).encode()

    class Binance(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if urllib.parse.urlsplit(self.path).path == "/api/v3/exchangeInfo":
                body = info
            else:
                print(f"freqtrade_run.py: unexpected request GET {self.path}", file=sys.stderr)
                body = b"{}"
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Binance)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_port}"


def write_user_data(folder, work, strategies):
    """Convert the CSVs to feather files and write `strategies` (class name: source, each
    into `<name>.py`); return the symbols and the number of bars."""
    data = work / "user_data" / "data" / "binance"
    data.mkdir(parents=True, exist_ok=True)
    (work / "user_data" / "strategies").mkdir(exist_ok=True)
    for name, source in strategies.items():
        (work / "user_data" / "strategies" / f"{name}.py").write_text(source)
    symbols, bars = [], 0
    for path in sorted(folder.glob("*_1h.csv")):
        symbol = path.name[: -len("_1h.csv")]
        frame = pd.read_csv(path)
        frame.insert(0, "date", pd.to_datetime(frame.pop("open_time"), utc=True))
        frame.to_feather(data / f"{symbol[: -len(QUOTE)]}_{QUOTE}-1h.feather")
        symbols.append(symbol)
        bars += len(frame)
    return symbols, bars


def config(symbols, base_url):
    return {
        "max_open_trades": len(symbols),
        "stake_currency": QUOTE,
        "stake_amount": 500,
        "dry_run": True,
        "dry_run_wallet": 1_000_000,
        "trading_mode": "spot",
        "timeframe": "1h",
        "dataformat_ohlcv": "feather",
        "dataformat_trades": "feather",
        "entry_pricing": {"price_side": "same"},
        "exit_pricing": {"price_side": "same"},
        "pairlists": [{"method": "StaticPairList"}],
        "exchange": {
            "name": "binance",
            "pair_whitelist": [f"{s[: -len(QUOTE)]}/{QUOTE}" for s in symbols],
            "ccxt_config": {
                "urls": {"api": {k: f"{base_url}/{p}" for k, p in CCXT_API_PATHS.items()}},
                "options": {"fetchMarkets": {"types": ["spot"]}},
            },
        },
    }


def log_time(stderr, message):
    """The time of the first log line of Freqtrade containing `message`."""
    for line in stderr.splitlines():
        if message in line:
            stamp = datetime.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S,%f")
            return stamp.timestamp()
    raise SystemExit(f"{SCRIPT}: no log line with {message!r}\n{stderr}")


def prepare(folder, work, strategies):
    """The run's folder: the data and `strategies` (see `write_user_data`), the local binance
    serving the market list, and the config naming it; return the symbols and the bars."""
    symbols, bars = write_user_data(folder, work, strategies)
    base_url = serve_exchange(symbols)
    (work / "config.json").write_text(json.dumps(config(symbols, base_url), indent=2))
    return symbols, bars


def freqtrade(work, subcommand, strategy, args):
    """Runs `freqtrade <subcommand>` of `strategy` with the config and user data of `work`,
    the benchmark's fee and `args`; return its completed process, the time it was started and
    its duration. Exits when it fails."""
    command = [sys.executable, "-m", "freqtrade", subcommand]
    command += ["--config", str(work / "config.json"), "--userdir", str(work / "user_data")]
    command += ["--strategy", strategy, "--fee", str(FEE), *args]
    started = time.time()
    done = subprocess.run(command, capture_output=True, text=True)
    total_s = time.time() - started
    if done.returncode:
        sys.exit(f"{SCRIPT}: freqtrade failed\n{done.stdout}\n{done.stderr}")
    return done, started, total_s


def run(folder, out, work):
    _, bars = prepare(folder, work, {"SmaCross": STRATEGY})
    results = work / "user_data" / "backtest_results"
    args = ["--cache", "none", "--export", "trades", "--backtest-directory", str(results)]
    done, started, total_s = freqtrade(work, "backtesting", "SmaCross", args)
    setup, loaded = log_time(done.stderr, "Using fee"), log_time(done.stderr, "Dataload complete")
    backtest = log_time(done.stderr, "Running backtesting for")
    stored = log_time(done.stderr, "dumping json to")
    latest = json.loads((results / ".last_result.json").read_text())["latest_backtest"]
    with zipfile.ZipFile(results / latest) as archive:
        stats = json.loads(archive.read(latest.replace(".zip", ".json")))
    trades = [
        {
            "symbol": trade["pair"].replace("/", ""),
            "entry": pd.Timestamp(trade["open_timestamp"], unit="ms", tz="UTC").isoformat(),
            "exit": pd.Timestamp(trade["close_timestamp"], unit="ms", tz="UTC").isoformat(),
        }
        for trade in stats["strategy"]["SmaCross"]["trades"]
    ]
    result = {
        "import_s": setup - started,
        "read_s": loaded - setup,
        "run_s": stored - backtest,
        "total_s": total_s,
        "bars": bars,
        "trades": trades,
    }
    out.write_text(json.dumps(result))


def in_work_dir(out, work, run):
    """Calls `run(work)` with the folder `work`, created if needed, or without one (None) with
    a temporary folder next to `out`, deleted afterwards."""
    if work is not None:
        work = pathlib.Path(work)
        work.mkdir(parents=True, exist_ok=True)
        run(work)
    else:
        with tempfile.TemporaryDirectory(dir=out.parent) as work:
            run(pathlib.Path(work))


def main():
    folder, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    work = sys.argv[3] if len(sys.argv) > 3 else None
    in_work_dir(out, work, lambda work: run(folder, out, work))


if __name__ == "__main__":
    main()
