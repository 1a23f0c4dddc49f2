#!/usr/bin/env python3
# Compatibility check: the official exchange A Python connector (PyPI binance-connector 3.13.0)
# against a running spotbot-sim. Not part of CI (needs pip); run by hand:
#   EXCHANGE_API_KEY=thirdparty EXCHANGE_API_SECRET=tp-secret cargo run -p spotbot-sim -- --addr 127.0.0.1:9177
#   python3 -m venv /tmp/venv && /tmp/venv/bin/pip install binance-connector==3.13.0
#   /tmp/venv/bin/python sim/compat/official_python_connector.py http://127.0.0.1:9177
from binance.spot import Spot
from binance.error import ClientError
import json, urllib.request

import sys
base = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:9177"
def admin(path, body):
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    return json.load(urllib.request.urlopen(req))

c = Spot(api_key="thirdparty", api_secret="tp-secret", base_url=base)
print("time", c.time())
print("symbols", len(c.exchange_info()["symbols"]))
print("klines", len(c.klines("BTCUSDT", "4h", limit=5)))
admin("/sim/price", {"symbol": "BTCUSDT", "price": "60000"})
o = c.new_order(symbol="BTCUSDT", side="BUY", type="MARKET", quantity=0.01, newClientOrderId="tp1")
print("market", o["status"], o["executedQty"], o["fills"][0]["price"])
oco = c.new_oco_order(symbol="BTCUSDT", side="SELL", quantity=0.00999, aboveType="LIMIT_MAKER", abovePrice=63000,
                      belowType="STOP_LOSS_LIMIT", belowStopPrice=57000, belowPrice=56886, belowTimeInForce="GTC")
print("oco", oco["listStatusType"], [r["type"] for r in oco["orderReports"]])
try:
    c.new_order(symbol="BTCUSDT", side="SELL", type="MARKET", quantity=0.00999)
except ClientError as e:
    print("sell locked", e.status_code, e.error_code, e.error_message)
print("cancel", c.cancel_oco_order("BTCUSDT", orderListId=oco["orderListId"])["listOrderStatus"])
print("account", [b for b in c.account()["balances"] if b["asset"] == "BTC"])
print("trades", len(c.my_trades("BTCUSDT")))
bad = Spot(api_key="thirdparty", api_secret="wrong", base_url=base)
try:
    bad.account()
except ClientError as e:
    print("bad secret", e.status_code, e.error_code, e.error_message)
