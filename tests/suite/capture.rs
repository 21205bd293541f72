//! Capture of coding-agent histories (issue 26), through the real `tl` on both storage engines:
//! Claude Code session transcripts as trees (edits, API responses split over lines, tool calls and
//! results, pass-through events, compaction, repeated and unknown lines), kept up to date (a grown
//! session adds only its new messages to its timeline; an unchanged one changes nothing), read from
//! the default folder, and refused cleanly when they are not transcripts. The fixtures under
//! tests/fixtures/interchange/claude-code* are synthetic and follow the published format.

use crate::common;

use common::Db;
use std::path::{Path, PathBuf};

const SESSION: &str = "5f0c1a2e-0000-4000-8000-000000000001";

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/interchange")
        .join(name)
}

/// A database with a fixed clock, and a copy of the Claude Code projects folder beside it (its
/// path returned), so that a test can grow the session.
fn setup() -> (Db, PathBuf) {
    let mut db = Db::new();
    db.env("TIMELINE_NOW", "1750000000");
    let projects = db.dir.path().join("claude").join("projects");
    let project = projects.join("-home-ada-src-kiln");
    std::fs::create_dir_all(&project).unwrap();
    let name = format!("{SESSION}.jsonl");
    std::fs::copy(
        fixture("claude-code/-home-ada-src-kiln").join(&name),
        project.join(&name),
    )
    .unwrap();
    (db, projects)
}

/// The session file inside the copied projects folder.
fn session_file(projects: &Path) -> PathBuf {
    projects
        .join("-home-ada-src-kiln")
        .join(format!("{SESSION}.jsonl"))
}

/// Append the fixture's later lines (a compaction, then a new exchange) to the session.
fn grow(projects: &Path) {
    use std::io::Write;
    let more = std::fs::read(fixture("claude-code-growth.jsonl")).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(session_file(projects))
        .unwrap()
        .write_all(&more)
        .unwrap();
}

const FIRST_REPORT: &str = r#"{"format":"claude-code","imported":1,"unchanged":0,"skipped":0,"messages":10,"timelines":[{"timeline_id":"tl0","source_id":"5f0c1a2e-0000-4000-8000-000000000001","title":"Fixing the kiln temperature test","create_time_ms":1767607200000,"messages":10,"branches":["main","edit-1"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":4,"user":4},"parts":{"text":7,"thinking":1,"tool_call":1,"tool_result":1},"skipped":{"file-history-snapshot":1,"progress":1,"repeated_line":1,"x-future-kind":1}}}"#;

const MAIN_BEFORE: &str = r#"{"node":"n1","role":"user","text":"Why does the kiln test fail?","tokens":7},{"node":"n2","role":"assistant","text":"[thinking]\nLook at the test first.","tokens":9,"intent_tag":"thinking"},{"node":"n3","role":"assistant","text":"Let me read it.","tokens":4},{"node":"n4","role":"assistant","text":"[tool call toolu_1: Read({\"file_path\":\"tests/kiln.rs\"})]","tokens":14,"intent_tag":"tool_call"},{"node":"n5","role":"user","text":"[tool result toolu_1]\nassert_eq!(temp, 1200);","tokens":12,"intent_tag":"tool_result"},{"node":"n6","role":"assistant","text":"The test expects 1200, but the kiln now heats to 1250.","tokens":14},{"node":"n9","role":"user","text":"Fix it, and say why in a comment.","tokens":9},{"node":"n10","role":"assistant","text":"Done, with a comment on the new temperature.","tokens":11}"#;

on_every_engine! {
    /// One session, one timeline: the lines of one API response (thinking, text and tool call)
    /// are a node each, the later ones continuations that exports join to the first, a progress event between a tool result and the answer is passed through, an
    /// edited prompt is a branch, the summary line titles it, the model is in the provenance, and
    /// the repeated, unknown and metadata lines are counted by kind.
    #[test]
    fn claude_code_session_is_a_tree() {
        let (db, projects) = setup();
        let input = projects.display().to_string();
        db.tl(&["import", "--format", "claude-code", "--input", &input]).ok(FIRST_REPORT);
        db.tl(&["branches"]).ok(
            r#"[{"name":"main","head":"n10","current":true},{"name":"edit-1","head":"n8","current":false}]"#,
        );
        db.tl(&["context", "--node", "n10"]).ok(&format!("[{MAIN_BEFORE}]"));
        db.tl(&["context", "--node", "n8"]).ok(
            r#"[{"node":"n1","role":"user","text":"Why does the kiln test fail?","tokens":7},{"node":"n2","role":"assistant","text":"[thinking]\nLook at the test first.","tokens":9,"intent_tag":"thinking"},{"node":"n3","role":"assistant","text":"Let me read it.","tokens":4},{"node":"n4","role":"assistant","text":"[tool call toolu_1: Read({\"file_path\":\"tests/kiln.rs\"})]","tokens":14,"intent_tag":"tool_call"},{"node":"n5","role":"user","text":"[tool result toolu_1]\nassert_eq!(temp, 1200);","tokens":12,"intent_tag":"tool_result"},{"node":"n6","role":"assistant","text":"The test expects 1200, but the kiln now heats to 1250.","tokens":14},{"node":"n7","role":"user","text":"Fix it.","tokens":2},{"node":"n8","role":"assistant","text":"Done: the test expects 1250.","tokens":7}]"#,
        );
        // Each line of the API response is a node; the later ones are its continuations, which
        // exports join to it as one message.
        db.tl(&["node", "--node", "n2"]).ok(
            r#"{"node":"n2","timeline_id":"tl0","role":"assistant","text":"[thinking]\nLook at the test first.","tokens":9,"parent":"n1","children":["n3"],"zone":"hot","pinned":false,"path_tokens":16,"created_at":1767607202,"intent":{"tag":"thinking"},"summary":null,"provenance":{"import":"claude-code","uuid":"a1","model":"claude-sonnet-4-5"}}"#,
        );
        db.tl(&["node", "--node", "n4"]).ok(
            r#"{"node":"n4","timeline_id":"tl0","role":"assistant","text":"[tool call toolu_1: Read({\"file_path\":\"tests/kiln.rs\"})]","tokens":14,"parent":"n3","children":["n5"],"zone":"hot","pinned":false,"path_tokens":34,"created_at":1767607203,"intent":{"tag":"tool_call"},"summary":null,"provenance":{"import":"claude-code","uuid":"a1c","model":"claude-sonnet-4-5","part":3}}"#,
        );
        let exported = db.tl(&["export", "--format", "anthropic", "--node", "n5"]).json();
        assert_eq!(exported, serde_json::from_str::<serde_json::Value>(
            r#"{"messages":[{"role":"user","content":"Why does the kiln test fail?"},{"role":"assistant","content":"[thinking]\nLook at the test first.\n\nLet me read it.\n\n[tool call toolu_1: Read({\"file_path\":\"tests/kiln.rs\"})]"},{"role":"user","content":"[tool result toolu_1]\nassert_eq!(temp, 1200);"}]}"#,
        ).unwrap());
        // A single session file is read the same way.
        let other = Db::new();
        other
            .tl(&["import", "--format", "claude-code", "--input", &session_file(&projects).display().to_string()])
            .ok(FIRST_REPORT);
    }

    /// A session that grew (a compaction, then a new exchange) adds only its new messages to the
    /// same timeline, below the message the compaction continued; the old nodes keep their IDs
    /// and main moves along. Importing it unchanged then writes nothing.
    #[test]
    fn claude_code_session_is_kept_up_to_date() {
        let (db, projects) = setup();
        let input = projects.display().to_string();
        db.tl(&["import", "--format", "claude-code", "--input", &input]).ok(FIRST_REPORT);
        grow(&projects);
        db.tl(&["import", "--format", "claude-code", "--input", &input]).ok(
            r#"{"format":"claude-code","imported":1,"unchanged":0,"skipped":0,"messages":3,"timelines":[{"timeline_id":"tl0","source_id":"5f0c1a2e-0000-4000-8000-000000000001","title":"Fixing the kiln temperature test","messages":3,"branches":["main"],"status":"updated"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":5,"user":6},"parts":{"compact_summary":1,"text":10,"thinking":1,"tool_call":1,"tool_result":1},"skipped":{"compact_boundary":1,"file-history-snapshot":1,"progress":1,"repeated_line":1,"x-future-kind":1}}}"#,
        );
        db.tl(&["timelines"]).ok(
            r#"[{"timeline_id":"tl0","title":"Fixing the kiln temperature test","created_at":1767607200,"updated_at":1767610840,"messages":13,"branches":2,"current_branch":"main"}]"#,
        );
        db.tl(&["branches"]).ok(
            r#"[{"name":"main","head":"n13","current":true},{"name":"edit-1","head":"n8","current":false}]"#,
        );
        // The compact summary is a summary of the path it replaced (n1..n10), beside it; the
        // messages after the compaction continue n10.
        db.tl(&["context", "--node", "n13"]).ok(&format!(
            r#"[{MAIN_BEFORE},{{"node":"n12","role":"user","text":"Now run the tests.","tokens":5}},{{"node":"n13","role":"assistant","text":"All 12 tests pass.","tokens":5}}]"#
        ));
        db.tl(&["node", "--node", "n11"]).ok(
            r#"{"node":"n11","timeline_id":"tl0","role":"summary","text":"This session is being continued from a previous conversation. Summary: the kiln test now expects 1250, with a comment.","tokens":30,"parent":"n0","children":[],"zone":"hot","pinned":false,"path_tokens":30,"created_at":1767610801,"intent":{"tag":"compact_summary"},"summary":{"kind":"real","from":"n1","to":"n10","version":1,"supersedes":null,"superseded_by":null,"derived_from":[],"stale":false},"provenance":{"import":"claude-code","uuid":"cs1"}}"#,
        );
        let before = db.bytes();
        db.tl(&["import", "--format", "claude-code", "--input", &input]).ok(
            r#"{"format":"claude-code","imported":0,"unchanged":1,"skipped":0,"messages":0,"timelines":[{"timeline_id":"tl0","source_id":"5f0c1a2e-0000-4000-8000-000000000001","title":"Fixing the kiln temperature test","messages":0,"branches":[],"status":"unchanged"}],"skipped_conversations":[],"kinds":{"roles":{},"parts":{},"skipped":{}}}"#,
        );
        assert_eq!(db.bytes(), before);
        // The two imports are recorded: the second holds only the new messages.
        let value = db.value();
        let ids: Vec<_> = value["imports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["first_node"].clone(), r["nodes"].clone(), r["message_ids"].clone()))
            .collect();
        assert_eq!(
            ids,
            vec![
                (serde_json::json!("n1"), serde_json::json!(10), serde_json::json!(["u1", "a1", "a1b", "a1c", "t1", "a2", "u2", "a3", "u2e", "a3e"])),
                (serde_json::json!("n11"), serde_json::json!(3), serde_json::json!(["cs1", "u3", "a4"])),
            ]
        );
    }

    /// A subagent's transcript (`<session>/subagents/agent-ID.jsonl`) is a branch named after it,
    /// forked from the message whose tool call started it (its tool result names the agent); main
    /// stays on the session's own last message; Claude Code's compaction agents are left out.
    #[test]
    fn claude_code_subagents_are_branches() {
        let db = Db::new();
        let input = fixture("claude-code-agents").display().to_string();
        db.tl(&["import", "--format", "claude-code", "--input", &input]).ok(
            r#"{"format":"claude-code","imported":1,"unchanged":0,"skipped":0,"messages":6,"timelines":[{"timeline_id":"tl0","source_id":"5f0c1a2e-0000-4000-8000-000000000002","title":"Find where the kiln temperature is set.","create_time_ms":1767690000000,"messages":6,"branches":["main","agent-ab12"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":3,"user":3},"parts":{"text":4,"tool_call":1,"tool_result":1},"skipped":{}}}"#,
        );
        db.tl(&["branches"]).ok(
            r#"[{"name":"main","head":"n4","current":true},{"name":"agent-ab12","head":"n6","current":false}]"#,
        );
        db.tl(&["context", "--node", "n6"]).ok(
            r#"[{"node":"n1","role":"user","text":"Find where the kiln temperature is set.","tokens":10},{"node":"n2","role":"assistant","text":"[tool call toolu_9: Task({\"description\":\"Search\",\"prompt\":\"Find the temperature constant.\",\"subagent_type\":\"Explore\"})]","tokens":30,"intent_tag":"tool_call"},{"node":"n5","role":"user","text":"Find the temperature constant.","tokens":8},{"node":"n6","role":"assistant","text":"src/kiln.rs:12 sets TEMP = 1250.","tokens":8}]"#,
        );
        db.tl(&["node", "--node", "n6"]).ok(
            r#"{"node":"n6","timeline_id":"tl0","role":"assistant","text":"src/kiln.rs:12 sets TEMP = 1250.","tokens":8,"parent":"n5","children":[],"zone":"hot","pinned":false,"path_tokens":56,"created_at":1767690015,"intent":null,"summary":null,"provenance":{"import":"claude-code","uuid":"s2","model":"claude-haiku-4-5","agent":"ab12"}}"#,
        );
    }

    /// In an older session file, a subagent's lines are in it as a sidechain (`isSidechain`,
    /// the first without a parent): a branch `sidechain-N` forked from the Task call whose
    /// prompt it starts with, not from the root.
    #[test]
    fn claude_code_sidechain_hangs_from_its_tool_call() {
        let db = Db::new();
        let input = fixture("claude-code-sidechain.jsonl").display().to_string();
        db.tl(&["import", "--format", "claude-code", "--input", &input]).ok(
            r#"{"format":"claude-code","imported":1,"unchanged":0,"skipped":0,"messages":6,"timelines":[{"timeline_id":"tl0","source_id":"5f0c1a2e-0000-4000-8000-000000000004","title":"Where is the kiln temperature set?","create_time_ms":1767614400000,"messages":6,"branches":["main","sidechain-1"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":3,"user":3},"parts":{"text":4,"tool_call":1,"tool_result":1},"skipped":{}}}"#,
        );
        db.tl(&["branches"]).ok(
            r#"[{"name":"main","head":"n6","current":true},{"name":"sidechain-1","head":"n4","current":false}]"#,
        );
        db.tl(&["context", "--node", "n4"]).ok(
            r#"[{"node":"n1","role":"user","text":"Where is the kiln temperature set?","tokens":9},{"node":"n2","role":"assistant","text":"[tool call toolu_7: Task({\"description\":\"Search\",\"prompt\":\"Find the temperature constant.\",\"subagent_type\":\"general-purpose\"})]","tokens":32,"intent_tag":"tool_call"},{"node":"n3","role":"user","text":"Find the temperature constant.","tokens":8},{"node":"n4","role":"assistant","text":"src/kiln.rs:12 sets TEMP = 1250.","tokens":8}]"#,
        );
        db.tl(&["context", "--node", "n6"]).ok(
            r#"[{"node":"n1","role":"user","text":"Where is the kiln temperature set?","tokens":9},{"node":"n2","role":"assistant","text":"[tool call toolu_7: Task({\"description\":\"Search\",\"prompt\":\"Find the temperature constant.\",\"subagent_type\":\"general-purpose\"})]","tokens":32,"intent_tag":"tool_call"},{"node":"n5","role":"user","text":"[tool result toolu_7]\nsrc/kiln.rs:12 sets TEMP = 1250.","tokens":14,"intent_tag":"tool_result"},{"node":"n6","role":"assistant","text":"It is set in src/kiln.rs, line 12.","tokens":9}]"#,
        );
        db.tl(&["node", "--node", "n4"]).ok(
            r#"{"node":"n4","timeline_id":"tl0","role":"assistant","text":"src/kiln.rs:12 sets TEMP = 1250.","tokens":8,"parent":"n3","children":[],"zone":"hot","pinned":false,"path_tokens":57,"created_at":1767614409,"intent":null,"summary":null,"provenance":{"import":"claude-code","uuid":"s2","model":"claude-haiku-4-5","sidechain":true}}"#,
        );
    }

    /// A pipe in a sessions folder is passed over (never opened: reading it could wait forever);
    /// named as the input, it is refused.
    #[cfg(unix)]
    #[test]
    fn claude_code_special_files_are_not_read() {
        let (db, projects) = setup();
        let fifo = projects.join("-home-ada-src-kiln").join("pipe.jsonl");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let input = projects.display().to_string();
        db.tl(&["import", "--format", "claude-code", "--input", &input]).ok(FIRST_REPORT);
        db.tl(&["import", "--format", "claude-code", "--input", &fifo.display().to_string()]).err(
            2,
            &format!(
                r#"{{"error":"invalid argument --input: {} is not a regular file (a pipe, a device or a socket); an import reads regular files only, so copy the data into a file and import that; nothing was imported"}}"#,
                fifo.display()
            ),
        );
    }

    /// Without --input, the sessions are read from $CLAUDE_CONFIG_DIR/projects (else
    /// ~/.claude/projects); where there are none, the error says where it looked.
    #[test]
    fn claude_code_default_location() {
        let (mut db, projects) = setup();
        let config = projects.parent().unwrap().display().to_string();
        db.env("CLAUDE_CONFIG_DIR", &config);
        db.tl(&["import", "--format", "claude-code"]).ok(FIRST_REPORT);
        let home = db.dir.path().join("home");
        db.env("CLAUDE_CONFIG_DIR", "");
        db.env("HOME", &home.display().to_string());
        db.tl(&["import", "--format", "claude-code"]).err(
            2,
            &format!(
                r#"{{"error":"invalid argument --input: there are no Claude Code sessions at {}, where they are kept by default ($CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects); pass --input with a session file or a folder of them"}}"#,
                home.join(".claude").join("projects").display()
            ),
        );
        // The other formats still need --input.
        db.tl(&["import", "--format", "chatgpt"]).err(
            2,
            r#"{"error":"invalid argument --input: --format chatgpt needs --input, the file to import"}"#,
        );
    }

    /// A folder without transcripts and a file that is not one are refused, and nothing is
    /// written; an unreadable line is counted and the rest imported.
    #[test]
    fn claude_code_refuses_what_is_not_a_transcript() {
        let (db, projects) = setup();
        let empty = db.dir.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        db.tl(&["import", "--format", "claude-code", "--input", &empty.display().to_string()]).err(
            2,
            &format!(
                r#"{{"error":"invalid argument --input: the folder {} holds no session files (*.jsonl); pass a Claude Code session transcript itself or the folder that holds them"}}"#,
                empty.display()
            ),
        );
        let other = db.dir.path().join("other.jsonl");
        std::fs::write(&other, "{\"role\":\"user\",\"content\":\"hi\"}\n").unwrap();
        db.tl(&["import", "--format", "claude-code", "--input", &other.display().to_string()]).err(
            2,
            &format!(
                r#"{{"error":"invalid argument --input: {} is not a Claude Code session transcript: none of its 1 conversation(s) could be read (the first: none of its lines is a Claude Code transcript line (user, assistant, summary, system)); check --format; nothing was imported"}}"#,
                other.display()
            ),
        );
        assert!(db.bytes().is_empty(), "the refused import created the database");
        let file = session_file(&projects);
        let mut text = std::fs::read_to_string(&file).unwrap();
        text.insert_str(0, "{not json\n");
        std::fs::write(&file, text).unwrap();
        let report = db.tl(&["import", "--format", "claude-code", "--input", &file.display().to_string()]).json();
        assert_eq!(report["messages"], 10);
        assert_eq!(report["kinds"]["skipped"]["unreadable_line"], 1);
    }
}

mod mid_turn {
    use super::*;

    /// Every node of the timeline as `tl node` shows it, and its branches.
    fn nodes(db: &Db) -> Vec<serde_json::Value> {
        let count = db.tl(&["timelines"]).json()[0]["messages"]
            .as_u64()
            .unwrap();
        let mut out = vec![db.tl(&["branches"]).json()];
        out.extend((1..=count).map(|n| db.tl(&["node", "--node", &format!("n{n}")]).json()));
        out
    }

    on_both_engines! {
        /// Issue 42, item 3: a session imported after the first line of an API response (its
        /// thinking block) and again after the second (its text) keeps both, as a fresh import
        /// does: each line is a node, the later ones continuations of the first. Before, the
        /// second import added nothing of the answer and the third only the next lines, so the
        /// text "Let me read it." and the tool call were lost.
        #[test]
        fn claude_code_session_imported_mid_turn_keeps_the_whole_answer() {
            let (db, projects) = setup();
            let file = session_file(&projects);
            let all = std::fs::read_to_string(&file).unwrap();
            let lines: Vec<&str> = all.lines().collect();
            let input = file.display().to_string();
            // The snapshot line, the prompt and the response's first line (its thinking).
            std::fs::write(&file, lines[..3].join("\n") + "\n").unwrap();
            db.tl(&["import", "--format", "claude-code", "--input", &input]).json();
            std::fs::write(&file, lines[..4].join("\n") + "\n").unwrap();
            db.tl(&["import", "--format", "claude-code", "--input", &input]).ok(
                r#"{"format":"claude-code","imported":1,"unchanged":0,"skipped":0,"messages":1,"timelines":[{"timeline_id":"tl0","source_id":"5f0c1a2e-0000-4000-8000-000000000001","title":"Why does the kiln test fail?","messages":1,"branches":["main"],"status":"updated"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":1,"user":1},"parts":{"text":2,"thinking":1},"skipped":{"file-history-snapshot":1}}}"#,
            );
            db.tl(&["node", "--node", "n3"]).ok(
                r#"{"node":"n3","timeline_id":"tl0","role":"assistant","text":"Let me read it.","tokens":4,"parent":"n2","children":[],"zone":"hot","pinned":false,"path_tokens":20,"created_at":1767607202,"intent":null,"summary":null,"provenance":{"import":"claude-code","uuid":"a1b","model":"claude-sonnet-4-5","part":2}}"#,
            );
            std::fs::write(&file, &all).unwrap();
            db.tl(&["import", "--format", "claude-code", "--input", &input]).json();
            let fresh = Db::new();
            fresh.tl(&["import", "--format", "claude-code", "--input", &input]).ok(FIRST_REPORT);
            assert_eq!(nodes(&db)[1..], nodes(&fresh)[1..]);
            // One message in every export, as the whole file gives it.
            let markdown = ["export", "--format", "markdown", "--node", "n5"];
            assert_eq!(db.tl(&markdown).stdout, fresh.tl(&markdown).stdout);
            db.tl(&markdown).ok(concat!(
                "# tl0: context of n5\n\n## n1 · user\n\nWhy does the kiln test fail?\n\n",
                "## n2 · assistant · intent: thinking\n\n[thinking]\nLook at the test first.\n\nLet me read it.\n\n",
                "[tool call toolu_1: Read({\"file_path\":\"tests/kiln.rs\"})]\n\n",
                "## n5 · user · intent: tool_result\n\n[tool result toolu_1]\nassert_eq!(temp, 1200);",
            ));
        }
    }
}

const RESUMED: &str = "5f0c1a2e-0000-4000-8000-000000000003";

/// Put the fixture of a session resumed from SESSION into a new file (a new `sessionId`, the
/// main path's lines copied, then two new lines) beside it.
fn resume(projects: &Path) -> PathBuf {
    let file = projects
        .join("-home-ada-src-kiln")
        .join(format!("{RESUMED}.jsonl"));
    std::fs::copy(fixture("claude-code-resumed.jsonl"), &file).unwrap();
    file
}

mod resumed {
    use super::*;

    on_every_engine! {
        /// A session resumed into a new file joins the timeline of the session it resumed: the
        /// copied lines are recognised (no message twice), the new ones continue main. Grown, it
        /// adds only what it gained; in the other order, the earlier session's own messages (its
        /// edited prompt) join the resumed session's timeline as a branch.
        #[test]
        fn claude_code_resumed_session_joins_its_timeline() {
            let (db, projects) = setup();
            let input = projects.display().to_string();
            db.tl(&["import", "--format", "claude-code", "--input", &input]).ok(FIRST_REPORT);
            let resumed = resume(&projects);
            db.tl(&["import", "--format", "claude-code", "--input", &input]).ok(&format!(
                r#"{{"format":"claude-code","imported":1,"unchanged":1,"skipped":0,"messages":2,"timelines":[{{"timeline_id":"tl0","source_id":"{SESSION}","title":"Fixing the kiln temperature test","messages":0,"branches":[],"status":"unchanged"}},{{"timeline_id":"tl0","source_id":"{RESUMED}","title":"Why does the kiln test fail?","messages":2,"branches":["main"],"joined":"{SESSION}","status":"updated"}}],"skipped_conversations":[],"kinds":{{"roles":{{"assistant":4,"user":4}},"parts":{{"text":7,"thinking":1,"tool_call":1,"tool_result":1}},"skipped":{{"progress":1}}}}}}"#
            ));
            db.tl(&["timelines"]).ok(
                r#"[{"timeline_id":"tl0","title":"Fixing the kiln temperature test","created_at":1767607200,"updated_at":1767690010,"messages":12,"branches":2,"current_branch":"main"}]"#,
            );
            db.tl(&["context", "--node", "n12"]).ok(&format!(
                r#"[{MAIN_BEFORE},{{"node":"n11","role":"user","text":"Also check the cooling test.","tokens":7}},{{"node":"n12","role":"assistant","text":"The cooling test passes too.","tokens":7}}]"#
            ));
            // Grown, the resumed session adds its new exchange only; unchanged, nothing.
            let mut text = std::fs::read_to_string(&resumed).unwrap();
            text.push_str(&format!(
                "{}\n",
                r#"{"sessionId":"5f0c1a2e-0000-4000-8000-000000000003","type":"user","uuid":"r3","parentUuid":"r2","timestamp":"2026-01-06T09:01:00.000Z","message":{"role":"user","content":"Thanks."}}"#
            ));
            std::fs::write(&resumed, text).unwrap();
            let report = db.tl(&["import", "--format", "claude-code", "--input", &input]).json();
            assert_eq!(report["timelines"], serde_json::json!([{"timeline_id":"tl0","source_id":SESSION,"title":"Fixing the kiln temperature test","messages":0,"branches":[],"status":"unchanged"},{"timeline_id":"tl0","source_id":RESUMED,"title":"Why does the kiln test fail?","messages":1,"branches":["main"],"status":"updated"}]));
            let before = db.bytes();
            assert_eq!(db.tl(&["import", "--format", "claude-code", "--input", &input]).json()["imported"], 0);
            assert_eq!(db.bytes(), before);
            db.tl(&["branches"]).ok(
                r#"[{"name":"main","head":"n13","current":true},{"name":"edit-1","head":"n8","current":false}]"#,
            );

            // The other order: the resumed file first, then the session it resumed.
            let other = Db::new();
            other.tl(&["import", "--format", "claude-code", "--input", &resumed.display().to_string()]).json();
            other.tl(&["import", "--format", "claude-code", "--input", &session_file(&projects).display().to_string()]).ok(&format!(
                r#"{{"format":"claude-code","imported":1,"unchanged":0,"skipped":0,"messages":2,"timelines":[{{"timeline_id":"tl0","source_id":"{SESSION}","title":"Fixing the kiln temperature test","messages":2,"branches":["edit-1"],"joined":"{RESUMED}","status":"updated"}}],"skipped_conversations":[],"kinds":{{"roles":{{"assistant":4,"user":4}},"parts":{{"text":7,"thinking":1,"tool_call":1,"tool_result":1}},"skipped":{{"file-history-snapshot":1,"progress":1,"repeated_line":1,"x-future-kind":1}}}}}}"#
            ));
            other.tl(&["context", "--node", "n13"]).ok(
                r#"[{"node":"n1","role":"user","text":"Why does the kiln test fail?","tokens":7},{"node":"n2","role":"assistant","text":"[thinking]\nLook at the test first.","tokens":9,"intent_tag":"thinking"},{"node":"n3","role":"assistant","text":"Let me read it.","tokens":4},{"node":"n4","role":"assistant","text":"[tool call toolu_1: Read({\"file_path\":\"tests/kiln.rs\"})]","tokens":14,"intent_tag":"tool_call"},{"node":"n5","role":"user","text":"[tool result toolu_1]\nassert_eq!(temp, 1200);","tokens":12,"intent_tag":"tool_result"},{"node":"n6","role":"assistant","text":"The test expects 1200, but the kiln now heats to 1250.","tokens":14},{"node":"n12","role":"user","text":"Fix it.","tokens":2},{"node":"n13","role":"assistant","text":"Done: the test expects 1250.","tokens":7}]"#,
            );
        }
    }
}

mod reused_uuids {
    use super::*;

    const OTHER: &str = "5f0c1a2e-0000-4000-8000-000000000005";

    /// A line of session OTHER, shaped as Claude Code writes it.
    fn line(
        kind: &str,
        uuid: &str,
        parent: &str,
        second: u32,
        message: serde_json::Value,
    ) -> String {
        serde_json::json!({
            "parentUuid": parent, "isSidechain": false, "userType": "external",
            "cwd": "/home/ada/src/kiln", "sessionId": OTHER, "version": "2.0.14", "gitBranch": "main",
            "type": kind, "uuid": uuid, "timestamp": format!("2026-01-07T09:00:{second:02}.000Z"),
            "message": message,
        })
        .to_string()
    }

    fn answer(id: &str, text: &str) -> serde_json::Value {
        serde_json::json!({"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}], "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 5}})
    }

    on_both_engines! {
        /// Issue 42, item 4: a second session that copies the first's opening prompt (the same
        /// `uuid`, the same text) but reuses the uuids `a1` and `a2` for answers of its own
        /// joins the first session's timeline only where the two are the same: its prompt is
        /// n1, its own answers are written below it (not dropped as before) and reported in
        /// `reused_ids`, and a later line below them follows them. A third session that reuses
        /// a uuid with another text and shares nothing is a timeline of its own.
        #[test]
        fn claude_code_sessions_reusing_uuids_join_only_what_is_the_same() {
            let (db, projects) = setup();
            let input = projects.display().to_string();
            db.tl(&["import", "--format", "claude-code", "--input", &input]).ok(FIRST_REPORT);
            let first = std::fs::read_to_string(session_file(&projects)).unwrap();
            let copied = first.lines().nth(1).unwrap().replace(SESSION, OTHER);
            let other = projects.join("-home-ada-src-kiln").join(format!("{OTHER}.jsonl"));
            let lines = [
                copied,
                line("assistant", "a1", "u1", 1, answer("msg_b1", "The clay is still wet.")),
                line("user", "b2", "a1", 2, serde_json::json!({"role": "user", "content": "How long should it dry?"})),
                line("assistant", "a2", "b2", 3, answer("msg_b2", "A week, covered.")),
            ];
            std::fs::write(&other, lines.join("\n") + "\n").unwrap();
            db.tl(&["import", "--format", "claude-code", "--input", &other.display().to_string()]).ok(&format!(
                r#"{{"format":"claude-code","imported":1,"unchanged":0,"skipped":0,"messages":3,"timelines":[{{"timeline_id":"tl0","source_id":"{OTHER}","title":"Why does the kiln test fail?","messages":3,"branches":["regen-1"],"joined":"{SESSION}","reused_ids":["a1","a2"],"status":"updated"}}],"skipped_conversations":[],"kinds":{{"roles":{{"assistant":2,"user":2}},"parts":{{"text":4}},"skipped":{{}}}}}}"#
            ));
            db.tl(&["context", "--node", "n13"]).ok(
                r#"[{"node":"n1","role":"user","text":"Why does the kiln test fail?","tokens":7},{"node":"n11","role":"assistant","text":"The clay is still wet.","tokens":6},{"node":"n12","role":"user","text":"How long should it dry?","tokens":6},{"node":"n13","role":"assistant","text":"A week, covered.","tokens":4}]"#,
            );
            // The text report says which messages were not joined.
            let (copy, copied_projects) = setup();
            copy.tl(&["import", "--format", "claude-code", "--input", &copied_projects.display().to_string()]).json();
            copy.tl(&["--format", "text", "import", "--format", "claude-code", "--input", &other.display().to_string()]).ok(&format!(
                "updated    tl0  Why does the kiln test fail?  +3 messages (regen-1, joined {SESSION}, written as its own: a1 a2)\nclaude-code: 1 imported, 0 unchanged, 0 skipped; 3 messages written"
            ));
            // Grown, it adds below its own messages, whatever the first session holds.
            let mut grown = lines.join("\n") + "\n";
            grown.push_str(&line("user", "b4", "a2", 4, serde_json::json!({"role": "user", "content": "Thanks."})));
            grown.push('\n');
            std::fs::write(&other, grown).unwrap();
            let report = db.tl(&["import", "--format", "claude-code", "--input", &other.display().to_string()]).json();
            assert_eq!(report["timelines"], serde_json::json!([{"timeline_id": "tl0", "source_id": OTHER, "title": "Why does the kiln test fail?", "messages": 1, "branches": ["regen-1"], "status": "updated"}]));
            assert_eq!(db.tl(&["node", "--node", "n14"]).json()["parent"], "n13");
            // Nothing in common but a reused uuid: a timeline of its own.
            let third = projects.join("-home-ada-src-kiln").join("5f0c1a2e-0000-4000-8000-000000000006.jsonl");
            std::fs::write(&third, line("user", "u1", "", 0, serde_json::json!({"role": "user", "content": "Glaze for a mug?"})).replace(OTHER, "5f0c1a2e-0000-4000-8000-000000000006").replace(r#""parentUuid":"""#, r#""parentUuid":null"#) + "\n").unwrap();
            let report = db.tl(&["import", "--format", "claude-code", "--input", &third.display().to_string()]).json();
            assert_eq!(report["timelines"], serde_json::json!([{"timeline_id": "tl1", "source_id": "5f0c1a2e-0000-4000-8000-000000000006", "title": "Glaze for a mug?", "create_time_ms": 1767776400000u64, "messages": 1, "branches": ["main"], "status": "new"}]));
        }
    }
}

/// A copy of the fixture folder `name` in the database's directory, and its path.
fn copy_tree(db: &Db, name: &str) -> PathBuf {
    fn copy(from: &Path, to: &Path) {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap() {
            let entry = entry.unwrap();
            let target = to.join(entry.file_name());
            if entry.file_type().unwrap().is_dir() {
                copy(&entry.path(), &target);
            } else {
                std::fs::copy(entry.path(), target).unwrap();
            }
        }
    }
    let to = db.dir.path().join(name);
    copy(&fixture(name), &to);
    to
}

const CODEX_MAIN: &str = r#"{"node":"n1","role":"system","text":"You are Codex, a coding agent.","tokens":8,"intent_tag":"developer"},{"node":"n2","role":"user","text":"<environment_context>\n  <cwd>/home/ada/src/kiln</cwd>\n</environment_context>","tokens":19},{"node":"n3","role":"user","text":"Which tests are slow?","tokens":6},{"node":"n4","role":"assistant","text":"[thinking]\nTime the test suite.","tokens":8,"intent_tag":"thinking"},{"node":"n5","role":"assistant","text":"[tool call call_1: shell({\"command\":[\"cargo\",\"test\"]})]","tokens":14,"intent_tag":"tool_call"},{"node":"n6","role":"user","text":"[tool result call_1]\ntest kiln::heats ... ok (4.2 s)","tokens":13,"intent_tag":"tool_result"},{"node":"n7","role":"assistant","text":"kiln::heats takes 4.2 s; the rest are fast.","tokens":11}"#;

mod codex {
    use super::*;

    on_every_engine! {
        /// A Codex rollout is a linear timeline: developer instructions as a tagged system message,
        /// reasoning, tool calls and their output as tagged messages, the model of the turn in the
        /// provenance, the UI's event lines and unknown lines counted. When it grows (a compaction and a
        /// new exchange), only the new messages are added to the same timeline; unchanged, nothing.
        #[test]
        fn codex_rollout_is_kept_up_to_date() {
            let mut db = Db::new();
            db.env("TIMELINE_NOW", "1750000000");
            let sessions = copy_tree(&db, "codex");
            let input = sessions.display().to_string();
            db.tl(&["import", "--format", "codex", "--input", &input]).ok(
                r#"{"format":"codex","imported":1,"unchanged":0,"skipped":0,"messages":7,"timelines":[{"timeline_id":"tl0","source_id":"0199a1b2-0000-7000-8000-00000000c0de","title":"Which tests are slow?","create_time_ms":1767772800000,"messages":7,"branches":["main"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":3,"developer":1,"user":3},"parts":{"text":4,"thinking":1,"tool_call":1,"tool_result":1},"skipped":{"event_msg:token_count":1,"event_msg:user_message":1,"x-future-line":1}}}"#,
            );
            db.tl(&["context", "--node", "n7"]).ok(&format!("[{CODEX_MAIN}]"));
            db.tl(&["node", "--node", "n7"]).ok(
                r#"{"node":"n7","timeline_id":"tl0","role":"assistant","text":"kiln::heats takes 4.2 s; the rest are fast.","tokens":11,"parent":"n6","children":[],"zone":"hot","pinned":false,"path_tokens":79,"created_at":1767772810,"intent":null,"summary":null,"provenance":{"import":"codex","line":10,"model":"gpt-5-codex"}}"#,
            );
            let rollout = sessions
                .join("2026/01/07/rollout-2026-01-07T08-00-00-0199a1b2-0000-7000-8000-00000000c0de.jsonl");
            let mut text = std::fs::read_to_string(&rollout).unwrap();
            text.push_str(&std::fs::read_to_string(fixture("codex-growth.jsonl")).unwrap());
            std::fs::write(&rollout, text).unwrap();
            db.tl(&["import", "--format", "codex", "--input", &input]).ok(
                r#"{"format":"codex","imported":1,"unchanged":0,"skipped":0,"messages":3,"timelines":[{"timeline_id":"tl0","source_id":"0199a1b2-0000-7000-8000-00000000c0de","title":"Which tests are slow?","messages":3,"branches":["main"],"status":"updated"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":4,"developer":1,"user":4},"parts":{"compacted":1,"text":6,"thinking":1,"tool_call":1,"tool_result":1},"skipped":{"event_msg:token_count":1,"event_msg:user_message":1,"x-future-line":1}}}"#,
            );
            // The compaction is a summary of the path before it (n1..n7); the exchange after it
            // continues n7.
            db.tl(&["context", "--node", "n10"]).ok(&format!(
                r#"[{CODEX_MAIN},{{"node":"n9","role":"user","text":"Make it faster.","tokens":4}},{{"node":"n10","role":"assistant","text":"It now takes 0.3 s: the heating curve is computed once.","tokens":14}}]"#
            ));
            db.tl(&["node", "--node", "n8"]).ok(
                r#"{"node":"n8","timeline_id":"tl0","role":"summary","text":"The user asked which tests are slow; kiln::heats takes 4.2 s.","tokens":16,"parent":"n0","children":[],"zone":"hot","pinned":false,"path_tokens":16,"created_at":1767776400,"intent":{"tag":"compacted"},"summary":{"kind":"real","from":"n1","to":"n7","version":1,"supersedes":null,"superseded_by":null,"derived_from":[],"stale":false},"provenance":{"import":"codex","line":13}}"#,
            );
            let before = db.bytes();
            let again = db.tl(&["import", "--format", "codex", "--input", &input]).json();
            assert_eq!(
                (again["unchanged"].clone(), again["timelines"][0]["status"].clone(), again["skipped_conversations"].clone()),
                (serde_json::json!(1), serde_json::json!("unchanged"), serde_json::json!([]))
            );
            assert_eq!(db.bytes(), before);
            // Without --input, $CODEX_HOME/sessions.
            db.env("CODEX_HOME", &db.dir.path().display().to_string());
            std::fs::rename(&sessions, db.dir.path().join("sessions")).unwrap();
            let default = db.tl(&["import", "--format", "codex"]).json();
            assert_eq!((default["imported"].clone(), default["unchanged"].clone(), default["skipped"].clone()), (serde_json::json!(0), serde_json::json!(1), serde_json::json!(0)));
        }
    }
}

mod codex_compaction {
    use super::*;

    on_every_engine! {
        /// A compaction of a newer Codex (an empty `message`, the history that replaces the old one
        /// in `replacement_history`) is a summary of the path before it, its text that history's;
        /// read in one go, the summary is written as it is when the rollout grows into it.
        #[test]
        fn codex_replacement_history_is_a_summary() {
            let mut db = Db::new();
            db.env("TIMELINE_NOW", "1750000000");
            let rollout = db.dir.path().join("rollout-2026-01-09T08-00-00-0199a1b2-0000-7000-8000-0000000000cc.jsonl");
            let lines = [
                r#"{"timestamp":"2026-01-09T08:00:00.000Z","type":"session_meta","payload":{"id":"0199a1b2-0000-7000-8000-0000000000cc"}}"#,
                r#"{"timestamp":"2026-01-09T08:00:01.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Speed up the kiln tests."}]}}"#,
                r#"{"timestamp":"2026-01-09T08:00:09.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Cached the heating curve."}]}}"#,
                r#"{"timestamp":"2026-01-09T09:00:00.000Z","type":"compacted","payload":{"message":"","replacement_history":[{"type":"message","role":"user","content":[{"type":"input_text","text":"Speed up the kiln tests."}]},{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Summary: the heating curve is cached."}]}]}}"#,
                r#"{"timestamp":"2026-01-09T09:00:05.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"Now the cooling tests."}]}}"#,
            ];
            std::fs::write(&rollout, lines.join("\n") + "\n").unwrap();
            db.tl(&["import", "--format", "codex", "--input", &rollout.display().to_string()]).ok(
                r#"{"format":"codex","imported":1,"unchanged":0,"skipped":0,"messages":4,"timelines":[{"timeline_id":"tl0","source_id":"0199a1b2-0000-7000-8000-0000000000cc","title":"Speed up the kiln tests.","create_time_ms":1767945600000,"messages":4,"branches":["main"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":1,"user":2},"parts":{"compacted":1,"text":3},"skipped":{}}}"#,
            );
            db.tl(&["node", "--node", "n3"]).ok(
                r#"{"node":"n3","timeline_id":"tl0","role":"summary","text":"Speed up the kiln tests.\n\nSummary: the heating curve is cached.","tokens":16,"parent":"n0","children":[],"zone":"hot","pinned":false,"path_tokens":16,"created_at":1767949200,"intent":{"tag":"compacted"},"summary":{"kind":"real","from":"n1","to":"n2","version":1,"supersedes":null,"superseded_by":null,"derived_from":[],"stale":false},"provenance":{"import":"codex","line":4}}"#,
            );
            db.tl(&["context", "--node", "n4"]).ok(
                r#"[{"node":"n1","role":"user","text":"Speed up the kiln tests.","tokens":6},{"node":"n2","role":"assistant","text":"Cached the heating curve.","tokens":7},{"node":"n4","role":"user","text":"Now the cooling tests.","tokens":6}]"#,
            );
            db.tl(&["branches"]).ok(r#"[{"name":"main","head":"n4","current":true}]"#);
        }
    }
}

mod codex_fork {
    use super::*;

    const PARENT: &str = "0199a1b2-0000-7000-8000-00000000c0de";
    const FORK: &str = "0199a1b2-0000-7000-8000-00000000f0c0";

    /// The rollouts of the codex fixture and of codex-fork (a fork of it, and an unrelated
    /// session that starts with the same instructions) in one sessions folder.
    fn sessions(db: &Db) -> PathBuf {
        let sessions = copy_tree(db, "codex");
        let fork = copy_tree(db, "codex-fork");
        std::fs::rename(fork.join("2026/01/08"), sessions.join("2026/01/08")).unwrap();
        sessions
    }

    fn fork_file(sessions: &Path) -> PathBuf {
        sessions.join(format!(
            "2026/01/08/rollout-2026-01-08T08-00-00-{FORK}.jsonl"
        ))
    }

    on_every_engine! {
        /// A fork (`forked_from_id`) is a branch `fork-N` of the session it came from, from the
        /// last message they share (its copy of the history is not imported twice); a session
        /// that only starts like it is a timeline of its own. A grown fork adds to its branch.
        #[test]
        fn codex_fork_is_a_branch_of_its_session() {
            let mut db = Db::new();
            db.env("TIMELINE_NOW", "1750000000");
            let sessions = sessions(&db);
            let input = sessions.display().to_string();
            db.tl(&["import", "--format", "codex", "--input", &input]).ok(&format!(
                r#"{{"format":"codex","imported":3,"unchanged":0,"skipped":0,"messages":13,"timelines":[{{"timeline_id":"tl0","source_id":"{PARENT}","title":"Which tests are slow?","create_time_ms":1767772800000,"messages":7,"branches":["main"],"status":"new"}},{{"timeline_id":"tl0","source_id":"{FORK}","title":"Which tests fail?","messages":2,"branches":["fork-1"],"joined":"{PARENT}","status":"updated"}},{{"timeline_id":"tl1","source_id":"0199a1b2-0000-7000-8000-0000000000ab","title":"Add a test for cooling.","create_time_ms":1767862800000,"messages":4,"branches":["main"],"status":"new"}}],"skipped_conversations":[],"kinds":{{"roles":{{"assistant":5,"developer":3,"user":7}},"parts":{{"text":12,"thinking":1,"tool_call":1,"tool_result":1}},"skipped":{{"event_msg:token_count":1,"event_msg:user_message":1,"x-future-line":1}}}}}}"#
            ));
            db.tl(&["branches"]).ok(
                r#"[{"name":"main","head":"n7","current":true},{"name":"fork-1","head":"n9","current":false}]"#,
            );
            db.tl(&["context", "--node", "n9"]).ok(
                r#"[{"node":"n1","role":"system","text":"You are Codex, a coding agent.","tokens":8,"intent_tag":"developer"},{"node":"n2","role":"user","text":"<environment_context>\n  <cwd>/home/ada/src/kiln</cwd>\n</environment_context>","tokens":19},{"node":"n8","role":"user","text":"Which tests fail?","tokens":5},{"node":"n9","role":"assistant","text":"None: all 12 pass.","tokens":5}]"#,
            );
            let fork = fork_file(&sessions);
            let mut text = std::fs::read_to_string(&fork).unwrap();
            text.push_str(
                r#"{"timestamp": "2026-01-08T08:01:00.000Z", "type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Good."}]}}"#,
            );
            text.push('\n');
            std::fs::write(&fork, text).unwrap();
            let report = db.tl(&["import", "--format", "codex", "--input", &input]).json();
            assert_eq!(
                report["timelines"],
                serde_json::json!([
                    {"timeline_id":"tl0","source_id":PARENT,"title":"Which tests are slow?","messages":0,"branches":[],"status":"unchanged"},
                    {"timeline_id":"tl0","source_id":FORK,"title":"Which tests fail?","messages":1,"branches":["fork-1"],"status":"updated"},
                    {"timeline_id":"tl1","source_id":"0199a1b2-0000-7000-8000-0000000000ab","title":"Add a test for cooling.","messages":0,"branches":[],"status":"unchanged"}
                ])
            );
            db.tl(&["branches"]).ok(
                r#"[{"name":"main","head":"n7","current":true},{"name":"fork-1","head":"n10","current":false}]"#,
            );
            let before = db.bytes();
            assert_eq!(db.tl(&["import", "--format", "codex", "--input", &input]).json()["unchanged"], 3);
            assert_eq!(db.bytes(), before);
        }

        /// In the other order (the fork imported first), the session it came from joins the
        /// fork's timeline, its own messages a branch from where the fork left it.
        #[test]
        fn codex_session_imported_after_its_fork_joins_it() {
            let mut db = Db::new();
            db.env("TIMELINE_NOW", "1750000000");
            let sessions = sessions(&db);
            let fork = fork_file(&sessions).display().to_string();
            assert_eq!(db.tl(&["import", "--format", "codex", "--input", &fork]).json()["messages"], 4);
            let report = db.tl(&["import", "--format", "codex", "--input", &sessions.display().to_string()]).json();
            assert_eq!(
                report["timelines"][0],
                serde_json::json!({"timeline_id":"tl0","source_id":PARENT,"title":"Which tests are slow?","messages":5,"branches":["fork-1"],"joined":FORK,"status":"updated"})
            );
            db.tl(&["branches"]).ok(
                r#"[{"name":"main","head":"n4","current":true},{"name":"fork-1","head":"n9","current":false}]"#,
            );
            db.tl(&["context", "--node", "n9"]).ok(
                r#"[{"node":"n1","role":"system","text":"You are Codex, a coding agent.","tokens":8,"intent_tag":"developer"},{"node":"n2","role":"user","text":"<environment_context>\n  <cwd>/home/ada/src/kiln</cwd>\n</environment_context>","tokens":19},{"node":"n5","role":"user","text":"Which tests are slow?","tokens":6},{"node":"n6","role":"assistant","text":"[thinking]\nTime the test suite.","tokens":8,"intent_tag":"thinking"},{"node":"n7","role":"assistant","text":"[tool call call_1: shell({\"command\":[\"cargo\",\"test\"]})]","tokens":14,"intent_tag":"tool_call"},{"node":"n8","role":"user","text":"[tool result call_1]\ntest kiln::heats ... ok (4.2 s)","tokens":13,"intent_tag":"tool_result"},{"node":"n9","role":"assistant","text":"kiln::heats takes 4.2 s; the rest are fast.","tokens":11}]"#,
            );
        }
    }
}

mod gemini {
    use super::*;

    const FIRST: &str = r#"{"node":"n1","role":"user","text":"Name three kiln glazes.","tokens":6},{"node":"n2","role":"assistant","text":"[thinking] Glazes\nPick classic stoneware glazes.\n\nCeladon, tenmoku and shino.","tokens":20,"intent_tag":"thinking"}"#;

    on_every_engine! {
        /// A Gemini CLI session: a `$rewindTo` keeps the abandoned tail as a branch (the answer
        /// with its tool call and result), the messages after it continue from before the rewound
        /// prompt on main; thoughts are kept as thinking, the model in the provenance; `$set`, the
        /// rewind and unknown records are counted. A grown session adds only its new messages.
        #[test]
        fn gemini_rewind_is_a_branch_and_growth_is_added() {
            let mut db = Db::new();
            db.env("TIMELINE_NOW", "1750000000");
            let tmp = copy_tree(&db, "gemini");
            let input = tmp.display().to_string();
            db.tl(&["import", "--format", "gemini-cli", "--input", &input]).ok(
                r#"{"format":"gemini-cli","imported":1,"unchanged":0,"skipped":0,"messages":6,"timelines":[{"timeline_id":"tl0","source_id":"8d5e2a10-0000-4000-8000-0000000000ge","title":"Name three kiln glazes.","create_time_ms":1767866400000,"messages":6,"branches":["main","edit-1"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"gemini":3,"user":3},"parts":{"text":6,"thinking":1,"tool_call":1,"tool_result":1},"skipped":{"$set":1,"rewind":1,"x-future-record":1}}}"#,
            );
            db.tl(&["branches"]).ok(
                r#"[{"name":"main","head":"n6","current":true},{"name":"edit-1","head":"n4","current":false}]"#,
            );
            db.tl(&["context", "--node", "n4"]).ok(&format!(
                r#"[{FIRST},{{"node":"n3","role":"user","text":"Which one fires hottest?","tokens":6}},{{"node":"n4","role":"assistant","text":"Celadon, at cone 10.\n\n[tool call call-1: google_web_search({{\"query\":\"celadon firing cone\"}})]\n\n[tool result call-1 (success)]\nCeladon: cone 9-10","tokens":36,"intent_tag":"tool_call"}}]"#
            ));
            db.tl(&["context", "--node", "n6"]).ok(&format!(
                r#"[{FIRST},{{"node":"n5","role":"user","text":"Which one is the oldest?","tokens":6}},{{"node":"n6","role":"assistant","text":"Celadon, from China.","tokens":5}}]"#
            ));
            let session = tmp.join("9f86d081884c7d65/chats/session-2026-01-08T10-00-8d5e2a10.jsonl");
            let mut text = std::fs::read_to_string(&session).unwrap();
            text.push_str(&std::fs::read_to_string(fixture("gemini-growth.jsonl")).unwrap());
            std::fs::write(&session, text).unwrap();
            db.tl(&["import", "--format", "gemini-cli", "--input", &input]).ok(
                r#"{"format":"gemini-cli","imported":1,"unchanged":0,"skipped":0,"messages":2,"timelines":[{"timeline_id":"tl0","source_id":"8d5e2a10-0000-4000-8000-0000000000ge","title":"Name three kiln glazes.","messages":2,"branches":["main"],"status":"updated"}],"skipped_conversations":[],"kinds":{"roles":{"gemini":4,"user":4},"parts":{"text":8,"thinking":1,"tool_call":1,"tool_result":1},"skipped":{"$set":1,"rewind":1,"x-future-record":1}}}"#,
            );
            db.tl(&["branches"]).ok(
                r#"[{"name":"main","head":"n8","current":true},{"name":"edit-1","head":"n4","current":false}]"#,
            );
            db.tl(&["node", "--node", "n8"]).ok(
                r#"{"node":"n8","timeline_id":"tl0","role":"assistant","text":"Shino is the youngest of the three.","tokens":9,"parent":"n7","children":[],"zone":"hot","pinned":false,"path_tokens":51,"created_at":1767866703,"intent":null,"summary":null,"provenance":{"import":"gemini-cli","id":"m8","model":"gemini-2.5-flash"}}"#,
            );
            let before = db.bytes();
            let again = db.tl(&["import", "--format", "gemini-cli", "--input", &input]).json();
            assert_eq!((again["unchanged"].clone(), again["timelines"][0]["status"].clone()), (serde_json::json!(1), serde_json::json!("unchanged")));
            assert_eq!(db.bytes(), before);
        }
    }
}

mod gemini_json {
    use super::*;

    on_every_engine! {
        /// An older Gemini CLI saved a session as one JSON object (`{sessionId, ..., messages}`):
        /// read the same way, its info record a tagged system message. Saved again with a new
        /// exchange, only that is added; a message recorded twice (as it grew) keeps its latest
        /// text on the first import.
        #[test]
        fn gemini_whole_json_session_is_kept_up_to_date() {
            let mut db = Db::new();
            db.env("TIMELINE_NOW", "1750000000");
            let chats = db.dir.path().join("tmp").join("5d41402abc4b2a76").join("chats");
            std::fs::create_dir_all(&chats).unwrap();
            let session = chats.join("session-2026-01-09T07-00-1f2e3d4c.json");
            let mut value = serde_json::json!({
                "sessionId": "1f2e3d4c-0000-4000-8000-000000000001",
                "projectHash": "5d41402abc4b2a76",
                "startTime": "2026-01-09T07:00:00.000Z",
                "messages": [
                    {"id": "g1", "timestamp": "2026-01-09T07:00:01.000Z", "type": "user", "content": "How hot is cone 6?"},
                    {"id": "g2", "timestamp": "2026-01-09T07:00:02.000Z", "type": "gemini", "content": "About 1220", "model": "gemini-2.5-flash"},
                    {"id": "g2", "timestamp": "2026-01-09T07:00:03.000Z", "type": "gemini", "content": "About 1220 °C.", "model": "gemini-2.5-flash"},
                    {"id": "g3", "timestamp": "2026-01-09T07:00:04.000Z", "type": "info", "content": "Request cancelled."}
                ]
            });
            std::fs::write(&session, value.to_string()).unwrap();
            let input = db.dir.path().join("tmp").display().to_string();
            db.tl(&["import", "--format", "gemini-cli", "--input", &input]).ok(
                r#"{"format":"gemini-cli","imported":1,"unchanged":0,"skipped":0,"messages":3,"timelines":[{"timeline_id":"tl0","source_id":"1f2e3d4c-0000-4000-8000-000000000001","title":"How hot is cone 6?","create_time_ms":1767942000000,"messages":3,"branches":["main"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"gemini":1,"info":1,"user":1},"parts":{"text":3},"skipped":{"re-recorded":1}}}"#,
            );
            db.tl(&["context", "--node", "n3"]).ok(
                r#"[{"node":"n1","role":"user","text":"How hot is cone 6?","tokens":5},{"node":"n2","role":"assistant","text":"About 1220 °C.","tokens":4},{"node":"n3","role":"system","text":"Request cancelled.","tokens":5,"intent_tag":"info"}]"#,
            );
            value["messages"].as_array_mut().unwrap().extend([
                serde_json::json!({"id": "g4", "timestamp": "2026-01-09T07:01:00.000Z", "type": "user", "content": "And cone 10?"}),
                serde_json::json!({"id": "g5", "timestamp": "2026-01-09T07:01:02.000Z", "type": "gemini", "content": "About 1300 °C.", "model": "gemini-2.5-flash"}),
            ]);
            std::fs::write(&session, value.to_string()).unwrap();
            let report = db.tl(&["import", "--format", "gemini-cli", "--input", &input]).json();
            assert_eq!(
                report["timelines"],
                serde_json::json!([{"timeline_id":"tl0","source_id":"1f2e3d4c-0000-4000-8000-000000000001","title":"How hot is cone 6?","messages":2,"branches":["main"],"status":"updated"}])
            );
            db.tl(&["branches"]).ok(r#"[{"name":"main","head":"n5","current":true}]"#);
        }
    }
}

mod llm {
    use super::*;

    /// A logs.db as simonw/llm writes it (the columns the import reads, and some it does not).
    fn logs_db(path: &Path) {
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.execute_batch(
            "CREATE TABLE conversations (id TEXT PRIMARY KEY, name TEXT, model TEXT);
             CREATE TABLE responses (id TEXT PRIMARY KEY, model TEXT, prompt TEXT, system TEXT,
                 prompt_json TEXT, options_json TEXT, response TEXT, response_json TEXT,
                 conversation_id TEXT REFERENCES conversations(id), duration_ms INTEGER,
                 datetime_utc TEXT, input_tokens INTEGER, output_tokens INTEGER);
             INSERT INTO conversations VALUES ('01jc0000000000000000000001', 'Glaze chemistry', 'gpt-4o-mini');
             INSERT INTO conversations VALUES ('01jc0000000000000000000002', 'Haiku', 'claude-3.5-haiku');
             INSERT INTO responses (id, model, prompt, system, response, conversation_id, duration_ms, datetime_utc)
                 VALUES ('01jr0000000000000000000001', 'gpt-4o-mini', 'What makes celadon green?', 'Be brief.', 'Iron oxide fired in reduction.', '01jc0000000000000000000001', 900, '2026-01-09T08:00:00.000000');
             INSERT INTO responses (id, model, prompt, system, response, conversation_id, duration_ms, datetime_utc)
                 VALUES ('01jr0000000000000000000002', 'gpt-4o-mini', 'And tenmoku?', 'Be brief.', 'More iron, so it is dark brown.', '01jc0000000000000000000001', 800, '2026-01-09T08:01:00.000000');
             INSERT INTO responses (id, model, prompt, system, response, conversation_id, duration_ms, datetime_utc)
                 VALUES ('01jr0000000000000000000003', 'claude-3.5-haiku', 'A haiku about kilns', NULL, 'Fire holds its breath / clay remembers the river / glaze wakes into glass', '01jc0000000000000000000002', 700, '2026-01-09T09:00:00.000000');",
        )
        .unwrap();
    }

    on_every_engine! {
        /// Each llm conversation is a timeline (system prompt once, then prompt and response per
        /// logged exchange, the model in the provenance); logs.db is opened read-only and left
        /// as it was; an exchange logged later is added to its timeline, the rest unchanged.
        #[test]
        fn llm_logs_are_kept_up_to_date() {
            let mut db = Db::new();
            db.env("TIMELINE_NOW", "1750000000");
            let logs = db.dir.path().join("logs.db");
            logs_db(&logs);
            let original = std::fs::read(&logs).unwrap();
            let input = logs.display().to_string();
            db.tl(&["import", "--format", "llm", "--input", &input]).ok(
                r#"{"format":"llm","imported":2,"unchanged":0,"skipped":0,"messages":7,"timelines":[{"timeline_id":"tl0","source_id":"01jc0000000000000000000001","title":"Glaze chemistry","create_time_ms":1767945600000,"messages":5,"branches":["main"],"status":"new"},{"timeline_id":"tl1","source_id":"01jc0000000000000000000002","title":"Haiku","create_time_ms":1767949200000,"messages":2,"branches":["main"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":3,"system":1,"user":3},"parts":{"text":7},"skipped":{}}}"#,
            );
            assert_eq!(std::fs::read(&logs).unwrap(), original);
            db.tl(&["--timeline", "tl0", "context", "--node", "n5"]).ok(
                r#"[{"node":"n1","role":"system","text":"Be brief.","tokens":3},{"node":"n2","role":"user","text":"What makes celadon green?","tokens":7},{"node":"n3","role":"assistant","text":"Iron oxide fired in reduction.","tokens":8},{"node":"n4","role":"user","text":"And tenmoku?","tokens":3},{"node":"n5","role":"assistant","text":"More iron, so it is dark brown.","tokens":8}]"#,
            );
            db.tl(&["--timeline", "tl0", "node", "--node", "n5"]).ok(
                r#"{"node":"n5","timeline_id":"tl0","role":"assistant","text":"More iron, so it is dark brown.","tokens":8,"parent":"n4","children":[],"zone":"hot","pinned":false,"path_tokens":29,"created_at":1767945660,"intent":null,"summary":null,"provenance":{"import":"llm","response_id":"01jr0000000000000000000002","model":"gpt-4o-mini"}}"#,
            );
            rusqlite::Connection::open(&logs).unwrap().execute_batch(
                "INSERT INTO responses (id, model, prompt, system, response, conversation_id, datetime_utc)
                     VALUES ('01jr0000000000000000000004', 'gpt-4o', 'And shino?', 'Be brief.', 'Feldspar, fired long and slow.', '01jc0000000000000000000001', '2026-01-09T10:00:00.000000');",
            ).unwrap();
            db.tl(&["import", "--format", "llm", "--input", &db.dir.path().display().to_string()]).ok(
                r#"{"format":"llm","imported":1,"unchanged":1,"skipped":0,"messages":2,"timelines":[{"timeline_id":"tl0","source_id":"01jc0000000000000000000001","title":"Glaze chemistry","messages":2,"branches":["main"],"status":"updated"},{"timeline_id":"tl1","source_id":"01jc0000000000000000000002","title":"Haiku","messages":0,"branches":[],"status":"unchanged"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":3,"system":1,"user":3},"parts":{"text":7},"skipped":{}}}"#,
            );
            db.tl(&["--timeline", "tl0", "branches"]).ok(r#"[{"name":"main","head":"n7","current":true}]"#);
            // Not a logs.db: refused, nothing written.
            let other = db.dir.path().join("other.db");
            rusqlite::Connection::open(&other).unwrap().execute_batch("CREATE TABLE t (x);").unwrap();
            db.tl(&["import", "--format", "llm", "--input", &other.display().to_string()]).err(
                2,
                &format!(
                    r#"{{"error":"invalid argument --input: {} is not an llm logs.db: it has no responses table, so it is not an llm logs.db; nothing was imported"}}"#,
                    other.display()
                ),
            );
        }
    }
}

mod llm_guarded {
    use super::*;

    /// llm's own tables, as `llm` 0.2x makes them, with `responses` given as `responses_sql`.
    fn logs_db_with(path: &Path, responses_sql: &str) {
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.execute_batch(&format!(
            "CREATE TABLE conversations (id TEXT PRIMARY KEY, name TEXT, model TEXT);
             {responses_sql};
             INSERT INTO conversations VALUES ('01jc0000000000000000000001', 'Glaze chemistry', 'gpt-4o-mini');"
        ))
        .unwrap();
    }

    const RESPONSES: &str = "CREATE TABLE responses (id TEXT PRIMARY KEY, model TEXT, prompt TEXT, system TEXT, prompt_json TEXT, options_json TEXT, response TEXT, response_json TEXT, conversation_id TEXT, duration_ms INTEGER, datetime_utc TEXT)";

    fn import(db: &Db, logs: &Path) -> common::Run {
        db.tl(&[
            "import",
            "--format",
            "llm",
            "--input",
            &logs.display().to_string(),
        ])
    }

    on_both_engines! {
        /// Issue 42, item 7: a logs.db whose tables are not llm's is refused before a row is
        /// read: a generated column (which a read would compute, a 70 MB text here), a hidden
        /// one (a virtual table), a view in the place of `responses`. Nothing is written.
        #[test]
        fn llm_tables_that_are_not_llms_are_refused() {
            let db = Db::new();
            let cases = [
                (
                    "generated.db",
                    RESPONSES.replace("response TEXT,", "response TEXT GENERATED ALWAYS AS (hex(zeroblob(35000000))) VIRTUAL,"),
                    "its responses table has a generated or hidden column (\\\"response\\\")",
                ),
                (
                    "view.db",
                    format!("{}; CREATE VIEW responses AS SELECT * FROM logged", RESPONSES.replace("TABLE responses", "TABLE logged")),
                    "its responses is a view, not a table,",
                ),
                (
                    "virtual.db",
                    "CREATE VIRTUAL TABLE responses USING fts5(id, model, prompt, system, response, conversation_id, datetime_utc)".to_string(),
                    "its responses is a virtual table",
                ),
            ];
            for (name, sql, why) in cases {
                let logs = db.dir.path().join(name);
                logs_db_with(&logs, &sql);
                import(&db, &logs).err(
                    2,
                    &format!(
                        r#"{{"error":"invalid argument --input: {} is not an llm logs.db: {why}, which llm never makes, so it is not an llm logs.db (nothing of it was read); nothing was imported"}}"#,
                        logs.display()
                    ),
                );
            }
            assert!(!db.path.exists(), "a refused import created the database");
        }

        /// Issue 42, item 7: a conversation whose responses hold more than the limit of one
        /// conversation (128 MiB; two responses of 70 MB here) is skipped with its reason before
        /// a row of it is read, and the next conversation is imported.
        #[test]
        fn llm_conversation_over_the_limit_is_skipped() {
            let db = Db::new();
            let logs = db.dir.path().join("logs.db");
            logs_db_with(&logs, RESPONSES);
            rusqlite::Connection::open(&logs).unwrap().execute_batch(
                "INSERT INTO conversations VALUES ('01jc0000000000000000000002', 'Haiku', 'claude-3.5-haiku');
                 INSERT INTO responses (id, model, prompt, response, conversation_id, datetime_utc)
                     VALUES ('r1', 'gpt-4o-mini', 'Repeat zero.', hex(zeroblob(35000000)), '01jc0000000000000000000001', '2026-01-09T08:00:00.000000'),
                            ('r2', 'gpt-4o-mini', 'Again.', hex(zeroblob(35000000)), '01jc0000000000000000000001', '2026-01-09T08:01:00.000000'),
                            ('r3', 'claude-3.5-haiku', 'A haiku about kilns', 'Fire holds its breath', '01jc0000000000000000000002', '2026-01-09T09:00:00.000000');",
            ).unwrap();
            import(&db, &logs).ok(
                r#"{"format":"llm","imported":1,"unchanged":0,"skipped":1,"messages":2,"timelines":[{"timeline_id":"tl0","source_id":"01jc0000000000000000000002","title":"Haiku","create_time_ms":1767949200000,"messages":2,"branches":["main"],"status":"new"}],"skipped_conversations":[{"file":"logs.db","index":0,"source_id":"01jc0000000000000000000001","title":"Glaze chemistry","reason":"its responses are 140000096 bytes, over the limit of 128 MiB for one conversation"}],"kinds":{"roles":{"assistant":1,"user":1},"parts":{"text":2},"skipped":{}}}"#,
            );
        }

        /// Issue 42, item 8: a logs.db that another program keeps locked (llm writing a
        /// response) is busy, not "not an llm logs.db": after waiting 5 seconds the import
        /// says so and to try again, with the exit status of a busy database (3); nothing is
        /// written. Once the lock is gone, it imports.
        #[test]
        fn llm_locked_logs_db_is_busy() {
            let db = Db::new();
            let logs = db.dir.path().join("logs.db");
            logs_db_with(&logs, RESPONSES);
            let writer = rusqlite::Connection::open(&logs).unwrap();
            writer
                .execute_batch(
                    "BEGIN EXCLUSIVE;
                     INSERT INTO responses (id, model, prompt, response, conversation_id, datetime_utc)
                         VALUES ('r1', 'gpt-4o-mini', 'What makes celadon green?', 'Iron oxide.', '01jc0000000000000000000001', '2026-01-09T08:00:00.000000');",
                )
                .unwrap();
            import(&db, &logs).err(
                3,
                &format!(
                    r#"{{"error":"cannot read {}: it is busy: another program (llm itself, most likely) is writing it and kept it locked for more than 5 seconds; try again once it has finished (an import passes over what it imported already)"}}"#,
                    logs.display()
                ),
            );
            assert!(!db.path.exists(), "the busy import created the database");
            writer.execute_batch("COMMIT").unwrap();
            assert_eq!(import(&db, &logs).json()["messages"], 2);
        }
    }
}

mod llm_threads {
    use super::*;

    /// A logs.db of a newer llm, with its message store (written from llm's published schema:
    /// content-addressed messages naming their parent, their parts, threads pointing at their
    /// last message, a fork a thread pointing into another's path, and the turns that added the
    /// messages), besides the older responses table (empty here).
    fn logs_db(path: &Path) {
        let conn = rusqlite::Connection::open(path).unwrap();
        conn.execute_batch(
            r#"CREATE TABLE conversations (id TEXT PRIMARY KEY, name TEXT, model TEXT);
             CREATE TABLE responses (id TEXT PRIMARY KEY, model TEXT, prompt TEXT, system TEXT,
                 response TEXT, conversation_id TEXT, datetime_utc TEXT);
             CREATE TABLE messages (hash TEXT PRIMARY KEY, parent_hash TEXT REFERENCES messages(hash),
                 role TEXT, provider_metadata TEXT);
             CREATE TABLE parts (id INTEGER PRIMARY KEY, message_hash TEXT REFERENCES messages(hash),
                 position INTEGER, type TEXT, tool_name TEXT, text TEXT, payload TEXT);
             CREATE TABLE threads (id TEXT PRIMARY KEY, name TEXT, tip_message_hash TEXT,
                 forked_from TEXT REFERENCES threads(id), datetime_utc TEXT);
             CREATE TABLE turns (id TEXT PRIMARY KEY, thread_id TEXT, parent_message_hash TEXT,
                 tip_message_hash TEXT, model TEXT, resolved_model TEXT, options_json TEXT,
                 schema_id TEXT, input_tokens INTEGER, output_tokens INTEGER, token_details TEXT,
                 duration_ms INTEGER, datetime_utc TEXT);
             INSERT INTO messages VALUES ('h1', NULL, 'user', NULL), ('h2', 'h1', 'assistant', NULL),
                 ('h3', 'h2', 'user', NULL), ('h4', 'h3', 'assistant', NULL),
                 ('h5', 'h2', 'user', NULL), ('h6', 'h5', 'assistant', NULL);
             INSERT INTO parts (message_hash, position, type, tool_name, text, payload) VALUES
                 ('h1', 0, 'text', NULL, 'Name a stoneware glaze.', NULL),
                 ('h2', 0, 'text', NULL, 'Celadon.', NULL),
                 ('h3', 0, 'text', NULL, 'Another?', NULL),
                 ('h4', 0, 'reasoning', NULL, 'A dark one, for contrast.', NULL),
                 ('h4', 1, 'text', NULL, 'Tenmoku.', NULL),
                 ('h5', 0, 'text', NULL, NULL, '{"text_ref":[{"literal":"Why is it green? "},{"fragment":3}]}'),
                 ('h6', 0, 'text', NULL, 'Iron, fired in reduction.', NULL);
             INSERT INTO threads VALUES ('01jt0000000000000000000001', 'Glazes', 'h4', NULL, '2026-01-10T08:00:00.000000'),
                 ('01jt0000000000000000000002', 'Why green', 'h6', '01jt0000000000000000000001', '2026-01-10T09:00:00.000000');
             INSERT INTO turns (id, thread_id, parent_message_hash, tip_message_hash, model, datetime_utc) VALUES
                 ('t1', '01jt0000000000000000000001', NULL, 'h2', 'gpt-4o-mini', '2026-01-10T08:00:01.000000'),
                 ('t2', '01jt0000000000000000000001', 'h2', 'h4', 'gpt-4o-mini', '2026-01-10T08:01:00.000000'),
                 ('t3', '01jt0000000000000000000002', 'h2', 'h6', 'claude-3.5-haiku', '2026-01-10T09:00:01.000000');"#,
        )
        .unwrap();
    }

    on_every_engine! {
        /// A thread and its fork are one timeline: the thread is main, the fork a branch from the
        /// message it forked at; parts become text (reasoning as thinking, a text that borrows a
        /// fragment keeps its literal text); each turn's model and time go on the messages it
        /// added. A fork that grew adds its new messages to its branch; unchanged, nothing.
        #[test]
        fn llm_threads_are_branches() {
            let mut db = Db::new();
            db.env("TIMELINE_NOW", "1750000000");
            let logs = db.dir.path().join("logs.db");
            logs_db(&logs);
            let input = logs.display().to_string();
            db.tl(&["import", "--format", "llm", "--input", &input]).ok(
                r#"{"format":"llm","imported":1,"unchanged":0,"skipped":0,"messages":6,"timelines":[{"timeline_id":"tl0","source_id":"01jt0000000000000000000001","title":"Glazes","create_time_ms":1768032000000,"messages":6,"branches":["main","edit-1"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":3,"user":3},"parts":{"text":6,"thinking":1},"skipped":{}}}"#,
            );
            db.tl(&["branches"]).ok(
                r#"[{"name":"main","head":"n4","current":true},{"name":"edit-1","head":"n6","current":false}]"#,
            );
            db.tl(&["context", "--node", "n4"]).ok(
                r#"[{"node":"n1","role":"user","text":"Name a stoneware glaze.","tokens":6},{"node":"n2","role":"assistant","text":"Celadon.","tokens":2},{"node":"n3","role":"user","text":"Another?","tokens":2},{"node":"n4","role":"assistant","text":"[thinking]\nA dark one, for contrast.\n\nTenmoku.","tokens":12,"intent_tag":"thinking"}]"#,
            );
            db.tl(&["context", "--node", "n6"]).ok(
                r#"[{"node":"n1","role":"user","text":"Name a stoneware glaze.","tokens":6},{"node":"n2","role":"assistant","text":"Celadon.","tokens":2},{"node":"n5","role":"user","text":"Why is it green? [fragment]","tokens":7},{"node":"n6","role":"assistant","text":"Iron, fired in reduction.","tokens":7}]"#,
            );
            db.tl(&["node", "--node", "n6"]).ok(
                r#"{"node":"n6","timeline_id":"tl0","role":"assistant","text":"Iron, fired in reduction.","tokens":7,"parent":"n5","children":[],"zone":"hot","pinned":false,"path_tokens":22,"created_at":1768035601,"intent":null,"summary":null,"provenance":{"import":"llm","hash":"h6","model":"claude-3.5-haiku"}}"#,
            );
            rusqlite::Connection::open(&logs).unwrap().execute_batch(
                "INSERT INTO messages VALUES ('h7', 'h6', 'user', NULL), ('h8', 'h7', 'assistant', NULL);
                 INSERT INTO parts (message_hash, position, type, text) VALUES ('h7', 0, 'text', 'And tenmoku?'), ('h8', 0, 'text', 'More iron.');
                 UPDATE threads SET tip_message_hash = 'h8' WHERE id = '01jt0000000000000000000002';
                 INSERT INTO turns (id, thread_id, parent_message_hash, tip_message_hash, model, datetime_utc) VALUES
                     ('t4', '01jt0000000000000000000002', 'h6', 'h8', 'claude-3.5-haiku', '2026-01-10T10:00:00.000000');",
            ).unwrap();
            let report = db.tl(&["import", "--format", "llm", "--input", &input]).json();
            assert_eq!(
                report["timelines"],
                serde_json::json!([{"timeline_id":"tl0","source_id":"01jt0000000000000000000001","title":"Glazes","messages":2,"branches":["edit-1"],"status":"updated"}])
            );
            db.tl(&["branches"]).ok(
                r#"[{"name":"main","head":"n4","current":true},{"name":"edit-1","head":"n8","current":false}]"#,
            );
            let before = db.bytes();
            let again = db.tl(&["import", "--format", "llm", "--input", &input]).json();
            assert_eq!((again["unchanged"].clone(), again["timelines"][0]["status"].clone()), (serde_json::json!(1), serde_json::json!("unchanged")));
            assert_eq!(db.bytes(), before);
        }
    }
}

mod webui {
    use super::*;

    fn import(db: &Db, format: &str, name: &str) -> common::Run {
        db.tl(&[
            "import",
            "--format",
            format,
            "--input",
            &fixture(name).display().to_string(),
        ])
    }

    mod cycle {
        use super::*;

        on_both_engines! {
            /// Issue 42, item 9: Open WebUI messages whose `parentId` links form a cycle (q1 below a2,
            /// a2 below a1, a1 below q1) have no first message, so the chat is skipped with a reason
            /// that names the cycle, not "it has no messages with any content"; a LibreChat
            /// conversation whose `parentMessageId` links do the same likewise, and the chat after
            /// each is imported.
            #[test]
            fn open_webui_parent_cycle_is_named() {
                let db = Db::new();
                let message = |id: &str, parent: &str, role: &str| {
                    serde_json::json!({"id": id, "parentId": parent, "childrenIds": [], "role": role, "content": format!("text of {id}"), "timestamp": 1767960000})
                };
                let chat = |id: &str, messages: serde_json::Value| {
                    serde_json::json!({"id": id, "title": id, "created_at": 1767960000, "updated_at": 1767960300, "chat": {"history": {"currentId": null, "messages": messages}}})
                };
                let looped = chat("looped", serde_json::json!({
                    "q1": message("q1", "a2", "user"),
                    "a1": message("a1", "q1", "assistant"),
                    "a2": message("a2", "a1", "assistant"),
                }));
                let mut fine = serde_json::json!({"q1": message("q1", "", "user")});
                fine["q1"]["parentId"] = serde_json::Value::Null;
                let fine = chat("fine", fine);
                let path = db.dir.path().join("webui.json");
                std::fs::write(&path, serde_json::json!([looped, fine]).to_string()).unwrap();
                db.tl(&["import", "--format", "open-webui", "--input", &path.display().to_string()]).ok(
                    r#"{"format":"open-webui","imported":1,"unchanged":0,"skipped":1,"messages":1,"timelines":[{"timeline_id":"tl0","source_id":"fine","title":"fine","create_time_ms":1767960000000,"messages":1,"branches":["main"],"status":"new"}],"skipped_conversations":[{"file":"webui.json","index":0,"source_id":"looped","title":"looped","reason":"its messages' parentId links form a cycle (\"q1\" → \"a2\" → \"a1\" → \"q1\", each followed by its parent), so no message of it has a first message above it; fix the parentId of one of them (or export the chat again) and import again"}],"kinds":{"roles":{"user":1},"parts":{"text":1},"skipped":{}}}"#,
                );
                let librechat = serde_json::json!([{"conversationId": "lc", "title": "lc", "messages": [
                    {"messageId": "m1", "parentMessageId": "m2", "isCreatedByUser": true, "text": "hello", "createdAt": "2026-01-05T10:00:00.000Z"},
                    {"messageId": "m2", "parentMessageId": "m1", "isCreatedByUser": false, "sender": "GPT-4", "text": "hi", "createdAt": "2026-01-05T10:00:01.000Z"},
                ]}]);
                let path = db.dir.path().join("librechat.json");
                std::fs::write(&path, librechat.to_string()).unwrap();
                let report = db.tl(&["import", "--format", "librechat", "--input", &path.display().to_string()]).json();
                assert_eq!(
                    report["skipped_conversations"],
                    serde_json::json!([{"file": "librechat.json", "index": 0, "source_id": "lc", "title": "lc", "reason": "its messages' parentMessageId links form a cycle (\"m1\" → \"m2\" → \"m1\", each followed by its parent), so no message of it has a first message above it; fix the parentMessageId of one of them (or export the chat again) and import again"}])
                );
            }
        }
    }

    on_every_engine! {
        /// An Open WebUI chat export: the history's tree, `currentId` as the head of main, a
        /// regenerated answer as a branch, each answer's model in the provenance. Imported twice,
        /// the second time adds nothing.
        #[test]
        fn open_webui_chat_is_a_tree() {
            let db = Db::new();
            import(&db, "open-webui", "open-webui-export.json").ok(
                r#"{"format":"open-webui","imported":1,"unchanged":0,"skipped":0,"messages":3,"timelines":[{"timeline_id":"tl0","source_id":"c0ffee00-0000-4000-8000-000000000001","title":"Glaze recipe","create_time_ms":1767960000000,"messages":3,"branches":["main","regen-1"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":2,"user":1},"parts":{"text":3},"skipped":{}}}"#,
            );
            db.tl(&["branches"]).ok(
                r#"[{"name":"main","head":"n3","current":true},{"name":"regen-1","head":"n2","current":false}]"#,
            );
            db.tl(&["node", "--node", "n3"]).ok(
                r#"{"node":"n3","timeline_id":"tl0","role":"assistant","text":"Feldspar 40, silica 30, whiting 20, kaolin 10, plus 1% red iron oxide.","tokens":18,"parent":"n1","children":[],"zone":"hot","pinned":false,"path_tokens":24,"created_at":1767960300,"intent":null,"summary":null,"provenance":{"import":"open-webui","id":"a2","model":"qwen2.5:7b"}}"#,
            );
            let before = db.bytes();
            assert_eq!(import(&db, "open-webui", "open-webui-export.json").json()["imported"], 0);
            assert_eq!(db.bytes(), before);
            // The chat went on in Open WebUI: exported again, only its new messages are added,
            // to the same timeline, and main moves along to the new currentId.
            let mut chats: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(fixture("open-webui-export.json")).unwrap(),
            )
            .unwrap();
            let history = &mut chats[0]["chat"]["history"];
            history["currentId"] = serde_json::json!("a3");
            history["messages"]["q2"] = serde_json::json!({"id": "q2", "parentId": "a2", "childrenIds": ["a3"], "role": "user", "content": "Fired to which cone?", "timestamp": 1767960400});
            history["messages"]["a3"] = serde_json::json!({"id": "a3", "parentId": "q2", "childrenIds": [], "role": "assistant", "content": "Cone 10, in reduction.", "timestamp": 1767960410, "model": "qwen2.5:7b"});
            let grown = db.dir.path().join("open-webui-grown.json");
            std::fs::write(&grown, chats.to_string()).unwrap();
            db.tl(&["import", "--format", "open-webui", "--input", &grown.display().to_string()]).ok(
                r#"{"format":"open-webui","imported":1,"unchanged":0,"skipped":0,"messages":2,"timelines":[{"timeline_id":"tl0","source_id":"c0ffee00-0000-4000-8000-000000000001","title":"Glaze recipe","messages":2,"branches":["main"],"status":"updated"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":3,"user":2},"parts":{"text":5},"skipped":{}}}"#,
            );
            db.tl(&["branches"]).ok(
                r#"[{"name":"main","head":"n5","current":true},{"name":"regen-1","head":"n2","current":false}]"#,
            );
            db.tl(&["context", "--node", "n5"]).ok(
                r#"[{"node":"n1","role":"user","text":"A simple celadon recipe?","tokens":6},{"node":"n3","role":"assistant","text":"Feldspar 40, silica 30, whiting 20, kaolin 10, plus 1% red iron oxide.","tokens":18},{"node":"n4","role":"user","text":"Fired to which cone?","tokens":5},{"node":"n5","role":"assistant","text":"Cone 10, in reduction.","tokens":6}]"#,
            );
        }

        /// LibreChat: `parentMessageId` links (the all-zero ID is the root, so an edited first
        /// prompt is a branch) and a nested `messagesTree`; a file that is neither is refused.
        #[test]
        fn librechat_exports_are_trees() {
            let db = Db::new();
            import(&db, "librechat", "librechat-export.json").ok(
                r#"{"format":"librechat","imported":1,"unchanged":0,"skipped":0,"messages":4,"timelines":[{"timeline_id":"tl0","source_id":"lc-0001","title":"Kiln schedule","create_time_ms":1768032000000,"messages":4,"branches":["main","edit-1"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":2,"user":2},"parts":{"text":4},"skipped":{}}}"#,
            );
            db.tl(&["context", "--node", "n4"]).ok(
                r#"[{"node":"n3","role":"user","text":"A glaze schedule?","tokens":5},{"node":"n4","role":"assistant","text":"150 C/h to cone 6, hold 10 minutes.","tokens":9}]"#,
            );
            import(&db, "librechat", "librechat-tree.json").ok(
                r#"{"format":"librechat","imported":1,"unchanged":0,"skipped":0,"messages":2,"timelines":[{"timeline_id":"tl1","source_id":"lc-0002","title":"Tree","create_time_ms":1768035600000,"messages":2,"branches":["main"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":1,"user":1},"parts":{"text":2},"skipped":{}}}"#,
            );
            db.tl(&["--timeline", "tl1", "context", "--node", "n2"]).ok(
                r#"[{"node":"n1","role":"user","text":"Hi","tokens":1},{"node":"n2","role":"assistant","text":"Hello!","tokens":2}]"#,
            );
            // The conversation went on: exported again, its new message is added below m4.
            let mut export: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(fixture("librechat-export.json")).unwrap(),
            )
            .unwrap();
            export["messages"].as_array_mut().unwrap().push(serde_json::json!({"messageId": "m5", "parentMessageId": "m4", "sender": "User", "isCreatedByUser": true, "text": "Thanks.", "createdAt": "2026-01-10T08:02:00.000Z"}));
            let grown = db.dir.path().join("librechat-grown.json");
            std::fs::write(&grown, export.to_string()).unwrap();
            let report = db.tl(&["import", "--format", "librechat", "--input", &grown.display().to_string()]).json();
            assert_eq!(
                report["timelines"],
                serde_json::json!([{"timeline_id":"tl0","source_id":"lc-0001","title":"Kiln schedule","messages":1,"branches":["main"],"status":"updated"}])
            );
            db.tl(&["--timeline", "tl0", "branches"]).ok(
                r#"[{"name":"main","head":"n5","current":true},{"name":"edit-1","head":"n2","current":false}]"#,
            );
            let before = db.bytes();
            let path = fixture("open-webui-export.json").display().to_string();
            db.tl(&["import", "--format", "librechat", "--input", &path]).err(
                2,
                &format!(
                    r#"{{"error":"invalid argument --input: {path} is not a LibreChat export: none of its 1 conversation(s) could be read (the first: it has neither messages nor messagesTree, so it is not a LibreChat conversation); check --format; nothing was imported"}}"#
                ),
            );
            assert_eq!(db.bytes(), before);
        }
    }
}

mod statuses {
    use super::*;
    use common::McpSession;
    use serde_json::json;

    /// One Claude Code line of session `s` (`parent` the uuid before it, `text` the content).
    fn line(s: u32, uuid: &str, parent: Option<&str>, role: &str, text: &str) -> String {
        json!({"type": role, "uuid": uuid, "parentUuid": parent, "sessionId": format!("s{s}"),
            "timestamp": "2026-01-05T10:00:00.000Z", "message": {"role": role, "content": text}})
        .to_string()
            + "\n"
    }

    on_every_engine! {
        /// Imported again, a folder of sessions reports each with one status (issue 26, item 2): a
        /// new session is `new`, a grown one `updated` with the messages it added, one imported as
        /// it is `unchanged` (in `timelines`, nothing written), and one that cannot be imported is in
        /// `skipped_conversations` with its reason. tl-mcp then reads the timelines as they are.
        #[test]
        fn a_folder_imported_again_reports_each_session_new_updated_unchanged_or_skipped() {
            let mut db = Db::new();
            db.env("TIMELINE_NOW", "1750000000");
            let folder = db.dir.path().join("projects").join("p");
            std::fs::create_dir_all(&folder).unwrap();
            let input = folder.display().to_string();
            let file = |k: u32| folder.join(format!("s{k}.jsonl"));
            std::fs::write(file(1), line(1, "a1", None, "user", "Why is the kiln slow?")).unwrap();
            std::fs::write(file(2), line(2, "b1", None, "user", "Name a glaze.")).unwrap();
            db.tl(&["import", "--format", "claude-code", "--input", &input]).ok(
                r#"{"format":"claude-code","imported":2,"unchanged":0,"skipped":0,"messages":2,"timelines":[{"timeline_id":"tl0","source_id":"s1","title":"Why is the kiln slow?","create_time_ms":1767607200000,"messages":1,"branches":["main"],"status":"new"},{"timeline_id":"tl1","source_id":"s2","title":"Name a glaze.","create_time_ms":1767607200000,"messages":1,"branches":["main"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"user":2},"parts":{"text":2},"skipped":{}}}"#,
            );
            // s1 grows by an answer and a prompt, s2 stays as it is, s3 is new, s4 holds no message.
            let grown = line(1, "a1", None, "user", "Why is the kiln slow?")
                + &line(1, "a2", Some("a1"), "assistant", "The element is worn.")
                + &line(1, "a3", Some("a2"), "user", "How do I check it?");
            std::fs::write(file(1), grown).unwrap();
            std::fs::write(file(3), line(3, "c1", None, "user", "Cone 6 or cone 10?")).unwrap();
            std::fs::write(file(4), line(4, "d1", None, "user", "")).unwrap();
            let again = db.dir.path().join(format!("again-{}", common::engine().file_name()));
            db.tl(&["db", "backup", "--to", &again.display().to_string()]).json();
            db.tl(&["import", "--format", "claude-code", "--input", &input]).ok(
                r#"{"format":"claude-code","imported":2,"unchanged":1,"skipped":1,"messages":3,"timelines":[{"timeline_id":"tl0","source_id":"s1","title":"Why is the kiln slow?","messages":2,"branches":["main"],"status":"updated"},{"timeline_id":"tl1","source_id":"s2","title":"Name a glaze.","messages":0,"branches":[],"status":"unchanged"},{"timeline_id":"tl2","source_id":"s3","title":"Cone 6 or cone 10?","create_time_ms":1767607200000,"messages":1,"branches":["main"],"status":"new"}],"skipped_conversations":[{"file":"s4.jsonl","index":0,"source_id":"s4","reason":"it has no messages with any content"}],"kinds":{"roles":{"assistant":1,"user":3},"parts":{"text":4},"skipped":{}}}"#,
            );
            // The same import, as text for people, from the same starting point (a backup).
            let mut copy = Db::new();
            copy.env("TIMELINE_NOW", "1750000000");
            copy.path = again;
            copy.tl(&["--format", "text", "import", "--format", "claude-code", "--input", &input]).ok(concat!(
                "updated    tl0  Why is the kiln slow?  +2 messages (main)\n",
                "unchanged  tl1  Name a glaze.\n",
                "new        tl2  Cone 6 or cone 10?  1 message (main)\n",
                "skipped    s4.jsonl #0  s4: it has no messages with any content\n",
                "claude-code: 2 imported, 1 unchanged, 1 skipped; 3 messages written",
            ));
            // Through the other binary: the grown session's timeline holds its three messages, the
            // unchanged one its one, and the skipped session made none.
            let mut mcp = McpSession::start(&db);
            let listed = |id: &str, title: &str, messages: u64| {
                json!({"timeline_id": id, "title": title, "created_at": 1767607200, "updated_at": 1767607200,
                    "messages": messages, "branches": 1, "current_branch": "main"})
            };
            assert_eq!(
                mcp.ok("timeline_list", json!({})),
                json!({"timelines": [listed("tl0", "Why is the kiln slow?", 3), listed("tl1", "Name a glaze.", 1), listed("tl2", "Cone 6 or cone 10?", 1)]})
            );
            assert_eq!(
                mcp.ok("timeline_context", json!({"timeline_id": "tl0", "node": "n3"})),
                json!({"messages": [
                    {"node": "n1", "role": "user", "text": "Why is the kiln slow?", "tokens": 6},
                    {"node": "n2", "role": "assistant", "text": "The element is worn.", "tokens": 5},
                    {"node": "n3", "role": "user", "text": "How do I check it?", "tokens": 5}
                ]})
            );
            mcp.close();
        }
    }
}

/// On a terminal, an import over many session files shows a progress bar on standard error (run
/// under `script`, which gives `tl` a terminal), unless `--quiet`; piped, as in every other test
/// here, it shows nothing (their `ok` asserts an empty standard error).
#[cfg(target_os = "linux")]
#[test]
fn progress_bar_on_a_terminal_only() {
    let db = Db::new();
    let folder = db.dir.path().join("projects").join("p");
    std::fs::create_dir_all(&folder).unwrap();
    for k in 0..3 {
        let line = format!(
            r#"{{"type":"user","uuid":"u{k}","parentUuid":null,"sessionId":"s{k}","timestamp":"2026-01-05T10:00:00.000Z","message":{{"role":"user","content":"prompt {k}"}}}}"#
        );
        std::fs::write(folder.join(format!("s{k}.jsonl")), line + "\n").unwrap();
    }
    let command = format!(
        "{} --db '{}' import --format claude-code --input '{}' >/dev/null",
        common::TL,
        db.path.display(),
        folder.display()
    );
    let run = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env("TIMELINE_NOW", "1750000000")
        .env_remove("TIMELINE_DB")
        .output();
    let Ok(output) = run else {
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "`script` (util-linux) is needed for the progress bar test under CI"
        );
        eprintln!(
            "!!! progress_bar_on_a_terminal_only did NOT run: `script` (util-linux) is not installed"
        );
        return;
    };
    let screen = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{screen}");
    assert!(
        screen.contains("importing ") && screen.contains("/3 sessions"),
        "{screen:?}"
    );
    assert_eq!(db.tl(&["db", "info"]).json()["timelines"], 3);
    // With --quiet, nothing is drawn on the terminal either; the report is printed as always.
    let quiet = std::process::Command::new("script")
        .args([
            "-qec",
            &command.replace(" >/dev/null", " --quiet"),
            "/dev/null",
        ])
        .env("TIMELINE_NOW", "1750000000")
        .env_remove("TIMELINE_DB")
        .output()
        .unwrap();
    let screen = String::from_utf8_lossy(&quiet.stdout);
    assert!(quiet.status.success(), "{screen}");
    assert!(!screen.contains("importing "), "{screen:?}");
    let report: serde_json::Value = serde_json::from_str(screen.trim()).unwrap();
    assert_eq!(report["unchanged"], 3);
}
