#!/usr/bin/env python3
"""Build the fuzzers' seed corpora from the conformance cases (Python standard library only).

Writes fuzz/corpus/<target>/ (git-ignored):
  mcp_frames  one seed per case that runs over MCP: its tools/call and raw lines, one per line, after a
              leading newline byte (an even first byte makes the target send initialize first)
  cli_args    one seed per case that runs through the CLI: its commands separated by 0x01, arguments by NUL
  db_load     database files: tests/fixtures/*.json, examples/*.timeline.json and, when a tl binary is
              found (target/debug or target/release, or --tl PATH), the database each CLI case leaves
  budget      hand-made planner inputs in the target's explicit format (see fuzz_targets/budget.rs)
and, for every target but budget, the adversarial shapes of issue 12 (adversarial_seeds).

Usage: python3 fuzz/build_corpus.py [--tl PATH]
"""

import argparse
import hashlib
import json
import shutil
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

FUZZ = Path(__file__).resolve().parent
ROOT = FUZZ.parent
sys.path.insert(0, str(ROOT / "scripts"))
import acceptance  # noqa: E402  (the conformance runner's spec-driven CLI translation)


def write(target, data):
    directory = FUZZ / "corpus" / target
    directory.mkdir(parents=True, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    (directory / name).write_bytes(data)


def op_steps(case, front_end):
    for step in case["steps"]:
        if "op" in step and step.get("only") in (None, front_end):
            yield step


def mcp_seeds(spec, case):
    lines = []
    request_id = 1
    for step in case["steps"]:
        if step.get("only") not in (None, "mcp"):
            continue
        if "op" in step:
            op = spec.ops[step["op"]]
            if op.get("mcp") is None:
                continue
            params = {"name": op["mcp"], "arguments": step.get("args", {})}
            if "key" in step:
                params["idempotency_key"] = step["key"]
            lines.append(acceptance.dumps(
                {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
            ).encode("utf-8"))
            request_id += 1
        elif "raw" in step:
            raw = step["raw"]
            lines.append((raw if isinstance(raw, str) else acceptance.dumps(raw)).encode("utf-8"))
        elif "raw_hex" in step:
            lines.append(bytes.fromhex("".join(step["raw_hex"].split())))
    if lines:
        write("mcp_frames", b"\n" + b"\n".join(lines) + b"\n")


def cli_seed(spec, case):
    commands = []
    for step in op_steps(case, "cli"):
        argv = acceptance.cli_argv(spec, spec.ops[step["op"]], step.get("args", {}), step.get("key"))
        commands.append(b"\0".join(a.replace("{{dir}}", "x").encode("utf-8") for a in argv))
    if commands:
        write("cli_args", b"\1".join(commands))


def db_seeds(spec, cases, tl):
    for path in sorted((ROOT / "tests" / "fixtures").glob("*.json")) + sorted((ROOT / "examples").glob("*.timeline.json")):
        write("db_load", path.read_bytes())
    if tl is None:
        print("no tl binary found: db_load seeds come from fixtures only (build with cargo build)")
        return
    version = acceptance.crate_version()
    for case in cases:
        if "cli" not in case.get("front_ends", ["cli", "mcp"]) or "db_path" in case:
            continue
        tmp = Path(tempfile.mkdtemp(prefix="timeline-corpus-"))
        try:
            db = tmp / "db.json"
            for step in op_steps(case, "cli"):
                step = acceptance.substitute(step, tmp, version)
                argv = acceptance.cli_argv(spec, spec.ops[step["op"]], step.get("args", {}), step.get("key"))
                env = acceptance.base_env(tmp, {**case.get("env", {}), **step.get("env", {})})
                subprocess.run([str(tl), "--db", str(db)] + argv, capture_output=True, env=env,
                               stdin=subprocess.DEVNULL, cwd=str(tmp))
            if db.exists():
                write("db_load", db.read_bytes())
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


def budget_seed(reserve, max_tokens, items, candidates=()):
    data = bytes([0xA5, reserve]) + struct.pack("<Q", max_tokens) + bytes([len(items)])
    for tokens, mandatory in items:
        data += struct.pack("<I", tokens) + bytes([1 if mandatory else 0])
    for start, end, tokens in candidates:
        data += bytes([start, end]) + struct.pack("<I", tokens)
    write("budget", data)


def budget_seeds():
    big = 0xFFFFFFFF  # u64::MAX in the explicit format
    # The digest's counterexample (B4), infeasible at 1 and exact at 65.
    budget_seed(32, 1, [(1000, False), (1, True), (1000, False), (0, True)])
    budget_seed(32, 65, [(1000, False), (1, True), (1000, False), (0, True)])
    budget_seed(32, 168, [(5, False), (40, False), (40, False), (40, False), (40, False), (3, True)])
    budget_seed(32, 167, [(5, False), (40, False), (40, False), (40, False), (40, False), (3, True)])
    budget_seed(32, 41, [(100, False), (100, False), (100, False), (1, True)], [(0, 2, 40)])
    budget_seed(32, 60, [(5, False), (40, True), (40, False), (40, False), (40, False), (3, True)], [(2, 4, 10), (1, 3, 5)])
    budget_seed(32, 2**64 - 1, [(big, False), (big, False), (1, True)])
    budget_seed(0, 0, [(0, False), (0, True)])
    budget_seed(255, 300, [(7, False)] * 40 + [(1, True)], [(0, 9, 3), (10, 19, 3), (5, 30, 2)])


# Hostile text for terminals (issue 12, item 6): ESC sequences (clear, retitle), BEL, DEL, C1 (NEL and
# the one-byte CSI) and bidirectional overrides.
HOSTILE = "\u001b[2J\u001b]0;pwned\u0007\u007f\u0085\u009b31m\u202e\u2066\u061c"


def adversarial_seeds():
    """Shapes from issue 12: hostile method names and ids for the MCP loop, a comb-shaped tree (a
    placeholder beside every other message after one budget over a pinned history) exported as ASCII,
    and a 2,000-node comb database for the loader."""
    init = '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}'
    method = json.dumps(HOSTILE)
    lines = [
        init,
        '{"jsonrpc":"2.0","method":%s}' % method,
        '{"jsonrpc":"2.0","id":1,"method":%s}' % method,
        '{"jsonrpc":"2.0","id":%s,"method":"ping"}' % json.dumps(HOSTILE),
        '{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}',
        '{"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}',
        '{"jsonrpc":"2.0","id":1e3,"method":"ping"}',
        '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":%s}}' % method,
        '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"timeline_create","arguments":{}}}',
        '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"timeline_append","arguments":'
        '{"timeline_id":"tl0","role":"user","text":%s}}}' % method,
        '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"timeline_fork","arguments":'
        '{"timeline_id":"tl0","node":"n1","name":%s}}}' % method,
        '{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"timeline_branches","arguments":{"timeline_id":"tl0"}}}',
    ]
    write("mcp_frames", b"\n" + "\n".join(lines).encode("utf-8") + b"\n")

    commands = [["create"]]
    for k in range(1, 15):
        commands.append(["append", "--role", "user", "--text", "message %d %s" % (k, HOSTILE),
                         "--tokens", "1" if k % 2 == 0 else "100"])
    for k in range(2, 15, 2):
        commands.append(["pin", "--node", "n%d" % k])
    commands.append(["budget", "--node", "n14", "--max", "231"])
    commands.append(["fork", "--node", "n3", "--name", "b" + HOSTILE])
    commands.append(["branches"])
    commands.append(["export", "--format", "ascii"])
    write("cli_args", b"\1".join(b"\0".join(a.encode("utf-8") for a in c) for c in commands))

    chain = 1000
    nodes = [{"id": "n%d" % k, "parent": "n%d" % (k - 1), "role": "user", "text": "chain %d" % k,
              "tokens": 1} for k in range(1, chain + 1)]
    nodes += [{"id": "n%d" % (chain + k), "parent": "n%d" % k, "role": "assistant",
               "text": "side %d" % k, "tokens": 1} for k in range(1, chain + 1)]
    comb = {"format_version": 1, "next_timeline": 1, "timelines": [{
        "id": "tl0", "next_node": 2 * chain + 1, "current_branch": "main",
        "branches": [{"name": "main", "head": "n%d" % chain}], "nodes": nodes}]}
    write("db_load", json.dumps(comb, separators=(",", ":")).encode("utf-8"))


def find_tl(explicit):
    if explicit:
        return Path(explicit)
    for profile in ("debug", "release"):
        path = ROOT / "target" / profile / "tl"
        if path.exists():
            return path
    return None


def main():
    parser = argparse.ArgumentParser(description="Build the fuzz seed corpora from the conformance cases.")
    parser.add_argument("--tl", default=None, help="the tl binary used to produce database seeds")
    options = parser.parse_args()
    spec = acceptance.Spec(acceptance.load_json(ROOT / "spec" / "timeline.json"))
    cases = acceptance.load_cases()
    for case in cases:
        if "mcp" in case.get("front_ends", ["cli", "mcp"]):
            mcp_seeds(spec, case)
        if "cli" in case.get("front_ends", ["cli", "mcp"]):
            cli_seed(spec, case)
    db_seeds(spec, cases, find_tl(options.tl))
    budget_seeds()
    adversarial_seeds()
    for target in sorted((FUZZ / "corpus").iterdir()):
        print("%s: %d seeds" % (target.name, len(list(target.iterdir()))))


if __name__ == "__main__":
    main()
