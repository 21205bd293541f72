"""Interop check: the official MCP Python SDK drives tl-mcp over stdio.

Usage: python python_client.py TL_MCP_BINARY DATABASE_PATH [PROTOCOL_VERSION]

Uses mcp.client.stdio.stdio_client + ClientSession: initialize (checks the instructions), list the
tools (checks titles, annotations and outputSchema by version), call every tool, then a
failing call that must arrive as a result with isError and its data, and an argument error (a tool
error from 2025-11-25, JSON-RPC -32602 before). The SDK validates every successful result against the
tool's outputSchema, so a wrong structuredContent fails here. With PROTOCOL_VERSION the client offers
that version instead of the SDK's latest handshake version (older versions have no title, outputSchema
or structuredContent, and 2024-11-05 no annotations). Prints one PASS or FAIL line and exits non-zero
on failure.
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
    "timeline_rename_branch",
    "timeline_context",
    "timeline_context_budget",
    "timeline_pin",
    "timeline_unpin",
    "timeline_summarize",
    "timeline_branches",
    "timeline_node",
    "timeline_search",
    "timeline_log",
    "timeline_diff",
    "timeline_archive_check",
    "timeline_archive_branch",
    "timeline_restore_branch",
    "timeline_db_info",
    "timeline_list",
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


READ_ONLY = {"timeline_context", "timeline_branches", "timeline_node", "timeline_archive_check",
             "timeline_search", "timeline_log", "timeline_diff", "timeline_db_info", "timeline_list"}
DESTRUCTIVE = {"timeline_switch", "timeline_drop_branch", "timeline_rename_branch", "timeline_unpin",
               "timeline_archive_branch"}


def result_json(result, structured):
    """The tool's JSON from content[0].text, cross-checked with structuredContent when present."""
    check(not field(result, "is_error"), f"tool reported an error: {result}")
    check(len(result.content) == 1 and result.content[0].type == "text", f"one text item: {result}")
    value = json.loads(result.content[0].text)
    check(isinstance(value, dict), f"every result is an object: {value}")
    if structured:
        check(field(result, "structured_content") == value, f"structuredContent equals the text: {result}")
    else:
        check(field(result, "structured_content") is None, f"no structuredContent: {result}")
    return value


def check_tools(tools, negotiated):
    names = [t.name for t in tools]
    check(names == EXPECTED_TOOLS, f"{len(EXPECTED_TOOLS)} tools in order, got {names}")
    structured = negotiated >= "2025-06-18"
    with_schema = [t.name for t in tools if field(t, "output_schema") is not None]
    check(len(with_schema) == (len(EXPECTED_TOOLS) if structured else 0), f"outputSchema by version: {with_schema}")
    for tool in tools:
        check((tool.title is not None) == structured, f"title by version: {tool}")
        annotations = tool.annotations
        if negotiated < "2025-03-26":
            check(annotations is None, f"no annotations before 2025-03-26: {tool}")
            continue
        check(annotations is not None, f"annotations: {tool}")
        check(field(annotations, "read_only_hint") == (tool.name in READ_ONLY), f"readOnlyHint: {tool}")
        check(field(annotations, "destructive_hint") == (tool.name in DESTRUCTIVE), f"destructiveHint: {tool}")
        check(field(annotations, "open_world_hint") is False, f"openWorldHint: {tool}")
        check(isinstance(field(annotations, "idempotent_hint"), bool), f"idempotentHint: {tool}")
        check("(CLI" not in tool.description and "tl " not in tool.description, f"description: {tool}")


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
            instructions = init.instructions or ""
            check("timeline_create" in instructions and "timeline_context_budget" in instructions,
                  f"instructions: {instructions!r}")

            check_tools((await session.list_tools()).tools, negotiated)

            async def call(name, arguments):
                return result_json(await session.call_tool(name, arguments), structured)

            # Every tool, once at least.
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
            switched = await call("timeline_switch", {"timeline_id": tl, "name": "alternative"})
            check(switched == {"current_branch": "alternative"}, f"switch: {switched}")
            porto = await call(
                "timeline_append", {"timeline_id": tl, "role": "user", "text": "Porto instead", "tokens": 5})
            check(porto == {"node": "n4"}, f"append on the fork: {porto}")
            back = await call("timeline_switch", {"timeline_id": tl, "name": "main"})
            check(back == {"current_branch": "main"}, f"switch back: {back}")

            scratch = await call("timeline_fork", {"timeline_id": tl, "node": "n2", "name": "scratch"})
            check(scratch == {"branch": "scratch", "head": "n2"}, f"fork scratch: {scratch}")
            dropped = await call("timeline_drop_branch", {"timeline_id": tl, "name": "scratch"})
            check(dropped == {"dropped": "scratch"}, f"drop: {dropped}")

            pinned = await call("timeline_pin", {"timeline_id": tl, "node": "n1"})
            check(pinned == {"pinned": "n1"}, f"pin: {pinned}")
            unpinned = await call("timeline_unpin", {"timeline_id": tl, "node": "n1"})
            check(unpinned == {"unpinned": "n1"}, f"unpin: {unpinned}")

            summary = await call(
                "timeline_summarize",
                {"timeline_id": tl, "from": "n1", "to": "n2", "summary": "Planning a trip.", "tokens": 10})
            check(summary == {"node": "n5"}, f"summarize: {summary}")

            budget = await call(
                "timeline_context_budget", {"timeline_id": tl, "node": "n3", "max_tokens": 100})
            check(budget["total_tokens"] <= 100, f"budget total: {budget}")
            check([m["node"] for m in budget["messages"]] == ["n5", "n3"], f"budget uses the summary: {budget}")

            node = await call("timeline_node", {"timeline_id": tl, "node": "n2"})
            check(node["text"] == "Where to?" and node["intent"]["tag"] == "question", f"node: {node}")

            context = await call("timeline_context", {"timeline_id": tl, "node": "n3"})
            check([m["node"] for m in context["messages"]] == ["n1", "n2", "n3"], f"context: {context}")

            branches = await call("timeline_branches", {"timeline_id": tl})
            check([b["name"] for b in branches["branches"]] == ["main", "alternative"], f"branches: {branches}")

            cover = await call(
                "timeline_summarize",
                {"timeline_id": tl, "from": "n1", "to": "n4", "summary": "Chose Porto.", "tokens": 4})
            check(cover == {"node": "n6"}, f"summarize the fork: {cover}")
            eligible = await call("timeline_archive_check", {"timeline_id": tl, "branch": "alternative"})
            check(eligible == {"eligible": True, "reasons": []}, f"archive check: {eligible}")
            archived = await call("timeline_archive_branch", {"timeline_id": tl, "branch": "alternative"})
            check(archived == {"archived": ["n4"]}, f"archive: {archived}")

            restored = await call("timeline_restore_branch", {"timeline_id": tl, "branch": "alternative"})
            check(restored == {"branch": "alternative", "head": "n4", "restored": ["n4"]}, f"restore: {restored}")
            renamed = await call(
                "timeline_rename_branch", {"timeline_id": tl, "name": "alternative", "new_name": "porto"})
            check(renamed == {"renamed": "alternative", "to": "porto"}, f"rename: {renamed}")
            listed = await call("timeline_list", {})
            check([t["timeline_id"] for t in listed["timelines"]] == [tl]
                  and listed["timelines"][0]["messages"] == 6, f"list: {listed}")
            info = await call("timeline_db_info", {})
            check(info["exists"] and info["timelines"] == 1 and info["nodes"] == 6, f"db info: {info}")

            # A failure of the tool arrives as a result with isError and the error's data.
            failed = await session.call_tool(
                "timeline_context_budget", {"timeline_id": tl, "node": "n3", "max_tokens": 0})
            check(field(failed, "is_error") is True, f"isError: {failed}")
            error = json.loads(failed.content[0].text)
            check(error["error"] == "budget infeasible", f"error text: {error}")
            check(error["data"]["max_tokens"] == 0 and error["data"]["required_tokens"] > 0, f"data: {error}")
            # A second text block tells the model its ways out, naming MCP tools and arguments only.
            ways_out = failed.content[1].text if len(failed.content) == 2 else ""
            check("`max_tokens` of at least %d" % error["data"]["required_tokens"] in ways_out
                  and "`timeline_unpin`" in ways_out and "tl " not in ways_out, f"ways out: {failed}")
            check(field(failed, "structured_content") == (error if structured else None),
                  f"error structuredContent: {failed}")

            # An argument that breaks the schema: a tool error from 2025-11-25, "invalid params" before.
            if negotiated >= "2025-11-25":
                bad = await session.call_tool("timeline_node", {"timeline_id": tl, "node": "x"})
                check(field(bad, "is_error") is True, f"argument error as a tool error: {bad}")
                check("invalid argument node" in bad.content[0].text, f"argument error text: {bad}")
            else:
                try:
                    await session.call_tool("timeline_node", {"timeline_id": tl, "node": "x"})
                    raise AssertionError("an invalid argument must fail")
                except MCPError as e:
                    code = e.error.code if hasattr(e, "error") else e.code
                    check(code == -32602, f"argument error code: {e}")
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
