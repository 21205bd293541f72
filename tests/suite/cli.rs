//! The `tl` command line through the real binary: every command's result shape, each validation rule
//! (G6) with a failing input and its exact error, database path resolution (G4), the default timeline
//! (G5), help and version, long texts from stdin or a file, and Unicode round trips.

use crate::common;

use common::{Db, Run, TL, TempDir};
use serde_json::json;
use std::process::{Command, Stdio};

fn tl_in(dir: &std::path::Path, env: &[(&str, &str)], args: &[&str]) -> Run {
    let mut cmd = Command::new(TL);
    cmd.env_remove("TIMELINE_DB")
        .env_remove("TIMELINE_NOW")
        .env_remove("TIMELINE_FAULT_STEP")
        .env_remove("XDG_DATA_HOME")
        .env_remove("APPDATA");
    cmd.env("HOME", dir.join("home"))
        .env("USERPROFILE", dir.join("home"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd
        .current_dir(dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Run::from(out)
}

// Every test below runs on both storage engines (json::… and sqlite::…).
on_every_engine! {
    /// G2, M1, M2, C1, C2: the README walk-through with exact outputs.
    #[test]
    fn walk_through_has_the_documented_shapes() {
        let db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        db.tl(&[
            "append",
            "--role",
            "user",
            "--text",
            "Set the goal",
            "--tokens",
            "8",
        ])
        .ok(r#"{"node":"n1"}"#);
        db.tl(&[
            "append",
            "--role",
            "assistant",
            "--text",
            "Scope agreed",
            "--tokens",
            "12",
        ])
        .ok(r#"{"node":"n2"}"#);
        db.tl(&["fork", "--node", "n1", "--name", "details"])
            .ok(r#"{"branch":"details","head":"n1"}"#);
        db.tl(&["switch", "--name", "details"])
            .ok(r#"{"current_branch":"details"}"#);
        db.tl(&[
            "append",
            "--role",
            "user",
            "--text",
            "Refine acceptance",
            "--tokens",
            "6",
        ])
        .ok(r#"{"node":"n3"}"#);
        db.tl(&["context", "--node", "n3"]).ok(
            r#"[{"node":"n1","role":"user","text":"Set the goal","tokens":8},{"node":"n3","role":"user","text":"Refine acceptance","tokens":6}]"#,
        );
        db.tl(&["context", "--node", "n2"]).ok(
            r#"[{"node":"n1","role":"user","text":"Set the goal","tokens":8},{"node":"n2","role":"assistant","text":"Scope agreed","tokens":12}]"#,
        );
        db.tl(&["branches"])
            .ok(r#"[{"name":"main","head":"n2","current":false},{"name":"details","head":"n3","current":true}]"#);
        db.tl(&["node", "--node", "n1"]).ok(
            r#"{"node":"n1","timeline_id":"tl0","role":"user","text":"Set the goal","tokens":8,"parent":"n0","children":["n2","n3"],"zone":"hot","pinned":false,"path_tokens":8,"created_at":1767225600,"intent":null,"summary":null}"#,
        );
        db.tl(&["pin", "--node", "n1"]).ok(r#"{"pinned":"n1"}"#);
        db.tl(&["unpin", "--node", "n1"]).ok(r#"{"unpinned":"n1"}"#);
        db.tl(&["drop-branch", "--name", "main"])
            .ok(r#"{"dropped":"main"}"#);
        db.tl(&["branches"])
            .ok(r#"[{"name":"details","head":"n3","current":true}]"#);
        // Dropping a branch deletes no node.
        db.tl(&["context", "--node", "n2"]).json();
    }

    /// M2 (D): the current branch cannot be dropped; names are unique; switch needs an existing branch.
    #[test]
    fn branch_rules() {
        let db = Db::new();
        db.tl(&["create"]).json();
        db.tl(&["drop-branch", "--name", "main"])
            .err(1, r#"{"error":"cannot drop \"main\": it is the current branch; switch to another branch first"}"#);
        db.tl(&["fork", "--node", "n0", "--name", "main"]).err(
            1,
            r#"{"error":"branch \"main\" already exists; choose another name or drop it first"}"#,
        );
        db.tl(&["switch", "--name", "nope"]).err(
            1,
            r#"{"error":"branch not found: \"nope\" does not exist in timeline tl0 (branches: main)"}"#,
        );
        db.tl(&["fork", "--node", "n7", "--name", "x"]).err(
            1,
            r#"{"error":"node not found: n7 does not exist in timeline tl0 (it has no messages yet); add one with `tl append`"}"#,
        );
    }

    /// rename-branch: the same name rules as fork, and the branch keeps its head, watermark, place in
    /// the list and current-branch marker.
    #[test]
    fn rename_branch_keeps_head_watermark_place_and_current_marker() {
        let db = Db::created_at("1700000000");
        db.append("user", "one", 10);
        db.append("assistant", "two", 10);
        db.tl(&["fork", "--node", "n1", "--name", "side"])
            .ok(r#"{"branch":"side","head":"n1"}"#);
        db.tl(&["fork", "--node", "n2", "--name", "other"])
            .ok(r#"{"branch":"other","head":"n2"}"#);
        // A summary of n1 moves every watermark to n1.
        db.tl(&[
            "summarize", "--from", "n1", "--to", "n1", "--summary", "one", "--tokens", "1",
        ])
        .ok(r#"{"node":"n3"}"#);
        let branches = |db: &Db| db.value()["timelines"][0]["branches"].clone();
        let before = branches(&db);
        db.tl(&["rename-branch", "--name", "main", "--to", "trunk"])
            .ok(r#"{"renamed":"main","to":"trunk"}"#);
        db.tl(&["rename-branch", "--name", "side", "--to", "支线 ✓"])
            .ok(r#"{"renamed":"side","to":"支线 ✓"}"#);
        let mut expected = before.clone();
        expected[0]["name"] = json!("trunk");
        expected[1]["name"] = json!("支线 ✓");
        assert_eq!(branches(&db), expected);
        assert_eq!(
            expected,
            json!([
                {"name": "trunk", "head": "n2", "watermark": "n1"},
                {"name": "支线 ✓", "head": "n1", "watermark": "n1"},
                {"name": "other", "head": "n2", "watermark": "n1"},
            ])
        );
        assert_eq!(db.value()["timelines"][0]["current_branch"], json!("trunk"));
        db.tl(&["branches"]).ok(concat!(
            r#"[{"name":"trunk","head":"n2","current":true},"#,
            r#"{"name":"支线 ✓","head":"n1","current":false},"#,
            r#"{"name":"other","head":"n2","current":false}]"#
        ));
        // The current branch keeps growing under its new name.
        db.append("user", "three", 1);
        db.tl(&["branches"]).ok(concat!(
            r#"[{"name":"trunk","head":"n4","current":true},"#,
            r#"{"name":"支线 ✓","head":"n1","current":false},"#,
            r#"{"name":"other","head":"n2","current":false}]"#
        ));
        // Refusals change nothing.
        let unchanged = db.bytes();
        db.tl(&["rename-branch", "--name", "other", "--to", "trunk"]).err(
            1,
            r#"{"error":"branch \"trunk\" already exists; choose another name or drop it first"}"#,
        );
        db.tl(&["rename-branch", "--name", "main", "--to", "x"]).err(
            1,
            r#"{"error":"branch not found: \"main\" does not exist in timeline tl0 (branches: trunk, 支线 ✓, other)"}"#,
        );
        db.tl(&["rename-branch", "--name", "other", "--to", "a/b"]).err(
            2,
            r#"{"error":"invalid argument --to: must not contain \"/\" (A branch name: any non-empty Unicode text without \"/\".)"}"#,
        );
        db.tl(&["rename-branch", "--name", "other", "--to", ""]).err(
            2,
            r#"{"error":"invalid argument --to: must not be empty (A branch name: any non-empty Unicode text without \"/\".)"}"#,
        );
        db.tl(&["rename-branch", "--name", "other"]).err(
            2,
            r#"{"error":"invalid argument --to: required (Its new name; no other branch may have it.)"}"#,
        );
        // The name it already has: nothing to do.
        db.tl(&["rename-branch", "--name", "other", "--to", "other"])
            .ok(r#"{"renamed":"other","to":"other"}"#);
        assert_eq!(db.bytes(), unchanged);
        // A replayed key returns the first result; the old name is gone, so without the key it fails.
        for _ in 0..2 {
            db.tl(&[
                "--idempotency-key",
                "r-1",
                "rename-branch",
                "--name",
                "other",
                "--to",
                "third",
            ])
            .ok(r#"{"renamed":"other","to":"third"}"#);
        }
        db.tl(&["rename-branch", "--name", "other", "--to", "third"]).err(
            1,
            r#"{"error":"branch not found: \"other\" does not exist in timeline tl0 (branches: trunk, 支线 ✓, third)"}"#,
        );
    }

    /// M3: the estimate counts Unicode scalars, not bytes or graphemes.
    #[test]
    fn token_estimate_when_tokens_are_omitted() {
        let db = Db::new();
        db.tl(&["create"]).json();
        for (text, tokens) in [
            ("abcd", 1),
            ("abcde", 2),
            ("讨论目标细化验收", 2),
            ("👨‍👩‍👧‍👦", 2),
            ("", 1),
        ] {
            let node = db.tl(&["append", "--role", "user", "--text", text]).json()["node"]
                .as_str()
                .unwrap()
                .to_string();
            let shown = db.tl(&["node", "--node", &node]).json();
            assert_eq!(shown["tokens"], tokens, "{text}");
        }
    }

    /// M4: node reports the path's tokens from prefix sums.
    #[test]
    fn path_tokens_are_prefix_sums() {
        let db = Db::new();
        db.tl(&["create"]).json();
        db.append("user", "a", 5);
        db.append("assistant", "b", 7);
        db.append("user", "c", 11);
        assert_eq!(db.tl(&["node", "--node", "n3"]).json()["path_tokens"], 23);
    }

    /// M5: intents on append; the note stays out of context; node shows everything.
    #[test]
    fn intents() {
        let db = Db::new();
        db.tl(&["create"]).json();
        db.tl(&[
            "append",
            "--role",
            "user",
            "--text",
            "Local first",
            "--tokens",
            "3",
            "--intent-tag",
            "decision",
            "--intent-note",
            "no cloud sync yet",
        ])
        .ok(r#"{"node":"n1"}"#);
        db.tl(&[
            "append",
            "--role",
            "user",
            "--text",
            "plain",
            "--tokens",
            "1",
            "--intent-tag",
            "question",
        ])
        .ok(r#"{"node":"n2"}"#);
        db.tl(&["context", "--node", "n2"]).ok(
            r#"[{"node":"n1","role":"user","text":"Local first","tokens":3,"intent_tag":"decision"},{"node":"n2","role":"user","text":"plain","tokens":1,"intent_tag":"question"}]"#,
        );
        let node = db.tl(&["node", "--node", "n1"]).json();
        assert_eq!(
            node["intent"],
            serde_json::json!({"tag": "decision", "note": "no cloud sync yet"})
        );
        assert_eq!(
            db.tl(&["node", "--node", "n2"]).json()["intent"],
            serde_json::json!({"tag": "question"})
        );
    }

    /// G6: each rule with a failing input and its exact error. Nothing is written by a refused request.
    #[test]
    fn validation_rules() {
        let db = Db::new();
        db.tl(&["create"]).json();
        db.append("user", "hello", 1);
        let before = db.bytes();
        let cases: &[(&[&str], &str)] = &[
            (
                &["append", "--role", "robot", "--text", "x"],
                r#"invalid argument --role: must be one of user, assistant, system, summary, got \"robot\""#,
            ),
            (
                &["append", "--text", "x"],
                "invalid argument --role: required (Who wrote the message: user, assistant, system or summary.)",
            ),
            (
                &["append", "--role", "user"],
                "invalid argument --text: required (The message text. Use - to read it from standard input, or --text-file PATH.)",
            ),
            (
                &["node", "--node", "x1"],
                r#"invalid argument --node: A node ID: \"n\" followed by digits, as returned by append or summarize. Got \"x1\""#,
            ),
            (
                &["node", "--node", "n01"],
                r#"invalid argument --node: A node ID: \"n\" followed by digits, as returned by append or summarize. Got \"n01\""#,
            ),
            (
                &["node", "--node", "n99999999999999999999"],
                r#"invalid argument --node: the number in \"n99999999999999999999\" is too large"#,
            ),
            (
                &["--timeline", "t1", "branches"],
                r#"invalid argument --timeline: A timeline ID: \"tl\" followed by digits, as returned by create. Got \"t1\""#,
            ),
            (
                &["fork", "--node", "n1", "--name", ""],
                r#"invalid argument --name: must not be empty (A branch name: any non-empty Unicode text without \"/\".)"#,
            ),
            (
                &["fork", "--node", "n1", "--name", "a/b"],
                r#"invalid argument --name: must not contain \"/\" (A branch name: any non-empty Unicode text without \"/\".)"#,
            ),
            (
                &["append", "--role", "user", "--text", "x", "--tokens", "-1"],
                r#"invalid argument --tokens: must be a non-negative integer, got \"-1\""#,
            ),
            (
                &["append", "--role", "user", "--text", "x", "--tokens", "1.5"],
                r#"invalid argument --tokens: must be a non-negative integer, got \"1.5\""#,
            ),
            (
                &[
                    "append",
                    "--role",
                    "user",
                    "--text",
                    "x",
                    "--tokens",
                    "18446744073709551616",
                ],
                "invalid argument --tokens: is larger than the maximum 4294967295",
            ),
            (
                &["budget", "--node", "n1", "--max", "ten"],
                r#"invalid argument --max: must be a non-negative integer, got \"ten\""#,
            ),
            (
                &[
                    "append",
                    "--role",
                    "user",
                    "--text",
                    "x",
                    "--intent-note",
                    "why",
                ],
                "invalid argument --intent-tag: required when --intent-note is given (Label the message with an intent tag (your own vocabulary).)",
            ),
            (
                &[
                    "append",
                    "--role",
                    "user",
                    "--text",
                    "x",
                    "--intent-tag",
                    "",
                ],
                "invalid argument --intent-tag: must not be empty (A non-empty intent tag of your own vocabulary, such as decision.)",
            ),
            (
                &["--timeline", "tl0", "create"],
                "invalid argument --timeline: create does not use a timeline",
            ),
            (
                &["--idempotency-key", "k", "export", "--format", "ascii"],
                "invalid argument --idempotency-key: export does not take an idempotency key; it changes nothing in the database, so it is always safe to run again",
            ),
            (
                &["append", "--role", "user", "--text", "x", "--bogus"],
                "invalid arguments: unexpected argument '--bogus' found; run tl --help for usage",
            ),
        ];
        for (args, message) in cases {
            let run = db.tl(args);
            run.err(2, &format!(r#"{{"error":"{message}"}}"#));
            assert_eq!(db.bytes(), before, "{args:?} changed the database");
        }
    }

    /// G6: one text is at most 1 MiB of UTF-8; stdin and files carry long texts past argv limits.
    #[test]
    fn long_texts_from_stdin_and_files() {
        let db = Db::new();
        db.tl(&["create"]).json();
        let limit = 1024 * 1024;
        // 1 MiB exactly, in three-byte scalars plus ASCII padding: accepted from stdin.
        let mut text = "語".repeat(limit / 3);
        text.push_str(&"x".repeat(limit - text.len()));
        db.tl_stdin(
            &["append", "--role", "user", "--text", "-"],
            text.as_bytes(),
        )
        .ok(r#"{"node":"n1"}"#);
        let shown = db.tl(&["node", "--node", "n1"]).json();
        assert_eq!(shown["text"].as_str().unwrap(), text);
        // One byte more is refused.
        let over = format!("{text}x");
        db.tl_stdin(&["append", "--role", "user", "--text", "-"], over.as_bytes()).err(
            2,
            r#"{"error":"invalid argument --text - (standard input): more than 1048576 bytes; the limit for one text is 1 MiB"}"#,
        );
        // Invalid UTF-8 is refused cleanly.
        db.tl_stdin(&["append", "--role", "user", "--text", "-"], b"ok \xff\xfe")
            .err(
                2,
                r#"{"error":"invalid argument --text - (standard input): not valid UTF-8"}"#,
            );
        // From a file, and summaries from a file too.
        let file = db.dir.path().join("note.txt");
        std::fs::write(&file, "from a file\nwith two lines").unwrap();
        db.tl(&[
            "append",
            "--role",
            "assistant",
            "--text-file",
            file.to_str().unwrap(),
        ])
        .ok(r#"{"node":"n2"}"#);
        assert_eq!(
            db.tl(&["node", "--node", "n2"]).json()["text"],
            "from a file\nwith two lines"
        );
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n2",
            "--summary-file",
            file.to_str().unwrap(),
            "--tokens",
            "4",
        ])
        .ok(r#"{"node":"n3"}"#);
        db.tl(&[
            "append",
            "--role",
            "user",
            "--text",
            "x",
            "--text-file",
            file.to_str().unwrap(),
        ])
        .err(
            2,
            r#"{"error":"invalid argument --text: give either --text or --text-file, not both"}"#,
        );
        // Over the limit from a file. (Linux caps one argument at 128 KiB, so the inline limit is checked over MCP.)
        let big = db.dir.path().join("big.txt");
        std::fs::write(&big, over.as_bytes()).unwrap();
        let run = db.tl(&[
            "append",
            "--role",
            "user",
            "--text-file",
            big.to_str().unwrap(),
        ]);
        run.err(
            2,
            &serde_json::json!({"error": format!("invalid argument --text-file {}: more than 1048576 bytes; the limit for one text is 1 MiB", big.display())})
                .to_string(),
        );
    }

    /// Unicode in branch names and texts round-trips unchanged; text starting with dashes is text.
    #[test]
    fn unicode_round_trips() {
        let db = Db::new();
        db.tl(&["create"]).json();
        db.tl(&[
            "append",
            "--role",
            "user",
            "--text",
            "讨论目标 🚀 é\u{301} --not-a-flag",
            "--tokens",
            "3",
        ])
        .ok(r#"{"node":"n1"}"#);
        db.tl(&["fork", "--node", "n1", "--name", "细节 ✨"])
            .ok(r#"{"branch":"细节 ✨","head":"n1"}"#);
        db.tl(&["switch", "--name", "细节 ✨"])
            .ok(r#"{"current_branch":"细节 ✨"}"#);
        db.tl(&["append", "--role", "user", "--text", "--", "--tokens", "1"])
            .ok(r#"{"node":"n2"}"#);
        db.tl(&["context", "--node", "n2"]).ok(
            r#"[{"node":"n1","role":"user","text":"讨论目标 🚀 é́ --not-a-flag","tokens":3},{"node":"n2","role":"user","text":"--","tokens":1}]"#,
        );
    }

    /// G5: without --timeline the smallest timeline ID is used; with it, the named one.
    #[test]
    fn default_timeline_is_the_smallest() {
        let db = Db::new();
        db.tl(&["branches"]).err(
            1,
            r#"{"error":"no timeline in this database yet; run `tl create` first (or pass --db to use another file)"}"#,
        );
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl1"}"#);
        db.tl(&[
            "--timeline",
            "tl1",
            "append",
            "--role",
            "user",
            "--text",
            "in tl1",
            "--tokens",
            "1",
        ])
        .ok(r#"{"node":"n1"}"#);
        db.tl(&[
            "append", "--role", "user", "--text", "in tl0", "--tokens", "1",
        ])
        .ok(r#"{"node":"n1"}"#);
        db.tl(&["context", "--node", "n1"])
            .ok(r#"[{"node":"n1","role":"user","text":"in tl0","tokens":1}]"#);
        db.tl(&["--timeline", "tl1", "context", "--node", "n1"])
            .ok(r#"[{"node":"n1","role":"user","text":"in tl1","tokens":1}]"#);
        db.tl(&["--timeline", "tl7", "branches"]).err(
            1,
            r#"{"error":"timeline not found: tl7 (this database has tl0, tl1)"}"#,
        );
    }

    /// G4 as the storage issue replaced it: --db, then a non-empty TIMELINE_DB, then ~/.timeline.json when
    /// it exists, then timeline/timeline.db in the data directory (created owner-only). A --db or
    /// TIMELINE_DB path needs an existing parent directory.
    #[test]
    fn database_path_priority() {
        let dir = TempDir::new();
        let d = dir.path();
        std::fs::create_dir_all(d.join("home")).unwrap();
        let flag = d.join("flag.json");
        let env = d.join("env.json");
        let env_s = env.to_str().unwrap();
        // The data directory without XDG_DATA_HOME or APPDATA.
        let data_db = if cfg!(windows) {
            d.join(r"home\AppData\Roaming\timeline\timeline.db")
        } else if cfg!(target_os = "macos") {
            d.join("home/Library/Application Support/timeline/timeline.db")
        } else {
            d.join("home/.local/share/timeline/timeline.db")
        };
        let legacy = d.join("home").join(".timeline.json");
        // --db wins over TIMELINE_DB.
        tl_in(
            d,
            &[("TIMELINE_DB", env_s)],
            &["--db", flag.to_str().unwrap(), "create"],
        )
        .ok(r#"{"timeline_id":"tl0"}"#);
        assert!(flag.exists() && !env.exists());
        // TIMELINE_DB wins over the defaults.
        tl_in(d, &[("TIMELINE_DB", env_s)], &["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        assert!(env.exists() && !data_db.exists());
        // An empty TIMELINE_DB is ignored: without ~/.timeline.json, the SQLite database in the data
        // directory is used, its directories created owner-only.
        tl_in(d, &[("TIMELINE_DB", "")], &["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        assert!(data_db.exists() && !legacy.exists());
        tl_in(d, &[], &["create"]).ok(r#"{"timeline_id":"tl1"}"#);
        // json!: a Windows path's backslashes are escaped in JSON.
        tl_in(d, &[], &["db", "info"]).ok(
            &common::with_sqlite_fields(serde_json::json!({"engine": "sqlite", "path": data_db.display().to_string(), "exists": true,
                "format_version": timeline::store::sqlite_schema_version(),
                "file_bytes": std::fs::metadata(&data_db).unwrap().len(),
                "timelines": 2, "nodes": 0, "cold_nodes": 0}), common::SQLITE_LOG)
            .to_string(),
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            for created in [
                "home/.local/share/timeline",
                "home/.local/share",
                "home/.local",
            ] {
                let mode = std::fs::metadata(d.join(created))
                    .unwrap()
                    .permissions()
                    .mode();
                assert_eq!(mode & 0o777, 0o700, "{created}");
            }
        }
        // XDG_DATA_HOME (Linux) or APPDATA (Windows) moves the data directory.
        let moved = d.join("moved");
        let var = if cfg!(windows) { "APPDATA" } else { "XDG_DATA_HOME" };
        if cfg!(any(windows, target_os = "linux")) {
            tl_in(d, &[(var, moved.to_str().unwrap())], &["create"])
                .ok(r#"{"timeline_id":"tl0"}"#);
            assert!(moved.join("timeline").join("timeline.db").exists());
        }
        // A ~/.timeline.json of the original tool, once it exists, is used before the data directory.
        tl_in(d, &[], &["--db", legacy.to_str().unwrap(), "create"]).ok(r#"{"timeline_id":"tl0"}"#);
        tl_in(d, &[], &["create"]).ok(r#"{"timeline_id":"tl1"}"#);
        tl_in(d, &[], &["db", "info"]).ok(
            &serde_json::json!({"engine": "json", "path": legacy.display().to_string(), "exists": true,
                "format_version": 2, "file_bytes": std::fs::metadata(&legacy).unwrap().len(),
                "timelines": 2, "nodes": 0, "cold_nodes": 0})
            .to_string(),
        );
        // The parent directory must exist.
        let missing = d.join("no/such/dir/db.json");
        let run = tl_in(d, &[], &["--db", missing.to_str().unwrap(), "create"]);
        let parent = d.join("no/such/dir");
        let p = parent.display();
        run.err(
            3,
            &serde_json::json!({"error": format!("the directory {p} does not exist; create it first (mkdir -p \"{p}\") or pass --db with another path")})
                .to_string(),
        );
        // A directory is not a database.
        let run = tl_in(d, &[], &["--db", d.to_str().unwrap(), "branches"]);
        run.err(
            3,
            &serde_json::json!({"error": format!("{} is a directory, not a database file; pass --db with a file path", d.display())})
                .to_string(),
        );
        // No .env file is loaded.
        std::fs::write(d.join(".env"), format!("TIMELINE_DB={}\n", flag.display())).unwrap();
        tl_in(d, &[], &["create"]).ok(r#"{"timeline_id":"tl2"}"#);
    }

    /// G3: --help and --version print text; help lists every command with its summary from the spec.
    #[test]
    fn help_and_version() {
        let db = Db::new();
        let version = db.tl(&["--version"]);
        assert_eq!(
            (version.code, version.stdout.as_str()),
            (0, format!("tl {}\n", env!("CARGO_PKG_VERSION")).as_str())
        );
        let help = db.tl(&["--help"]);
        assert_eq!(help.code, 0);
        for op in &timeline::spec::spec().operations {
            // A grouped command ("db info") is listed by its group's help.
            let (listing, name) = match op.cli.split_once(' ') {
                Some((group, name)) => (db.tl(&[group, "--help"]).stdout, name),
                None => (help.stdout.clone(), op.cli.as_str()),
            };
            let line = listing
                .lines()
                .find(|l| l.trim_start().starts_with(&format!("{name} ")));
            let line = line.unwrap_or_else(|| panic!("--help lists no {}", op.cli));
            assert!(line.ends_with(&op.summary), "{line}");
        }
        let sub = db.tl(&["budget", "--help"]);
        assert_eq!(sub.code, 0);
        assert!(
            sub.stdout.contains("--max <N>") && sub.stdout.contains("The token budget. (required)"),
            "{}",
            sub.stdout
        );
        // A bare `tl` shows the help and fails; a missing command after options is an error.
        let bare = tl_in(db.dir.path(), &[], &[]);
        assert_eq!(bare.code, 2);
        assert!(bare.stdout.contains("Usage: tl [OPTIONS] <COMMAND>"));
        db.tl(&[]).err(2, r#"{"error":"invalid arguments: 'tl' requires a subcommand but one was not provided [subcommands: create, append, fork, switch, drop-branch, rename-branch, context, budget, pin, unpin, summarize, branches, node, search, log, diff, archive-check, archive-branch, restore-branch, import, export, db, timelines, completions, man, demo, help]; run tl --help for usage"}"#);
    }

    /// pin/unpin on the root or an unknown node are clear errors.
    #[test]
    fn pin_errors() {
        let db = Db::new();
        db.tl(&["create"]).json();
        db.tl(&["pin", "--node", "n0"]).err(
            2,
            r#"{"error":"invalid argument: n0 is the root of tl0 and not a message; use a node ID returned by `tl append` or `tl summarize`"}"#,
        );
        db.append("user", "x", 1);
        db.tl(&["pin", "--node", "n1"]).ok(r#"{"pinned":"n1"}"#);
        // Pinning twice is harmless and writes nothing.
        let before = db.bytes();
        db.tl(&["pin", "--node", "n1"]).ok(r#"{"pinned":"n1"}"#);
        assert_eq!(db.bytes(), before);
    }

    // From the code review (formerly tests/review.rs).
    /// A decimal number with leading zeros is still a non-negative integer on the command line (G6);
    /// it was refused with "must be a non-negative integer, got \"007\"".
    #[test]
    fn g6_cli_numbers_may_have_leading_zeros() {
        let db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        db.tl(&["append", "--role", "user", "--text", "x", "--tokens", "007"])
            .ok(r#"{"node":"n1"}"#);
        db.tl(&["append", "--role", "user", "--text", "y", "--tokens", "00"])
            .ok(r#"{"node":"n2"}"#);
        db.tl(&["budget", "--node", "n2", "--max", "0007"]).ok(
            r#"{"messages":[{"node":"n1","role":"user","text":"x","tokens":7},{"node":"n2","role":"user","text":"y","tokens":0}],"total_tokens":7,"summaries_created":[]}"#,
        );
        // Still a 64-bit number: leading zeros do not hide an overflow.
        db.tl(&["budget", "--node", "n2", "--max", "018446744073709551616"])
            .err(
                2,
                r#"{"error":"invalid argument --max: is larger than the maximum 18446744073709551615"}"#,
            );
    }

    /// G4: an empty `--db` (say `--db "$DB"` with DB unset) is an error, as it is for tl-mcp; it used to
    /// fall back silently to TIMELINE_DB or ~/.timeline.json and write there.
    #[test]
    fn g4_an_empty_db_flag_is_refused_not_replaced_by_the_home_database() {
        let db = Db::new();
        let home = db.dir.path().join("home");
        std::fs::create_dir(&home).unwrap();
        let run = |args: &[&str]| {
            let output = db
                .command(common::TL)
                .env("HOME", &home)
                .env("USERPROFILE", &home)
                .env("TIMELINE_DB", db.dir.path().join("env.json"))
                .args(args)
                .stdin(Stdio::null())
                .output()
                .unwrap();
            (
                output.status.code(),
                String::from_utf8(output.stdout).unwrap(),
                String::from_utf8(output.stderr).unwrap(),
            )
        };
        let refused = (
            Some(2),
            String::new(),
            "{\"error\":\"invalid argument --db: must not be empty; pass the path of the database file, or leave --db out to use TIMELINE_DB or the default database\"}\n".to_string(),
        );
        assert_eq!(run(&["--db", "", "create"]), refused);
        assert_eq!(run(&["create", "--db="]), refused);
        assert!(!home.join(".timeline.json").exists());
        assert!(!db.dir.path().join("env.json").exists());
    }

    /// G4: a --db path that ends with a separator names a directory; it is refused before any file is
    /// created, with a file path to use instead.
    #[test]
    fn g4_a_db_path_ending_in_a_separator_is_refused() {
        let db = Db::new();
        let dir_path = format!("{}/", db.dir.path().join("newdir").display());
        let mut cmd = db.command(common::TL);
        let out = cmd.args(["--db", &dir_path, "create"]).output().unwrap();
        assert_eq!(out.status.code(), Some(3));
        // Compared as JSON: a Windows path's backslashes are escaped in it.
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            format!(
                "{}\n",
                serde_json::json!({"error": format!("{dir_path} ends with a path separator, so it names a directory; pass --db with a file path such as {dir_path}timeline.db")})
            )
        );
        assert_eq!(std::fs::read_dir(db.dir.path()).unwrap().count(), 0);
    }
}

/// Issue #22 item 6: the small traps a newcomer meets, each through the real binaries.
mod first_contact {
    use super::*;
    use common::McpSession;

    /// `tl import --format text`: after `import`, `--format` is what the file holds, so the answer
    /// says where the output option goes; nothing is read or written.
    #[test]
    fn import_format_text_after_the_command_says_where_the_option_goes() {
        let db = Db::new();
        db.tl(&["import", "--format", "text", "--input", "export.json"]).err(2, r#"{"error":"invalid argument --format: after the command, --format is import's own option and must be one of chatgpt, claude, openai, anthropic, claude-code, codex, gemini-cli, llm, open-webui, librechat, got \"text\"; to print import's result as text, put --format before the command: tl --format text import ..."}"#);
        db.tl(&["import", "--format", "yaml", "--input", "export.json"]).err(2, r#"{"error":"invalid argument --format: must be one of chatgpt, claude, openai, anthropic, claude-code, codex, gemini-cli, llm, open-webui, librechat, got \"yaml\""}"#);
        assert!(!db.path.exists());
    }

    /// A command is parsed alike whatever comes before it (`tl` builds only the command it runs when
    /// the arguments name it plainly): global flags with their values given either way, and a
    /// misspelt command or flag gets clap's suggestion, found among every command.
    #[test]
    fn a_command_is_parsed_alike_whatever_comes_before_it() {
        let db = Db::new();
        let path = db.path.to_str().unwrap().to_owned();
        let with_equals = format!("--db={path}");
        let mut cmd = db.command(TL);
        cmd.args([&with_equals, "create"]);
        Run::from(cmd.output().unwrap()).ok(r#"{"timeline_id":"tl0"}"#);
        let mut cmd = db.command(TL);
        cmd.args([
            "--idempotency-key",
            "k1",
            "--db",
            &path,
            "--timeline",
            "tl0",
            "append",
            "--role",
            "user",
            "--text",
            "hi",
        ]);
        Run::from(cmd.output().unwrap()).ok(r#"{"node":"n1"}"#);
        db.tl(&["appnd", "--role", "user"]).err(2, r#"{"error":"invalid arguments: unrecognized subcommand 'appnd' tip: a similar subcommand exists: 'append'; run tl --help for usage"}"#);
        db.tl(&["append", "--rol", "user"]).err(2, r#"{"error":"invalid arguments: unexpected argument '--rol' found tip: a similar argument exists: '--role'; run tl --help for usage"}"#);
        db.tl(&["db", "chek"]).err(2, r#"{"error":"invalid arguments: unrecognized subcommand 'chek' tip: a similar subcommand exists: 'check'; run tl --help for usage"}"#);
        db.tl(&["--", "append"]).err(2, r#"{"error":"invalid arguments: unexpected argument 'append' found tip: subcommand 'append' exists; to use it, remove the '--' before it; run tl --help for usage"}"#);
    }

    on_every_engine! {
        /// Output to a pipe nobody reads any more (`tl log | head -0`) ends `tl` with status 0 and
        /// nothing on standard error, not with `SIGPIPE`: `tl` starts without the Rust runtime on
        /// Linux (`cli::start`) and ignores the signal itself, as the runtime would, so the failed
        /// write is the reader's choice. (`export::…::ascii_survives_a_closed_pipe` covers exports.)
        #[cfg(unix)]
        #[test]
        fn output_to_a_closed_pipe_ends_quietly() {
            let db = Db::new();
            db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
            db.tl(&["--timeline", "tl0", "append", "--role", "user", "--text", "hi"])
                .ok(r#"{"node":"n1"}"#);
            for args in [&["--timeline", "tl0", "log"][..], &["--version"]] {
                let (reader, writer) = std::io::pipe().unwrap();
                drop(reader);
                let mut cmd = db.command(TL);
                cmd.arg("--db").arg(&db.path).args(args).stdin(Stdio::null()).stdout(writer);
                let output = cmd.output().unwrap();
                assert_eq!(output.status.code(), Some(0), "{args:?}: {:?}", output.status);
                assert_eq!(String::from_utf8_lossy(&output.stderr), "", "{args:?}");
            }
        }

        /// `tl timelines` has a text view, and `--format` is accepted after the command as before it.
        #[test]
        fn timelines_has_a_text_view_before_or_after_the_command() {
            let db = Db::new();
            db.tl(&["timelines", "--format", "text"]).ok("(no timelines)");
            db.tl(&["create", "--title", "Notes app"]).ok(r#"{"timeline_id":"tl0"}"#);
            db.append("user", "Plan a notes app", 8);
            db.tl(&["create"]).ok(r#"{"timeline_id":"tl1"}"#);
            let expected = "tl0  Notes app\n    1 message, 1 branch, current main, updated 2026-01-01T00:00:00Z\ntl1  (untitled)\n    0 messages, 1 branch, current main, updated 2026-01-01T00:00:00Z";
            db.tl(&["timelines", "--format", "text"]).ok(expected);
            db.tl(&["--format", "text", "timelines"]).ok(expected);
            db.tl(&["node", "--node", "n1", "--format", "text"]).err(2, r#"{"error":"invalid arguments: unexpected argument '--format' found; run tl --help for usage"}"#);
        }

        /// A value typed without its flag is answered with the command line that has the flag.
        #[test]
        fn a_value_without_its_flag_is_answered_with_the_flag() {
            let db = Db::new();
            db.tl(&["create"]).json();
            db.append("user", "x", 1);
            db.tl(&["pin", "n1"]).err(2, r#"{"error":"invalid arguments: unexpected argument 'n1' found; give it with its flag: tl pin --node n1"}"#);
            db.tl(&["node", "n1"]).err(2, r#"{"error":"invalid arguments: unexpected argument 'n1' found; give it with its flag: tl node --node n1"}"#);
            db.tl(&["search", "hotel", "kyoto"]).err(2, r#"{"error":"invalid arguments: unexpected argument 'hotel' found; give it with its flag: tl search --query 'hotel kyoto'"}"#);
            db.tl(&["search", "--role", "user", "budget"]).err(2, r#"{"error":"invalid arguments: unexpected argument 'budget' found; give it with its flag: tl search --role user --query budget"}"#);
            db.tl(&["fork", "n1", "--name", "idea"]).err(2, r#"{"error":"invalid arguments: unexpected argument 'n1' found; give it with its flag: tl fork --name idea --node n1"}"#);
            // #42 item 13: with every required flag given, a lone word is the command's file.
            db.tl(&["import", "--format", "chatgpt", "conversations.json"]).err(2, r#"{"error":"invalid arguments: unexpected argument 'conversations.json' found; give it with its flag: tl import --format chatgpt --input conversations.json"}"#);
            db.tl(&["import", "conversations.json", "--format=chatgpt", "--quiet"]).err(2, r#"{"error":"invalid arguments: unexpected argument 'conversations.json' found; give it with its flag: tl import --format=chatgpt --quiet --input conversations.json"}"#);
            // With the flag given already, the word is simply one too many.
            db.tl(&["import", "--format", "chatgpt", "--input", "a.json", "b.json"]).err(2, r#"{"error":"invalid arguments: unexpected argument 'b.json' found; run tl --help for usage"}"#);
            db.tl(&["pin", "--node", "n1", "extra"]).err(2, r#"{"error":"invalid arguments: unexpected argument 'extra' found; run tl --help for usage"}"#);
        }

        /// `tl db info` and `timeline_db_info` give one answer for a database whose directory does
        /// not exist: nothing there yet. A read creates nothing; a change is refused naming the folder.
        #[test]
        fn a_missing_directory_reads_as_an_empty_database_on_both_front_ends() {
            let mut db = Db::new();
            db.path = db.dir.path().join("missing").join(common::engine().file_name());
            let engine = if db.path.extension().is_some_and(|e| e == "json") { "json" } else { "sqlite" };
            let info = json!({"engine": engine, "path": db.path.display().to_string(), "exists": false, "format_version": null,
                "file_bytes": 0, "timelines": 0, "nodes": 0, "cold_nodes": 0});
            let info = if engine == "sqlite" { common::with_sqlite_fields(info, common::SQLITE_LOG) } else { info }
                .to_string();
            db.tl(&["db", "info"]).ok(&info);
            db.tl(&["timelines"]).ok("[]");
            let mut mcp = McpSession::start(&db);
            assert_eq!(mcp.ok("timeline_db_info", json!({})).to_string(), info);
            drop(mcp);
            let missing = db.dir.path().join("missing");
            let m = missing.display();
            let refused = format!(r#"the directory {m} does not exist; create it first (mkdir -p "{m}") or pass --db with another path"#);
            db.tl(&["create"]).err(3, &json!({ "error": refused }).to_string());
            assert!(!missing.exists());
        }

        /// One final newline of a text from standard input or a file is not part of it.
        #[test]
        fn one_final_newline_of_a_piped_text_is_dropped() {
            let db = Db::new();
            db.tl(&["create"]).json();
            for (input, stored) in [("x\n", "x"), ("x\r\n", "x"), ("x\n\n", "x\n"), ("x", "x")] {
                let node = db.tl_stdin(&["append", "--role", "user", "--text", "-"], input.as_bytes()).json()["node"].clone();
                assert_eq!(db.tl(&["node", "--node", node.as_str().unwrap()]).json()["text"], stored, "{input:?}");
            }
            let file = db.dir.path().join("note.txt");
            std::fs::write(&file, "from an editor\n").unwrap();
            db.tl(&["append", "--role", "user", "--text-file", file.to_str().unwrap()]).ok(r#"{"node":"n5"}"#);
            assert_eq!(db.tl(&["node", "--node", "n5"]).json()["text"], "from an editor");
        }

        /// Texts for a model name MCP tools, texts for `tl` name commands: archival reasons, and a
        /// node that does not exist points to log and search, without "with ... with".
        #[test]
        fn archival_reasons_and_node_not_found_name_the_front_ends_own_steps() {
            let db = Db::new();
            db.tl(&["create"]).json();
            db.append("user", "x", 1);
            db.tl(&["fork", "--node", "n1", "--name", "side"]).json();
            let cli = r#"{"eligible":false,"reasons":["the watermark does not cover the whole branch: n1 is neither pinned nor summarised; summarise it with `tl summarize` or run a budget that covers it"]}"#;
            db.tl(&["archive-check", "--name", "side"]).ok(cli);
            let mut mcp = McpSession::start(&db);
            assert_eq!(
                mcp.ok("timeline_archive_check", json!({"timeline_id": "tl0", "branch": "side"})),
                json!({"eligible": false, "reasons": ["the watermark does not cover the whole branch: n1 is neither pinned nor summarised; summarise it with `timeline_summarize` (`timeline_id: \"tl0\"`) or run a budget that covers it"]})
            );
            assert_eq!(
                mcp.call("timeline_node", json!({"timeline_id": "tl0", "node": "n9"})),
                Err(json!({"error": "node not found: n9 does not exist in timeline tl0 (it has n1..n1); find the node you mean with `timeline_log` (`timeline_id: \"tl0\"`) or `timeline_search` (`timeline_id: \"tl0\"`, `query: ...`)"}))
            );
            db.tl(&["node", "--node", "n9"]).err(1, r#"{"error":"node not found: n9 does not exist in timeline tl0 (it has n1..n1); find the node you mean with `tl log` or `tl search --query ...`"}"#);
        }

        /// A control character is shown the same way by the text view and the ASCII export.
        #[test]
        fn text_views_and_the_ascii_tree_escape_alike() {
            let db = Db::new();
            db.tl(&["create"]).json();
            db.append("user", "red \u{1b}[31m here", 1);
            db.tl(&["--format", "text", "context", "--node", "n1"]).ok("n1  user  1 tokens\n    red \\u001b[31m here\n");
            db.tl(&["export", "--format", "ascii"]).ok("[n1 user] \"red \\u001b[31m here\" [HEAD* \"main\"]");
        }
    }

    /// A read never creates anything: `tl timelines` and a `tl-mcp` session that only reads leave
    /// the default database's directory uncreated; the first change creates it, owner-only.
    /// (Linux: the default is under `~/.local/share`.)
    #[cfg(target_os = "linux")]
    #[test]
    fn reads_never_create_the_default_directory() {
        let dir = TempDir::new();
        let d = dir.path();
        std::fs::create_dir_all(d.join("home")).unwrap();
        let data = d.join("home/.local/share/timeline");
        let info = common::with_sqlite_fields(
            serde_json::json!({"engine": "sqlite", "path": data.join("timeline.db").display().to_string(), "exists": false,
                "format_version": null, "file_bytes": 0, "timelines": 0, "nodes": 0, "cold_nodes": 0}),
            common::SQLITE_LOG,
        )
        .to_string();
        tl_in(d, &[], &["timelines"]).ok("[]");
        tl_in(d, &[], &["db", "info"]).ok(&info);
        tl_in(d, &[], &["log"]).err(1, r#"{"error":"no timeline in this database yet; run `tl create` first (or pass --db to use another file)"}"#);
        let mcp_command = || {
            let mut cmd = Command::new(common::TL_MCP);
            cmd.env_remove("TIMELINE_DB")
                .env_remove("XDG_DATA_HOME")
                .env("HOME", d.join("home"))
                .current_dir(d);
            cmd
        };
        let mut mcp = McpSession::spawn(mcp_command());
        assert_eq!(mcp.ok("timeline_db_info", json!({})).to_string(), info);
        assert_eq!(mcp.ok("timeline_list", json!({})), json!({"timelines": []}));
        drop(mcp);
        assert!(!d.join("home/.local").exists());
        let mut mcp = McpSession::spawn(mcp_command());
        assert_eq!(
            mcp.ok("timeline_create", json!({})),
            json!({"timeline_id": "tl0"})
        );
        drop(mcp);
        assert!(data.join("timeline.db").exists());
        tl_in(d, &[], &["create"]).ok(r#"{"timeline_id":"tl1"}"#);
    }

    /// Reading a JSON snapshot never creates its lock file: README's
    /// `tl --db examples/demo.timeline.json export` leaves the checkout as it was.
    #[test]
    fn reading_a_json_snapshot_leaves_no_lock_file() {
        let dir = TempDir::new();
        let db = dir.path().join("demo.timeline.json");
        std::fs::copy(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo.timeline.json"),
            &db,
        )
        .unwrap();
        let listing = || {
            let mut names: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            names.sort();
            names
        };
        let db_arg = db.to_str().unwrap();
        for args in [
            vec!["--db", db_arg, "export", "--format", "ascii"],
            vec!["--db", db_arg, "branches"],
            vec!["--db", db_arg, "--format", "text", "log"],
        ] {
            let run = tl_in(dir.path(), &[], &args);
            assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{args:?}");
            assert_eq!(listing(), ["demo.timeline.json"], "{args:?}");
        }
        // A change still takes (and so creates) the lock.
        tl_in(dir.path(), &[], &["--db", db_arg, "create"]).json();
        assert!(listing().contains(&"demo.timeline.json.lock".to_string()));
    }
}
