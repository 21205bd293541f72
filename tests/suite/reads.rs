//! Bounded by construction (issue 24): the storage rows an operation reads, counted by the engines'
//! `TIMELINE_COUNT_READS=1` (docs/contributing.md), are the same at the head of a 1,000-message
//! path and of a 100,000-message one; on PostgreSQL, so are the statements each sends to the server
//! (issue 25, item 4). A count, not a time, so the tests are exact on any machine.

use crate::common::{Db, Engine, McpSession};
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
    let json_path = db.dir.path().join("fixture.json");
    std::fs::write(&json_path, snapshot.to_string()).unwrap();
    db.fill_from_snapshot(&json_path);
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
    lines(stderr, "storage rows read: ")
}

/// The statements each read or change sent to the server, from its `storage statements sent: N`
/// lines (PostgreSQL only).
fn sent(stderr: &str) -> Vec<u64> {
    lines(stderr, "storage statements sent: ")
}

fn lines(stderr: &str, prefix: &str) -> Vec<u64> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .map(|n| n.parse().unwrap())
        .collect()
}

/// The instructions SQLite ran for each read or change, from its `storage sqlite instructions: N`
/// lines (SQLite only, in steps of 100): the work inside the database that rows do not show.
fn instructions(stderr: &str) -> Vec<u64> {
    lines(stderr, "storage sqlite instructions: ")
}

/// What one operation costs: the rows its transactions read, on PostgreSQL the statements they
/// sent, and on SQLite the instructions it ran (none of either on the other engines), in all.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
struct Cost {
    rows: u64,
    statements: u64,
    instructions: u64,
}

/// Run `tl` with the counter on: its result and what its transactions cost in all.
fn rows(db: &Db, args: &[&str]) -> (Value, Cost) {
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
            .all(|l| l.starts_with("storage rows read: ")
                || l.starts_with("storage statements sent: ")
                || l.starts_with("storage sqlite instructions: ")),
        "{run:?}"
    );
    let result = serde_json::from_str(&run.stdout).unwrap();
    (result, cost(&run.stderr))
}

fn cost(stderr: &str) -> Cost {
    let cost = Cost {
        rows: counted(stderr).iter().sum(),
        statements: sent(stderr).iter().sum(),
        instructions: instructions(stderr).iter().sum(),
    };
    // Every read and change of a server engine says what it sent, and of SQLite what it ran.
    let engine = crate::common::engine();
    let expect = |on: Engine| {
        if engine == on {
            counted(stderr).len()
        } else {
            0
        }
    };
    assert_eq!(sent(stderr).len(), expect(Engine::Postgres), "{stderr}");
    assert_eq!(
        instructions(stderr).len(),
        expect(Engine::Sqlite),
        "{stderr}"
    );
    cost
}

/// What every bounded operation costs at the head of a chain of `len` messages.
fn reads_at_head(len: u64) -> Vec<(&'static str, Cost)> {
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
    let startup = mcp.stderr();
    let before = (
        counted(&startup).len(),
        sent(&startup).len(),
        instructions(&startup).len(),
    );
    let args = json!({ "timeline_id": "tl0", "node": head, "max_tokens": 4000 });
    let via_mcp = mcp.ok("timeline_context_budget", args.clone());
    assert_eq!(via_mcp["summaries_created"], first["summaries_created"]);
    mcp.ok("timeline_context_budget", args);
    let (_, _, stderr) = mcp.finish();
    let mcp_rows = counted(&stderr)[before.0..].to_vec();
    let mcp_sent = sent(&stderr)[before.1..].to_vec();
    let mcp_instructions = instructions(&stderr)[before.2..].to_vec();
    let engine = crate::common::engine();
    let expect = |on: Engine| if engine == on { mcp_rows.len() } else { 0 };
    assert_eq!(mcp_sent.len(), expect(Engine::Postgres));
    assert_eq!(mcp_instructions.len(), expect(Engine::Sqlite));
    let mcp_cost = |i: usize| Cost {
        rows: mcp_rows[i],
        statements: mcp_sent.get(i).copied().unwrap_or(0),
        instructions: mcp_instructions.get(i).copied().unwrap_or(0),
    };
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
        ("context_budget (first)", mcp_cost(0)),
        ("context_budget (again)", mcp_cost(1)),
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
        let without_instructions =
            |costs: &[(&'static str, Cost)]| -> Vec<(&'static str, Cost)> {
                costs
                    .iter()
                    .map(|&(name, cost)| (name, Cost { instructions: 0, ..cost }))
                    .collect()
            };
        assert_eq!(without_instructions(&large), without_instructions(&small));
        // SQLite's own work may grow with the jump walks' O(log n) rows, never with the path: a
        // query planned as a scan (as SQLite 3.50 once planned the jump step) runs instructions
        // by the hundred thousand at 100k messages.
        // That holds for the first budget too, which writes its placeholder and nothing per
        // message it covers (coverage comes from the ranges, src/store/cover.rs).
        for ((name, at_1k), (_, at_100k)) in small.iter().zip(&large) {
            assert!(
                at_100k.instructions <= 2 * at_1k.instructions + 20_000,
                "{name}: {} SQLite instructions at the head of 100k messages, {} at 1k",
                at_100k.instructions,
                at_1k.instructions
            );
        }
    }

    /// A first budget at the head of 10,000 messages covers the 9,921 above its window with one
    /// placeholder (the SQL engines write its row alone: coverage comes from the ranges): both
    /// branches' watermarks stop at its range's end, above the first bare message, `db check`, which
    /// derives every row afresh, finds them right, and the repeated budget reuses the placeholder.
    #[test]
    fn a_first_budget_counts_every_cover_of_a_long_range() {
        let db = chain(10_000);
        let budget = ["budget", "--node", "n10000", "--max", "4000"];
        let first = db.tl(&budget).json();
        assert_eq!(first["summaries_created"], json!(["n10002"]));
        assert_eq!(
            first["messages"][0]["text"],
            json!("[placeholder] 9921 message(s) n1..n9921 (496050 tokens) omitted to fit the budget; read them as the context of n9921 (MCP: timeline_context with node \"n9921\"; CLI: tl context --node n9921)")
        );
        let branches = db.value()["timelines"][0]["branches"].clone();
        let watermarks: Vec<&Value> = branches
            .as_array()
            .unwrap()
            .iter()
            .map(|b| &b["watermark"])
            .collect();
        assert_eq!(watermarks, [&json!("n9921"), &json!("n9921")], "{branches}");
        assert_eq!(db.tl(&["db", "check"]).json()["ok"], json!(true));
        assert_eq!(db.tl(&budget).json(), first);
    }
}
