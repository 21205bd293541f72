// Interop check: the official MCP TypeScript SDK drives tl-mcp over stdio.
//
// Usage: node ts_client.mjs TL_MCP_BINARY DATABASE_PATH [PROTOCOL_VERSION]
// (run with NODE_PATH or from a folder whose node_modules holds @modelcontextprotocol/sdk)
//
// Uses Client + StdioClientTransport: initialize, list the tools, create a timeline, append, fork,
// run a budget, read a node, and check a domain error. The SDK validates every tool result against
// the tool's outputSchema, so a wrong structuredContent fails here. With PROTOCOL_VERSION the client
// offers that version in initialize instead of the SDK's latest (to check the older versions, which
// have no outputSchema and no structuredContent). Prints one PASS or FAIL line and
// exits non-zero on failure.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const EXPECTED_TOOLS = [
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
];

// The tool's JSON from content[0].text, cross-checked with structuredContent when present.
function resultJson(result, structured) {
  assert.ok(!result.isError, `tool reported an error: ${JSON.stringify(result)}`);
  assert.equal(result.content.length, 1);
  assert.equal(result.content[0].type, "text");
  const value = JSON.parse(result.content[0].text);
  if (Array.isArray(value) || !structured) {
    assert.equal(result.structuredContent, undefined, "no structuredContent for arrays");
  } else {
    assert.deepEqual(result.structuredContent, value, "structuredContent equals the text");
  }
  return value;
}

async function run(binary, db, offer) {
  const transport = new StdioClientTransport({ command: binary, args: ["--db", db], stderr: "inherit" });
  if (offer) {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      if (message.method === "initialize") {
        message = { ...message, params: { ...message.params, protocolVersion: offer } };
      }
      return send(message, options);
    };
  }
  const client = new Client({ name: "timeline-interop", version: "1.0.0" });
  // Record what the client sends so the negotiated version can be printed.
  let negotiated = "unknown";
  const setVersion = transport.setProtocolVersion?.bind(transport);
  transport.setProtocolVersion = (v) => {
    negotiated = v;
    setVersion?.(v);
  };
  await client.connect(transport);
  try {
    const server = client.getServerVersion();
    assert.equal(server.name, "timeline");
    assert.ok(client.getServerCapabilities().tools, "tools capability");

    if (offer) assert.equal(negotiated, offer);
    const structured = negotiated >= "2025-06-18";

    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), EXPECTED_TOOLS);
    assert.equal(tools.filter((t) => t.outputSchema).length, structured ? 12 : 0, "outputSchema by version");

    const call = async (name, args) => resultJson(await client.callTool({ name, arguments: args }), structured);

    const created = await call("timeline_create", {});
    assert.deepEqual(created, { timeline_id: "tl0" });
    const tl = created.timeline_id;

    assert.deepEqual(await call("timeline_append", { timeline_id: tl, role: "user", text: "Plan a trip", tokens: 400 }), { node: "n1" });
    const second = { timeline_id: tl, role: "assistant", text: "Where to?", tokens: 300, intent: { tag: "question" }, idempotency_key: "ts-append-2" };
    assert.deepEqual(await call("timeline_append", second), { node: "n2" });
    assert.deepEqual(await call("timeline_append", second), { node: "n2" }, "idempotent append");
    assert.deepEqual(await call("timeline_append", { timeline_id: tl, role: "user", text: "Lisbon", tokens: 5 }), { node: "n3" });

    assert.deepEqual(await call("timeline_fork", { timeline_id: tl, node: "n1", name: "alternative" }), { branch: "alternative", head: "n1" });

    const budget = await call("timeline_context_budget", { timeline_id: tl, node: "n3", max_tokens: 100 });
    assert.ok(budget.total_tokens <= 100, JSON.stringify(budget));
    assert.equal(budget.messages.at(-1).node, "n3");
    assert.ok(budget.summaries_created.length >= 1, JSON.stringify(budget));

    const node = await call("timeline_node", { timeline_id: tl, node: "n2" });
    assert.equal(node.text, "Where to?");
    assert.deepEqual(node.intent, { tag: "question" });

    const context = await call("timeline_context", { timeline_id: tl, node: "n3" });
    assert.deepEqual(context.map((m) => m.node), ["n1", "n2", "n3"]);

    const branches = await call("timeline_branches", { timeline_id: tl });
    assert.deepEqual(branches.map((b) => b.name), ["main", "alternative"]);

    await assert.rejects(
      client.callTool({ name: "timeline_context_budget", arguments: { timeline_id: tl, node: "n3", max_tokens: 0 } }),
      (e) => e instanceof McpError && e.code === -32000,
    );
    return negotiated;
  } finally {
    await client.close();
  }
}

const [binary, db, offer] = process.argv.slice(2);

// The installed SDK's version, from the package.json above its entry point (it exports no ./package.json).
function sdkVersion() {
  let dir = dirname(fileURLToPath(import.meta.resolve("@modelcontextprotocol/sdk/client/index.js")));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      if (pkg.name === "@modelcontextprotocol/sdk") return pkg.version;
    } catch {}
    const up = dirname(dir);
    if (up === dir) return "unknown";
    dir = up;
  }
}
const sdk = `@modelcontextprotocol/sdk ${sdkVersion()}`;
try {
  const negotiated = await run(binary, db, offer);
  console.log(`PASS: typescript interop (${sdk}, protocol ${negotiated})`);
} catch (e) {
  console.error(e);
  console.log(`FAIL: typescript interop (${sdk})`);
  process.exit(1);
}
