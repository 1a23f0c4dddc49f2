#!/usr/bin/env python3
# Compatibility check: exchange B's official Python SDK (PyPI hyperliquid-python-sdk 0.23.0),
# unmodified, against a running spotbot-sim. `cargo xtask compat` runs it (and so does
# `cargo xtask test`, in CI) against a fresh simulator, with the SDK pinned in
# sim/compat/requirements.txt. By hand instead:
#   EXCHANGE_PRIVATE_KEY=0x0123456789012345678901234567890123456789012345678901234567890123 \
#     cargo run -p spotbot-sim -- --addr 127.0.0.1:9177 --streams-addr 127.0.0.1:9178
#   python3 -m venv /tmp/venv && /tmp/venv/bin/pip install hyperliquid-python-sdk==0.23.0
#   /tmp/venv/bin/python sim/compat/exchange_b_python_sdk.py http://127.0.0.1:9177
# Every line it prints is checked with an assert first; it ends with "all checks passed".
import json
import sys
import urllib.request

import eth_account
from hyperliquid.exchange import Exchange
from hyperliquid.info import Info
from hyperliquid.utils.types import Cloid

base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9177"
KEY = "0x0123456789012345678901234567890123456789012345678901234567890123"


def admin(path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"})
    return json.load(urllib.request.urlopen(req))


wallet = eth_account.Account.from_key(KEY)
address = wallet.address.lower()
info = Info(base, skip_ws=True)
exchange = Exchange(wallet, base)

# The SDK maps names to coins and assets from spotMeta at start.
coin = info.name_to_coin["UBTC/USDC"]
asset = info.coin_to_asset[coin]
assert asset >= 10000, asset
print("UBTC/USDC is", coin, "asset", asset)

admin("/sim/price", {"symbol": "BTCUSDT", "price": "60000"})
mid = float(info.all_mids()[coin])
assert 59000 < mid < 61000, mid
candles = info.candles_snapshot("UBTC/USDC", "1h", 0, 2**62)
assert candles and set(candles[0]) == set("tTsiocl hvn".replace(" ", "")), candles[0]
book = info.l2_snapshot("UBTC/USDC")
assert book["levels"][0] and book["levels"][1], book
print("mid", mid, "candles", len(candles), "book levels", len(book["levels"][0]))

# A market buy is an IOC limit 5 % above the mid, as the SDK prices it.
bought = exchange.market_open("UBTC/USDC", True, 0.01, None, 0.05, Cloid.from_str("0x4d545f000000000000000000000000aa"))
assert bought["status"] == "ok", bought
filled = bought["response"]["data"]["statuses"][0]["filled"]
assert float(filled["totalSz"]) == 0.01, filled
print("market buy filled", filled)

# A resting take-profit, found by its cloid, then cancelled by it.
tp_cloid = Cloid.from_str("0x4d545f000000000000000000000000bb")
rest = exchange.order("UBTC/USDC", False, 0.0099, 66000, {"limit": {"tif": "Gtc"}}, cloid=tp_cloid)
oid = rest["response"]["data"]["statuses"][0]["resting"]["oid"]
status = info.query_order_by_cloid(address, tp_cloid)
assert status["order"]["status"] == "open", status
open_orders = info.open_orders(address)
assert [o["oid"] for o in open_orders] == [oid], open_orders
state = info.spot_user_state(address)
ubtc = next(b for b in state["balances"] if b["coin"] == "UBTC")
assert float(ubtc["hold"]) == 0.0099, ubtc
print("take-profit resting", oid, "hold", ubtc["hold"])
cancel = exchange.cancel_by_cloid("UBTC/USDC", tp_cloid)
assert cancel["response"]["data"]["statuses"] == ["success"], cancel
assert info.query_order_by_oid(address, oid)["order"]["status"] == "canceled"
print("cancelled by cloid")

fills = info.user_fills(address)
assert fills and fills[0]["coin"] == coin and fills[0]["side"] == "B", fills
print("fills", len(fills), "fee", fills[0]["fee"], fills[0]["feeToken"])

# The exchange's own texts for what spot refuses.
ioc = exchange.order("UBTC/USDC", True, 0.01, 59000, {"limit": {"tif": "Ioc"}})
error = ioc["response"]["data"]["statuses"][0]["error"]
assert error.startswith("Order could not immediately match"), error
small = exchange.order("UBTC/USDC", True, 0.0001, 60000, {"limit": {"tif": "Gtc"}})
error = small["response"]["data"]["statuses"][0]["error"]
assert "minimum value of 10" in error, error
print("refusals:", error)

# A wrong key is a wrong signer.
stranger = Exchange(eth_account.Account.create(), base)
refused = stranger.market_open("UBTC/USDC", True, 0.01)
assert refused["status"] == "err" and "does not exist" in refused["response"], refused
print("wrong key:", refused["response"])
print("all checks passed")
