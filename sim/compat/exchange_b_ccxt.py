#!/usr/bin/env python3
# Compatibility check: ccxt's exchange B client (PyPI ccxt, `hyperliquid`), unmodified, against a
# running spotbot-sim. `cargo xtask compat` runs it (and so does `cargo xtask test`, in CI)
# against a fresh simulator, with ccxt pinned in sim/compat/requirements.txt. By hand instead:
#   EXCHANGE_PRIVATE_KEY=0x0123456789012345678901234567890123456789012345678901234567890123 \
#     cargo run -p spotbot-sim -- --addr 127.0.0.1:9177 --streams-addr 127.0.0.1:9178
#   python3 -m venv /tmp/venv && /tmp/venv/bin/pip install ccxt==4.5.90
#   /tmp/venv/bin/python sim/compat/exchange_b_ccxt.py http://127.0.0.1:9177
# ccxt signs as testnet in sandbox mode (the simulator's default network); its start-up extras
# (builder-fee approval, referrer, account abstraction) are refused by the simulator and ccxt
# carries on without them, as it does on the real exchange when they fail.
import json
import sys
import urllib.request

import ccxt

base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9177"
KEY = "0x0123456789012345678901234567890123456789012345678901234567890123"
ADDRESS = "0x14791697260e4c9a71f18484c9f997b308e59325"


def admin(path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"})
    return json.load(urllib.request.urlopen(req))


ex = ccxt.hyperliquid({
    "walletAddress": ADDRESS,
    "privateKey": KEY,
    "options": {"fetchMarkets": {"types": ["spot"]}},
})
ex.set_sandbox_mode(True)
ex.urls["api"] = {"public": base, "private": base}

markets = ex.load_markets()
symbol = next(s for s, m in markets.items() if m["spot"] and m["base"] in ("UBTC", "BTC"))
print("market", symbol, markets[symbol]["id"])
admin("/sim/price", {"symbol": "BTCUSDT", "price": "60000"})
ticker = ex.fetch_ticker(symbol)
assert 59000 < ticker["last"] < 61000, ticker
candles = ex.fetch_ohlcv(symbol, "1h", limit=5)
assert len(candles) == 5, candles
print("ticker", ticker["last"], "candles", len(candles))

bought = ex.create_order(symbol, "market", "buy", 0.01, 60000)
print("market buy", bought["id"], bought["status"])
rest = ex.create_order(symbol, "limit", "sell", 0.0099, 66000)
open_orders = ex.fetch_open_orders(symbol)
assert [o["id"] for o in open_orders] == [rest["id"]], open_orders
print("limit resting", rest["id"])
ex.cancel_order(rest["id"], symbol)
assert ex.fetch_open_orders(symbol) == []
order = ex.fetch_order(rest["id"], symbol)
assert order["status"] == "canceled", order
print("cancelled", order["status"])
balance = ex.fetch_balance({"type": "spot"})
held = balance["total"].get("BTC", balance["total"].get("UBTC", 0))  # ccxt names UBTC "BTC"
assert held >= 0.0099, balance["total"]
trades = ex.fetch_my_trades(symbol)
assert trades and trades[-1]["side"] == "buy", trades
print("balance BTC", held, "trades", len(trades))
print("all checks passed")
