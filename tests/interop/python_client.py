"""Interop check: the official MCP Python SDK drives tl-mcp over stdio.

Usage: python python_client.py TL_MCP_BINARY DATABASE_PATH [PROTOCOL_VERSION]

Uses mcp.client.stdio.stdio_client + ClientSession: initialize, list the tools, create a timeline,
append, fork, run a budget, read a node, and check a domain error. The SDK validates every tool
result against the tool's outputSchema, so a wrong structuredContent fails here. With PROTOCOL_VERSION
the client offers that version instead of the SDK's latest handshake version (older versions have no
outputSchema and no structuredContent). Prints one
PASS or FAIL line and exits non-zero on failure.
"""

import asyncio
import json
import sys
import traceback
from importlib.metadata import version

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

try:
    from mcp.shared.exceptions import MCPError
except ImportError:  # SDK 1.x spelling
    from mcp.shared.exceptions import McpError as MCPError

EXPECTED_TOOLS = [
    "timeline_create",
    "timeline_append",
    "timeline_fork",
    "timeline_switch",
    "timeline_drop_branch",
    "timeline_context",
    "timeline_context_budget",
    "timeline_pin",
    "timeline_unpin",
    "timeline_summarize",
    "timeline_branches",
    "timeline_node",
    "timeline_archive_check",
    "timeline_archive_branch",
]


def check(condition, what):
    if not condition:
        raise AssertionError(what)


def field(obj, snake):
    """An SDK model field: 2.x spells fields in snake_case, 1.x in camelCase."""
    if hasattr(obj, snake):
        return getattr(obj, snake)
    head, *rest = snake.split("_")
    return getattr(obj, head + "".join(w.title() for w in rest))


def result_json(result, structured):
    """The tool's JSON from content[0].text, cross-checked with structuredContent when present."""
    check(not field(result, "is_error"), f"tool reported an error: {result}")
    check(len(result.content) == 1 and result.content[0].type == "text", f"one text item: {result}")
    value = json.loads(result.content[0].text)
    if isinstance(value, dict) and structured:
        check(field(result, "structured_content") == value, f"structuredContent equals the text: {result}")
    else:
        check(field(result, "structured_content") is None, f"no structuredContent: {result}")
    return value


async def run(binary, db, offer):
    if offer:
        import mcp.client.session

        mcp.client.session.LATEST_HANDSHAKE_VERSION = offer
    params = StdioServerParameters(command=binary, args=["--db", db])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            check(field(init, "server_info").name == "timeline", f"server name: {init}")
            check(init.capabilities.tools is not None, f"tools capability: {init.capabilities}")
            negotiated = field(init, "protocol_version")
            check(not offer or negotiated == offer, f"negotiated {negotiated}, offered {offer}")
            structured = negotiated >= "2025-06-18"

            tools = (await session.list_tools()).tools
            names = [t.name for t in tools]
            check(names == EXPECTED_TOOLS, f"14 tools in order, got {names}")
            with_schema = [t.name for t in tools if field(t, "output_schema") is not None]
            check(len(with_schema) == (12 if structured else 0), f"outputSchema by version: {with_schema}")

            async def call(name, arguments):
                return result_json(await session.call_tool(name, arguments), structured)

            created = await call("timeline_create", {})
            check(created == {"timeline_id": "tl0"}, f"create: {created}")
            tl = created["timeline_id"]

            first = await call(
                "timeline_append", {"timeline_id": tl, "role": "user", "text": "Plan a trip", "tokens": 400})
            check(first == {"node": "n1"}, f"append 1: {first}")
            second = await call(
                "timeline_append",
                {"timeline_id": tl, "role": "assistant", "text": "Where to?", "tokens": 300,
                 "intent": {"tag": "question", "note": "asks for the destination"},
                 "idempotency_key": "py-append-2"})
            check(second == {"node": "n2"}, f"append 2: {second}")
            again = await call(
                "timeline_append",
                {"timeline_id": tl, "role": "assistant", "text": "Where to?", "tokens": 300,
                 "intent": {"tag": "question", "note": "asks for the destination"},
                 "idempotency_key": "py-append-2"})
            check(again == second, f"idempotent append: {again}")
            third = await call(
                "timeline_append", {"timeline_id": tl, "role": "user", "text": "Lisbon", "tokens": 5})
            check(third == {"node": "n3"}, f"append 3: {third}")

            fork = await call(
                "timeline_fork", {"timeline_id": tl, "node": "n1", "name": "alternative"})
            check(fork == {"branch": "alternative", "head": "n1"}, f"fork: {fork}")

            budget = await call(
                "timeline_context_budget", {"timeline_id": tl, "node": "n3", "max_tokens": 100})
            check(budget["total_tokens"] <= 100, f"budget total: {budget}")
            check(budget["messages"][-1]["node"] == "n3", f"budget keeps the target: {budget}")
            check(len(budget["summaries_created"]) >= 1, f"budget placeholder: {budget}")

            node = await call("timeline_node", {"timeline_id": tl, "node": "n2"})
            check(node["text"] == "Where to?" and node["intent"]["tag"] == "question", f"node: {node}")

            context = await call("timeline_context", {"timeline_id": tl, "node": "n3"})
            check([m["node"] for m in context] == ["n1", "n2", "n3"], f"context: {context}")

            branches = await call("timeline_branches", {"timeline_id": tl})
            check([b["name"] for b in branches] == ["main", "alternative"], f"branches: {branches}")

            try:
                await session.call_tool(
                    "timeline_context_budget", {"timeline_id": tl, "node": "n3", "max_tokens": 0})
                raise AssertionError("an infeasible budget must fail")
            except MCPError as e:
                code = e.error.code if hasattr(e, "error") else e.code
                check(code == -32000, f"domain error code: {e}")
            return negotiated


def main():
    binary, db = sys.argv[1], sys.argv[2]
    offer = sys.argv[3] if len(sys.argv) > 3 else None
    sdk = f"mcp {version('mcp')}"
    try:
        negotiated = asyncio.run(run(binary, db, offer))
    except BaseException:  # noqa: BLE001 - report anything, including task-group errors
        traceback.print_exc()
        print(f"FAIL: python interop ({sdk})")
        sys.exit(1)
    print(f"PASS: python interop ({sdk}, protocol {negotiated})")


if __name__ == "__main__":
    main()
