#!/usr/bin/env python3
# Compatibility check: the official exchange A Python connector (PyPI binance-connector 3.13.0),
# unmodified, against a running spotbot-sim. `cargo xtask compat` runs it (and so does
# `cargo xtask test`, in CI) against a fresh simulator, with the connector pinned in
# sim/compat/requirements.txt. By hand instead:
#   EXCHANGE_API_KEY=thirdparty EXCHANGE_API_SECRET=tp-secret cargo run -p spotbot-sim -- --addr 127.0.0.1:9177
#   python3 -m venv /tmp/venv && /tmp/venv/bin/pip install binance-connector==3.13.0
#   /tmp/venv/bin/python sim/compat/official_python_connector.py http://127.0.0.1:9177
# Every line it prints is checked with an assert first; it ends with "all checks passed".
from binance.spot import Spot
from binance.error import ClientError
import json, urllib.request

import sys
base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9177"
def admin(path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    return json.load(urllib.request.urlopen(req))

c = Spot(api_key="thirdparty", api_secret="tp-secret", base_url=base)
server_time = c.time()
assert isinstance(server_time["serverTime"], int), server_time
print("time", server_time)
symbols = [s["symbol"] for s in c.exchange_info()["symbols"]]
assert "BTCUSDT" in symbols, symbols
print("symbols", len(symbols))
klines = c.klines("BTCUSDT", "4h", limit=5)
assert len(klines) == 5, klines
print("klines", len(klines))
admin("/sim/price", {"symbol": "BTCUSDT", "price": "60000"})
o = c.new_order(symbol="BTCUSDT", side="BUY", type="MARKET", quantity=0.01, newClientOrderId="tp1")
assert o["status"] == "FILLED" and float(o["executedQty"]) == 0.01, o
assert 59000 < float(o["fills"][0]["price"]) < 61000, o
print("market", o["status"], o["executedQty"], o["fills"][0]["price"])
oco = c.new_oco_order(symbol="BTCUSDT", side="SELL", quantity=0.00999, aboveType="LIMIT_MAKER", abovePrice=63000,
                      belowType="STOP_LOSS_LIMIT", belowStopPrice=57000, belowPrice=56886, belowTimeInForce="GTC")
types = [r["type"] for r in oco["orderReports"]]
assert oco["listStatusType"] == "EXEC_STARTED" and sorted(types) == ["LIMIT_MAKER", "STOP_LOSS_LIMIT"], oco
print("oco", oco["listStatusType"], types)
try:
    c.new_order(symbol="BTCUSDT", side="SELL", type="MARKET", quantity=0.00999)
    raise AssertionError("selling the coin the OCO locks was accepted")
except ClientError as e:
    assert (e.status_code, e.error_code) == (400, -2010), e
    print("sell locked", e.status_code, e.error_code, e.error_message)
cancel = c.cancel_oco_order("BTCUSDT", orderListId=oco["orderListId"])
assert cancel["listOrderStatus"] == "ALL_DONE", cancel
print("cancel", cancel["listOrderStatus"])
btc = [b for b in c.account()["balances"] if b["asset"] == "BTC"]
assert len(btc) == 1 and float(btc[0]["free"]) == 0.00999 and float(btc[0]["locked"]) == 0, btc
print("account", btc)
trades = c.my_trades("BTCUSDT")
assert len(trades) == 1 and trades[0]["isBuyer"], trades
print("trades", len(trades))
bad = Spot(api_key="thirdparty", api_secret="wrong", base_url=base)
try:
    bad.account()
    raise AssertionError("a wrong secret was accepted")
except ClientError as e:
    assert (e.status_code, e.error_code) == (400, -1022), e
    print("bad secret", e.status_code, e.error_code, e.error_message)
print("all checks passed")
