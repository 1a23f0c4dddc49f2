"""Drives spotbot's MCP endpoint with the official MCP client (the `mcp` package, unmodified,
pinned in xtask/python-requirements.txt), the way an agent would. Run by the end-to-end test
tests/tests/e2e/mcp.rs with target/xtask-venv/bin/python, which asserts what the exchange
simulator and the messenger received.

    drive_service.py scenario URL SIGNAL_JSON
        initialize; list the tools and check names and hints; read health and the dashboard
        state; post the signal (prints `SIGNAL <result>`); wait for the boss's reply on stdin
        (`1-YES <SYMBOL>`, relayed by the test once the approval request reached the
        messenger); confirm it (prints `CONFIRMED <result>`).
    drive_service.py call URL TOOL ARGUMENTS_JSON
        initialize, call one tool, print `RESULT <result>`.

A result is printed as JSON: {"is_error": bool, "answer": {"status": ..., "body": ...} or null,
"text": the first text content}. Any failed check exits non-zero with the reason on stderr.
"""

import asyncio
import json
import sys

from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client

# Tools that move money must carry the destructive hint; reads the read-only hint.
MOVES_MONEY = {
    "trade", "manual_entry", "close", "close_all", "confirm_signal", "create_signal",
    "restore_trade", "trailing", "check_pending_entries", "cancel_pending_entries",
}
READS = {"health", "dashboard_state", "get_signal", "list_trades", "bot_status", "license_status"}
# Operations that are no tools (HTML pages, Prometheus text).
NOT_TOOLS = {"dashboard_page", "dashboard_page_earlier", "metrics"}


def result_json(result):
    text = next((block.text for block in result.content if block.type == "text"), "")
    return {"is_error": result.is_error, "answer": result.structured_content, "text": text}


def say(tag, value):
    print(tag, json.dumps(value), flush=True)


def check(condition, message):
    if not condition:
        raise SystemExit(f"drive_service.py: {message}")


async def call(session, name, arguments):
    return result_json(await session.call_tool(name, arguments))


async def scenario(session, signal):
    tools = {tool.name: tool for tool in (await session.list_tools()).tools}
    for name in MOVES_MONEY:
        check(name in tools, f"no tool {name}: {sorted(tools)}")
        hints = tools[name].annotations
        check(hints.destructive_hint is True and hints.read_only_hint is False,
              f"{name} moves money but is not destructive: {hints}")
    for name in READS:
        check(name in tools, f"no tool {name}: {sorted(tools)}")
        check(tools[name].annotations.read_only_hint is True, f"{name} is not read-only")
    check(not NOT_TOOLS & tools.keys(), f"excluded operations are tools: {NOT_TOOLS & tools.keys()}")
    check("body" in tools["create_signal"].input_schema["properties"], "create_signal has no body")

    health = await call(session, "health", {})
    check(not health["is_error"], f"health failed: {health}")
    check(health["answer"]["body"]["license_status"] == "active", f"unlicensed: {health}")
    state = await call(session, "dashboard_state", {})
    check(not state["is_error"] and "agents" in state["answer"]["body"], f"state: {state}")

    created = await call(session, "create_signal", {"body": signal})
    say("SIGNAL", created)
    check(not created["is_error"], f"the signal was refused: {created}")
    reply = sys.stdin.readline().strip()
    check(reply == f"1-YES {signal['symbol']}", f"the boss did not say YES: {reply!r}")
    confirmed = await call(session, "confirm_signal", {"symbol": signal["symbol"]})
    say("CONFIRMED", confirmed)


async def main(argv):
    mode, url = argv[1], argv[2]
    async with streamable_http_client(url) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            if mode == "scenario":
                await scenario(session, json.loads(argv[3]))
            elif mode == "call":
                say("RESULT", await call(session, argv[3], json.loads(argv[4])))
            else:
                raise SystemExit(f"drive_service.py: unknown mode {mode!r}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv))
