#!/usr/bin/env python3
"""Acceptance check of Timeline's release binaries (Python standard library only).

1. Builds the release binaries (cargo build --release --locked) unless --skip-build.
2. Runs every conformance case (conformance/cases/*.json) through `tl` and through `tl-mcp`, each on a
   fresh database, with a runner of its own that follows conformance/README.md.
3. Runs an end-to-end tour: the same conversation through both binaries (results must agree), then
   both binaries on one database at once.
4. Writes target/acceptance/summary.json, summary.txt and one log per case and front-end under
   target/acceptance/cases/<front-end>/<case>.log. Exits 1 when anything failed, 2 on a setup problem.

Usage: python3 scripts/acceptance.py [--skip-build] [--bin-dir DIR] [--case SUBSTRING]
                                     [--front-end cli|mcp] [--out DIR]
"""

import argparse
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The clock of a case that sets no TIMELINE_NOW (2026-01-01T00:00:00Z), as in tests/suite/conformance.rs.
CLOCK = "1767225600"
# Guards against a stuck server; not a performance assertion.
STALL_GUARD_SECONDS = 60


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def crate_version():
    in_package = False
    for line in (ROOT / "Cargo.toml").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line.startswith("["):
            in_package = line == "[package]"
        elif in_package and line.startswith("version"):
            return line.split("=", 1)[1].strip().strip('"')
    return ""


class Spec:
    def __init__(self, value):
        self.value = value
        self.ops = {op["name"]: op for op in value["operations"]}
        self.types = value["types"]
        self.errors = value["errors"]
        self.globals = {g["name"]: g["cli_flag"] for g in value["globals"]}
        self.structured_from = value["constants"]["mcp_structured_content_from"]
        self.argument_tool_errors_from = value["constants"]["mcp_argument_errors_as_tool_errors_from"]
        self.latest = value["constants"]["mcp_protocol_versions"][-1]


def dumps(value):
    """Compact JSON as the binaries print it (key order kept, non-ASCII unescaped)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def expected_message(expected, front_end):
    """An expected error message: one string for both front-ends, or {"cli": ..., "mcp": ...}."""
    if isinstance(expected, dict):
        return expected.get(front_end)
    return expected


def text_of(value):
    if isinstance(value, str):
        return value
    return dumps(value)


def cli_argv(spec, op, args, key):
    """The `tl` arguments for an operation given MCP argument names, derived from the spec."""
    argv = []
    rest = []
    if key is not None:
        argv += ["--" + spec.globals["idempotency_key"], key]
    params = {p["name"]: p for p in op["params"]}
    for name, value in args.items():
        if value is None:
            continue
        if name == "timeline_id":
            argv += ["--" + spec.globals["timeline_id"], text_of(value)]
            continue
        param = params.get(name)
        if param is None:
            rest += ["--" + name.replace("_", "-"), text_of(value)]
            continue
        flag = param.get("cli_flag") or param["name"].replace("_", "-")
        kind = spec.types[param["type"]]["kind"]
        if kind == "object" and isinstance(value, dict):
            fields = {f["name"]: f["cli_flag"] for f in spec.types[param["type"]]["fields"]}
            for field, field_value in value.items():
                if field_value is None:
                    continue
                rest += ["--" + fields.get(field, name + "-" + field), text_of(field_value)]
        elif kind == "list" and isinstance(value, list):
            rest += ["--" + flag, ",".join(text_of(v) for v in value)]
        elif kind == "bool" and isinstance(value, bool):
            # A switch: true is the bare flag, false is no flag at all.
            rest += ["--" + flag] if value else []
        else:
            rest += ["--" + flag, text_of(value)]
    # A grouped command ("db info") is one word per argument.
    return argv + op["cli"].split(" ") + rest


def substitute(value, tmpdir, version):
    if isinstance(value, str):
        if value.startswith("{{file:") and value.endswith("}}"):
            return load_json(ROOT / value[len("{{file:"):-2])
        # This runner uses the JSON snapshot engine (db.json) only.
        if value == "{{format_version}}":
            return load_json(ROOT / "spec" / "timeline.json")["constants"]["format_version"]
        return (
            value.replace("{{dir}}", str(tmpdir))
            .replace("{{sep}}", os.sep)
            .replace("{{crate_version}}", version)
            .replace("{{engine}}", "json")
            .replace("{{db_file}}", "db.json")
        )
    if isinstance(value, list):
        return [substitute(v, tmpdir, version) for v in value]
    if isinstance(value, dict):
        # `db info`'s SQLite-only fields are left out on the JSON snapshot engine.
        return {
            k: substitute(v, tmpdir, version)
            for k, v in value.items()
            if v not in ("{{sqlite_log}}", "{{sqlite_version}}")
        }
    return value


def subset(expected, actual):
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and subset(v, actual[k]) for k, v in expected.items()
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(expected) == len(actual)
            and all(subset(e, a) for e, a in zip(expected, actual))
        )
    return type(expected) is type(actual) and expected == actual or (
        # JSON numbers: 1 and 1.0 are the same value.
        isinstance(expected, (int, float))
        and not isinstance(expected, bool)
        and isinstance(actual, (int, float))
        and not isinstance(actual, bool)
        and expected == actual
    )


def same(expected, actual):
    return subset(expected, actual) and subset(actual, expected)


def same_line(line, expected):
    """One line holding exactly the JSON `expected`, key order included."""
    try:
        return line.endswith("\n") and dumps(json.loads(line)) == dumps(expected)
    except ValueError:
        return False


class StepFailure(Exception):
    pass


def base_env(tmpdir, extra):
    env = dict(os.environ)
    for k in ("TIMELINE_DB", "TIMELINE_NOW", "TIMELINE_FAULT_STEP"):
        env.pop(k, None)
    home = Path(tmpdir) / "home"
    home.mkdir(exist_ok=True)
    env["HOME"] = str(home)
    env["USERPROFILE"] = str(home)
    env.update(extra)
    return env


class McpSession:
    def __init__(self, binary, db, tmpdir, env, protocol, log):
        self.log = log
        self.env_key = dict(env)
        self.proc = subprocess.Popen(
            [str(binary), "--db", str(db)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=str(tmpdir),
            env=base_env(tmpdir, env),
        )
        self.lines = queue.Queue()
        self.stderr_chunks = []
        threading.Thread(target=self._pump_stdout, daemon=True).start()
        threading.Thread(target=self._pump_stderr, daemon=True).start()
        self.next_id = 1
        # Before initialize the server follows the latest version.
        self.protocol = load_json(ROOT / "spec" / "timeline.json")["constants"]["mcp_protocol_versions"][-1]
        if protocol is not None:
            response = self.request(
                {
                    "jsonrpc": "2.0",
                    "id": self.fresh_id(),
                    "method": "initialize",
                    "params": {
                        "protocolVersion": protocol,
                        "capabilities": {},
                        "clientInfo": {"name": "acceptance", "version": "1"},
                    },
                }
            )
            try:
                self.protocol = response["result"]["protocolVersion"]
            except (KeyError, TypeError):
                raise StepFailure("initialize gave no protocolVersion: %s" % dumps(response))
            self.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')

    def _pump_stdout(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _pump_stderr(self):
        for chunk in self.proc.stderr:
            self.stderr_chunks.append(chunk)

    def stderr(self):
        return b"".join(self.stderr_chunks).decode("utf-8", "replace")

    def fresh_id(self):
        self.next_id += 1
        return self.next_id - 1

    def send(self, data):
        if len(data) < 2000:
            self.log.append("mcp >> " + data.decode("utf-8", "replace"))
        else:
            self.log.append("mcp >> (%d bytes)" % len(data))
        try:
            self.proc.stdin.write(data + b"\n")
            self.proc.stdin.flush()
        except OSError as e:
            raise StepFailure("cannot write to tl-mcp (%s); stderr: %s" % (e, self.stderr()))

    def read(self):
        try:
            line = self.lines.get(timeout=STALL_GUARD_SECONDS)
        except queue.Empty:
            line = None
        if line is None:
            raise StepFailure("tl-mcp sent no response (exited or stalled); stderr: %s" % self.stderr())
        text = line.decode("utf-8", "replace")
        self.log.append("mcp << " + text.rstrip("\n"))
        try:
            return json.loads(text)
        except ValueError as e:
            raise StepFailure("tl-mcp wrote a line that is not JSON (%s): %r" % (e, text))

    def request(self, request):
        self.send(dumps(request).encode("utf-8"))
        response = self.read()
        if not isinstance(response, dict) or response.get("id") != request.get("id"):
            raise StepFailure("response does not answer id %r: %s" % (request.get("id"), dumps(response)))
        return response

    def expect_silence(self):
        probe = "silence-probe-%d" % self.fresh_id()
        self.send(dumps({"jsonrpc": "2.0", "id": probe, "method": "ping"}).encode("utf-8"))
        response = self.read()
        if not isinstance(response, dict) or response.get("id") != probe:
            raise StepFailure("expected no response, got %s" % dumps(response))

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class CaseRunner:
    def __init__(self, spec, case, front_end, bins, version):
        self.spec = spec
        self.case = case
        self.fe = front_end
        self.bins = bins
        self.version = version
        self.log = []
        self.mcp = None

    def run(self):
        tmp = tempfile.mkdtemp(prefix="timeline-acceptance-")
        self.tmp = Path(tmp)
        self.db = self.tmp / self.case.get("db_path", "db.json")
        try:
            for i, raw_step in enumerate(self.case["steps"], 1):
                only = raw_step.get("only")
                if only is not None and only != self.fe:
                    continue
                step = substitute(raw_step, self.tmp, self.version)
                self.log.append("-- step %d: %s" % (i, step.get("op") or step.get("note") or "raw"))
                before = self.db_bytes()
                try:
                    if "op" in step:
                        self.op_step(step)
                    elif self.fe == "mcp":
                        self.raw_step(step)
                    else:
                        raise StepFailure('a raw step needs "only": "mcp"')
                    if step.get("expect_db_unchanged") and self.db_bytes() != before:
                        raise StepFailure("the database file changed but the step expects it unchanged")
                    if step.get("expect_db_exists") is False and self.db.exists():
                        raise StepFailure("the database file exists but the step expects none")
                except StepFailure as e:
                    self.log.append("FAIL: %s" % e)
                    return "step %d (%s): %s" % (i, step.get("op") or step.get("note") or "raw", e)
            return None
        finally:
            if self.mcp is not None:
                self.mcp.close()
                self.mcp = None
            shutil.rmtree(tmp, ignore_errors=True)

    def db_bytes(self):
        try:
            return self.db.read_bytes()
        except OSError:
            return None

    def env_for(self, step):
        # A fixed clock unless the case sets one, as tests/suite/conformance.rs does, so creation times in
        # results are exact.
        env = {"TIMELINE_NOW": CLOCK}
        env.update({k: text_of(v) for k, v in self.case.get("env", {}).items()})
        env.update({k: text_of(v) for k, v in step.get("env", {}).items()})
        return env

    def session(self, env):
        if self.mcp is not None and self.mcp.env_key != env:
            self.mcp.close()
            self.mcp = None
        if self.mcp is None:
            protocol = None
            if self.case.get("mcp_initialize", True):
                protocol = self.case.get("mcp_protocol_version", "2025-11-25")
            self.mcp = McpSession(self.bins["mcp"], self.db, self.tmp, env, protocol, self.log)
        return self.mcp

    def op_step(self, step):
        op = self.spec.ops.get(step["op"])
        if op is None:
            raise StepFailure("unknown operation %s" % step["op"])
        args = step.get("args", {})
        key = step.get("key")
        env = self.env_for(step)
        expect = step.get("expect")
        if self.fe == "cli":
            argv = cli_argv(self.spec, op, args, key)
            self.log.append("tl " + " ".join(json.dumps(a, ensure_ascii=False) for a in argv))
            proc = subprocess.run(
                [str(self.bins["cli"]), "--db", str(self.db)] + argv,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                cwd=str(self.tmp),
                env=base_env(self.tmp, env),
            )
            out = proc.stdout.decode("utf-8", "replace")
            err = proc.stderr.decode("utf-8", "replace")
            self.log.append("exit %d stdout %r stderr %r" % (proc.returncode, out, err))
            if proc.returncode == 0:
                if err:
                    raise StepFailure("success with output on stderr")
                # Compared as Python prints it: the bytes of a number (1e-6, 1e-06) are the
                # serializer's choice, its value is not.
                if expect and "result" in expect and not same_line(out, expect["result"]):
                    raise StepFailure("expected stdout %s" % dumps(expect["result"]))
                try:
                    outcome = ("ok", json.loads(out))
                except ValueError:
                    raise StepFailure("stdout is not JSON")
            else:
                if out:
                    raise StepFailure("failure with output on stdout")
                try:
                    value = json.loads(err)
                except ValueError:
                    raise StepFailure("stderr is not one JSON object")
                if expect and "error" in expect:
                    wanted = {"error": expected_message(expect["error"], "cli")}
                    if "data" in expect:
                        wanted["data"] = expect["data"]
                    if not same_line(err, wanted):
                        raise StepFailure("expected stderr %s" % dumps(wanted))
                outcome = ("err", proc.returncode, value.get("error"), value.get("data"))
        else:
            tool = op.get("mcp")
            if tool is None:
                raise StepFailure('%s has no MCP tool; mark the step "only": "cli"' % op["name"])
            arguments = dict(args)
            params = {"name": tool}
            placement = step.get("key_placement", "params")
            if key is not None:
                if placement in ("arguments", "both"):
                    arguments["idempotency_key"] = key
                if placement in ("params", "both"):
                    params["idempotency_key"] = key
            params["arguments"] = arguments
            session = self.session(env)
            response = session.request(
                {"jsonrpc": "2.0", "id": session.fresh_id(), "method": "tools/call", "params": params}
            )
            if response.get("jsonrpc") != "2.0":
                raise StepFailure("response without jsonrpc 2.0")
            if "error" in response:
                error = response["error"] or {}
                outcome = ("err", error.get("code"), error.get("message"), error.get("data"))
            else:
                result = response.get("result") or {}
                try:
                    value = json.loads(result["content"][0]["text"])
                except (KeyError, IndexError, TypeError, ValueError):
                    raise StepFailure("no JSON in result.content[0].text")
                if session.protocol >= self.spec.structured_from:
                    if not same(value, result.get("structuredContent")):
                        raise StepFailure("structuredContent differs from the text result")
                elif "structuredContent" in result:
                    raise StepFailure("structuredContent before %s" % self.spec.structured_from)
                if result.get("isError") is True:
                    # A tool error: no JSON-RPC code.
                    outcome = ("err", None, value.get("error"), value.get("data"))
                elif op.get("mcp_result_key"):
                    key = op["mcp_result_key"]
                    if not isinstance(value, dict) or key not in value:
                        raise StepFailure("the list result is not wrapped under %r" % key)
                    outcome = ("ok", value[key])
                else:
                    outcome = ("ok", value)
        self.check(expect, outcome)

    def check_form(self, kind, code, message):
        """The CLI exits with the kind's code; over MCP a failure is a tool error (code None), and only
        an argument error may be a JSON-RPC -32602 error, before 2025-11-25."""
        if kind is not None and kind not in self.spec.errors:
            raise StepFailure("unknown error_kind %s" % kind)
        invalid = self.spec.errors["invalid_argument"]
        if self.fe == "cli":
            if kind is not None and code != self.spec.errors[kind]["exit_code"]:
                raise StepFailure("expected error kind %s, got code %s: %s" % (kind, code, message))
            if kind is None and code == invalid["exit_code"]:
                raise StepFailure("expected a domain error, got invalid argument: %s" % message)
            return
        if code is None:
            return
        protocol = self.mcp.protocol if self.mcp is not None else self.spec.latest
        if kind == "invalid_argument" and code == invalid["mcp_code"] and protocol < self.spec.argument_tool_errors_from:
            return
        raise StepFailure("expected a tool error (isError) for %s, got JSON-RPC error %s: %s" % (kind or "a domain error", code, message))

    def check(self, expect, outcome):
        if outcome[0] == "ok":
            if expect is None or expect == {}:
                return
            if "result_subset" in expect:
                if not subset(expect["result_subset"], outcome[1]):
                    raise StepFailure("expected a result containing %s\n got %s" % (dumps(expect["result_subset"]), dumps(outcome[1])))
                return
            if "result" not in expect:
                raise StepFailure("expected an error, got result %s" % dumps(outcome[1]))
            if not same(expect["result"], outcome[1]):
                raise StepFailure("expected result %s\n got %s" % (dumps(expect["result"]), dumps(outcome[1])))
            return
        _, code, message, data = outcome
        if expect is None or "result" in expect:
            raise StepFailure("expected success, got error %s: %s %s" % (code, message, dumps(data)))
        self.check_form(expect.get("error_kind"), code, message)
        if "error" in expect:
            wanted = expected_message(expect["error"], self.fe)
            if message != wanted:
                raise StepFailure("expected error %r\n got %r" % (wanted, message))
            if not same(expect.get("data"), data):
                raise StepFailure("expected data %s, got %s" % (dumps(expect.get("data")), dumps(data)))

    def raw_step(self, step):
        session = self.session(self.env_for(step))
        if "raw" in step:
            raw = step["raw"]
            data = (raw if isinstance(raw, str) else dumps(raw)).encode("utf-8")
        elif "raw_hex" in step:
            data = bytes.fromhex("".join(step["raw_hex"].split()))
        elif "raw_filler_bytes" in step:
            data = b"x" * int(step["raw_filler_bytes"])
        else:
            raise StepFailure('a step needs "op" or "raw"')
        session.send(data)
        if "expect_response" not in step:
            raise StepFailure("a raw step needs expect_response (null for none)")
        expected = step["expect_response"]
        if expected is None:
            session.expect_silence()
            return
        actual = session.read()
        ok = subset(expected, actual) if step.get("match") == "subset" else same(expected, actual)
        if not ok:
            raise StepFailure("expected response %s\n got %s" % (dumps(expected), dumps(actual)))


def load_cases():
    cases = []
    for path in sorted((ROOT / "conformance" / "cases").glob("*.json")):
        case = load_json(path)
        case["_file"] = path.name
        cases.append(case)
    return cases


def run_conformance(spec, bins, version, out, only_case, front_ends):
    results = {}
    for fe in front_ends:
        (out / "cases" / fe).mkdir(parents=True, exist_ok=True)
        passed, failed = [], []
        for case in load_cases():
            if only_case and only_case not in case["name"]:
                continue
            if fe not in case.get("front_ends", ["cli", "mcp"]):
                continue
            runner = CaseRunner(spec, case, fe, bins, version)
            try:
                problem = runner.run()
            except (StepFailure, OSError) as e:
                problem = str(e)
            log = "\n".join(runner.log) + "\n"
            log += "RESULT: %s\n" % ("pass" if problem is None else "FAIL " + problem)
            (out / "cases" / fe / (case["name"] + ".log")).write_text(log, encoding="utf-8")
            if problem is None:
                passed.append(case["name"])
            else:
                failed.append({"case": case["name"], "problem": problem})
        results[fe] = {"passed": len(passed), "failed": failed}
        print("conformance via %s: %d passed, %d failed" % (fe, len(passed), len(failed)))
        for f in failed:
            print("  FAIL %s: %s" % (f["case"], f["problem"].splitlines()[0]))
    return results


# The tour: one conversation, exactly as a user would drive it. Every step must succeed, and the two
# binaries must produce the same results.
TOUR = [
    ("create", {}),
    ("append", {"role": "system", "text": "You are a travel planner."}),
    ("append", {"role": "user", "text": "Plan three days in Kyoto.", "intent": {"tag": "goal", "note": "the trip"}}),
    ("append", {"role": "assistant", "text": "Day 1: Fushimi Inari. Day 2: Arashiyama. Day 3: Gion.", "tokens": 40}),
    ("pin", {"node": "n2"}),
    ("fork", {"node": "n3", "name": "budget-trip"}),
    ("switch", {"name": "budget-trip"}),
    ("append", {"role": "user", "text": "Make it cheaper.", "tokens": 5}),
    ("context", {"node": "n4"}),
    ("summarize", {"from": "n1", "to": "n1", "summary": "A travel-planner persona.", "tokens": 6}),
    ("context_budget", {"node": "n4", "max_tokens": 60}),
    ("branches", {}),
    ("node", {"node": "n2"}),
    ("archive_check", {"branch": "main"}),
    ("switch", {"name": "main"}),
    ("summarize", {"from": "n2", "to": "n3", "summary": "Kyoto plan agreed.", "tokens": 4}),
    ("unpin", {"node": "n2"}),
    ("context_budget", {"node": "n4", "max_tokens": 1000}),
    ("context", {"node": "n6"}),
    ("node", {"node": "n6"}),
]


def run_tour(spec, bins, out):
    """The same conversation through tl and through tl-mcp; then both on one database."""
    transcripts = {}
    problems = []
    for fe in ("cli", "mcp"):
        steps = []
        for op, args in TOUR:
            args = dict(args)
            if op != "create":
                args["timeline_id"] = "tl0"
            steps.append({"op": op, "args": args})
        case = {"name": "tour", "steps": steps}
        runner = CaseRunner(spec, case, fe, bins, crate_version())
        results = []
        original_check = runner.check

        def record(expect, outcome, results=results, original_check=original_check):
            results.append(outcome)
            original_check(expect, outcome)

        runner.check = record
        problem = runner.run()
        (out / ("tour-%s.log" % fe)).write_text("\n".join(runner.log) + "\n", encoding="utf-8")
        if problem:
            problems.append("%s: %s" % (fe, problem))
        transcripts[fe] = results
    if not problems and [r for r in transcripts["cli"]] != [r for r in transcripts["mcp"]]:
        for i, (a, b) in enumerate(zip(transcripts["cli"], transcripts["mcp"])):
            if TOUR[i][0] == "archive_check" and a[0] == b[0] == "ok":
                # Its reasons name the next step in each front-end's words (`tl summarize`,
                # `timeline_summarize`): compare the verdict and how many reasons there are.
                a = (a[0], {"eligible": a[1].get("eligible"), "reasons": len(a[1].get("reasons", []))})
                b = (b[0], {"eligible": b[1].get("eligible"), "reasons": len(b[1].get("reasons", []))})
            if not (a[0] == b[0] == "ok" and same(a[1], b[1])):
                problems.append("step %d (%s) differs: tl %s, tl-mcp %s" % (i + 1, TOUR[i][0], a, b))
                break

    # Both binaries on one database: a change by one is seen by the other at once.
    tmp = Path(tempfile.mkdtemp(prefix="timeline-acceptance-mixed-"))
    log = []
    try:
        db = tmp / "db.json"
        env = base_env(tmp, {})

        def tl(*argv):
            proc = subprocess.run([str(bins["cli"]), "--db", str(db)] + list(argv), capture_output=True, env=env)
            log.append("tl %s -> %d %s %s" % (" ".join(argv), proc.returncode, proc.stdout, proc.stderr))
            if proc.returncode != 0:
                raise StepFailure("tl %s failed: %s" % (" ".join(argv), proc.stderr))
            return json.loads(proc.stdout)

        tl("create")
        tl("append", "--role", "user", "--text", "from the CLI", "--tokens", "3")
        session = McpSession(bins["mcp"], db, tmp, {}, "2025-11-25", log)
        try:

            def call(name, arguments):
                response = session.request(
                    {"jsonrpc": "2.0", "id": session.fresh_id(), "method": "tools/call",
                     "params": {"name": name, "arguments": arguments}}
                )
                if "error" in response or response["result"].get("isError"):
                    raise StepFailure("%s failed: %s" % (name, dumps(response)))
                return json.loads(response["result"]["content"][0]["text"])

            seen = call("timeline_context", {"timeline_id": "tl0", "node": "n1"})
            if seen != {"messages": [{"node": "n1", "role": "user", "text": "from the CLI", "tokens": 3}]}:
                raise StepFailure("tl-mcp did not see the CLI's message: %s" % dumps(seen))
            added = call("timeline_append", {"timeline_id": "tl0", "role": "assistant", "text": "from MCP", "tokens": 2})
            if added != {"node": "n2"}:
                raise StepFailure("tl-mcp append gave %s" % dumps(added))
            both = tl("context", "--node", "n2")
            if [m["text"] for m in both] != ["from the CLI", "from MCP"]:
                raise StepFailure("tl did not see the MCP message: %s" % dumps(both))
            third = tl("append", "--role", "user", "--text", "again from the CLI", "--tokens", "4")
            seen = call("timeline_branches", {"timeline_id": "tl0"})
            if seen != {"branches": [{"name": "main", "head": third["node"], "current": True}]}:
                raise StepFailure("tl-mcp did not see the CLI's new head: %s" % dumps(seen))
        finally:
            session.close()
    except (StepFailure, OSError, ValueError) as e:
        problems.append("mixed: %s" % e)
    finally:
        (out / "tour-mixed.log").write_text("\n".join(str(l) for l in log) + "\n", encoding="utf-8")
        shutil.rmtree(tmp, ignore_errors=True)
    print("tour: %s" % ("ok" if not problems else "FAILED"))
    for p in problems:
        print("  " + p.splitlines()[0])
    return {"ok": not problems, "problems": problems}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--skip-build", action="store_true", help="use the binaries already built")
    parser.add_argument("--bin-dir", default=None, help="where tl and tl-mcp are (default target/release)")
    parser.add_argument("--case", default=None, help="run only cases whose name contains this")
    parser.add_argument("--front-end", choices=["cli", "mcp"], action="append", help="restrict (repeatable)")
    parser.add_argument("--out", default=None, help="output directory (default target/acceptance)")
    options = parser.parse_args()

    out = Path(options.out) if options.out else ROOT / "target" / "acceptance"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    started = time.time()
    summary = {"ok": False, "build": None, "conformance": None, "tour": None}

    if not options.skip_build:
        print("building release binaries: cargo build --release --locked")
        proc = subprocess.run(["cargo", "build", "--release", "--locked"], cwd=str(ROOT), capture_output=True)
        (out / "build.log").write_bytes(proc.stdout + proc.stderr)
        summary["build"] = {"ok": proc.returncode == 0, "log": "build.log"}
        if proc.returncode != 0:
            print("build failed; see %s" % (out / "build.log"))
            write_summary(out, summary, started)
            return 1
    bin_dir = (Path(options.bin_dir) if options.bin_dir else ROOT / "target" / "release").resolve()
    suffix = ".exe" if os.name == "nt" else ""
    bins = {"cli": bin_dir / ("tl" + suffix), "mcp": bin_dir / ("tl-mcp" + suffix)}
    for path in bins.values():
        if not path.exists():
            print("missing binary %s (build it or pass --bin-dir)" % path)
            return 2

    spec = Spec(load_json(ROOT / "spec" / "timeline.json"))
    front_ends = options.front_end or ["cli", "mcp"]
    summary["conformance"] = run_conformance(spec, bins, crate_version(), out, options.case, front_ends)
    if options.case is None and options.front_end is None:
        summary["tour"] = run_tour(spec, bins, out)
    ok = all(not r["failed"] for r in summary["conformance"].values())
    ok = ok and (summary["tour"] is None or summary["tour"]["ok"])
    summary["ok"] = ok
    write_summary(out, summary, started)
    print("acceptance: %s (details in %s)" % ("PASSED" if ok else "FAILED", out))
    return 0 if ok else 1


def write_summary(out, summary, started):
    summary["seconds"] = round(time.time() - started, 1)
    (out / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    lines = ["Timeline acceptance: %s" % ("PASSED" if summary["ok"] else "FAILED")]
    if summary["build"] is not None:
        lines.append("build: %s" % ("ok" if summary["build"]["ok"] else "FAILED (see build.log)"))
    for fe, result in (summary["conformance"] or {}).items():
        lines.append("conformance via %s: %d passed, %d failed" % (fe, result["passed"], len(result["failed"])))
        for failure in result["failed"]:
            lines.append("  FAIL %s: %s" % (failure["case"], failure["problem"].splitlines()[0]))
    if summary["tour"] is not None:
        lines.append("tour: %s" % ("ok" if summary["tour"]["ok"] else "FAILED"))
        for problem in summary["tour"]["problems"]:
            lines.append("  " + problem.splitlines()[0])
    lines.append("per-case logs: cases/<front-end>/<case>.log")
    (out / "summary.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
