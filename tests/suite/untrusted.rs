//! A database file is data, not code (issue 21, items 5 and 6): schema objects Timeline did not
//! create are refused before anything can run them, and the tree structure a file claims (parents,
//! depths) is checked where it is walked, so a crafted file can neither run code, hang a command nor
//! make one allocate without end. Every case runs the real `tl` / `tl-mcp` binaries.

use crate::common;

use common::{Db, McpSession, Run};
use serde_json::{Value, json};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Run `tl --db <db> <args>`, failing the test instead of waiting for ever when the command hangs
/// (a view with an endless query, a walk around a parent cycle).
#[track_caller]
fn tl_bounded(db: &Db, args: &[&str]) -> Run {
    let mut cmd = db.command(common::TL);
    cmd.arg("--db").arg(&db.path).args(args);
    bounded(cmd)
}

#[track_caller]
fn bounded(mut cmd: Command) -> Run {
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Run::from(child.wait_with_output().unwrap())
}

/// The names in the database's directory with the bytes of each file: what must not change.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    files.sort();
    files
}

/// A SQLite database with two messages on main, closed (no -wal file left).
fn sqlite_db() -> Db {
    common::use_engine(common::Engine::Sqlite);
    let db = Db::new();
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    db.append("user", "a secret", 2);
    db.append("assistant", "another secret", 2);
    db
}

fn sqlite_exec(db: &Db, sql: &str) {
    let conn = rusqlite::Connection::open(&db.path).unwrap();
    conn.execute_batch(sql).unwrap();
}

/// The refusal of a database that holds `objects` (as the error names them), removed by `drops`.
fn refusal(db: &Db, objects: &str, drops: &str) -> String {
    json!({"error": format!(
        "the database {} holds schema objects that Timeline did not create: {objects}. A database file is data, not code: a trigger or view can run whenever the database is read or changed, and any object Timeline did not make can change what its queries do, so Timeline does not use this file; nothing was changed. If you added them yourself, remove them with the sqlite3 shell ({drops}), or restore a backup of the database you trust; otherwise the file may have been tampered with: keep a copy of it for inspection and restore a backup",
        db.path.display()
    )})
    .to_string()
}

/// What `db check` prints for these problems.
fn check_report(db: &Db, problems: &[String]) -> String {
    json!({
        "error": format!(
            "the database {} has {} problem(s): {}. Nothing was changed; see docs/storage.md for recovery",
            db.path.display(),
            problems.len(),
            problems.join("; ")
        ),
        "data": {"problems": problems},
    })
    .to_string()
}

fn foreign_problem(object: &str, drop: &str) -> String {
    format!(
        "{object} is not part of Timeline's schema (a database file is data, not code); remove it with the sqlite3 shell ({drop})"
    )
}

/// Each kind of foreign object: what is added, how the refusal names it and the statement that
/// removes it.
const FOREIGN: &[(&str, &str, &str)] = &[
    (
        // Copies every new message's text into the audit, where `db check` would not look.
        "CREATE TRIGGER copy_texts AFTER INSERT ON nodes BEGIN INSERT INTO audit (ts, entry) VALUES (0, new.text); END;",
        "trigger copy_texts on nodes",
        r#"DROP TRIGGER "copy_texts";"#,
    ),
    (
        "CREATE VIEW endless AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT x FROM r;",
        "view endless",
        r#"DROP VIEW "endless";"#,
    ),
    (
        "CREATE TABLE extra (x);",
        "table extra",
        r#"DROP TABLE "extra";"#,
    ),
    (
        "CREATE INDEX nodes_by_text ON nodes (text);",
        "index nodes_by_text on nodes",
        r#"DROP INDEX "nodes_by_text";"#,
    ),
];

/// #21.5: a trigger, a view with an endless recursive query, an extra table, an extra index: each
/// is refused by `append`, `timelines`, `db info` and a `tl-mcp` call, named, with nothing changed
/// (every file in the directory keeps its bytes, and nothing runs the objects: no hang, no copied
/// text); `db check` lists it with the statement that removes it.
#[test]
fn each_foreign_schema_object_is_refused_untouched_and_listed() {
    for &(sql, named, removal) in FOREIGN {
        let db = sqlite_db();
        sqlite_exec(&db, sql);
        let before = files(db.dir.path());
        let refused = refusal(&db, named, removal);
        for args in [
            &["append", "--role", "user", "--text", "more"][..],
            &["timelines"],
            &["db", "info"],
            &["context", "--node", "n2"],
        ] {
            tl_bounded(&db, args).err(3, &refused);
        }
        let mut mcp = McpSession::start(&db);
        for (tool, arguments) in [
            ("timeline_list", json!({})),
            (
                "timeline_append",
                json!({"timeline_id": "tl0", "role": "user", "text": "more"}),
            ),
        ] {
            let error = mcp.call(tool, arguments).unwrap_err();
            assert_eq!(
                error,
                serde_json::from_str::<Value>(&refused).unwrap(),
                "{named}: {tool}"
            );
        }
        drop(mcp);
        tl_bounded(&db, &["db", "check"])
            .err(3, &check_report(&db, &[foreign_problem(named, removal)]));
        assert!(before == files(db.dir.path()), "{named}: the files changed");
        // Removed as the message says, the database works again, with nothing copied.
        sqlite_exec(&db, removal);
        db.tl(&["append", "--role", "user", "--text", "more"])
            .ok(r#"{"node":"n3"}"#);
        let audit = db.value()["audit"].to_string();
        assert!(!audit.contains("secret"), "{named}: {audit}");
    }
}

/// #21.5: several foreign objects are all named (in the order they were made), and removed
/// triggers and views first; the refusal also holds for an older schema, before its migration
/// would write anything.
#[test]
fn several_foreign_objects_are_all_named_and_an_old_schema_is_not_migrated() {
    let db = sqlite_db();
    sqlite_exec(
        &db,
        &FOREIGN.iter().map(|f| f.0).collect::<Vec<_>>().join("\n"),
    );
    let names = FOREIGN.iter().map(|f| f.1).collect::<Vec<_>>().join(", ");
    let drops = [FOREIGN[0].2, FOREIGN[1].2, FOREIGN[3].2, FOREIGN[2].2].join(" ");
    let refused = refusal(&db, &names, &drops);
    let before = files(db.dir.path());
    tl_bounded(&db, &["branches"]).err(3, &refused);
    let problems: Vec<String> = FOREIGN.iter().map(|f| foreign_problem(f.1, f.2)).collect();
    tl_bounded(&db, &["db", "check"]).err(3, &check_report(&db, &problems));
    assert!(before == files(db.dir.path()));

    // Schema version 2 (before the search index): the objects of versions 1 and 2 are Timeline's,
    // the extra table is not, and the migration to version 3 does not run.
    let old = sqlite_db();
    sqlite_exec(
        &old,
        "DROP TABLE search_pending; DROP INDEX nodes_summaries; DROP INDEX nodes_pinned; DROP INDEX nodes_by_real_start; ALTER TABLE nodes DROP COLUMN jump; ALTER TABLE nodes DROP COLUMN path_min_tokens; DROP INDEX nodes_with_newer_parent; DROP INDEX imports_by_digest; ALTER TABLE nodes DROP COLUMN provenance; DROP TABLE search_index; DROP TABLE search_docs; PRAGMA user_version = 2; CREATE TABLE extra (x);",
    );
    let before = files(old.dir.path());
    tl_bounded(&old, &["branches"]).err(3, &refusal(&old, "table extra", r#"DROP TABLE "extra";"#));
    assert!(before == files(old.dir.path()));
    sqlite_exec(&old, r#"DROP TABLE "extra";"#);
    old.tl(&["search", "--query", "secret"]).json();
    old.tl(&["db", "check"]).ok(&json!({"ok": true, "engine": "sqlite", "path": old.path.display().to_string(), "problems": []}).to_string());
}

/// #21.5: a table of Timeline's own name defined otherwise (here with a default that calls a
/// function) is refused too: only the exact definitions Timeline's migrations make are accepted.
/// SQLite's own statistics tables (ANALYZE) are not foreign, and neither is an FTS5 shadow table
/// whose definition another SQLite release words differently (it is FTS5's, not Timeline's).
#[test]
fn a_redefined_table_is_refused_and_sqlite_statistics_are_accepted() {
    let db = sqlite_db();
    sqlite_exec(&db, "ANALYZE;");
    sqlite_exec(
        &db,
        "PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = replace(sql, 'block BLOB', 'block  BLOB') WHERE name = 'search_index_data'; PRAGMA writable_schema = OFF;",
    );
    db.tl(&["branches"])
        .ok(r#"[{"name":"main","head":"n2","current":true}]"#);
    db.tl(&["search", "--query", "secret"]).json();
    sqlite_exec(
        &db,
        "DROP TABLE audit; CREATE TABLE audit (seq INTEGER PRIMARY KEY, ts INTEGER NOT NULL, entry TEXT NOT NULL, copy TEXT DEFAULT (random()));",
    );
    let before = files(db.dir.path());
    let named = "table audit (defined otherwise than Timeline defines it)";
    tl_bounded(&db, &["branches"]).err(
        3,
        &json!({"error": format!(
            "the database {} holds schema objects that Timeline did not create: {named}. A database file is data, not code: a trigger or view can run whenever the database is read or changed, and any object Timeline did not make can change what its queries do, so Timeline does not use this file; nothing was changed. If you added them yourself, restore a backup of the database you trust; otherwise the file may have been tampered with: keep a copy of it for inspection and restore a backup",
            db.path.display()
        )})
        .to_string(),
    );
    tl_bounded(&db, &["db", "check"]).err(
        3,
        &check_report(
            &db,
            &[format!(
                "{named} is not part of Timeline's schema; restore a backup of the database"
            )],
        ),
    );
    assert!(before == files(db.dir.path()));
}

/// #21.5: a trigger added while a `tl-mcp` session has the database open is refused at the
/// session's next call (the schema is verified again whenever it changed), and runs nowhere.
#[test]
fn a_trigger_added_during_a_session_is_refused_at_the_next_call() {
    let db = sqlite_db();
    let mut mcp = McpSession::start(&db);
    mcp.ok(
        "timeline_append",
        json!({"timeline_id": "tl0", "role": "user", "text": "before"}),
    );
    let (sql, named, removal) = FOREIGN[0];
    sqlite_exec(&db, sql);
    let refused: Value = serde_json::from_str(&refusal(&db, named, removal)).unwrap();
    for (tool, arguments) in [
        (
            "timeline_append",
            json!({"timeline_id": "tl0", "role": "user", "text": "a third secret"}),
        ),
        ("timeline_list", json!({})),
    ] {
        assert_eq!(mcp.call(tool, arguments).unwrap_err(), refused, "{tool}");
    }
    drop(mcp);
    sqlite_exec(&db, removal);
    let value = db.value();
    assert_eq!(value["timelines"][0]["next_node"], json!(4), "{value}");
    assert!(!value["audit"].to_string().contains("secret"), "{value}");
}

/// #21.5 under concurrency: `tl append` processes keep writing while another program adds a
/// trigger. Each append either succeeded before the trigger was there (its message is stored) or is
/// refused with the trigger's name; none runs it (every change verifies the schema inside its own
/// write transaction, which the trigger's creation cannot interleave with).
#[test]
fn appends_racing_the_creation_of_a_trigger_never_run_it() {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    const WORKERS: usize = 4;
    const EACH: usize = 12;
    let db = sqlite_db();
    let (sql, named, removal) = FOREIGN[0];
    let refused = refusal(&db, named, removal);
    let done = AtomicUsize::new(0);
    // The second half of each worker's appends waits for the trigger, so some surely meet it.
    let added = AtomicBool::new(false);
    let outcomes: Vec<Vec<(String, Option<String>)>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..WORKERS)
            .map(|w| {
                let (db, done, added, refused) = (&db, &done, &added, &refused);
                s.spawn(move || {
                    let mut seen_refusal = false;
                    (0..EACH)
                        .map(|i| {
                            while i >= EACH / 2 && !added.load(Ordering::SeqCst) {
                                std::thread::sleep(Duration::from_millis(5));
                            }
                            let text = format!("worker {w} message {i}");
                            let run =
                                tl_bounded(db, &["append", "--role", "user", "--text", &text]);
                            done.fetch_add(1, Ordering::SeqCst);
                            if run.code == 0 {
                                assert!(!seen_refusal, "{text}: written after a refusal");
                                (text, Some(run.json()["node"].as_str().unwrap().to_string()))
                            } else {
                                run.err(3, refused);
                                seen_refusal = true;
                                (text, None)
                            }
                        })
                        .collect()
                })
            })
            .collect();
        while done.load(Ordering::SeqCst) < WORKERS * 2 {
            std::thread::sleep(Duration::from_millis(5));
        }
        let conn = rusqlite::Connection::open(&db.path).unwrap();
        conn.busy_timeout(Duration::from_secs(30)).unwrap();
        conn.execute_batch(sql).unwrap();
        drop(conn);
        added.store(true, Ordering::SeqCst);
        workers.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let written: Vec<&(String, Option<String>)> = outcomes
        .iter()
        .flatten()
        .filter(|(_, node)| node.is_some())
        .collect();
    let refusals = WORKERS * EACH - written.len();
    assert!(
        written.len() >= WORKERS * 2 && refusals >= WORKERS * EACH / 2,
        "{outcomes:?}"
    );
    sqlite_exec(&db, removal);
    // Every acknowledged message is there with its text, and nothing else was added: the audit
    // holds only Timeline's own entries (a copied text would not load as one).
    let value = db.value();
    let nodes = value["timelines"][0]["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2 + written.len(), "{value}");
    for (text, node) in written {
        let stored = nodes
            .iter()
            .find(|n| n["id"] == json!(node.as_deref().unwrap()))
            .unwrap();
        assert_eq!(stored["text"], json!(text));
    }
}

/// The damage error of a node whose parent is not older than it, as each engine words it for `tl`.
fn parent_damage(db: &Db, node: &str, parent: &str) -> String {
    damage_worded(db, node, parent, false)
}

/// The same error over MCP: no MCP tool checks, repairs or restores a database, so a model is told
/// to hand over to its user instead of being shown `tl`'s commands.
fn parent_damage_over_mcp(db: &Db, node: &str, parent: &str) -> Value {
    serde_json::from_str(&damage_worded(db, node, parent, true)).unwrap()
}

fn damage_worded(db: &Db, node: &str, parent: &str, mcp: bool) -> String {
    let p = db.path.display();
    let recover_by_the_user = "No MCP tool repairs or restores a database: stop and tell the user that the file is damaged and needs recovering (Timeline's storage documentation, \"Damaged files\", says how)";
    let message = match (db.engine(), mcp) {
        (common::Engine::Sqlite, false) => format!(
            "the database {p} cannot be used: timeline tl0: node {node} has parent {parent}, which is not older than it (Timeline always writes a parent before its children, so something else changed the file). Nothing was changed and nothing will be written to it. To recover: stop every tl and tl-mcp process that uses it, keep a copy of the damaged file and its -wal file (cp \"{p}\" \"{p}.corrupt\"), then restore a copy made with tl db backup, or salvage what SQLite can read (sqlite3 \"{p}\" .recover | sqlite3 recovered.db) and check it with tl --db recovered.db db check"
        ),
        (common::Engine::Sqlite, true) => format!(
            "the database {p} cannot be used: timeline tl0: node {node} has parent {parent}, which is not older than it (Timeline always writes a parent before its children, so something else changed the file). Nothing was changed and nothing will be written to it. {recover_by_the_user}"
        ),
        (common::Engine::Json, false) => format!(
            "the database {p} cannot be used: invalid content (timeline tl0: node {node} has parent {parent} that is not older than it). Nothing was changed and nothing will be written to it. To recover: stop every tl and tl-mcp process that uses it, keep a copy of the damaged file (cp \"{p}\" \"{p}.corrupt\"), then restore the previous snapshot: cp \"{p}.bak\" \"{p}\""
        ),
        (common::Engine::Json, true) => format!(
            "the database {p} cannot be used: invalid content (timeline tl0: node {node} has parent {parent} that is not older than it). Nothing was changed and nothing will be written to it. {recover_by_the_user}"
        ),
        (common::Engine::Postgres, false) => format!(
            "the database {p} is damaged: timeline tl0: node {node} claims parent {parent}, which is not older than it; nothing was changed. Run tl db check, and restore a backup"
        ),
        (common::Engine::Postgres, true) => format!(
            "the database {p} is damaged: timeline tl0: node {node} claims parent {parent}, which is not older than it; nothing was changed. No MCP tool checks, repairs or restores a database: stop and tell the user that it needs checking and restoring from a backup"
        ),
    };
    json!({ "error": message }).to_string()
}

/// What `db check` reports of that node.
fn parent_problem(db: &Db, node: &str, parent: &str) -> String {
    match db.engine() {
        common::Engine::Sqlite | common::Engine::Postgres => format!(
            "the database {} is damaged: timeline tl0: node {node} has parent {parent} that is not older than it; run tl db check",
            db.path.display()
        ),
        common::Engine::Json => format!(
            "invalid content (timeline tl0: node {node} has parent {parent} that is not older than it)"
        ),
    }
}

/// Give node `n` of tl0 the parent `parent` in the file itself (on a server, in its row), as
/// another program could.
fn set_parent(db: &Db, n: u64, parent: u64) {
    match db.engine() {
        common::Engine::Sqlite => sqlite_exec(
            db,
            &format!("UPDATE nodes SET parent = {parent} WHERE timeline = 0 AND id = {n}"),
        ),
        common::Engine::Json => {
            let mut value: Value =
                serde_json::from_slice(&std::fs::read(&db.path).unwrap()).unwrap();
            let nodes = value["timelines"][0]["nodes"].as_array_mut().unwrap();
            let node = nodes
                .iter_mut()
                .find(|node| node["id"] == json!(format!("n{n}")))
                .unwrap();
            node["parent"] = json!(format!("n{parent}"));
            std::fs::write(&db.path, serde_json::to_vec_pretty(&value).unwrap()).unwrap();
        }
        common::Engine::Postgres => common::pg_raw::execute(
            db,
            &format!("UPDATE nodes SET parent = {parent} WHERE timeline = 0 AND id = {n}"),
        ),
    }
}

/// What must not change: every file in the database's directory, and on a server every row.
fn stored(db: &Db) -> (Vec<(String, Vec<u8>)>, String) {
    let rows = match db.engine() {
        common::Engine::Postgres => common::pg_raw::rows(db),
        _ => String::new(),
    };
    (files(db.dir.path()), rows)
}

on_every_engine! {
    /// #21.6: a parent cycle (n2 → n3 → n2) or a node that is its own parent written into the
    /// file: `context`, `budget`, `append`, `log` and a `tl-mcp` call give the damage error at once
    /// (instead of walking the cycle until memory runs out), nothing changes, and `db check`
    /// reports it.
    #[test]
    fn a_parent_cycle_or_a_newer_parent_is_damage_and_nothing_is_written() {
        for (n, parent) in [(2, 3), (3, 3)] {
            let db = Db::new();
            db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
            for text in ["one", "two", "three"] {
                db.append("user", text, 1);
            }
            set_parent(&db, n, parent);
            let before = stored(&db);
            let damage = parent_damage(&db, &format!("n{n}"), &format!("n{parent}"));
            for args in [
                &["context", "--node", "n3"][..],
                &["budget", "--node", "n3", "--max", "100"],
                &["append", "--role", "user", "--text", "four"],
                &["log"],
            ] {
                tl_bounded(&db, args).err(3, &damage);
            }
            let mut mcp = McpSession::start(&db);
            let error = mcp
                .call("timeline_context", json!({"timeline_id": "tl0", "node": "n3"}))
                .unwrap_err();
            assert_eq!(
                error,
                parent_damage_over_mcp(&db, &format!("n{n}"), &format!("n{parent}"))
            );
            drop(mcp);
            tl_bounded(&db, &["db", "check"])
                .err(3, &check_report(&db, &[parent_problem(&db, &format!("n{n}"), &format!("n{parent}"))]));
            assert!(before == stored(&db), "n{n} -> n{parent}: the database changed");
        }
    }

    /// #21.6: a parent cycle (n3 → n4 → n3) far above the head, 21 levels up, which no change
    /// reads on its way: `append`, `summarize` and `tl-mcp`'s timeline_append are refused with the
    /// damage error before they write anything (SQLite looks the cycle up in an index of such rows;
    /// the JSON engine checks every parent on load), and the files stay as they were.
    #[test]
    fn a_parent_cycle_far_above_the_head_refuses_every_change() {
        let db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        for i in 1..=25 {
            db.append("user", &format!("message {i}"), 1);
        }
        set_parent(&db, 3, 4);
        let before = stored(&db);
        let damage = parent_damage(&db, "n3", "n4");
        tl_bounded(&db, &["append", "--role", "user", "--text", "more"]).err(3, &damage);
        tl_bounded(
            &db,
            &["summarize", "--from", "n20", "--to", "n24", "--summary", "s", "--tokens", "1"],
        )
        .err(3, &damage);
        assert!(before == stored(&db), "tl changed the database");
        let mut mcp = McpSession::start(&db);
        let error = mcp
            .call(
                "timeline_append",
                json!({"timeline_id": "tl0", "role": "user", "text": "more"}),
            )
            .unwrap_err();
        assert_eq!(error, parent_damage_over_mcp(&db, "n3", "n4"));
        drop(mcp);
        if db.engine() == common::Engine::Postgres {
            assert!(before == stored(&db), "tl-mcp changed the database");
            return;
        }
        // (The session is killed, so SQLite leaves its -wal and -shm; a write would be in the -wal.)
        let wal = format!("{}-wal", db.path.display());
        assert!(std::fs::read(wal).unwrap_or_default().is_empty(), "tl-mcp wrote to the -wal");
        let name = db.path.file_name().unwrap().to_string_lossy();
        let (_, bytes) = before.0.iter().find(|(n, _)| *n == name).unwrap();
        assert!(std::fs::read(&db.path).unwrap() == *bytes, "tl-mcp changed the file");
    }
}

/// #21.6 (SQLite, which stores each node's depth): a walk up the tree is bounded by the depth the
/// node claims, so a depth that does not match its parent's is damage too; a root that claims a
/// parent or a depth is refused (walks end there). An append checks its parent's place first.
#[test]
fn sqlite_depths_that_do_not_match_are_damage() {
    let db = sqlite_db();
    db.append("user", "three", 1);
    sqlite_exec(
        &db,
        "UPDATE nodes SET depth = 7 WHERE timeline = 0 AND id = 2",
    );
    let before = files(db.dir.path());
    let depth_damage = json!({"error": "the database is damaged: node n3 of tl0 is at depth 3 but its parent n2 at depth 7 (Timeline always writes a node one level below its parent, so something else changed the file); nothing was changed. Restore a backup of the database"}).to_string();
    tl_bounded(&db, &["context", "--node", "n3"]).err(3, &depth_damage);
    // (The append's parent is n3, whose own parent n2 is where the depths disagree.)
    tl_bounded(&db, &["append", "--role", "user", "--text", "four"]).err(3, &depth_damage);
    tl_bounded(&db, &["db", "check"]).err(
        3,
        &check_report(
            &db,
            &["timeline tl0: the stored state of n2 differs from what its history gives".into()],
        ),
    );
    assert!(before == files(db.dir.path()));

    let db = sqlite_db();
    sqlite_exec(
        &db,
        "UPDATE nodes SET depth = 9 WHERE timeline = 0 AND id = 0",
    );
    let p = db.path.display();
    tl_bounded(&db, &["context", "--node", "n2"]).err(3, &json!({"error": format!(
        "the database {p} cannot be used: timeline tl0: its root n0 claims parent n0 and depth 9 (a root has neither). Nothing was changed and nothing will be written to it. To recover: stop every tl and tl-mcp process that uses it, keep a copy of the damaged file and its -wal file (cp \"{p}\" \"{p}.corrupt\"), then restore a copy made with tl db backup, or salvage what SQLite can read (sqlite3 \"{p}\" .recover | sqlite3 recovered.db) and check it with tl --db recovered.db db check"
    )}).to_string());
}

/// On PostgreSQL, the schema belongs to the server's administrators, not to a file anyone can hand
/// over: a trigger or view someone with the rights adds there runs as the server runs it (a hostile
/// server is out of scope), so the foreign-object checks above are the file engines' (SQLite).
/// What Timeline does guard against: a table of its schema altered by someone else (a column
/// dropped) and a schema that a newer Timeline wrote are refused with a clear error, before
/// anything is written, through both binaries.
#[cfg(unix)]
mod on_postgres {
    use super::*;

    fn pg_db() -> Option<Db> {
        common::postgres::server()?;
        common::use_engine(common::Engine::Postgres);
        let db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        db.append("user", "a secret", 2);
        Some(db)
    }

    /// `tl` refuses with `error`, and `tl-mcp` with `over_mcp` (the same words where the error
    /// names no step that only a person can take).
    #[track_caller]
    fn refused_untouched(db: &Db, error: &str, over_mcp: &str) {
        let before = common::pg_raw::rows(db);
        let expected = json!({ "error": error }).to_string();
        for args in [
            &["append", "--role", "user", "--text", "more"][..],
            &[
                "summarize",
                "--from",
                "n1",
                "--to",
                "n1",
                "--summary",
                "s",
                "--tokens",
                "1",
            ],
        ] {
            tl_bounded(db, args).err(3, &expected);
        }
        let mut mcp = McpSession::start(db);
        let error = mcp
            .call(
                "timeline_append",
                json!({"timeline_id": "tl0", "role": "user", "text": "more"}),
            )
            .unwrap_err();
        assert_eq!(error, json!({ "error": over_mcp }));
        drop(mcp);
        assert!(before == common::pg_raw::rows(db), "the rows changed");
    }

    #[test]
    fn a_table_altered_by_someone_else_is_refused_untouched() {
        let Some(db) = pg_db() else { return };
        common::pg_raw::execute(&db, "ALTER TABLE nodes DROP COLUMN provenance");
        let refusal = format!(
            "cannot use the database {}: column nodes.provenance does not exist; the schema's tables are not as Timeline made them (someone else altered them), so Timeline does not use them and nothing was written. ",
            db.path.display()
        );
        refused_untouched(
            &db,
            &format!(
                "{refusal}Restore the schema from a backup (tl db backup, or the server's own), or convert a backup into a new schema (tl db convert)"
            ),
            &format!(
                "{refusal}No MCP tool checks, repairs or restores a database: stop and tell the user that it needs checking and restoring from a backup"
            ),
        );
    }

    #[test]
    fn a_schema_of_a_newer_timeline_is_refused_untouched() {
        let Some(db) = pg_db() else { return };
        common::pg_raw::execute(&db, "UPDATE state SET schema_version = 99");
        let refusal = format!(
            "the database {} has schema version 99, newer than this version of Timeline reads ({}); nothing was changed. Use the release of Timeline that wrote it, or a newer one",
            db.path.display(),
            timeline::store::postgres_schema_version()
        );
        refused_untouched(&db, &refusal, &refusal);
    }

    #[test]
    fn a_damaged_record_is_worded_for_each_front_end() {
        let Some(db) = pg_db() else { return };
        super::a_damaged_record_is_worded_for_each_front_end(&db, |db| {
            common::pg_raw::execute(db, "UPDATE idempotency SET result = 'x'")
        });
    }
}

/// A stored record that does not parse (here the answer an idempotency key keeps) is damage: `tl`
/// names `db check`; over MCP, where no tool checks a database, the model is told to hand over to
/// its user instead of being shown a command. Nothing is written on the way. (The JSON snapshot
/// refuses such a record when the file loads, as `store::` tests.)
fn a_damaged_record_is_worded_for_each_front_end(db: &Db, damage: impl Fn(&Db)) {
    let append = |db: &Db| {
        db.tl(&[
            "--idempotency-key",
            "k1",
            "append",
            "--role",
            "user",
            "--text",
            "more",
        ])
    };
    append(db).ok(r#"{"node":"n2"}"#);
    damage(db);
    let p = db.path.display();
    let what = format!(
        "the database {p} has a damaged idempotency record (expected value at line 1 column 1)"
    );
    append(db).err(
        3,
        &json!({ "error": format!("{what}; run tl db check") }).to_string(),
    );
    let mut mcp = McpSession::start(db);
    let error = mcp
        .call(
            "timeline_append",
            json!({"timeline_id": "tl0", "role": "user", "text": "more", "idempotency_key": "k1"}),
        )
        .unwrap_err();
    assert_eq!(
        error,
        json!({ "error": format!("{what}; no MCP tool checks or repairs a database, so stop and tell the user that it needs checking") })
    );
    drop(mcp);
    db.tl(&["context", "--node", "n2"]).ok(
        r#"[{"node":"n1","role":"user","text":"a secret","tokens":2},{"node":"n2","role":"user","text":"more","tokens":1}]"#,
    );
    db.tl(&["context", "--node", "n3"])
        .err(1, r#"{"error":"node not found: n3 does not exist in timeline tl0 (it has n1..n2); find the node you mean with `tl log` or `tl search --query ...`"}"#);
}

#[test]
fn sqlite_a_damaged_record_is_worded_for_each_front_end() {
    common::use_engine(common::Engine::Sqlite);
    let db = Db::new();
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    db.append("user", "a secret", 2);
    a_damaged_record_is_worded_for_each_front_end(&db, |db| {
        sqlite_exec(db, "UPDATE idempotency SET result = 'x'")
    });
}
