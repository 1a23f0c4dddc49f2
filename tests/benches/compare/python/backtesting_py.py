"""The SMA(10)/SMA(30) benchmark of `cargo xtask bench-backtest` in backtesting.py.

The rules of the spotbot test guest `sma_cross` (tests/guests/guest-sma-cross): on each
closed 1h bar, buy at the next bar's open when SMA(10) crossed above SMA(30) (the library's
`crossover`), with a stop 5 % and a target 10 % from the entry, commission 0.1 % per side,
one position per symbol, 5 % of the cash per trade.

Usage: backtesting_py.py CANDLES_DIR OUT.json — reads every `<SYMBOL>_1h.csv` of the folder
(the backtest's CSV layout: open_time in RFC 3339 UTC, open, high, low, close, volume), runs one
`Backtest` per symbol and writes the timings and every trade's symbol and entry/exit time.
"""

import json
import pathlib
import sys
import time

started = time.perf_counter()
import pandas as pd  # noqa: E402
from backtesting import Backtest, Strategy  # noqa: E402
from backtesting.lib import crossover  # noqa: E402

imported = time.perf_counter()


def sma(values, n):
    return pd.Series(values).rolling(n).mean()


class SmaCross(Strategy):
    def init(self):
        self.fast = self.I(sma, self.data.Close, 10)
        self.slow = self.I(sma, self.data.Close, 30)

    def next(self):
        if not self.position and crossover(self.fast, self.slow):
            price = self.data.Close[-1]
            self.buy(size=0.05, sl=price * 0.95, tp=price * 1.10)


def main():
    folder, out = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
    read_s = run_s = 0.0
    trades, bars = [], 0
    for path in sorted(folder.glob("*_1h.csv")):
        symbol = path.name[: -len("_1h.csv")]
        t = time.perf_counter()
        frame = pd.read_csv(path)
        frame.index = pd.to_datetime(frame.pop("open_time"), utc=True)
        frame.columns = ["Open", "High", "Low", "Close", "Volume"]
        read_s += time.perf_counter() - t
        t = time.perf_counter()
        stats = Backtest(frame, SmaCross, cash=1_000_000, commission=0.001, finalize_trades=True).run()
        run_s += time.perf_counter() - t
        bars += len(frame)
        for row in stats["_trades"].itertuples():
            trades.append(
                {
                    "symbol": symbol,
                    "entry": row.EntryTime.isoformat(),
                    "exit": row.ExitTime.isoformat(),
                }
            )
    result = {
        "import_s": imported - started,
        "read_s": read_s,
        "run_s": run_s,
        "total_s": time.perf_counter() - started,
        "bars": bars,
        "trades": trades,
    }
    out.write_text(json.dumps(result))


main()
