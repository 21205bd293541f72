// Interop check: the official MCP TypeScript SDK drives tl-mcp over stdio.
//
// Usage: node ts_client.mjs TL_MCP_BINARY DATABASE_PATH [PROTOCOL_VERSION]
// (run with NODE_PATH or from a folder whose node_modules holds @modelcontextprotocol/sdk)
//
// Uses Client + StdioClientTransport: initialize (checks the instructions), list the tools (checks
// titles, annotations and outputSchema by version), call every tool, then a failing
// call that must arrive as a result with isError and its data, and an argument error (a tool error
// from 2025-11-25, JSON-RPC -32602 before). The SDK validates structured results against the tool's
// outputSchema (this version does so for error results too, which the schema allows). With
// PROTOCOL_VERSION the client offers that version in initialize instead of the SDK's latest (older
// versions have no title, outputSchema or structuredContent, and 2024-11-05 no annotations). Prints
// one PASS or FAIL line and exits non-zero on failure.

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
];

const READ_ONLY = new Set([
  "timeline_context",
  "timeline_branches",
  "timeline_node",
  "timeline_archive_check",
  "timeline_search",
  "timeline_log",
  "timeline_diff",
  "timeline_db_info",
  "timeline_list",
]);
const DESTRUCTIVE = new Set(["timeline_switch", "timeline_drop_branch", "timeline_rename_branch", "timeline_unpin", "timeline_archive_branch"]);

// The tool's JSON from content[0].text, cross-checked with structuredContent when present.
function resultJson(result, structured) {
  assert.ok(!result.isError, `tool reported an error: ${JSON.stringify(result)}`);
  assert.equal(result.content.length, 1);
  assert.equal(result.content[0].type, "text");
  const value = JSON.parse(result.content[0].text);
  assert.ok(value && typeof value === "object" && !Array.isArray(value), "every result is an object");
  if (structured) {
    assert.deepEqual(result.structuredContent, value, "structuredContent equals the text");
  } else {
    assert.equal(result.structuredContent, undefined, "no structuredContent before 2025-06-18");
  }
  return value;
}

function checkTools(tools, negotiated) {
  assert.deepEqual(tools.map((t) => t.name), EXPECTED_TOOLS);
  const structured = negotiated >= "2025-06-18";
  assert.equal(tools.filter((t) => t.outputSchema).length, structured ? EXPECTED_TOOLS.length : 0, "outputSchema by version");
  for (const tool of tools) {
    assert.equal(tool.title !== undefined, structured, `title by version: ${tool.name}`);
    assert.ok(!tool.description.includes("(CLI") && !tool.description.includes("tl "), tool.description);
    if (negotiated < "2025-03-26") {
      assert.equal(tool.annotations, undefined, `no annotations before 2025-03-26: ${tool.name}`);
      continue;
    }
    const a = tool.annotations;
    assert.equal(a.readOnlyHint, READ_ONLY.has(tool.name), `readOnlyHint: ${tool.name}`);
    assert.equal(a.destructiveHint, DESTRUCTIVE.has(tool.name), `destructiveHint: ${tool.name}`);
    assert.equal(a.openWorldHint, false, `openWorldHint: ${tool.name}`);
    assert.equal(typeof a.idempotentHint, "boolean", `idempotentHint: ${tool.name}`);
  }
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
    const instructions = client.getInstructions() ?? "";
    assert.ok(instructions.includes("timeline_create") && instructions.includes("timeline_context_budget"), instructions);

    if (offer) assert.equal(negotiated, offer);
    const structured = negotiated >= "2025-06-18";

    const { tools } = await client.listTools();
    checkTools(tools, negotiated);

    const call = async (name, args) => resultJson(await client.callTool({ name, arguments: args }), structured);

    // Every tool, once at least.
    const created = await call("timeline_create", {});
    assert.deepEqual(created, { timeline_id: "tl0" });
    const tl = created.timeline_id;

    assert.deepEqual(await call("timeline_append", { timeline_id: tl, role: "user", text: "Plan a trip", tokens: 400 }), { node: "n1" });
    const second = { timeline_id: tl, role: "assistant", text: "Where to?", tokens: 300, intent: { tag: "question" }, idempotency_key: "ts-append-2" };
    assert.deepEqual(await call("timeline_append", second), { node: "n2" });
    assert.deepEqual(await call("timeline_append", second), { node: "n2" }, "idempotent append");
    assert.deepEqual(await call("timeline_append", { timeline_id: tl, role: "user", text: "Lisbon", tokens: 5 }), { node: "n3" });

    assert.deepEqual(await call("timeline_fork", { timeline_id: tl, node: "n1", name: "alternative" }), { branch: "alternative", head: "n1" });
    assert.deepEqual(await call("timeline_switch", { timeline_id: tl, name: "alternative" }), { current_branch: "alternative" });
    assert.deepEqual(await call("timeline_append", { timeline_id: tl, role: "user", text: "Porto instead", tokens: 5 }), { node: "n4" });
    assert.deepEqual(await call("timeline_switch", { timeline_id: tl, name: "main" }), { current_branch: "main" });
    assert.deepEqual(await call("timeline_fork", { timeline_id: tl, node: "n2", name: "scratch" }), { branch: "scratch", head: "n2" });
    assert.deepEqual(await call("timeline_drop_branch", { timeline_id: tl, name: "scratch" }), { dropped: "scratch" });

    assert.deepEqual(await call("timeline_pin", { timeline_id: tl, node: "n1" }), { pinned: "n1" });
    assert.deepEqual(await call("timeline_unpin", { timeline_id: tl, node: "n1" }), { unpinned: "n1" });
    assert.deepEqual(
      await call("timeline_summarize", { timeline_id: tl, from: "n1", to: "n2", summary: "Planning a trip.", tokens: 10 }),
      { node: "n5" },
    );

    const budget = await call("timeline_context_budget", { timeline_id: tl, node: "n3", max_tokens: 100 });
    assert.ok(budget.total_tokens <= 100, JSON.stringify(budget));
    assert.deepEqual(budget.messages.map((m) => m.node), ["n5", "n3"], "the budget uses the summary");

    const node = await call("timeline_node", { timeline_id: tl, node: "n2" });
    assert.equal(node.text, "Where to?");
    assert.deepEqual(node.intent, { tag: "question" });

    const context = await call("timeline_context", { timeline_id: tl, node: "n3" });
    assert.deepEqual(context.messages.map((m) => m.node), ["n1", "n2", "n3"]);

    const branches = await call("timeline_branches", { timeline_id: tl });
    assert.deepEqual(branches.branches.map((b) => b.name), ["main", "alternative"]);

    assert.deepEqual(
      await call("timeline_summarize", { timeline_id: tl, from: "n1", to: "n4", summary: "Chose Porto.", tokens: 4 }),
      { node: "n6" },
    );
    assert.deepEqual(await call("timeline_archive_check", { timeline_id: tl, branch: "alternative" }), { eligible: true, reasons: [] });
    assert.deepEqual(await call("timeline_archive_branch", { timeline_id: tl, branch: "alternative" }), { archived: ["n4"] });
    assert.deepEqual(await call("timeline_restore_branch", { timeline_id: tl, branch: "alternative" }), { branch: "alternative", head: "n4", restored: ["n4"] });
    assert.deepEqual(await call("timeline_rename_branch", { timeline_id: tl, name: "alternative", new_name: "porto" }), { renamed: "alternative", to: "porto" });
    const listed = await call("timeline_list", {});
    assert.deepEqual(listed.timelines.map((t) => [t.timeline_id, t.messages]), [[tl, 6]]);
    const info = await call("timeline_db_info", {});
    assert.ok(info.exists && info.timelines === 1 && info.nodes === 6, JSON.stringify(info));

    const found = await call("timeline_search", { query: "trip" });
    assert.deepEqual(found.hits.map((h) => h.node).sort(), ["n1", "n5"], "search");
    const page = await call("timeline_log", { timeline_id: tl, limit: 2 });
    assert.deepEqual(page.messages.map((m) => m.node), ["n3", "n2"], "log");
    assert.ok(page.next_cursor, "log cursor");
    const diff = await call("timeline_diff", { timeline_id: tl, left: "main", right: "n4" });
    assert.equal(diff.ancestor, "n1", "diff ancestor");
    assert.deepEqual(diff.right.messages.map((m) => m.node), ["n4"], "diff right");

    // A failure of the tool arrives as a result with isError and the error's data.
    const failed = await client.callTool({ name: "timeline_context_budget", arguments: { timeline_id: tl, node: "n3", max_tokens: 0 } });
    assert.equal(failed.isError, true, JSON.stringify(failed));
    const error = JSON.parse(failed.content[0].text);
    assert.equal(error.error, "budget infeasible");
    assert.equal(error.data.max_tokens, 0);
    assert.ok(error.data.required_tokens > 0, JSON.stringify(error));
    // A second text block tells the model its ways out, naming MCP tools and arguments only.
    assert.equal(failed.content.length, 2, JSON.stringify(failed));
    assert.ok(failed.content[1].text.includes(`\`max_tokens\` of at least ${error.data.required_tokens}`), failed.content[1].text);
    assert.ok(failed.content[1].text.includes("`timeline_unpin`") && !failed.content[1].text.includes("tl "), failed.content[1].text);
    assert.deepEqual(failed.structuredContent, structured ? error : undefined, "error structuredContent");

    // An argument that breaks the schema: a tool error from 2025-11-25, "invalid params" before.
    if (negotiated >= "2025-11-25") {
      const bad = await client.callTool({ name: "timeline_node", arguments: { timeline_id: tl, node: "x" } });
      assert.equal(bad.isError, true, JSON.stringify(bad));
      assert.ok(bad.content[0].text.includes("invalid argument node"), JSON.stringify(bad));
    } else {
      await assert.rejects(
        client.callTool({ name: "timeline_node", arguments: { timeline_id: tl, node: "x" } }),
        (e) => e instanceof McpError && e.code === -32602,
      );
    }
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
