//! Regression tests for bugs found in the code review, through the real binaries with exact output.

use crate::common;

use common::{Db, TL_MCP};
use std::io::Write;
use std::process::Stdio;

/// Run `tl-mcp --db <db>` with `lines` on standard input (one message each) and return its stdout.
fn mcp(db: &Db, lines: &[&str]) -> String {
    let mut cmd = db.command(TL_MCP);
    cmd.arg("--db")
        .arg(&db.path)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    for line in lines {
        writeln!(input, "{line}").unwrap();
    }
    drop(input);
    let output = child.wait_with_output().unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

/// S3, S5: a summary whose range is not older than the summary itself is invalid source data: the file
/// is refused with the recovery steps and left byte for byte as it was.
#[test]
fn s5_a_summary_covering_itself_is_refused_on_load() {
    let db = Db::new();
    db.tl(&["create"]).json();
    db.append("user", "a", 1);
    db.tl(&["summarize", "--from", "n1", "--to", "n1", "--summary", "s"])
        .ok(r#"{"node":"n2"}"#);
    let mut file = db.value();
    for node in file["timelines"][0]["nodes"].as_array_mut().unwrap() {
        if node["id"] == "n2" {
            node["summary"]["from"] = "n2".into();
            node["summary"]["to"] = "n2".into();
        }
    }
    std::fs::write(&db.path, serde_json::to_vec_pretty(&file).unwrap()).unwrap();
    let before = db.bytes();
    let run = db.tl(&["branches"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stderr
            .contains("invalid content (timeline tl0: summary n2 has an invalid range n2..n2)"),
        "{run:?}"
    );
    assert_eq!(db.bytes(), before);
}

// Every test below runs on both storage engines (json::… and sqlite::…).
on_both_engines! {
    /// A whole-number float such as 100.0 is not "larger than the maximum"; only floats of 2^64 and
    /// more are (G6: tokens and budgets are non-negative integers).
    /// (Before initialize the server follows 2025-11-25, where argument errors are tool errors.)
    #[test]
    fn g6_a_float_token_count_is_refused_as_not_an_integer_not_as_too_large() {
        let db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        let out = mcp(
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
                r#"{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"error\":\"invalid argument tokens: is larger than the maximum 18446744073709551615\"}"}],"structuredContent":{"error":"invalid argument tokens: is larger than the maximum 18446744073709551615"},"isError":true}}"#,
                "\n",
            )
        );
    }

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

    /// A symbolic link to a database that does not exist yet is refused with the way forward, and
    /// left alone. (It used to be replaced by a new regular file, so the database the link named was
    /// silently abandoned; then it was resolved by Timeline itself to create the file where it pointed,
    /// which let a link planted in /tmp decide where a file was created.) Once the database exists at
    /// the real path, the link is followed.
    #[cfg(unix)]
    #[test]
    fn s2_a_dangling_symlink_is_refused_not_replaced() {
        let db = Db::new();
        let real_dir = db.dir.path().join("real");
        std::fs::create_dir(&real_dir).unwrap();
        let target = real_dir.join(db.path.file_name().unwrap());
        std::os::unix::fs::symlink(&target, &db.path).unwrap();
        let refused = serde_json::json!({"error": format!(
            "{} is a symbolic link to {}, which does not exist; nothing was read or written. Timeline does not create a database through a link (it could not tell who may write where the link points): create the database at the real path (tl --db <real path> create) or remove the link",
            db.path.display(),
            target.display()
        )})
        .to_string();
        db.tl(&["create"]).err(3, &refused);
        db.tl(&["branches"]).err(3, &refused);
        assert!(
            std::fs::symlink_metadata(&db.path)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_dir(&real_dir).unwrap().count(), 0);
        let mut real = Db::new();
        real.path = target.clone();
        real.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        db.tl(&["append", "--role", "user", "--text", "hi"])
            .ok(r#"{"node":"n1"}"#);
        db.tl(&["context", "--node", "n1"])
            .ok(r#"[{"node":"n1","role":"user","text":"hi","tokens":1}]"#);
        assert!(
            std::fs::symlink_metadata(&db.path)
                .unwrap()
                .file_type()
                .is_symlink()
        );
    }

    /// A link into a missing directory is a dangling link: refused, and the link is left alone.
    #[cfg(unix)]
    #[test]
    fn g4_a_symlink_into_a_missing_directory_is_refused() {
        let db = Db::new();
        let missing = db.dir.path().join("missing");
        std::os::unix::fs::symlink(missing.join("db.json"), &db.path).unwrap();
        db.tl(&["create"]).err(
            3,
            &serde_json::json!({"error": format!(
                "{} is a symbolic link to {}, which does not exist; nothing was read or written. Timeline does not create a database through a link (it could not tell who may write where the link points): create the database at the real path (tl --db <real path> create) or remove the link",
                db.path.display(),
                missing.join("db.json").display()
            )})
            .to_string(),
        );
        assert!(
            std::fs::symlink_metadata(&db.path)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(std::fs::read_dir(db.dir.path()).unwrap().count(), 1);
    }

    /// A read of a database that does not exist fails and leaves nothing behind: it used to create
    /// `<db>.lock` (so `tl --db typo.json branches` left `typo.json.lock` in the directory).
    #[test]
    fn s1_a_read_of_a_missing_database_creates_no_lock_file() {
        let db = Db::new();
        db.tl(&["branches"]).err(
            1,
            r#"{"error":"no timeline in this database yet; run `tl create` first (or pass --db to use another file)"}"#,
        );
        db.tl(&["export", "--format", "ascii"]).err(
            1,
            r#"{"error":"no timeline in this database yet; run `tl create` first (or pass --db to use another file)"}"#,
        );
        assert_eq!(std::fs::read_dir(db.dir.path()).unwrap().count(), 0);
    }

    /// P5/G7: the MCP tool schemas and MCP errors describe MCP arguments; command-line instructions
    /// ("Use - to read it from standard input, or --text-file PATH", "--from", "--intent-tag") are for
    /// `tl` only. Over MCP a text "-" is just the text "-".
    #[test]
    fn p5_mcp_descriptions_carry_no_command_line_instructions() {
        let db = Db::new();
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        let out = mcp(
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

    /// G4: a --db path that ends with a separator names a directory; it is refused before any file is
    /// created, with a file path to use instead.
    #[test]
    fn g4_a_db_path_ending_in_a_separator_is_refused() {
        let db = Db::new();
        let dir_path = format!("{}/", db.dir.path().join("newdir").display());
        let mut cmd = db.command(common::TL);
        let out = cmd.args(["--db", &dir_path, "create"]).output().unwrap();
        assert_eq!(out.status.code(), Some(3));
        assert_eq!(
            String::from_utf8(out.stderr).unwrap(),
            format!(
                "{{\"error\":\"{dir_path} ends with a path separator, so it names a directory; pass --db with a file path such as {dir_path}timeline.db\"}}\n"
            )
        );
        assert_eq!(std::fs::read_dir(db.dir.path()).unwrap().count(), 0);
    }
}
