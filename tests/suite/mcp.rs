//! The MCP server (P1–P6, I3, G4, G7): the real `tl-mcp` binary over pipes, one JSON line in, one JSON
//! line out, compared byte for byte, in each of the four protocol versions.
//!
//! A test never waits for "no answer" by time: after a message that must not be answered it sends a
//! `ping` and checks that the very next line is the ping's answer.

use crate::common;

use common::{Db, McpSession as Server, TL_MCP};
use serde_json::{Value, json};
use std::io::Write;
use std::process::Stdio;
use timeline::spec::spec;

const VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
const OLD: [&str; 2] = ["2024-11-05", "2025-03-26"];
const NEW: [&str; 2] = ["2025-06-18", "2025-11-25"];
const LIMIT: usize = 8 * 1024 * 1024;

/// The text result of a tool, as `content` (and `structuredContent` when given).
fn tool_ok(id: u64, text: &str, structured: bool) -> String {
    let content = json!([{"type": "text", "text": text}]);
    if structured {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":{content},"structuredContent":{text}}}}}"#
        )
    } else {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":{content}}}}}"#)
    }
}

/// A tool execution error: `{"error", "data"?}` as text, as `structuredContent` when `structured`,
/// and `isError: true`.
fn tool_err(id: u64, error: &Value, structured: bool) -> String {
    let content = json!([{"type": "text", "text": error.to_string()}]);
    if structured {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":{content},"structuredContent":{error},"isError":true}}}}"#
        )
    } else {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":{content},"isError":true}}}}"#)
    }
}

/// An infeasible budget as a tool error: the object `tl` prints, then the ways out for the model.
fn budget_err(id: u64, required: u64, max: u64, structured: bool) -> String {
    let error = json!({"error": "budget infeasible", "data": {"required_tokens": required, "max_tokens": max}});
    let advice = format!(
        "The smallest layout keeps the node and every pinned message verbatim and needs {required} tokens; max_tokens is {max}. Ways out: call `timeline_context_budget` again with `max_tokens` of at least {required}; unpin messages with `timeline_unpin`; or write shorter summaries of older ranges with `timeline_summarize` (a smaller `tokens`), then call it again."
    );
    let content =
        json!([{"type": "text", "text": error.to_string()}, {"type": "text", "text": advice}]);
    if structured {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":{content},"structuredContent":{error},"isError":true}}}}"#
        )
    } else {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":{content},"isError":true}}}}"#)
    }
}

/// An argument error: a JSON-RPC -32602 error up to 2025-06-18, a tool error from 2025-11-25.
fn argument_error(id: u64, version: &str, message: &str) -> String {
    if version >= "2025-11-25" {
        tool_err(id, &json!({ "error": message }), true)
    } else {
        error(&id.to_string(), -32602, message)
    }
}

fn error(id: &str, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": serde_json::from_str::<Value>(id).unwrap(), "error": {"code": code, "message": message}})
        .to_string()
}

fn tools_json() -> Value {
    serde_json::from_str(include_str!("../../generated/tools.json")).unwrap()
}

// ---- P3: initialize, versions, ping ----

// ---- P1, P2: framing and protocol errors ----

// ---- P4: batches ----

// ---- P3: notifications never run tools ----

// ---- P5: tools/list ----

// ---- P6: tool results and errors ----

// ---- I3: idempotency keys ----

// ---- G4, S1: database path and concurrent CLI use ----

// ---- command line ----

// ---- robustness ----

/// A small deterministic generator (xorshift64*), so the test is the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

// ---- G7: the same operations through tl and tl-mcp give the same JSON ----

// Every test below runs on both storage engines (json::… and sqlite::…).
on_every_engine! {
    #[test]
    fn initialize_negotiates_each_known_version_and_answers_the_latest_for_unknown_ones() {
        let db = Db::new();
        for version in VERSIONS {
            let server = Server::init(&db, version);
            assert_eq!(server.finish().0, 0);
        }
        for unknown in ["2023-01-01", "2099-12-31", "", "latest"] {
            let mut server = Server::open(&db);
            server.initialize(unknown, "2025-11-25");
            server.assert_silent();
            assert_eq!(server.finish().0, 0);
        }
        // Nothing was written to the database by a handshake.
        assert!(!db.path.exists());
    }

    #[test]
    fn ping_answers_an_empty_result_with_the_same_id() {
        let db = Db::new();
        let mut server = Server::init(&db, "2025-11-25");
        server.ask(
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
        );
        server.ask(
            r#"{"jsonrpc":"2.0","id":"abc","method":"ping","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":"abc","result":{}}"#,
        );
        server.ask(
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":18446744073709551615,"result":{}}"#,
        );
        server.ask(
            r#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":-9223372036854775808,"result":{}}"#,
        );
        let (code, rest, _) = server.finish();
        assert_eq!((code, rest.as_str()), (0, ""));
    }

    #[test]
    fn ping_works_before_initialize_and_a_second_initialize_is_refused() {
        let db = Db::new();
        let mut server = Server::open(&db);
        server.assert_silent();
        server.initialize("2025-03-26", "2025-03-26");
        server.ask(
            r#"{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#,
            &error(
                "5",
                -32600,
                "Invalid Request: initialize was already answered on this connection (protocol version 2025-03-26); start a new tl-mcp process to negotiate again",
            ),
        );
    }

    #[test]
    fn initialize_needs_a_protocol_version_string() {
        let db = Db::new();
        let mut server = Server::open(&db);
        server.ask(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            &error(
                "1",
                -32602,
                "Invalid params: initialize needs params.protocolVersion, such as \"2025-11-25\"",
            ),
        );
        server.ask(
            r#"{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":20250618}}"#,
            &error(
                "2",
                -32602,
                "Invalid params: protocolVersion must be a string such as \"2025-11-25\", got an integer",
            ),
        );
        server.ask(
            r#"{"jsonrpc":"2.0","id":3,"method":"initialize"}"#,
            &error(
                "3",
                -32602,
                "Invalid params: initialize needs params.protocolVersion, such as \"2025-11-25\"",
            ),
        );
        // A failed initialize negotiates nothing: a proper one still works.
        server.initialize("2024-11-05", "2024-11-05");
    }

    #[test]
    fn an_oversize_frame_is_discarded_and_the_next_request_succeeds() {
        let db = Db::new();
        let mut server = Server::init(&db, "2025-11-25");
        // 8 MiB + 1 bytes of a JSON string: valid JSON, one byte too long.
        let mut big = Vec::with_capacity(LIMIT + 2);
        big.extend_from_slice(br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":""#);
        let tail = br#""}}"#;
        big.resize(LIMIT + 1 - tail.len(), b'a');
        big.extend_from_slice(tail);
        assert_eq!(big.len(), LIMIT + 1);
        big.push(b'\n');
        server.send_raw(&big);
        assert_eq!(
            server.recv(),
            error(
                "null",
                -32600,
                "Invalid Request: the message is 8388609 bytes long, over the limit of 8388608 bytes (8 MiB) per line; it was discarded"
            )
        );
        server.ask(
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
        );
        // Exactly the limit is accepted, even with a CR before the LF.
        let mut exact = big[..LIMIT - tail.len()].to_vec();
        exact.extend_from_slice(tail);
        exact.extend_from_slice(b"\r\n");
        server.send_raw(&exact);
        assert_eq!(server.recv(), r#"{"jsonrpc":"2.0","id":1,"result":{}}"#);
        // A much larger line with no JSON at all is skipped the same way.
        let mut huge = vec![b'x'; 3 * LIMIT];
        huge.push(b'\n');
        server.send_raw(&huge);
        assert_eq!(
            server.recv(),
            error(
                "null",
                -32600,
                "Invalid Request: the message is 25165824 bytes long, over the limit of 8388608 bytes (8 MiB) per line; it was discarded"
            )
        );
        server.assert_silent();
        let (code, rest, stderr) = server.finish();
        assert_eq!((code, rest.as_str()), (0, ""));
        assert!(stderr.contains("8388609 bytes"), "{stderr}");
    }

    #[test]
    fn invalid_utf8_is_a_parse_error_and_the_server_goes_on() {
        let db = Db::new();
        let mut server = Server::init(&db, "2025-11-25");
        server.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffng\"}\n");
        assert_eq!(
            server.recv(),
            error(
                "null",
                -32700,
                "Parse error: the message is not valid UTF-8 (invalid byte at offset 35)"
            )
        );
        server.ask(
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":2,"result":{}}"#,
        );
    }

    #[test]
    fn invalid_json_is_a_parse_error() {
        let db = Db::new();
        let mut server = Server::init(&db, "2025-11-25");
        server.ask(
            r#"{"jsonrpc":"2.0","id":1,"method":"ping""#,
            &error(
                "null",
                -32700,
                "Parse error: the message is not valid JSON (EOF while parsing an object at line 1 column 39)",
            ),
        );
        server.ask(
            "hello",
            &error(
                "null",
                -32700,
                "Parse error: the message is not valid JSON (expected value at line 1 column 1)",
            ),
        );
        // Nesting deeper than the parser's limit, and numbers out of range, are parse errors, not crashes.
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let answer: Value = server.ask_json(&deep);
        assert_eq!(answer["error"]["code"], -32700, "{answer}");
        assert_eq!(
            answer["error"]["message"],
            "Parse error: the message is not valid JSON (recursion limit exceeded at line 1 column 128)"
        );
        server.ask(
            r#"{"jsonrpc":"2.0","id":1e999,"method":"ping"}"#,
            &error(
                "null",
                -32700,
                "Parse error: the message is not valid JSON (number out of range at line 1 column 27)",
            ),
        );
        // Blank lines carry no message and get no answer.
        server.send("");
        server.send("   \r");
        server.assert_silent();
    }

    #[test]
    fn invalid_requests_are_answered_with_32600() {
        let db = Db::new();
        let mut server = Server::init(&db, "2025-11-25");
        let not_object = "Invalid Request: a message must be a JSON object with \"jsonrpc\": \"2.0\" and a \"method\"";
        for line in ["5", "\"ping\"", "null", "true"] {
            server.ask(line, &error("null", -32600, not_object));
        }
        let cases = [
            (
                r#"{"id":1,"method":"ping"}"#,
                "1",
                "Invalid Request: \"jsonrpc\" must be the string \"2.0\"",
            ),
            (
                r#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#,
                "\"a\"",
                "Invalid Request: \"jsonrpc\" must be the string \"2.0\"",
            ),
            (
                r#"{"jsonrpc":2.0,"id":2,"method":"ping"}"#,
                "2",
                "Invalid Request: \"jsonrpc\" must be the string \"2.0\"",
            ),
            (
                r#"{"jsonrpc":"2.0","id":3}"#,
                "3",
                "Invalid Request: \"method\" is missing",
            ),
            (
                r#"{"jsonrpc":"2.0"}"#,
                "null",
                "Invalid Request: \"method\" is missing",
            ),
            (
                r#"{"jsonrpc":"2.0","id":4,"method":7}"#,
                "4",
                "Invalid Request: \"method\" must be a string, got an integer",
            ),
            (
                r#"{"jsonrpc":"2.0","method":["ping"]}"#,
                "null",
                "Invalid Request: \"method\" must be a string, got an array",
            ),
            (
                r#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#,
                "null",
                "Invalid Request: \"id\" must be a string or an integer, got a boolean",
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                "null",
                "Invalid Request: \"id\" must be a string or an integer, got null",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#,
                "null",
                "Invalid Request: \"id\" must be a string or an integer, got a number with a fractional part",
            ),
            // Issue 12 item 9: an integer beyond 64 bits is named as such, not as "non-integer".
            (
                r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"ping"}"#,
                "null",
                "Invalid Request: \"id\" must be a string or an integer, got an integer beyond the 64-bit range (-9223372036854775808 to 18446744073709551615); send such an id as a string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":-9223372036854775809,"method":"ping"}"#,
                "null",
                "Invalid Request: \"id\" must be a string or an integer, got an integer beyond the 64-bit range (-9223372036854775808 to 18446744073709551615); send such an id as a string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1e3,"method":"ping"}"#,
                "null",
                "Invalid Request: \"id\" must be a string or an integer, got a number written with a decimal point or an exponent (such as 1.0 or 1e3); write a whole number without them",
            ),
            (
                r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#,
                "null",
                "Invalid Request: \"id\" must be a string or an integer, got an object",
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"method":"ping","params":"x"}"#,
                "5",
                "Invalid Request: \"params\" must be an object, got a string",
            ),
        ];
        for (line, id, message) in cases {
            server.ask(line, &error(id, -32600, message));
        }
        // The limits themselves are integers, echoed back exactly.
        for id in ["18446744073709551615", "-9223372036854775808"] {
            server.ask(
                &format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#),
                &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
            );
        }
        // A response from the client (this server sends no requests) is ignored.
        server.send(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#);
        server.send(r#"{"jsonrpc":"2.0","id":9,"error":{"code":1,"message":"x"}}"#);
        server.assert_silent();
    }

    #[test]
    fn unknown_methods_are_32601_and_unknown_notifications_are_ignored() {
        let db = Db::new();
        let mut server = Server::init(&db, "2025-11-25");
        for method in ["resources/list", "prompts/list", "tools/delete", ""] {
            server.ask(
                &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"{method}"}}"#),
                &error(
                    "1",
                    -32601,
                    &format!(
                        "Method not found: {method} (this server offers initialize, ping, tools/list and tools/call)"
                    ),
                ),
            );
        }
        // A long method name is cut in the answer.
        server.ask(
            &format!(r#"{{"jsonrpc":"2.0","id":2,"method":"{}"}}"#, "m".repeat(100_000)),
            &error(
                "2",
                -32601,
                &format!(
                    "Method not found: {}... (this server offers initialize, ping, tools/list and tools/call)",
                    "m".repeat(60)
                ),
            ),
        );
        server.send(r#"{"jsonrpc":"2.0","method":"notifications/whatever","params":{"a":1}}"#);
        server.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#);
        server.assert_silent();
    }

    #[test]
    fn malformed_tool_calls_are_32602_in_every_version() {
        let cases = [
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
                "Invalid params: tools/call needs params.name, the tool to call (tools/list names them)",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
                "Invalid params: tools/call needs params.name, the tool to call (tools/list names them)",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}"#,
                "Invalid params: name must be a string naming a tool, got an integer",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":["timeline_create"]}"#,
                "Invalid params: params of tools/call must be an object, got an array",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"timeline_export"}}"#,
                "Invalid params: unknown tool \"timeline_export\"; tools/list names the 21 tools of this server",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"timeline_create","arguments":[]}}"#,
                "Invalid params: arguments must be an object, got an array",
            ),
        ];
        let db = Db::new();
        for version in VERSIONS {
            let mut server = Server::init(&db, version);
            for (line, message) in cases {
                server.ask(line, &error("1", -32602, message));
            }
        }
        assert!(!db.path.exists());
    }

    #[test]
    fn argument_errors_are_32602_up_to_2025_06_18_and_tool_errors_from_2025_11_25() {
        let cases = [
            (
                r#"{"name":"timeline_create","arguments":{"timeline_id":"tl0"}}"#,
                "invalid argument timeline_id: timeline_create takes no such argument (it takes: title)",
            ),
            (
                r#"{"name":"timeline_append","arguments":{"role":"user","text":"x"}}"#,
                "invalid argument timeline_id: required; pass the ID that timeline_create returned, such as \"tl0\"",
            ),
            (
                r#"{"name":"timeline_context_budget","arguments":{"timeline_id":"tl0","node":"n1","max_tokens":-1}}"#,
                "invalid argument max_tokens: must be a non-negative integer, got -1",
            ),
            (
                r#"{"name":"timeline_context_budget","arguments":{"timeline_id":"tl0","node":"n1","max_tokens":1e30}}"#,
                "invalid argument max_tokens: is larger than the maximum 18446744073709551615",
            ),
            (
                r#"{"name":"timeline_node","arguments":{"timeline_id":"tl0","node":"x5"}}"#,
                "invalid argument node: A node ID: \"n\" followed by digits, as returned by timeline_append or timeline_summarize. Got \"x5\"",
            ),
            (
                r#"{"name":"timeline_summarize","arguments":{"timeline_id":"tl0","from":"n1","to":"n1","summary":"s","derived_from":"n9,n10"}}"#,
                "invalid argument derived_from: must be an array (Node IDs, as an array such as [\"n9\", \"n10\"].)",
            ),
            (
                r#"{"name":"timeline_append","arguments":{"timeline_id":"tl0","role":"user","text":"x","intent":{"note":"n"}}}"#,
                "invalid argument intent.tag: required when intent.note is given (Label the message with an intent tag (your own vocabulary).)",
            ),
            (
                r#"{"name":"timeline_create","arguments":{"idempotency_key":7}}"#,
                "invalid argument idempotency_key: arguments.idempotency_key must be a string such as \"request-001\", got an integer",
            ),
            (
                r#"{"name":"timeline_create","idempotency_key":""}"#,
                "invalid argument idempotency_key: must be 1 to 256 bytes, such as request-001",
            ),
            (
                r#"{"name":"timeline_create","idempotency_key":"a","arguments":{"idempotency_key":"b"}}"#,
                "invalid argument idempotency_key: arguments.idempotency_key and params.idempotency_key differ; give the key once, or the same key in both places",
            ),
        ];
        let db = Db::new();
        for version in VERSIONS {
            let mut server = Server::init(&db, version);
            for (params, message) in cases {
                server.ask(
                    &format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#),
                    &argument_error(1, version, message),
                );
            }
        }
        // None of these touched the database.
        assert!(!db.path.exists());
    }

    #[test]
    fn values_the_operation_refuses_are_tool_errors_in_every_version() {
        // The arguments fit the inputSchema; the operation itself refuses them ("invalid input data").
        let db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        db.append("user", "a", 3);
        db.tl(&["summarize", "--from", "n1", "--to", "n1", "--summary", "s"])
            .ok(r#"{"node":"n2"}"#);
        let before = db.bytes();
        for version in VERSIONS {
            let mut server = Server::init(&db, version);
            let cli = db.tl(&[
                "summarize",
                "--from",
                "n1",
                "--to",
                "n1",
                "--summary",
                "t",
                "--derived-from",
                "n2,n2",
            ]);
            assert_eq!(cli.code, 2, "{cli:?}");
            let expected: Value = serde_json::from_str(&cli.stderr).unwrap();
            assert_eq!(
                server.call_line(
                    1,
                    "timeline_summarize",
                    r#"{"timeline_id":"tl0","from":"n1","to":"n1","summary":"t","derived_from":["n2","n2"]}"#
                ),
                tool_err(1, &expected, NEW.contains(&version))
            );
        }
        assert_eq!(db.bytes(), before);
    }

    #[test]
    fn batches_are_served_serially_with_2024_11_05_and_2025_03_26() {
        for version in OLD {
            let db = Db::new();
            let mut server = Server::init(&db, version);
            let create = r#"{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"timeline_create","arguments":{}}}"#;
            let append = r#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"timeline_append","arguments":{"timeline_id":"tl0","role":"user","text":"hello","tokens":3}}}"#;
            let silent = r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"timeline_append","arguments":{"timeline_id":"tl0","role":"user","text":"never"}}}"#;
            let context = r#"{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"timeline_context","arguments":{"timeline_id":"tl0","node":"n1"}}}"#;
            let ping = r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#;
            server.ask(
                &format!("[{create},{append},{silent},{context},{ping},5,{{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"nope\"}}]"),
                &format!(
                    "[{},{},{},{},{},{}]",
                    r#"{"jsonrpc":"2.0","id":"c","result":{"content":[{"type":"text","text":"{\"timeline_id\":\"tl0\"}"}]}}"#,
                    r#"{"jsonrpc":"2.0","id":"a","result":{"content":[{"type":"text","text":"{\"node\":\"n1\"}"}]}}"#,
                    r#"{"jsonrpc":"2.0","id":"x","result":{"content":[{"type":"text","text":"{\"messages\":[{\"node\":\"n1\",\"role\":\"user\",\"text\":\"hello\",\"tokens\":3}]}"}]}}"#,
                    r#"{"jsonrpc":"2.0","id":7,"result":{}}"#,
                    r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: a message must be a JSON object with \"jsonrpc\": \"2.0\" and a \"method\""}}"#,
                    r#"{"jsonrpc":"2.0","id":8,"error":{"code":-32601,"message":"Method not found: nope (this server offers initialize, ping, tools/list and tools/call)"}}"#,
                ),
            );
            // A batch of notifications only has no answer at all.
            server.send(&format!(
                "[{silent},{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}}]"
            ));
            server.assert_silent();
            server.ask(
                "[]",
                &error(
                    "null",
                    -32600,
                    "Invalid Request: the batch is an empty array",
                ),
            );
            // initialize cannot come again inside a batch.
            server.ask(
                r#"[{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}]"#,
                &format!(
                    "[{}]",
                    error(
                        "1",
                        -32600,
                        &format!(
                            "Invalid Request: initialize was already answered on this connection (protocol version {version}); start a new tl-mcp process to negotiate again"
                        )
                    )
                ),
            );
            drop(server);
            // The notification inside the batch appended nothing.
            db.tl(&["branches"])
                .ok(r#"[{"name":"main","head":"n1","current":true}]"#);
        }
    }

    #[test]
    fn batches_are_invalid_requests_from_2025_06_18_and_before_initialize() {
        for version in NEW {
            let db = Db::new();
            let mut server = Server::init(&db, version);
            server.ask(
                r#"[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"timeline_create","arguments":{}}},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
                &error(
                    "null",
                    -32600,
                    &format!(
                        "Invalid Request: JSON-RPC batches (arrays) are accepted only with protocol versions 2024-11-05 and 2025-03-26, and protocol version {version} was negotiated; send one message per line"
                    ),
                ),
            );
            server.ask(
                "[]",
                &error(
                    "null",
                    -32600,
                    &format!(
                        "Invalid Request: JSON-RPC batches (arrays) are accepted only with protocol versions 2024-11-05 and 2025-03-26, and protocol version {version} was negotiated; send one message per line"
                    ),
                ),
            );
            drop(server);
            // Nothing in the rejected batch ran.
            assert!(!db.path.exists());
        }
        let db = Db::new();
        let mut server = Server::open(&db);
        server.ask(
            r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#,
            &error(
                "null",
                -32600,
                "Invalid Request: JSON-RPC batches (arrays) are accepted only with protocol versions 2024-11-05 and 2025-03-26, and before initialize the server follows the latest protocol version, 2025-11-25; send one message per line",
            ),
        );
    }

    #[test]
    fn a_batch_over_the_item_limit_is_refused_whole_in_little_memory() {
        let max = spec().constants.mcp_batch_max_items;
        assert_eq!(max, 100);
        for version in OLD {
            let db = Db::new();
            let mut server = Server::init(&db, version);
            let list = |n: usize| {
                let items: Vec<String> = (0..n)
                    .map(|i| format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/list"}}"#))
                    .collect();
                format!("[{}]", items.join(","))
            };
            // 2000 tools/list would answer with a 50 MB line; the batch is refused before it is
            // built, so the server stays small.
            server.ask(
                &list(2000),
                &error(
                    "null",
                    -32600,
                    "Invalid Request: the batch holds 2000 messages, over the limit of 100 per batch; nothing in it ran: send at most 100 messages per array, or one message per line",
                ),
            );
            #[cfg(target_os = "linux")]
            {
                let status =
                    std::fs::read_to_string(format!("/proc/{}/status", server.child.id())).unwrap();
                let peak_kb: u64 = status
                    .lines()
                    .find_map(|l| l.strip_prefix("VmHWM:"))
                    .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
                    .unwrap();
                assert!(peak_kb < 64 * 1024, "peak RSS {peak_kb} kB");
            }
            #[cfg(not(target_os = "linux"))]
            eprintln!("NOT RUN: the peak memory of tl-mcp is measured from /proc, on Linux only");
            // A batch filling the 8 MiB frame (204600 pings) is refused too, and the server goes on.
            let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
            let n = (LIMIT - 2) / (ping.len() + 1);
            let full = format!("[{}]", vec![ping; n].join(","));
            assert!(full.len() <= LIMIT && full.len() + ping.len() + 1 > LIMIT);
            server.ask(
                &full,
                &error(
                    "null",
                    -32600,
                    &format!("Invalid Request: the batch holds {n} messages, over the limit of 100 per batch; nothing in it ran: send at most 100 messages per array, or one message per line"),
                ),
            );
            // At the limit, a batch is served.
            let answer = server.ask_json(&list(max));
            let answers = answer.as_array().unwrap();
            assert_eq!(answers.len(), max);
            for (i, one) in answers.iter().enumerate() {
                assert_eq!(one["id"], json!(i));
                assert_eq!(one["result"]["tools"].as_array().unwrap().len(), tools_json()["tools"].as_array().unwrap().len());
            }
            server.assert_silent();
        }
    }

    #[test]
    fn a_batch_answer_stops_at_its_size_limit() {
        let limit = spec().constants.mcp_batch_answer_limit_bytes;
        assert_eq!(limit, LIMIT);
        let db = Db::new();
        let mut server = Server::init(&db, "2024-11-05");
        server.call_line(1, "timeline_create", "{}");
        let text = "a".repeat(1_000_000);
        assert_eq!(
            server.call_line(
                2,
                "timeline_append",
                &format!(r#"{{"timeline_id":"tl0","role":"user","text":"{text}","tokens":1}}"#)
            ),
            tool_ok(2, r#"{"node":"n1"}"#, false)
        );
        // Each context answer is about 1 MB: eight fit in 8 MiB, the ninth does not.
        let context = |i: usize| {
            format!(r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"timeline_context","arguments":{{"timeline_id":"tl0","node":"n1"}}}}}}"#)
        };
        let mut items: Vec<String> = (0..9).map(context).collect();
        items.push(r#"{"jsonrpc":"2.0","id":"late","method":"tools/call","params":{"name":"timeline_append","arguments":{"timeline_id":"tl0","role":"user","text":"never"}}}"#.into());
        items.push(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into());
        server.send(&format!("[{}]", items.join(",")));
        let line = server.recv();
        assert!(line.len() <= limit, "{} bytes", line.len());
        let answers: Vec<Value> = serde_json::from_str(&line).unwrap();
        assert_eq!(answers.len(), 10);
        let one = server.ask_json(&context(0));
        for (i, answer) in answers[..8].iter().enumerate() {
            assert_eq!(answer["id"], json!(i));
            assert_eq!(answer["result"], one["result"]);
        }
        let size = one.to_string().replace(r#""id":0"#, r#""id":8"#).len();
        assert_eq!(
            answers[8].to_string(),
            error(
                "8",
                -32603,
                &format!("this request ran, but its answer ({size} bytes) would take the batch's answer over its limit of 8388608 bytes, so it was left out and the rest of the batch did not run; send the request again on its own line to get its answer")
            )
        );
        assert_eq!(
            answers[9].to_string(),
            error(
                r#""late""#,
                -32603,
                "this request did not run: the batch's answer reached its limit of 8388608 bytes before it; send it again on its own line or in a smaller batch"
            )
        );
        // Ids so long that even error answers to every request would not fit: nothing runs.
        let long = "i".repeat(4_194_100);
        let line = format!(
            r#"[{{"jsonrpc":"2.0","id":"{long}","method":"ping"}},{{"jsonrpc":"2.0","id":"{long}","method":"ping"}}]"#
        );
        assert!(line.len() <= LIMIT);
        server.ask(
            &line,
            &error(
                "null",
                -32600,
                "Invalid Request: the ids of this batch are too long: even short answers to its requests would take the answer over its limit of 8388608 bytes; nothing in it ran: use shorter ids",
            ),
        );
        drop(server);
        // The request after the cut did not run.
        db.tl(&["branches"])
            .ok(r#"[{"name":"main","head":"n1","current":true}]"#);
    }

    #[test]
    fn a_tools_call_notification_changes_nothing() {
        let db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        db.append("user", "first", 2);
        let before = db.bytes();
        for version in VERSIONS {
            let mut server = Server::init(&db, version);
            for (tool, args) in [
                (
                    "timeline_append",
                    r#"{"timeline_id":"tl0","role":"user","text":"x"}"#,
                ),
                ("timeline_create", "{}"),
                ("timeline_pin", r#"{"timeline_id":"tl0","node":"n1"}"#),
                (
                    "timeline_fork",
                    r#"{"timeline_id":"tl0","node":"n1","name":"b"}"#,
                ),
            ] {
                server.send(&format!(
                    r#"{{"jsonrpc":"2.0","method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#
                ));
            }
            server.assert_silent();
            let (code, rest, stderr) = server.finish();
            assert_eq!((code, rest.as_str()), (0, ""));
            assert!(
                stderr.contains("ignored the notification tools/call"),
                "{stderr}"
            );
        }
        assert_eq!(db.bytes(), before);
        db.tl(&["branches"])
            .ok(r#"[{"name":"main","head":"n1","current":true}]"#);
        assert_eq!(
            db.tl(&["node", "--node", "n1"]).json()["pinned"],
            json!(false)
        );
    }

    #[test]
    fn tools_list_serves_the_generated_tools_without_output_schema_for_old_versions() {
        let full = tools_json();
        let names: Vec<&str> = full["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
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
                "timeline_list"
            ]
        );
        // What each version defines: annotations from 2025-03-26, title and outputSchema from 2025-06-18.
        let without = |fields: &[&str]| {
            let mut list = full.clone();
            for tool in list["tools"].as_array_mut().unwrap() {
                for field in fields {
                    tool.as_object_mut().unwrap().remove(*field);
                }
            }
            list
        };
        let db = Db::new();
        for version in VERSIONS {
            let expected = match version {
                "2024-11-05" => without(&["annotations", "title", "outputSchema"]),
                "2025-03-26" => without(&["title", "outputSchema"]),
                _ => full.clone(),
            };
            let mut server = Server::init(&db, version);
            server.ask(
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
                &format!(r#"{{"jsonrpc":"2.0","id":2,"result":{expected}}}"#),
            );
            // A cursor is accepted; everything fits in one page.
            server.ask(
                r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"x"}}"#,
                &format!(r#"{{"jsonrpc":"2.0","id":3,"result":{expected}}}"#),
            );
            let answer = server.ask_json(r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#);
            let tools = answer["result"]["tools"].as_array().unwrap();
            assert_eq!(tools.len(), 21);
            let count = |field: &str| tools.iter().filter(|t| t.get(field).is_some()).count();
            let new = NEW.contains(&version);
            assert_eq!(count("outputSchema"), if new { 21 } else { 0 });
            assert_eq!(count("title"), if new { 21 } else { 0 });
            assert_eq!(
                count("annotations"),
                if version == "2024-11-05" { 0 } else { 21 }
            );
        }
        // Before initialize the latest version's list is served.
        let mut server = Server::open(&db);
        server.ask(
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
            &format!(r#"{{"jsonrpc":"2.0","id":2,"result":{full}}}"#),
        );
    }

    #[test]
    fn every_tool_has_a_title_and_annotations_true_to_what_it_does() {
        let tools = tools_json();
        let hints: Vec<(&str, &str, bool, bool, bool)> = tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                let a = &t["annotations"];
                assert_eq!(a["openWorldHint"], json!(false), "{t}");
                assert_eq!(a["title"], t["title"], "{t}");
                (
                    t["name"].as_str().unwrap(),
                    t["title"].as_str().unwrap(),
                    a["readOnlyHint"].as_bool().unwrap(),
                    a["destructiveHint"].as_bool().unwrap(),
                    a["idempotentHint"].as_bool().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            hints,
            [
                ("timeline_create", "Create a timeline", false, false, false),
                ("timeline_append", "Append a message", false, false, false),
                ("timeline_fork", "Fork a branch", false, false, true),
                (
                    "timeline_switch",
                    "Switch the current branch",
                    false,
                    true,
                    true
                ),
                ("timeline_drop_branch", "Drop a branch", false, true, true),
                ("timeline_rename_branch", "Rename a branch", false, true, true),
                ("timeline_context", "Read a context", true, false, true),
                (
                    "timeline_context_budget",
                    "Fit a context into a token budget",
                    false,
                    false,
                    true
                ),
                ("timeline_pin", "Pin a message", false, false, true),
                ("timeline_unpin", "Unpin a message", false, true, true),
                (
                    "timeline_summarize",
                    "Summarize a range",
                    false,
                    false,
                    true
                ),
                ("timeline_branches", "List branches", true, false, true),
                ("timeline_node", "Show a node", true, false, true),
                ("timeline_search", "Search messages", true, false, true),
                ("timeline_log", "Read a branch page by page", true, false, true),
                ("timeline_diff", "Compare two branches", true, false, true),
                (
                    "timeline_archive_check",
                    "Check whether a branch can be archived",
                    true,
                    false,
                    true
                ),
                (
                    "timeline_archive_branch",
                    "Archive a branch",
                    false,
                    true,
                    true
                ),
                (
                    "timeline_restore_branch",
                    "Restore an archived branch",
                    false,
                    false,
                    true
                ),
                ("timeline_db_info", "Describe the database", true, false, true),
                ("timeline_list", "List timelines", true, false, true),
            ]
        );
        // The budget tool writes placeholders, and says so.
        let budget = &tools["tools"][7];
        assert_eq!(budget["name"], json!("timeline_context_budget"));
        assert!(
            budget["description"]
                .as_str()
                .unwrap()
                .contains("Not read-only: new placeholders are stored"),
            "{budget}"
        );
    }

    #[test]
    fn descriptions_and_schemas_speak_to_models_not_to_the_command_line() {
        let text = tools_json().to_string();
        for word in [
            "(CLI",
            "tl ",
            "--",
            "comma-separated",
            "command line",
            "in params",
        ] {
            assert!(!text.contains(word), "tools.json mentions {word:?}");
        }
        // Every limit the argument check enforces is in the schema.
        let tools = tools_json();
        let append = &tools["tools"][1]["inputSchema"]["properties"];
        assert_eq!(append["text"]["maxLength"], json!(1048576));
        assert_eq!(append["tokens"]["minimum"], json!(0));
        assert_eq!(append["tokens"]["maximum"], json!(4294967295_u64));
        assert_eq!(append["intent"]["properties"]["tag"]["minLength"], json!(1));
        assert_eq!(append["idempotency_key"]["maxLength"], json!(256));
        assert_eq!(
            append["timeline_id"]["pattern"],
            json!("^tl(0|[1-9][0-9]*)$")
        );
        let fork = &tools["tools"][2]["inputSchema"]["properties"];
        assert_eq!(fork["name"]["pattern"], json!("^[^/]*$"));
        assert_eq!(fork["name"]["minLength"], json!(1));
        assert_eq!(tools["tools"][10]["name"], json!("timeline_summarize"));
        let summarize = &tools["tools"][10]["inputSchema"]["properties"];
        assert_eq!(summarize["derived_from"]["type"], json!("array"));
        assert_eq!(summarize["derived_from"]["uniqueItems"], json!(true));
        // The budget's switches are booleans, off unless given.
        assert_eq!(tools["tools"][7]["name"], json!("timeline_context_budget"));
        let budget = &tools["tools"][7]["inputSchema"];
        for switch in ["dry_run", "explain"] {
            assert_eq!(budget["properties"][switch]["type"], json!("boolean"));
            assert_eq!(budget["properties"][switch]["default"], json!(false));
        }
        assert_eq!(
            budget["required"],
            json!(["timeline_id", "node", "max_tokens"])
        );
    }

    #[test]
    fn initialize_returns_instructions_in_every_version() {
        let db = Db::new();
        for version in VERSIONS {
            let mut server = Server::open(&db);
            let answer = server.ask_json(&format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"{version}"}}}}"#
            ));
            let instructions = answer["result"]["instructions"].as_str().unwrap();
            for tool in [
                "timeline_create",
                "timeline_append",
                "timeline_fork",
                "timeline_context_budget",
                "timeline_summarize",
                "timeline_archive_branch",
                "isError",
            ] {
                assert!(instructions.contains(tool), "{tool}: {instructions}");
            }
        }
    }

    #[test]
    fn structured_content_from_2025_06_18_with_list_results_wrapped_in_every_version() {
        for version in VERSIONS {
            let structured = NEW.contains(&version);
            let db = Db::new();
            let mut server = Server::init(&db, version);
            assert_eq!(
                server.call_line(1, "timeline_create", "{}"),
                tool_ok(1, r#"{"timeline_id":"tl0"}"#, structured)
            );
            assert_eq!(
                server.call_line(
                    2,
                    "timeline_append",
                    r#"{"timeline_id":"tl0","role":"user","text":"Hello, world"}"#
                ),
                tool_ok(2, r#"{"node":"n1"}"#, structured)
            );
            assert_eq!(
                server.call_line(
                    3,
                    "timeline_context",
                    r#"{"timeline_id":"tl0","node":"n1"}"#
                ),
                tool_ok(
                    3,
                    r#"{"messages":[{"node":"n1","role":"user","text":"Hello, world","tokens":3}]}"#,
                    structured
                )
            );
            assert_eq!(
                server.call_line(4, "timeline_branches", r#"{"timeline_id":"tl0"}"#),
                tool_ok(
                    4,
                    r#"{"branches":[{"name":"main","head":"n1","current":true}]}"#,
                    structured
                )
            );
            assert_eq!(
                server.call_line(
                    5,
                    "timeline_fork",
                    r#"{"timeline_id":"tl0","node":"n1","name":"alt"}"#
                ),
                tool_ok(5, r#"{"branch":"alt","head":"n1"}"#, structured)
            );
            assert_eq!(
                server.call_line(6, "timeline_node", r#"{"timeline_id":"tl0","node":"n1"}"#),
                tool_ok(
                    6,
                    r#"{"node":"n1","timeline_id":"tl0","role":"user","text":"Hello, world","tokens":3,"parent":"n0","children":[],"zone":"hot","pinned":false,"path_tokens":3,"created_at":1767225600,"intent":null,"summary":null}"#,
                    structured
                )
            );
            assert_eq!(
                server.call_line(
                    7,
                    "timeline_context_budget",
                    r#"{"timeline_id":"tl0","node":"n1","max_tokens":10}"#
                ),
                tool_ok(
                    7,
                    r#"{"messages":[{"node":"n1","role":"user","text":"Hello, world","tokens":3}],"total_tokens":3,"summaries_created":[]}"#,
                    structured
                )
            );
            // The CLI prints the lists themselves, as before.
            db.tl(&["context", "--node", "n1"])
                .ok(r#"[{"node":"n1","role":"user","text":"Hello, world","tokens":3}]"#);
            db.tl(&["branches"]).ok(
                r#"[{"name":"main","head":"n1","current":true},{"name":"alt","head":"n1","current":false}]"#,
            );
        }
    }

    #[test]
    fn tool_failures_are_results_with_is_error_and_the_clis_error_object() {
        let db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        db.append("user", "a", 1000);
        db.append("user", "b", 1);
        db.append("user", "c", 1000);
        db.append("user", "d", 0);
        db.tl(&["pin", "--node", "n2"]).ok(r#"{"pinned":"n2"}"#);
        let before = db.bytes();
        for version in VERSIONS {
            let structured = NEW.contains(&version);
            let mut server = Server::init(&db, version);
            // The requirement's counterexample: data carries what it would take.
            assert_eq!(
                server.call_line(
                    1,
                    "timeline_context_budget",
                    r#"{"timeline_id":"tl0","node":"n4","max_tokens":1}"#
                ),
                budget_err(1, 65, 1, structured)
            );
            // Without data, only the message: the object tl prints on stderr, with the next step
            // named in each front-end's own words.
            db.tl(&["node", "--node", "n99"]).err(
                1,
                r#"{"error":"node not found: n99 does not exist in timeline tl0 (it has n1..n4); find the node you mean with `tl log` or `tl search --query ...`"}"#,
            );
            let expected = json!({"error": "node not found: n99 does not exist in timeline tl0 (it has n1..n4); find the node you mean with `timeline_log` (`timeline_id: \"tl0\"`) or `timeline_search` (`timeline_id: \"tl0\"`, `query: ...`)"});
            assert_eq!(
                server.call_line(2, "timeline_node", r#"{"timeline_id":"tl0","node":"n99"}"#),
                tool_err(2, &expected, structured)
            );
            // A conflict, and a branch not eligible for archival (data holds the reasons).
            let answer: Value = serde_json::from_str(&server.call_line(
                3,
                "timeline_drop_branch",
                r#"{"timeline_id":"tl0","name":"main"}"#,
            ))
            .unwrap();
            assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
            let answer: Value = serde_json::from_str(&server.call_line(
                4,
                "timeline_archive_branch",
                r#"{"timeline_id":"tl0","branch":"main"}"#,
            ))
            .unwrap();
            let text: Value =
                serde_json::from_str(answer["result"]["content"][0]["text"].as_str().unwrap()).unwrap();
            assert!(text["data"]["reasons"].is_array(), "{answer}");
            assert_eq!(
                answer["result"].get("structuredContent").is_some(),
                structured
            );
        }
        // A failed budget commits nothing.
        assert_eq!(db.bytes(), before);
    }

    #[test]
    fn mcp_messages_name_tool_arguments_and_tl_names_flags() {
        // The error of a path past its most tokens is worded once, with its argument typed:
        // `tokens` over MCP, --tokens in tl.
        let mut db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        db.append("user", "big", 1);
        let mut snapshot = db.value();
        let max = json!((1_u64 << 53) - 1);
        snapshot["timelines"][0]["nodes"][0]["tokens"] = max.clone();
        snapshot["timelines"][0]["nodes"][0]["prefix_tokens"] = max;
        db.replace_with_snapshot(&snapshot);
        let past = |arg: &str| {
            format!(
                "too many tokens on one path: the path from the root to the new node would hold 9007199254740992 tokens (9007199254740991 above it and 1 of its own), more than the most a path may hold, 9007199254740991; nothing was written. Give a smaller {arg} value (the real token count of the text), or continue in a new timeline"
            )
        };
        db.tl(&["append", "--role", "user", "--text", "x", "--tokens", "1"])
            .err(1, &json!({"error": past("--tokens")}).to_string());
        for version in VERSIONS {
            let mut server = Server::init(&db, version);
            assert_eq!(
                server.call_line(
                    1,
                    "timeline_append",
                    r#"{"timeline_id":"tl0","role":"user","text":"x","tokens":1}"#
                ),
                tool_err(
                    1,
                    &json!({"error": past("`tokens`")}),
                    NEW.contains(&version)
                )
            );
        }
    }

    #[test]
    fn idempotency_key_in_arguments_in_params_or_both_when_equal() {
        let db = Db::new();
        let mut server = Server::init(&db, "2025-11-25");
        let append = |place: &str| -> String {
            match place {
                "arguments" => r#"{"name":"timeline_append","arguments":{"timeline_id":"tl0","role":"user","text":"once","idempotency_key":"k1"}}"#.into(),
                "params" => r#"{"name":"timeline_append","idempotency_key":"k1","arguments":{"timeline_id":"tl0","role":"user","text":"once"}}"#.into(),
                _ => r#"{"name":"timeline_append","idempotency_key":"k1","arguments":{"timeline_id":"tl0","role":"user","text":"once","idempotency_key":"k1"}}"#.into(),
            }
        };
        assert_eq!(
            server.call_line(1, "timeline_create", r#"{"idempotency_key":"c1"}"#),
            tool_ok(1, r#"{"timeline_id":"tl0"}"#, true)
        );
        // The same create key gives the first timeline back instead of a second one.
        server.ask(
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"timeline_create","idempotency_key":"c1"}}"#,
            &tool_ok(2, r#"{"timeline_id":"tl0"}"#, true),
        );
        for (i, place) in ["arguments", "params", "both", "arguments"]
            .iter()
            .enumerate()
        {
            server.ask(
                &format!(
                    r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{}}}"#,
                    10 + i,
                    append(place)
                ),
                &tool_ok(10 + i as u64, r#"{"node":"n1"}"#, true),
            );
        }
        server.ask(
            r#"{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"timeline_append","idempotency_key":"k1","arguments":{"timeline_id":"tl0","role":"user","text":"once","idempotency_key":"k2"}}}"#,
            &argument_error(
                20,
                "2025-11-25",
                "invalid argument idempotency_key: arguments.idempotency_key and params.idempotency_key differ; give the key once, or the same key in both places",
            ),
        );
        // Read-only tools accept a key and ignore it.
        assert_eq!(
            server.call_line(
                21,
                "timeline_branches",
                r#"{"timeline_id":"tl0","idempotency_key":"k1"}"#
            ),
            tool_ok(
                21,
                r#"{"branches":[{"name":"main","head":"n1","current":true}]}"#,
                true
            )
        );
        // Without a key a new message is appended.
        assert_eq!(
            server.call_line(
                22,
                "timeline_append",
                r#"{"timeline_id":"tl0","role":"user","text":"once"}"#
            ),
            tool_ok(22, r#"{"node":"n2"}"#, true)
        );
        drop(server);
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl1"}"#);
        // The CLI sees the same key mapping: --idempotency-key k1 returns the MCP result.
        db.tl(&[
            "--idempotency-key",
            "k1",
            "append",
            "--role",
            "user",
            "--text",
            "once",
        ])
        .ok(r#"{"node":"n1"}"#);
    }

    #[test]
    fn cli_changes_made_while_the_server_runs_are_seen_by_the_next_call() {
        let db = Db::new();
        let mut server = Server::init(&db, "2025-06-18");
        assert_eq!(
            server.call_line(1, "timeline_create", "{}"),
            tool_ok(1, r#"{"timeline_id":"tl0"}"#, true)
        );
        let n1 = db.append("user", "from the CLI", 4);
        assert_eq!(n1, "n1");
        assert_eq!(
            server.call_line(
                2,
                "timeline_context",
                r#"{"timeline_id":"tl0","node":"n1"}"#
            ),
            tool_ok(
                2,
                r#"{"messages":[{"node":"n1","role":"user","text":"from the CLI","tokens":4}]}"#,
                true
            )
        );
        assert_eq!(
            server.call_line(
                3,
                "timeline_append",
                r#"{"timeline_id":"tl0","role":"assistant","text":"from MCP","tokens":2}"#
            ),
            tool_ok(3, r#"{"node":"n2"}"#, true)
        );
        db.tl(&["fork", "--node", "n1", "--name", "cli-branch"])
            .ok(r#"{"branch":"cli-branch","head":"n1"}"#);
        assert_eq!(
            server.call_line(4, "timeline_branches", r#"{"timeline_id":"tl0"}"#),
            tool_ok(
                4,
                r#"{"branches":[{"name":"main","head":"n2","current":true},{"name":"cli-branch","head":"n1","current":false}]}"#,
                true
            )
        );
        db.tl(&["context", "--node", "n2"]).ok(
            r#"[{"node":"n1","role":"user","text":"from the CLI","tokens":4},{"node":"n2","role":"assistant","text":"from MCP","tokens":2}]"#,
        );
    }

    #[test]
    fn the_database_comes_from_timeline_db_when_db_is_not_given() {
        let mut db = Db::new();
        let path = db.path.to_str().unwrap().to_string();
        db.env("TIMELINE_DB", &path);
        let mut server = Server::open_command(db.command(TL_MCP));
        server.initialize("2025-11-25", "2025-11-25");
        assert_eq!(
            server.call_line(1, "timeline_create", "{}"),
            tool_ok(1, r#"{"timeline_id":"tl0"}"#, true)
        );
        let (code, _, stderr) = server.finish();
        assert_eq!(code, 0);
        assert!(stderr.contains(&path), "{stderr}");
        assert!(common::stored_state(&db.path).is_some());
        // --db wins over TIMELINE_DB.
        let other = db.dir.path().join("other.json");
        let mut cmd = db.command(TL_MCP);
        cmd.arg("--db").arg(&other);
        let mut server = Server::open_command(cmd);
        assert_eq!(
            server.call_line(1, "timeline_create", "{}"),
            tool_ok(1, r#"{"timeline_id":"tl0"}"#, true)
        );
        drop(server);
        assert!(other.exists());
        // Without both, the SQLite database in the data directory (no ~/.timeline.json exists).
        let home = db.dir.path().join("home");
        std::fs::create_dir(&home).unwrap();
        let mut cmd = db.command(TL_MCP);
        cmd.env_remove("TIMELINE_DB")
            .env_remove("XDG_DATA_HOME")
            .env_remove("APPDATA")
            .env("HOME", &home)
            .env("USERPROFILE", &home);
        let mut server = Server::open_command(cmd);
        assert_eq!(
            server.call_line(1, "timeline_create", "{}"),
            tool_ok(1, r#"{"timeline_id":"tl0"}"#, true)
        );
        drop(server);
        let data_dir = if cfg!(windows) {
            home.join("AppData").join("Roaming")
        } else if cfg!(target_os = "macos") {
            home.join("Library").join("Application Support")
        } else {
            home.join(".local").join("share")
        };
        assert!(data_dir.join("timeline").join("timeline.db").exists());
        assert!(!home.join(".timeline.json").exists());
    }

    #[test]
    fn a_missing_database_folder_is_a_tool_error_not_a_crash() {
        let db = Db::new();
        let mut cmd = db.command(TL_MCP);
        cmd.arg("--db")
            .arg(db.dir.path().join("no-such-dir").join("db.json"));
        let mut server = Server::open_command(cmd);
        let answer: Value = serde_json::from_str(&server.call_line(1, "timeline_create", "{}")).unwrap();
        assert_eq!(answer["result"]["isError"], json!(true), "{answer}");
        let message = answer["result"]["structuredContent"]["error"]
            .as_str()
            .unwrap();
        assert!(message.contains("does not exist"), "{answer}");
        server.assert_silent();
    }

    #[test]
    fn help_version_and_bad_arguments() {
        let db = Db::new();
        let out = db.command(TL_MCP).arg("--version").output().unwrap();
        assert_eq!(
            (
                out.status.code(),
                String::from_utf8(out.stdout).unwrap(),
                out.stderr.len()
            ),
            (
                Some(0),
                format!("tl-mcp {}\n", env!("CARGO_PKG_VERSION")),
                0
            )
        );
        for flag in ["--help", "-h"] {
            let out = db.command(TL_MCP).arg(flag).output().unwrap();
            let text = String::from_utf8(out.stdout).unwrap();
            assert_eq!(out.status.code(), Some(0));
            assert!(text.contains("Usage: tl-mcp [--db PATH]"), "{text}");
            assert!(
                text.contains("2024-11-05, 2025-03-26, 2025-06-18, 2025-11-25"),
                "{text}"
            );
            assert!(text.contains("Tools (21): timeline_create,"), "{text}");
        }
        for (args, message) in [
            (&["--bogus"][..], "tl-mcp: unknown argument --bogus"),
            (
                &["--db"][..],
                "tl-mcp: --db needs a value: the path of the database file",
            ),
            (&["serve"][..], "tl-mcp: unknown argument serve"),
        ] {
            let out = db
                .command(TL_MCP)
                .args(args)
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert_eq!(
                (
                    out.status.code(),
                    String::from_utf8(out.stdout).unwrap(),
                    String::from_utf8(out.stderr).unwrap()
                ),
                (
                    Some(2),
                    String::new(),
                    format!("{message}\nUsage: tl-mcp [--db PATH]; run tl-mcp --help for more.\n")
                )
            );
        }
    }

    #[test]
    fn end_of_input_exits_zero_even_mid_line() {
        let db = Db::new();
        let mut server = Server::open(&db);
        server.send_raw(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
        let (code, rest, _) = server.finish();
        assert_eq!(
            (code, rest.as_str()),
            (0, "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n")
        );
        let server = Server::open(&db);
        let (code, rest, _) = server.finish();
        assert_eq!((code, rest.as_str()), (0, ""));
    }

    #[test]
    fn mangled_messages_never_stop_the_server() {
        let templates: [&[u8]; 7] = [
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"timeline_append","arguments":{"timeline_id":"tl0","role":"user","text":"hi","tokens":3}}}"#,
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"timeline_context_budget","arguments":{"timeline_id":"tl0","node":"n1","max_tokens":18446744073709551615}}}"#,
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"timeline_summarize","arguments":{"timeline_id":"tl0","from":"n1","to":"n2","summary":"s","derived_from":["n1"],"intent":{"tag":"t","note":"n"}}}}"#,
            br#"{"jsonrpc":"2.0","id":"x","method":"initialize","params":{"protocolVersion":"2024-11-05"}}"#,
            br#"[{"jsonrpc":"2.0","id":4,"method":"ping"},{"jsonrpc":"2.0","method":"tools/call","params":{"name":"timeline_create"}}]"#,
            br#"{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"cursor":null}}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{\"name\":\"timeline_fork\",\"arguments\":{\"timeline_id\":\"tl0\",\"node\":\"n1\",\"name\":\"ветка 🌿\"}}}".as_bytes(),
        ];
        let db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        let mut server = Server::open(&db);
        let mut rng = Rng(0x5eed_1234_abcd_0001);
        let mut input = Vec::new();
        for _ in 0..600 {
            let mut line = templates[rng.below(templates.len())].to_vec();
            for _ in 0..rng.below(4) {
                let at = rng.below(line.len());
                match rng.below(4) {
                    0 => line[at] = rng.next() as u8,
                    1 => line.truncate(at),
                    2 => {
                        let piece = line[at..].to_vec();
                        line.extend_from_slice(&piece);
                    }
                    _ => {
                        line.remove(at);
                    }
                }
                if line.is_empty() {
                    break;
                }
            }
            line.retain(|&b| b != b'\n');
            input.extend_from_slice(&line);
            input.push(b'\n');
        }
        input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":\"end\",\"method\":\"ping\"}\n");
        let mut stdin = server.stdin.take().unwrap();
        let feeder = std::thread::spawn(move || stdin.write_all(&input).unwrap());
        let mut answers = 0;
        loop {
            let line = server.recv();
            let value: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
            for answer in value
                .as_array()
                .cloned()
                .unwrap_or_else(|| vec![value.clone()])
            {
                assert_eq!(answer["jsonrpc"], "2.0", "{line}");
                assert!(
                    answer.get("result").is_some() != answer.get("error").is_some(),
                    "{line}"
                );
            }
            answers += 1;
            if line == r#"{"jsonrpc":"2.0","id":"end","result":{}}"# {
                break;
            }
        }
        feeder.join().unwrap();
        assert!(answers > 300, "{answers}");
        let (code, rest, stderr) = server.finish();
        assert_eq!((code, rest.as_str()), (0, ""));
        assert!(!stderr.contains("panicked"), "{stderr}");
        // The database is still a valid database.
        assert_eq!(db.tl(&["branches"]).code, 0);
    }

    #[test]
    fn cli_and_mcp_give_the_same_results_under_mapped_names() {
        let steps: &[(&[&str], &str, &str)] = &[
            (&["create"], "timeline_create", "{}"),
            (
                &[
                    "append",
                    "--role",
                    "user",
                    "--text",
                    "plan it",
                    "--tokens",
                    "10",
                    "--intent-tag",
                    "plan",
                    "--intent-note",
                    "first",
                ],
                "timeline_append",
                r#"{"role":"user","text":"plan it","tokens":10,"intent":{"tag":"plan","note":"first"}}"#,
            ),
            (
                &[
                    "append",
                    "--role",
                    "assistant",
                    "--text",
                    "ok, here is a plan",
                ],
                "timeline_append",
                r#"{"role":"assistant","text":"ok, here is a plan"}"#,
            ),
            (
                &[
                    "summarize",
                    "--from",
                    "n1",
                    "--to",
                    "n2",
                    "--summary",
                    "a plan",
                    "--tokens",
                    "3",
                    "--intent-tag",
                    "sum",
                ],
                "timeline_summarize",
                r#"{"from":"n1","to":"n2","summary":"a plan","tokens":3,"intent":{"tag":"sum"}}"#,
            ),
            (
                &[
                    "summarize",
                    "--from",
                    "n1",
                    "--to",
                    "n2",
                    "--summary",
                    "a better plan",
                    "--supersede",
                    "n3",
                ],
                "timeline_summarize",
                r#"{"from":"n1","to":"n2","summary":"a better plan","supersede":"n3"}"#,
            ),
            (
                &[
                    "summarize",
                    "--from",
                    "n1",
                    "--to",
                    "n2",
                    "--summary",
                    "built on v1",
                    "--derived-from",
                    "n3",
                ],
                "timeline_summarize",
                r#"{"from":"n1","to":"n2","summary":"built on v1","derived_from":["n3"]}"#,
            ),
            (
                &["fork", "--node", "n2", "--name", "side"],
                "timeline_fork",
                r#"{"node":"n2","name":"side"}"#,
            ),
            (
                &["budget", "--node", "n2", "--max", "50"],
                "timeline_context_budget",
                r#"{"node":"n2","max_tokens":50}"#,
            ),
            (
                &["budget", "--node", "n2", "--max", "0"],
                "timeline_context_budget",
                r#"{"node":"n2","max_tokens":0}"#,
            ),
            (&["pin", "--node", "n1"], "timeline_pin", r#"{"node":"n1"}"#),
            (
                &["unpin", "--node", "n1"],
                "timeline_unpin",
                r#"{"node":"n1"}"#,
            ),
            (
                &["archive-check", "--name", "side"],
                "timeline_archive_check",
                r#"{"branch":"side"}"#,
            ),
            (
                &["switch", "--name", "side"],
                "timeline_switch",
                r#"{"name":"side"}"#,
            ),
            (
                &["drop-branch", "--name", "main"],
                "timeline_drop_branch",
                r#"{"name":"main"}"#,
            ),
            (
                &["archive-branch", "--name", "side"],
                "timeline_archive_branch",
                r#"{"branch":"side"}"#,
            ),
            (
                &["node", "--node", "n4"],
                "timeline_node",
                r#"{"node":"n4"}"#,
            ),
            (
                &["node", "--node", "n5"],
                "timeline_node",
                r#"{"node":"n5"}"#,
            ),
            (
                &["context", "--node", "n2"],
                "timeline_context",
                r#"{"node":"n2"}"#,
            ),
            (&["branches"], "timeline_branches", "{}"),
            (
                &["fork", "--node", "n9", "--name", "x"],
                "timeline_fork",
                r#"{"node":"n9","name":"x"}"#,
            ),
        ];
        let mut cli = Db::new();
        cli.env("TIMELINE_NOW", "1700000000");
        let mut mcp_db = Db::new();
        mcp_db.env("TIMELINE_NOW", "1700000000");
        let mut server = Server::init(&mcp_db, "2025-11-25");
        for (i, (argv, tool, args)) in steps.iter().enumerate() {
            let run = cli.tl(argv);
            let mut arguments: Value = serde_json::from_str(args).unwrap();
            if *tool != "timeline_create" {
                arguments["timeline_id"] = json!("tl0");
            }
            let answer = server.ask_json(&format!(
                r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
            ));
            let result = &answer["result"];
            let text: Value =
                serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
            assert_eq!(result["structuredContent"], text, "{argv:?}: {answer}");
            if run.code == 0 {
                // Lists come wrapped in an object over MCP; everything else is the same JSON.
                let printed: Value = serde_json::from_str(&run.stdout).unwrap();
                let expected = match *tool {
                    "timeline_context" => json!({ "messages": printed }),
                    "timeline_branches" => json!({ "branches": printed }),
                    _ => printed,
                };
                assert_eq!(text, expected, "{argv:?}: {answer}");
                assert!(result.get("isError").is_none(), "{answer}");
            } else {
                // The same error object as tl's stderr: the same data, and the same message up to the
                // next step, which each front-end names in its own vocabulary.
                let expected: Value = serde_json::from_str(&run.stderr).unwrap();
                assert_eq!(result["isError"], json!(true), "{answer}");
                assert_eq!(text.get("data"), expected.get("data"), "{argv:?}: {answer}");
                let first = |v: &Value| {
                    v["error"]
                        .as_str()
                        .unwrap()
                        .split(';')
                        .next()
                        .unwrap()
                        .to_string()
                };
                assert_eq!(first(&text), first(&expected), "{argv:?}: {answer}");
            }
        }
        drop(server);
        // Both databases hold the same timeline.
        assert_eq!(
            cli.tl(&["export", "--format", "ascii"]).stdout,
            mcp_db.tl(&["export", "--format", "ascii"]).stdout
        );
    }

    // From the code review (formerly tests/review.rs).
    /// A whole-number float such as 100.0 is not "larger than the maximum"; only floats of 2^64 and
    /// more are (G6: tokens and budgets are non-negative integers).
    /// (Before initialize the server follows 2025-11-25, where argument errors are tool errors.)
    #[test]
    fn g6_a_float_token_count_is_refused_as_not_an_integer_not_as_too_large() {
        let db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        let out = common::mcp_transcript(
            &db,
            &[
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"timeline_append","arguments":{"timeline_id":"tl0","role":"user","text":"x","tokens":5.0}}}"#,
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"timeline_append","arguments":{"timeline_id":"tl0","role":"user","text":"x","tokens":1e30}}}"#,
            ],
        );
        assert_eq!(
            out,
            concat!(
                r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"{\"error\":\"invalid argument tokens: must be a non-negative integer, got 5.0\"}"}],"structuredContent":{"error":"invalid argument tokens: must be a non-negative integer, got 5.0"},"isError":true}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"error\":\"invalid argument tokens: is larger than the maximum 4294967295\"}"}],"structuredContent":{"error":"invalid argument tokens: is larger than the maximum 4294967295"},"isError":true}}"#,
                "\n",
            )
        );
    }

    /// `tl-mcp --db=` (an empty value) gets the same message as `tl-mcp --db ""`, not "unknown argument".
    #[test]
    fn g4_tl_mcp_empty_db_equals_form_says_the_value_is_missing() {
        let db = Db::new();
        for args in [&["--db="][..], &["--db", ""][..]] {
            let output = db
                .command(TL_MCP)
                .args(args)
                .stdin(Stdio::null())
                .output()
                .unwrap();
            assert_eq!(
                (
                    output.status.code(),
                    String::from_utf8(output.stdout).unwrap(),
                    String::from_utf8(output.stderr).unwrap()
                ),
                (
                    Some(2),
                    String::new(),
                    "tl-mcp: --db needs a value: the path of the database file\nUsage: tl-mcp [--db PATH]; run tl-mcp --help for more.\n".to_string()
                ),
                "{args:?}"
            );
        }
    }

    /// P5/G7: the MCP tool schemas and MCP errors describe MCP arguments; command-line instructions
    /// ("Use - to read it from standard input, or --text-file PATH", "--from", "--intent-tag") are for
    /// `tl` only. Over MCP a text "-" is just the text "-".
    #[test]
    fn p5_mcp_descriptions_carry_no_command_line_instructions() {
        let db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        let out = common::mcp_transcript(
            &db,
            &[
                r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"timeline_append","arguments":{"timeline_id":"tl0","role":"user"}}}"#,
            ],
        );
        let lines: Vec<&str> = out.lines().collect();
        let list: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        let tool = |name: &str| {
            list["result"]["tools"]
                .as_array()
                .unwrap()
                .iter()
                .find(|t| t["name"] == name)
                .unwrap()["inputSchema"]["properties"]
                .clone()
        };
        let append = tool("timeline_append");
        let summarize = tool("timeline_summarize");
        assert_eq!(
            append["text"]["description"],
            "The message text. At most 1 MiB (1048576 bytes) of UTF-8."
        );
        assert_eq!(
            summarize["summary"]["description"],
            "The summary text. At most 1 MiB (1048576 bytes) of UTF-8."
        );
        assert_eq!(
            summarize["to"]["description"],
            "The last node of the range: the start itself or a descendant of it."
        );
        for intent in [&append["intent"], &summarize["intent"]] {
            assert_eq!(
                intent["properties"]["note"]["description"],
                "A note that explains the intent; needs tag. Shown by timeline_node, never in context results. At most 1 MiB (1048576 bytes) of UTF-8."
            );
        }
        assert!(!lines[0].contains("--"), "{}", lines[0]);
        assert_eq!(
            lines[1],
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"error\":\"invalid argument text: required (The message text.)\"}"}],"structuredContent":{"error":"invalid argument text: required (The message text.)"},"isError":true}}"#
        );
        // The command line keeps its own instructions.
        db.tl(&["append", "--role", "user"]).err(
            2,
            r#"{"error":"invalid argument --text: required (The message text. Use - to read it from standard input, or --text-file PATH.)"}"#,
        );
    }
}

/// #42 item 11: a request the client cancels (`notifications/cancelled`) gets no response, as MCP
/// asks. The server reads ahead on its input without waiting, so a cancel that has arrived is seen
/// before the request runs, after its tool returns and before its answer is built; before, a
/// 24.6 MB context was answered in full after its cancel.
mod cancelled {
    use super::*;

    /// A request and its cancel, written at once (so the cancel has arrived when the request is read).
    fn request_then_cancel(
        server: &mut Server,
        id: &str,
        tool: &str,
        arguments: Value,
        cancel: &str,
    ) {
        let call = json!({"jsonrpc": "2.0", "id": serde_json::from_str::<Value>(id).unwrap(), "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}});
        server.send_raw(
            format!(
                "{call}\n{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":{cancel},\"reason\":\"user stopped\"}}}}\n"
            )
            .as_bytes(),
        );
    }

    on_every_engine! {
        #[test]
        fn a_cancelled_read_gets_no_response_and_the_session_goes_on() {
            let db = Db::new();
            db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
            let text = "x".repeat(100_000);
            for _ in 0..20 {
                db.append("user", &text, 1);
            }
            let mut server = Server::init(&db, "2025-11-25");
            let context = json!({"timeline_id": "tl0", "node": "n20"});
            request_then_cancel(&mut server, "5", "timeline_context", context.clone(), "5");
            server.assert_silent();
            // A string ID is cancelled by the same string, never by the number it spells.
            request_then_cancel(&mut server, r#""a7""#, "timeline_context", context.clone(), r#""a7""#);
            server.assert_silent();
            request_then_cancel(&mut server, "8", "timeline_branches", json!({"timeline_id": "tl0"}), r#""8""#);
            assert_eq!(
                server.recv(),
                tool_ok(8, r#"{"branches":[{"name":"main","head":"n20","current":true}]}"#, true)
            );
            // A cancel of a request already answered, or of one never sent, changes nothing.
            server.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}"#);
            server.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}"#);
            server.assert_silent();
            let answer: Value = serde_json::from_str(&server.call_line(9, "timeline_context", &context.to_string())).unwrap();
            assert_eq!(answer["result"]["structuredContent"]["messages"].as_array().map(Vec::len), Some(20));
            let stderr = server.stderr_now();
            for id in ["5", "\"a7\""] {
                assert!(
                    stderr.contains(&format!("tl-mcp: request {id} was cancelled by the client: no answer is sent (what it changed, if it ran, stays changed)\n")),
                    "{stderr}"
                );
            }
            assert!(!stderr.contains("request 8 was cancelled"), "{stderr}");
        }

        /// A change cancelled before it runs is not made; one whose answer was sent stays made, and
        /// a cancel that comes after it changes nothing.
        #[test]
        fn a_cancelled_change_gets_no_response_and_a_made_change_stays() {
            let db = Db::new();
            db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
            let mut server = Server::init(&db, "2025-06-18");
            let before = db.bytes();
            request_then_cancel(&mut server, "3", "timeline_append", json!({"timeline_id": "tl0", "role": "user", "text": "cancelled", "tokens": 1}), "3");
            server.assert_silent();
            assert_eq!(db.bytes(), before);
            assert_eq!(
                server.call_line(4, "timeline_append", r#"{"timeline_id":"tl0","role":"user","text":"kept","tokens":1}"#),
                tool_ok(4, r#"{"node":"n1"}"#, true)
            );
            server.send(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":4}}"#);
            server.assert_silent();
            server.close();
            db.tl(&["context", "--node", "n1"]).ok(r#"[{"node":"n1","role":"user","text":"kept","tokens":1}]"#);
        }
    }
}
