"""The SMA-cross search of `cargo xtask bench-optimize` in Freqtrade's hyperopt.

The strategy `SmaCrossOpt` is freqtrade_run.py's `SmaCross` (the spotbot test guest
`sma_cross`: buy at the next bar's open when SMA(fast) crossed above SMA(slow), a stop and a
target from the entry, fee 0.1 % per side) with the space of spotbot's run:

- `fast` 5..20 and `slow` 20..60 (`IntParameter`s of the `buy` space). As Freqtrade's
  documentation does for an indicator's period, `populate_indicators` computes every length
  of the two ranges once (`.range`), and each epoch only picks its two columns in
  `populate_entry_trend`. A fast as long as the slow never crosses: no trade, Freqtrade's
  maximal loss, where spotbot's guest refuses the config (an infeasible trial);
- the stop -10 % .. -2 % in steps of 1 % (one `stoploss` dimension, the `stoploss_space` of
  the strategy's `HyperOpt` class) and the target 4 % .. 20 % in steps of 2 % (one `roi_p1`
  dimension 2..10 in `roi_space`, turned by `generate_roi_table` into a one-row ROI table
  `{0: ratio}`, the ratio net of both fees as in freqtrade_run.py), where Freqtrade's default
  spaces have a 6-dimension ROI table and a stop down to -35 %;
- the sampler: Optuna's `TPESampler` (`generate_estimator`; Freqtrade's default is
  `NSGAIIISampler`), as spotbot's `--method tpe`; Freqtrade starts it with 30 random points,
  spotbot with 10.

startup_candle_count stays SmaCross's 30, the warm-up the CSVs carry before the year: a
longer slow average is NaN until it has its candles, so it cannot enter before then, as
spotbot's guest skips with fewer closed candles than its slow + 1.

Usage: freqtrade_hyperopt.py CANDLES_DIR OUT.json --epochs N --jobs J --seed S
--timerange RANGE [--work DIR] — run it with the Python of the venv Freqtrade is installed
in. It prepares the folder as freqtrade_run.py does (feather files, the local binance serving
the market list, the config; a temporary folder next to OUT.json unless --work), runs
`freqtrade hyperopt --hyperopt-loss SharpeHyperOptLoss --spaces buy stoploss roi` with
`--min-trades 5` (spotbot's default) and writes JSON: total_s (the `freqtrade` process),
startup_s (its start to the first epoch: imports, config, markets, data, indicators), search_s
(the epochs, from the timestamps of its log), epochs (evaluated: Freqtrade skips a point it
has already tried), epochs_per_s (epochs / search_s) and the best epoch's parameters in
spotbot's keys (fast, slow, sl_pct, tp_pct), its loss and trades.
"""

import argparse
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import freqtrade_run  # noqa: E402

# roi_p1 (the target in steps of 2 %) -> Freqtrade's ROI ratio.
ROI = {p: freqtrade_run.net_roi(2 * p) for p in range(2, 11)}
STRATEGY = f"""
from freqtrade.optimize.space import Integer, SKDecimal
from freqtrade.strategy import IntParameter

from SmaCross import SmaCross

ROI = {ROI!r}


class SmaCrossOpt(SmaCross):
    fast = IntParameter(5, 20, default=10, space="buy")
    slow = IntParameter(20, 60, default=30, space="buy")

    class HyperOpt:
        @staticmethod
        def stoploss_space():
            return [SKDecimal(-0.10, -0.02, decimals=2, name="stoploss")]

        @staticmethod
        def roi_space():
            return [Integer(2, 10, name="roi_p1")]

        @staticmethod
        def generate_roi_table(params):
            return {{0: ROI[params["roi_p1"]]}}

        @staticmethod
        def generate_estimator(dimensions, **kwargs):
            return "TPESampler"

    def populate_indicators(self, dataframe, metadata):
        for n in sorted(set(self.fast.range) | set(self.slow.range)):
            dataframe[f"sma_{{n}}"] = dataframe["close"].rolling(n).mean()
        return dataframe

    def populate_entry_trend(self, dataframe, metadata):
        fast = dataframe[f"sma_{{self.fast.value}}"]
        slow = dataframe[f"sma_{{self.slow.value}}"]
        dataframe["enter_long"] = self.cross_up(fast, slow)
        return dataframe
"""


def epochs(work):
    """Every epoch of the run's results file (one JSON object a line)."""
    results = work / "user_data" / "hyperopt_results"
    latest = json.loads((results / ".last_result.json").read_text())["latest_hyperopt"]
    lines = (results / latest).read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def run(args, work):
    _, bars = freqtrade_run.prepare(
        args.candles,
        work,
        {"SmaCross": freqtrade_run.STRATEGY, "SmaCrossOpt": STRATEGY},
    )
    hyperopt = ["--hyperopt-loss", "SharpeHyperOptLoss", "--spaces", "buy", "stoploss", "roi"]
    hyperopt += ["--epochs", str(args.epochs), "--job-workers", str(args.jobs)]
    hyperopt += ["--random-state", str(args.seed), "--timerange", args.timerange]
    hyperopt += ["--min-trades", "5", "--disable-param-export", "--no-color"]
    done, started, total_s = freqtrade_run.freqtrade(work, "hyperopt", "SmaCrossOpt", hyperopt)
    first = freqtrade_run.log_time(done.stderr, "Effective number of parallel workers used")
    last = freqtrade_run.log_time(done.stderr, " saved to")
    evaluated = epochs(work)
    best = min(evaluated, key=lambda e: e["loss"])
    params = best["params_dict"]
    result = {
        "total_s": total_s,
        "startup_s": first - started,
        "search_s": last - first,
        "epochs": len(evaluated),
        "epochs_requested": args.epochs,
        "epochs_per_s": len(evaluated) / (last - first),
        "jobs": args.jobs,
        "timerange": args.timerange,
        "bars": bars,
        "best": {
            "fast": params["fast"],
            "slow": params["slow"],
            "sl_pct": round(-100 * params["stoploss"], 6),
            "tp_pct": 2 * params["roi_p1"],
        },
        "best_epoch": best["current_epoch"],
        "best_loss": best["loss"],
        "best_trades": best["results_metrics"]["total_trades"],
    }
    args.out.write_text(json.dumps(result))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("candles", type=pathlib.Path)
    parser.add_argument("out", type=pathlib.Path)
    parser.add_argument("--epochs", type=int, required=True)
    parser.add_argument("--jobs", type=int, required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--timerange", required=True)
    parser.add_argument("--work")
    args = parser.parse_args()
    freqtrade_run.in_work_dir(args.out, args.work, lambda work: run(args, work))


if __name__ == "__main__":
    main()
