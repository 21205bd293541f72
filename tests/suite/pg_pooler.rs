//! PostgreSQL through PgBouncer in transaction pooling mode (issue 48 item 4): Timeline assumes no
//! session state across transactions (no start-up `options`, no `SET` or prepared statement kept
//! past a transaction, advisory locks only per transaction), so every operation gives through the
//! pooler what it gives on the server directly. The pooler has 3 server connections for the many
//! clients of these tests, so clients do take each other's server sessions (tests/common/pgbouncer.rs).
// The pooler listens on a Unix socket and runs as nobody through setpriv, as the server does.
#![cfg(unix)]

use crate::common::{self, Db, McpSession, pgbouncer, postgres};
use serde_json::json;
use std::path::PathBuf;

/// A database through the pooler (a schema of its own), or `None` (after one loud line) when the
/// server or the pooler cannot run here.
fn pooled_db() -> Option<Db> {
    let uri = pgbouncer::fresh_uri()?;
    common::use_engine(common::Engine::Postgres);
    let mut db = Db::new();
    db.path = PathBuf::from(uri);
    Some(db)
}

/// A database on the server directly, to compare with.
fn direct_db() -> Db {
    postgres::server().expect("the pooler needs the server");
    common::use_engine(common::Engine::Postgres);
    Db::new()
}

#[test]
fn appends_from_several_processes_through_the_pooler_lose_nothing() {
    let Some(db) = pooled_db() else { return };
    // Six processes creating the schema at once: its migration lock is a transaction's.
    let runs = vec![vec!["create".to_string()]; 6];
    let mut ids: Vec<String> = db
        .tl_at_once(&runs)
        .iter()
        .map(|r| {
            assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{}", pgbouncer::log());
            r.json()["timeline_id"].as_str().unwrap().to_string()
        })
        .collect();
    ids.sort();
    assert_eq!(ids, ["tl0", "tl1", "tl2", "tl3", "tl4", "tl5"]);
    postgres::eight_appends_to_tl0_land_once(&db, 6, &pgbouncer::log);
}

/// One `tl-mcp` session makes many transactions; between them other processes take the pooler's
/// few server sessions, so the session's calls land on different server sessions.
#[test]
fn an_mcp_session_through_the_pooler_keeps_working_while_others_write() {
    let Some(db) = pooled_db() else { return };
    let mut mcp = McpSession::start(&db);
    assert_eq!(
        mcp.ok("timeline_create", json!({})),
        json!({"timeline_id": "tl0"})
    );
    for round in 1..=4u64 {
        let appended = mcp.ok(
            "timeline_append",
            json!({"timeline_id": "tl0", "role": "user", "text": format!("round {round}")}),
        );
        assert_eq!(appended, json!({"node": format!("n{}", 2 * round - 1)}));
        // Another process's change in between, on one of the same three server sessions.
        db.tl(&[
            "--timeline",
            "tl0",
            "append",
            "--role",
            "assistant",
            "--text",
            "reply",
        ])
        .ok(&format!(r#"{{"node":"n{}"}}"#, 2 * round));
    }
    let context = mcp.ok(
        "timeline_context",
        json!({"timeline_id": "tl0", "node": "n8"}),
    );
    assert_eq!(
        context.to_string().matches("round ").count(),
        4,
        "{context}"
    );
    let (code, rest, stderr) = mcp.finish();
    assert_eq!(
        (code, rest.as_str(), stderr.as_str()),
        (
            0,
            "",
            format!(
                "tl-mcp: version {} serving {} on standard input/output\n",
                env!("CARGO_PKG_VERSION"),
                db.path.display()
            )
            .as_str()
        )
    );
}

/// An import, search, context, export and `db check` through the pooler give exactly what they
/// give on the server directly.
#[test]
fn import_search_and_check_through_the_pooler_match_the_server() {
    let Some(pooled) = pooled_db() else { return };
    let direct = direct_db();
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/interchange/chatgpt-conversations.json");
    let fixture = fixture.display().to_string();
    let runs: &[&[&str]] = &[
        &["import", "--format", "chatgpt", "--input", &fixture],
        &["import", "--format", "chatgpt", "--input", &fixture],
        &["timelines"],
        &["search", "--query", "Kyoto"],
        &["search", "--query", "trip*", "--role", "user"],
        &["branches", "--timeline", "tl0"],
        &["--timeline", "tl0", "context", "--node", "n7"],
        &[
            "--timeline",
            "tl0",
            "export",
            "--format",
            "openai",
            "--node",
            "n7",
        ],
    ];
    for args in runs {
        let (a, b) = (pooled.tl(args), direct.tl(args));
        assert_eq!(
            (a.code, &a.stderr),
            (0, &String::new()),
            "{args:?}: {}",
            pgbouncer::log()
        );
        assert_eq!(
            (a.code, &a.stdout, &a.stderr),
            (b.code, &b.stdout, &b.stderr),
            "{args:?}"
        );
    }
    pooled.tl(&["db", "check"]).ok(&format!(
        r#"{{"ok":true,"engine":"postgres","path":"{}","problems":[]}}"#,
        pooled.path.display()
    ));
}
