//! Bytes in → the MCP server's stdio loop (`timeline::mcp::serve`) → every line it writes must be one
//! JSON-RPC 2.0 response (or a batch of them), and it must never panic.
//!
//! If the first byte is even, a valid `initialize` and `notifications/initialized` go first, so the
//! fuzzer reaches the tools quickly. Each run starts from an empty database in a private directory.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::OnceLock;

fn db_path() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("timeline-fuzz-mcp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temporary directory");
        dir.join("db.json")
    })
}

fn check_response(value: &Value, line: &str) {
    let object = value
        .as_object()
        .unwrap_or_else(|| panic!("response is not an object: {line}"));
    assert_eq!(object.get("jsonrpc"), Some(&Value::from("2.0")), "{line}");
    assert!(object.contains_key("id"), "response without id: {line}");
    let id = &object["id"];
    assert!(
        id.is_null() || id.is_string() || id.is_number(),
        "bad id: {line}"
    );
    match (object.get("result"), object.get("error")) {
        (Some(_), None) => {}
        (None, Some(error)) => {
            assert!(error["code"].is_i64(), "error without integer code: {line}");
            assert!(
                error["message"].is_string(),
                "error without message: {line}"
            );
        }
        _ => panic!("a response needs exactly one of result and error: {line}"),
    }
}

fuzz_target!(|data: &[u8]| {
    let path = db_path();
    let _ = std::fs::remove_file(path);
    let mut input = Vec::new();
    if data.first().is_some_and(|b| b % 2 == 0) {
        input.extend_from_slice(
            br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#,
        );
        input.extend_from_slice(
            b"\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n",
        );
        input.extend_from_slice(&data[1..]);
    } else {
        input.extend_from_slice(data);
    }
    let mut session = timeline::mcp::session::Session::new(Ok(path.clone()));
    let mut output = Vec::new();
    timeline::mcp::serve(&input[..], &mut output, &mut session)
        .expect("writing to memory cannot fail");
    let text = String::from_utf8(output).expect("the server writes UTF-8");
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "unterminated output"
    );
    for line in text.lines() {
        let value: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("output line is not JSON ({e}): {line}"));
        match &value {
            Value::Array(items) => {
                assert!(!items.is_empty(), "empty batch response");
                for item in items {
                    check_response(item, line);
                }
            }
            other => check_response(other, line),
        }
    }
});
