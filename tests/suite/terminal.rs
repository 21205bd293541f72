//! Terminal injection (issue 12, item 6), through the real `tl` and `tl-mcp` binaries: caller-chosen
//! text (messages, branch names, MCP method names, arguments) never reaches standard output or
//! standard error with a control or bidirectional character unescaped. JSON carries them as `\uXXXX`
//! (and parses back to the same text), log lines and text views as `\u001b` too, the ASCII tree as JSON string literals.

use crate::common;

use common::{Db, McpSession, TL_MCP};
use serde_json::{Value, json};

/// ESC sequences (clear screen, retitle), BEL, DEL, C1 (NEL, the one-byte CSI), every bidirectional
/// control the rule names, and the line separator.
const HOSTILE: &str = "\u{1b}[2J\u{1b}]0;pwned\u{7}\u{7f}\u{85}\u{9b}31m\u{61c}\u{200e}\u{200f}\u{202a}\u{202b}\u{202c}\u{202d}\u{202e}\u{2066}\u{2067}\u{2068}\u{2069}\u{2028}";
/// `HOSTILE` as `tl` and `tl-mcp` write it inside JSON strings.
const HOSTILE_JSON: &str = r"\u001b[2J\u001b]0;pwned\u0007\u007f\u0085\u009b31m\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u2028";
/// `HOSTILE` as `tl-mcp` writes it in a log line: the same escapes as in JSON, one style.
const HOSTILE_LOG: &str = HOSTILE_JSON;

/// No character that acts on a terminal, other than the line ends between lines.
#[track_caller]
fn assert_inert(what: &str, text: &str) {
    let bad: Vec<String> = text
        .chars()
        .filter(|&c| {
            c != '\n'
                && (c.is_control()
                    || matches!(c, '\u{61c}' | '\u{200e}' | '\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}'))
        })
        .map(|c| format!("U+{:04X}", c as u32))
        .collect();
    assert!(bad.is_empty(), "{what} holds {bad:?}: {text:?}");
}

#[test]
fn tl_json_escapes_c1_and_bidi_controls_on_stdout_and_stderr() {
    let db = Db::created_at("1767225600");
    let text = format!("note {HOSTILE} end");
    db.tl(&["append", "--role", "user", "--text", &text, "--tokens", "1"])
        .ok(r#"{"node":"n1"}"#);
    let branch = format!("b{HOSTILE}");
    db.tl(&["fork", "--node", "n1", "--name", &branch])
        .ok(&format!(r#"{{"branch":"b{HOSTILE_JSON}","head":"n1"}}"#));
    let run = db.tl(&["branches"]);
    run.ok(&format!(
        r#"[{{"name":"main","head":"n1","current":true}},{{"name":"b{HOSTILE_JSON}","head":"n1","current":false}}]"#
    ));
    // The escapes are JSON's own: the value read back is exactly the text stored.
    assert_eq!(run.json()[1]["name"], branch.as_str());
    let run = db.tl(&["context", "--node", "n1"]);
    run.ok(&format!(
        r#"[{{"node":"n1","role":"user","text":"note {HOSTILE_JSON} end","tokens":1}}]"#
    ));
    assert_eq!(run.json()[0]["text"], text.as_str());

    // Error messages on stderr quote the caller's text; the branch list in this one is the database's.
    let run = db.tl(&["switch", "--name", "nope\u{9b}"]);
    assert_eq!((run.code, run.stdout.as_str()), (1, ""), "{run:?}");
    assert_inert("stderr", &run.stderr);
    let error: Value = serde_json::from_str(&run.stderr).unwrap();
    assert!(
        error["error"].as_str().unwrap().contains(&branch),
        "{run:?}"
    );
    assert!(run.stderr.contains(&format!("b{HOSTILE_JSON})")), "{run:?}");
    // A bad flag value is quoted by the argument parser; still escaped.
    let run = db.tl(&["append", "--role", &format!("x{HOSTILE}"), "--text", "t"]);
    assert_inert("stderr", &run.stderr);
    assert_ne!(run.code, 0);
}

#[test]
fn tl_ascii_export_escapes_every_control_and_bidi_character() {
    let db = Db::created_at("1767225600");
    db.tl(&[
        "append", "--role", "user", "--text", HOSTILE, "--tokens", "1",
    ])
    .ok(r#"{"node":"n1"}"#);
    db.tl(&["fork", "--node", "n1", "--name", &format!("b{HOSTILE}")])
        .ok(&format!(r#"{{"branch":"b{HOSTILE_JSON}","head":"n1"}}"#));
    let run = db.tl(&["export", "--format", "ascii"]);
    assert_eq!(
        (run.code, run.stderr.as_str(), run.stdout.as_str()),
        (
            0,
            "",
            format!("[n1 user] \"{HOSTILE_JSON}\" [HEAD* \"main\"] [HEAD \"b{HOSTILE_JSON}\"]\n")
                .as_str()
        )
    );
    assert_inert("the tree", &run.stdout);
}

/// Send `lines` to `tl-mcp` and return (stdout, stderr) once it has exited.
fn mcp_session(db: &Db, args: &[&str], lines: &[&str]) -> (i32, String, String) {
    let mut cmd = db.command(TL_MCP);
    cmd.args(args);
    let mut mcp = McpSession::open_command(cmd);
    for line in lines {
        mcp.send(line);
    }
    mcp.finish()
}

#[test]
fn tl_mcp_escapes_client_text_in_log_lines_and_answers() {
    let db = Db::created_at("1767225600");
    let db_arg = db.path.to_str().unwrap().to_string();
    let method = json!(HOSTILE).to_string();
    let (code, stdout, stderr) = mcp_session(
        &db,
        &["--db", &db_arg],
        &[
            // A notification with a hostile method: logged, never answered.
            &format!(r#"{{"jsonrpc":"2.0","method":{method}}}"#),
            // A request with one: answered with -32601, whose message quotes it.
            &format!(r#"{{"jsonrpc":"2.0","id":1,"method":{method}}}"#),
            // A tool result carrying the text: the same bytes `tl` prints.
            &format!(
                r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"timeline_append","arguments":{{"timeline_id":"tl0","role":"user","text":{method},"tokens":1}}}}}}"#
            ),
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"timeline_context","arguments":{"timeline_id":"tl0","node":"n1"}}}"#,
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let context = format!(r#"[{{"node":"n1","role":"user","text":"{HOSTILE_JSON}","tokens":1}}]"#);
    let wrapped = format!(r#"{{"messages":{context}}}"#);
    assert_eq!(
        stdout,
        format!(
            "{}\n{}\n{}\n",
            format_args!(
                r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":-32601,"message":"Method not found: {HOSTILE_JSON} (this server offers initialize, ping, tools/list and tools/call)"}}}}"#
            ),
            r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"node\":\"n1\"}"}],"structuredContent":{"node":"n1"}}}"#,
            format_args!(
                r#"{{"jsonrpc":"2.0","id":3,"result":{{"content":[{{"type":"text","text":{}}}],"structuredContent":{}}}}}"#,
                // The tool's text is what `tl context` prints, wrapped for MCP, escapes included.
                json!(wrapped).to_string(),
                wrapped
            ),
        )
    );
    let tl_context = db.tl(&["context", "--node", "n1"]);
    tl_context.ok(&context);
    assert_inert("stdout", &stdout);
    assert_eq!(
        stderr,
        format!(
            "tl-mcp: version {} serving {db_arg} on standard input/output\ntl-mcp: ignored the notification {HOSTILE_LOG}: notifications get no answer and never run a tool\n",
            env!("CARGO_PKG_VERSION")
        )
    );
    assert_inert("stderr", &stderr);
}

#[test]
fn tl_mcp_escapes_its_own_arguments_and_database_path_in_log_lines() {
    let db = Db::new();
    let (code, stdout, stderr) = mcp_session(&db, &[&format!("--x{HOSTILE}")], &[]);
    assert_eq!(
        (code, stdout.as_str(), stderr.as_str()),
        (
            2,
            "",
            format!(
                "tl-mcp: unknown argument --x{HOSTILE_LOG}\nUsage: tl-mcp [--db PATH]; run tl-mcp --help for more.\n"
            )
            .as_str()
        )
    );
    // A database path with an ESC in it (from --db or TIMELINE_DB) is logged escaped at start-up.
    // Windows file names cannot hold C0 controls such as ESC: there the name carries a bidirectional
    // override and a C1 control instead.
    let (name, logged) = if cfg!(windows) {
        ("x\u{202e}y\u{9b}", r"x\u202ey\u009b")
    } else {
        ("x\u{1b}[2Jy\u{9b}", r"x\u001b[2Jy\u009b")
    };
    let dir = db.dir.path().join(name);
    std::fs::create_dir(&dir).unwrap();
    let path = dir.join("db.json");
    let (code, _, stderr) = mcp_session(&db, &["--db", path.to_str().unwrap()], &[]);
    assert_eq!(code, 0);
    assert_eq!(
        stderr,
        format!(
            "tl-mcp: version {} serving {} on standard input/output\n",
            env!("CARGO_PKG_VERSION"),
            db.dir.path().join(logged).join("db.json").display()
        )
    );
}
