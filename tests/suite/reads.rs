//! Bounded by construction (issue 24): the storage rows an operation reads, counted by the engines'
//! `TIMELINE_COUNT_READS=1` (docs/contributing.md), are the same at the head of a 1,000-message
//! path and of a 100,000-message one. A count, not a time, so the tests are exact on any machine.

use crate::common::{Db, Engine, McpSession, TL};
use serde_json::{Value, json};

/// A database holding one chain of `len` messages of 50 tokens (`message 1` … and `needle` last),
/// written as a JSON snapshot in one go (and converted for SQLite) instead of `len` appends.
fn chain(len: u64) -> Db {
    let db = Db::new();
    let nodes: Vec<Value> = (1..=len)
        .map(|i| {
            let text = if i == len { "needle".to_string() } else { format!("message {i}") };
            json!({ "id": format!("n{i}"), "parent": format!("n{}", i - 1), "role": "user", "text": text, "tokens": 50 })
        })
        .collect();
    let snapshot = json!({
        "format_version": 1,
        "next_timeline": 1,
        "timelines": [{
            "id": "tl0",
            "next_node": len + 1,
            "current_branch": "main",
            "branches": [{ "name": "main", "head": format!("n{len}") }],
            "nodes": nodes,
        }],
    });
    let json_path = match crate::common::engine() {
        Engine::Json => db.path.clone(),
        Engine::Sqlite | Engine::Postgres => db.dir.path().join("fixture.json"),
    };
    std::fs::write(&json_path, snapshot.to_string()).unwrap();
    if crate::common::engine() != Engine::Json {
        let out = std::process::Command::new(TL)
            .arg("--db")
            .arg(&json_path)
            .args(["db", "convert", "--to"])
            .arg(&db.path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    // A side branch of one message off the message before the head, for diff.
    db.tl(&["fork", "--node", &format!("n{}", len - 1), "--name", "side"])
        .json();
    db.tl(&[
        "append", "--branch", "side", "--role", "user", "--text", "aside",
    ])
    .json();
    db
}

/// The rows each transaction of the run read, from its `storage rows read: N` lines (tl-mcp also
/// says what it serves).
fn counted(stderr: &str) -> Vec<u64> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("storage rows read: "))
        .map(|n| n.parse().unwrap())
        .collect()
}

/// Run `tl` with the counter on: its result and the rows its transactions read in all.
fn rows(db: &Db, args: &[&str]) -> (Value, u64) {
    let mut db_counting = Db {
        dir: crate::common::TempDir::new(),
        path: db.path.clone(),
        env: db.env.clone(),
    };
    db_counting.env("TIMELINE_COUNT_READS", "1");
    let run = db_counting.tl(args);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stderr
            .lines()
            .all(|l| l.starts_with("storage rows read: ")),
        "{run:?}"
    );
    let result = serde_json::from_str(&run.stdout).unwrap();
    (result, counted(&run.stderr).iter().sum())
}

/// What every bounded operation reads at the head of a chain of `len` messages.
fn reads_at_head(len: u64) -> Vec<(&'static str, u64)> {
    let db = chain(len);
    let head = format!("n{len}");
    let budget = ["budget", "--node", &head, "--max", "4000"];
    let dry = [&budget[..], &["--dry-run"]].concat();
    let (preview, dry_rows) = rows(&db, &dry);
    let (first, first_rows) = rows(&db, &budget);
    let (again, again_rows) = rows(&db, &budget);
    assert_eq!(first, again, "a repeated budget differs");
    assert_eq!(preview["total_tokens"], first["total_tokens"]);
    // The layout at the head: one placeholder for everything above the newest 79 messages.
    let messages = first["messages"].as_array().unwrap();
    assert_eq!((messages.len(), &first["total_tokens"]), (80, &json!(3982)));
    assert_eq!(
        messages[0]["text"],
        json!(format!(
            "[placeholder] {} message(s) n1..n{} ({} tokens) omitted to fit the budget; read them as the context of n{} (MCP: timeline_context with node \"n{}\"; CLI: tl context --node n{})",
            len - 79,
            len - 79,
            (len - 79) * 50,
            len - 79,
            len - 79,
            len - 79
        ))
    );
    // context_budget in one tl-mcp session, repeated.
    let mut mcp_db = Db {
        dir: crate::common::TempDir::new(),
        path: db.path.clone(),
        env: db.env.clone(),
    };
    mcp_db.env("TIMELINE_COUNT_READS", "1");
    let mut mcp = McpSession::start(&mcp_db);
    let before = counted(&mcp.stderr()).len();
    let args = json!({ "timeline_id": "tl0", "node": head, "max_tokens": 4000 });
    let via_mcp = mcp.ok("timeline_context_budget", args.clone());
    assert_eq!(via_mcp["summaries_created"], first["summaries_created"]);
    mcp.ok("timeline_context_budget", args);
    let (_, _, stderr) = mcp.finish();
    let mcp_rows = counted(&stderr)[before..].to_vec();
    let (log, log_rows) = rows(&db, &["log", "--limit", "20"]);
    assert_eq!(log["messages"].as_array().unwrap().len(), 20);
    let (found, search_rows) = rows(&db, &["search", "--query", "needle"]);
    assert_eq!(found["hits"].as_array().map(Vec::len), Some(1), "{found}");
    let (diff, diff_rows) = rows(&db, &["diff", "--left", "main", "--right", "side"]);
    assert_eq!(diff["ancestor"], json!(format!("n{}", len - 1)), "{diff}");
    vec![
        ("budget --dry-run", dry_rows),
        ("budget (creates its placeholder)", first_rows),
        ("budget (again)", again_rows),
        ("context_budget (first)", mcp_rows[0]),
        ("context_budget (again)", mcp_rows[1]),
        ("log", log_rows),
        ("search", search_rows),
        ("diff", diff_rows),
    ]
}

on_every_engine! {
    #[test]
    fn reads_at_the_head_do_not_grow_with_the_path() {
        let small = reads_at_head(1_000);
        let large = reads_at_head(100_000);
        assert_eq!(large, small);
    }
}
