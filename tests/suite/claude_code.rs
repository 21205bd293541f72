//! Claude Code sessions as the tool shows them (issue 46, items 1, 2 and 7), through the real `tl`
//! on both file engines. The fixtures under tests/fixtures/interchange/claude-code-* are synthetic,
//! written in the shape of Claude Code's own files: parallel tool calls (each further call of one
//! response written beside the first call's result), compactions, subagents.

use crate::common;

use common::Db;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/interchange")
        .join(name)
}

/// The nodes of timeline tl0 as (node, parent) pairs, from the database's snapshot.
fn parents(db: &Db) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut n = 1;
    loop {
        let run = db.tl(&["node", "--node", &format!("n{n}")]);
        // Past the last node, `node` fails.
        if run.code != 0 {
            return out;
        }
        let node: Value = run.json();
        out.push((
            format!("n{n}"),
            node["parent"].as_str().unwrap_or("").to_string(),
        ));
        n += 1;
    }
}

mod parallel {
    use super::*;

    const SESSION: &str = "5f0c1a2e-0000-4000-8000-000000000010";

    fn session_file() -> PathBuf {
        fixture("claude-code-parallel/-home-ada-src-kiln").join(format!("{SESSION}.jsonl"))
    }

    const REPORT: &str = r#"{"format":"claude-code","imported":1,"unchanged":0,"skipped":0,"messages":21,"timelines":[{"timeline_id":"tl0","source_id":"5f0c1a2e-0000-4000-8000-000000000010","title":"Why is the kiln slow to heat?","create_time_ms":1767862800000,"messages":21,"branches":["main","edit-1","agent-cd34"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":8,"user":10},"parts":{"text":9,"tool_call":6,"tool_result":6},"skipped":{}}}"#;

    const TURNS: &str = r#"{"node":"n1","role":"user","text":"Why is the kiln slow to heat?","tokens":8},{"node":"n2","role":"assistant","text":"I'll read the heater and find its test.","tokens":10},{"node":"n3","role":"assistant","text":"[tool call toolu_21: Read({\"file_path\":\"src/heater.rs\"})]","tokens":15,"intent_tag":"tool_call"},{"node":"n4","role":"user","text":"[tool result toolu_21]\nconst RAMP: u32 = 2;","tokens":11,"intent_tag":"tool_result"},{"node":"n5","role":"assistant","text":"[tool call toolu_22: Task({\"description\":\"Find the test\",\"prompt\":\"Find the heater test.\",\"subagent_type\":\"Explore\"})]","tokens":30,"intent_tag":"tool_call"},{"node":"n6","role":"user","text":"[tool result toolu_22]\ntests/heater.rs holds it.","tokens":12,"intent_tag":"tool_result"},{"node":"n7","role":"assistant","text":"[tool call toolu_23: Bash({\"command\":\"cargo test heater\"})]","tokens":15,"intent_tag":"tool_call"},{"node":"n8","role":"assistant","text":"[tool call toolu_24: Grep({\"pattern\":\"RAMP\"})]","tokens":12,"intent_tag":"tool_call"},{"node":"n9","role":"user","text":"[tool result toolu_24]\nsrc/heater.rs:3","tokens":10,"intent_tag":"tool_result"},{"node":"n10","role":"user","text":"[tool result toolu_23]\ntest heater_ramp ... ok","tokens":12,"intent_tag":"tool_result"},{"node":"n11","role":"assistant","text":"The ramp is 2 degrees a minute.","tokens":8}"#;

    on_both_engines! {
        /// Item 1: Claude Code writes each further tool call of one response (same
        /// `message.id`) below the response's first call, beside that call's result. One
        /// response with its calls and results is one stretch of one branch, each line below
        /// the one written before it: a call written after the result of the one before
        /// follows that result (n3 n4 n5 n6), calls written before their results are followed
        /// by the results in the order they came (n7 n8 n9 n10). No `edit-N` comes of it,
        /// every call on main has its result, the same holds in a subagent's file, and an
        /// edited prompt (u2e) is still the branch `edit-1`.
        #[test]
        fn claude_code_parallel_tool_calls_are_one_stretch() {
            let db = Db::new();
            let input = fixture("claude-code-parallel").display().to_string();
            db.tl(&["import", "--format", "claude-code", "--input", &input]).ok(REPORT);
            db.tl(&["branches"]).ok(
                r#"[{"name":"main","head":"n15","current":true},{"name":"edit-1","head":"n13","current":false},{"name":"agent-cd34","head":"n21","current":false}]"#,
            );
            db.tl(&["context", "--node", "n15"]).ok(&format!(
                r#"[{TURNS},{{"node":"n14","role":"user","text":"Raise it to 4.","tokens":4}},{{"node":"n15","role":"assistant","text":"Done: 4 degrees a minute.","tokens":7}}]"#
            ));
            db.tl(&["context", "--node", "n13"]).ok(&format!(
                r#"[{TURNS},{{"node":"n12","role":"user","text":"Raise it to 5.","tokens":4}},{{"node":"n13","role":"assistant","text":"Done: 5 degrees a minute.","tokens":7}}]"#
            ));
            // The subagent forks from its Task call; its own parallel calls are one stretch.
            db.tl(&["context", "--node", "n21"]).ok(
                r#"[{"node":"n1","role":"user","text":"Why is the kiln slow to heat?","tokens":8},{"node":"n2","role":"assistant","text":"I'll read the heater and find its test.","tokens":10},{"node":"n3","role":"assistant","text":"[tool call toolu_21: Read({\"file_path\":\"src/heater.rs\"})]","tokens":15,"intent_tag":"tool_call"},{"node":"n4","role":"user","text":"[tool result toolu_21]\nconst RAMP: u32 = 2;","tokens":11,"intent_tag":"tool_result"},{"node":"n5","role":"assistant","text":"[tool call toolu_22: Task({\"description\":\"Find the test\",\"prompt\":\"Find the heater test.\",\"subagent_type\":\"Explore\"})]","tokens":30,"intent_tag":"tool_call"},{"node":"n16","role":"user","text":"Find the heater test.","tokens":6},{"node":"n17","role":"assistant","text":"[tool call toolu_31: Glob({\"pattern\":\"tests/*.rs\"})]","tokens":13,"intent_tag":"tool_call"},{"node":"n18","role":"assistant","text":"[tool call toolu_32: Grep({\"pattern\":\"heater\"})]","tokens":12,"intent_tag":"tool_call"},{"node":"n19","role":"user","text":"[tool result toolu_31]\ntests/heater.rs","tokens":10,"intent_tag":"tool_result"},{"node":"n20","role":"user","text":"[tool result toolu_32]\ntests/heater.rs:1","tokens":10,"intent_tag":"tool_result"},{"node":"n21","role":"assistant","text":"tests/heater.rs holds it.","tokens":7}]"#,
            );
            // A call written right below the call before it is that response's next part.
            db.tl(&["node", "--node", "n8"]).ok(
                r#"{"node":"n8","timeline_id":"tl0","role":"assistant","text":"[tool call toolu_24: Grep({\"pattern\":\"RAMP\"})]","tokens":12,"parent":"n7","children":["n9"],"zone":"hot","pinned":false,"path_tokens":113,"created_at":1767862822,"intent":{"tag":"tool_call"},"summary":null,"provenance":{"import":"claude-code","uuid":"a5","model":"claude-sonnet-4-5","part":2}}"#,
            );
        }

        /// Item 1: where a line goes depends only on the lines before it, so a session
        /// imported in the middle of a turn with parallel calls (after the second call, then
        /// after a result that came out of order), and again when it is whole, gives the tree
        /// one import of the whole file gives.
        #[test]
        fn claude_code_parallel_calls_imported_mid_turn_match_one_import() {
            let whole = Db::new();
            let input = fixture("claude-code-parallel").display().to_string();
            whole.tl(&["import", "--format", "claude-code", "--input", &input]).ok(REPORT);

            let db = Db::new();
            let project = db.dir.path().join("projects").join("-home-ada-src-kiln");
            let agents = project.join(SESSION).join("subagents");
            std::fs::create_dir_all(&agents).unwrap();
            let agent = "agent-cd34.jsonl";
            std::fs::copy(
                fixture("claude-code-parallel/-home-ada-src-kiln").join(SESSION).join("subagents").join(agent),
                agents.join(agent),
            )
            .unwrap();
            let text = std::fs::read_to_string(session_file()).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            let file = project.join(format!("{SESSION}.jsonl"));
            let folder = db.dir.path().join("projects").display().to_string();
            for cut in [5, 9, lines.len()] {
                std::fs::write(&file, lines[..cut].join("\n") + "\n").unwrap();
                db.tl(&["import", "--format", "claude-code", "--input", &folder]).json();
            }
            assert_eq!(parents(&db).len(), 21);
            // The same messages below the same parents, whatever the numbering.
            let tree = |db: &Db| -> Vec<(String, String)> {
                let uuid = |n: &str| -> String {
                    if n.is_empty() || n == "n0" {
                        return String::new();
                    }
                    db.tl(&["node", "--node", n]).json()["provenance"]["uuid"].as_str().unwrap().to_string()
                };
                let mut pairs: Vec<(String, String)> =
                    parents(db).iter().map(|(n, p)| (uuid(n), uuid(p))).collect();
                pairs.sort();
                pairs
            };
            assert_eq!(tree(&db), tree(&whole));
            let heads = |db: &Db| -> std::collections::BTreeSet<String> {
                db.tl(&["branches"]).json().as_array().unwrap().iter()
                    .map(|b| db.tl(&["node", "--node", b["head"].as_str().unwrap()]).json()["provenance"]["uuid"].as_str().unwrap().to_string())
                    .collect::<std::collections::BTreeSet<_>>()
            };
            assert_eq!(heads(&db), heads(&whole));
        }
    }
}

/// A line of session `session` as Claude Code writes it; `extra` is merged in.
fn line(
    session: &str,
    kind: &str,
    uuid: &str,
    parent: Option<&str>,
    second: u32,
    extra: Value,
) -> String {
    let mut line = serde_json::json!({
        "parentUuid": parent, "isSidechain": false, "userType": "external",
        "cwd": "/home/ada/src/kiln", "sessionId": session, "version": "2.0.30", "gitBranch": "main",
        "type": kind, "uuid": uuid, "timestamp": format!("2026-01-09T09:00:{second:02}.000Z"),
    });
    for (k, v) in extra.as_object().unwrap() {
        line[k] = v.clone();
    }
    line.to_string()
}

/// A prompt's `message`.
fn prompt(text: &str) -> Value {
    serde_json::json!({"message": {"role": "user", "content": text}})
}

/// An answer's `message` (API response `id`).
fn answer(id: &str, text: &str) -> Value {
    serde_json::json!({"requestId": format!("req_{id}"), "message": {"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [{"type": "text", "text": text}], "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 5}}})
}

/// Write `lines` as the session file `<session>.jsonl` in a project folder of the database's
/// directory; its path.
fn write_session(db: &Db, session: &str, lines: &[String]) -> PathBuf {
    let project = db.dir.path().join("projects").join("-home-ada-src-kiln");
    std::fs::create_dir_all(&project).unwrap();
    let file = project.join(format!("{session}.jsonl"));
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    file
}

mod rest {
    use super::*;

    const S: &str = "5f0c1a2e-0000-4000-8000-000000000020";

    on_both_engines! {
        /// Item 2: a session continued after a compaction whose earlier messages are in
        /// another file (the `compact_boundary`'s `logicalParentUuid` is not in this one) keeps
        /// the compact summary, as the message Claude Code sent the model, at the top of main,
        /// tagged `compact_summary`, with the missing message's `uuid` in its provenance
        /// (`missing_parent`) and counted as `compacted_messages_absent`; what follows it is
        /// below it.
        #[test]
        fn claude_code_compaction_without_its_messages_keeps_the_summary() {
            let db = Db::new();
            let summary = "This session is being continued from a previous conversation that ran out of context. Summary: the heater ramp is now 4 degrees a minute.";
            let file = write_session(&db, S, &[
                line(S, "system", "c1", None, 0, serde_json::json!({"subtype": "compact_boundary", "logicalParentUuid": "gone-9", "content": "Conversation compacted", "level": "info", "isMeta": false, "compactMetadata": {"trigger": "auto", "preTokens": 155000}})),
                line(S, "user", "cs1", Some("c1"), 1, serde_json::json!({"isCompactSummary": true, "isVisibleInTranscriptOnly": true, "message": {"role": "user", "content": summary}})),
                line(S, "user", "u1", Some("cs1"), 2, prompt("Now check the cooling.")),
                line(S, "assistant", "a1", Some("u1"), 3, answer("msg_41", "Cooling is fine.")),
            ]);
            db.tl(&["import", "--format", "claude-code", "--input", &file.display().to_string()]).ok(
                r#"{"format":"claude-code","imported":1,"unchanged":0,"skipped":0,"messages":3,"timelines":[{"timeline_id":"tl0","source_id":"5f0c1a2e-0000-4000-8000-000000000020","title":"Now check the cooling.","create_time_ms":1767949200000,"messages":3,"branches":["main"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":1,"user":2},"parts":{"compact_summary":1,"text":3},"skipped":{"compact_boundary":1,"compacted_messages_absent":1}}}"#,
            );
            db.tl(&["context", "--node", "n3"]).ok(&format!(
                r#"[{{"node":"n1","role":"user","text":"{summary}","tokens":35,"intent_tag":"compact_summary"}},{{"node":"n2","role":"user","text":"Now check the cooling.","tokens":6}},{{"node":"n3","role":"assistant","text":"Cooling is fine.","tokens":4}}]"#
            ));
            assert_eq!(
                db.tl(&["node", "--node", "n1"]).json()["provenance"],
                serde_json::json!({"import": "claude-code", "uuid": "cs1", "missing_parent": "gone-9"})
            );
        }

        /// Item 2: a malformed line (no `message.content`) that shares its `uuid` with a valid
        /// line after it is counted as `malformed_line`; the valid line is read, not left out as
        /// a repeat, and the line below it follows it.
        #[test]
        fn claude_code_malformed_line_does_not_hide_the_valid_one() {
            let db = Db::new();
            let file = write_session(&db, S, &[
                line(S, "user", "u1", None, 0, prompt("Is the kiln hot?")),
                line(S, "assistant", "a1", Some("u1"), 1, serde_json::json!({"message": "<cut off>"})),
                line(S, "assistant", "a1", Some("u1"), 2, answer("msg_51", "Yes, 1250 degrees.")),
                line(S, "user", "u2", Some("a1"), 3, prompt("Thanks.")),
            ]);
            db.tl(&["import", "--format", "claude-code", "--input", &file.display().to_string()]).ok(
                r#"{"format":"claude-code","imported":1,"unchanged":0,"skipped":0,"messages":3,"timelines":[{"timeline_id":"tl0","source_id":"5f0c1a2e-0000-4000-8000-000000000020","title":"Is the kiln hot?","create_time_ms":1767949200000,"messages":3,"branches":["main"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":1,"user":2},"parts":{"text":3},"skipped":{"malformed_line":1}}}"#,
            );
            db.tl(&["context", "--node", "n3"]).ok(
                r#"[{"node":"n1","role":"user","text":"Is the kiln hot?","tokens":4},{"node":"n2","role":"assistant","text":"Yes, 1250 degrees.","tokens":5},{"node":"n3","role":"user","text":"Thanks.","tokens":2}]"#,
            );
        }

        /// Item 2: lines of another `sessionId` in a session's file are not folded into its
        /// timeline: a stray conversation of another session (x1, x2) is left out and counted as
        /// `other_session_line`; lines of another session that the file's own lines follow
        /// (history a resumed session copied, u1 a1) are kept, their session in the provenance.
        /// The file's session is the one it is named after.
        #[test]
        fn claude_code_lines_of_another_session_are_not_folded_in() {
            let db = Db::new();
            const OLD: &str = "5f0c1a2e-0000-4000-8000-000000000021";
            const STRAY: &str = "5f0c1a2e-0000-4000-8000-000000000022";
            let file = write_session(&db, S, &[
                line(OLD, "user", "u1", None, 0, prompt("Is the kiln hot?")),
                line(OLD, "assistant", "a1", Some("u1"), 1, answer("msg_71", "Yes.")),
                line(STRAY, "user", "x1", None, 2, prompt("Unrelated question.")),
                line(STRAY, "assistant", "x2", Some("x1"), 3, answer("msg_72", "Unrelated answer.")),
                line(S, "user", "u2", Some("a1"), 4, prompt("How hot?")),
                line(S, "assistant", "a2", Some("u2"), 5, answer("msg_73", "1250 degrees.")),
            ]);
            db.tl(&["import", "--format", "claude-code", "--input", &file.display().to_string()]).ok(
                r#"{"format":"claude-code","imported":1,"unchanged":0,"skipped":0,"messages":4,"timelines":[{"timeline_id":"tl0","source_id":"5f0c1a2e-0000-4000-8000-000000000020","title":"Is the kiln hot?","create_time_ms":1767949200000,"messages":4,"branches":["main"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":2,"user":2},"parts":{"text":4},"skipped":{"other_session_line":2}}}"#,
            );
            db.tl(&["context", "--node", "n4"]).ok(
                r#"[{"node":"n1","role":"user","text":"Is the kiln hot?","tokens":4},{"node":"n2","role":"assistant","text":"Yes.","tokens":1},{"node":"n3","role":"user","text":"How hot?","tokens":2},{"node":"n4","role":"assistant","text":"1250 degrees.","tokens":4}]"#,
            );
            assert_eq!(
                db.tl(&["node", "--node", "n1"]).json()["provenance"],
                serde_json::json!({"import": "claude-code", "uuid": "u1", "session": OLD})
            );
        }

        /// Item 2: a subagent's transcript whose session file is absent is not passed over
        /// without a word: it is reported in `skipped_conversations` with the reason, and the
        /// other sessions of the folder are imported.
        #[test]
        fn claude_code_subagent_without_its_session_is_reported() {
            let db = Db::new();
            let file = write_session(&db, S, &[line(S, "user", "u1", None, 0, prompt("Is the kiln hot?"))]);
            let agents = file.with_file_name("5f0c1a2e-0000-4000-8000-000000000029").join("subagents");
            std::fs::create_dir_all(&agents).unwrap();
            std::fs::write(agents.join("agent-ef56.jsonl"), line("5f0c1a2e-0000-4000-8000-000000000029", "user", "s1", None, 1, prompt("Look for the test.")) + "\n").unwrap();
            let input = db.dir.path().join("projects").display().to_string();
            let report = db.tl(&["import", "--format", "claude-code", "--input", &input]).json();
            let shown = Path::new("-home-ada-src-kiln/5f0c1a2e-0000-4000-8000-000000000029/subagents/agent-ef56.jsonl")
                .components()
                .collect::<PathBuf>()
                .display()
                .to_string();
            assert_eq!(report, serde_json::json!({"format":"claude-code","imported":1,"unchanged":0,"skipped":1,"messages":1,"timelines":[{"timeline_id":"tl0","source_id":"5f0c1a2e-0000-4000-8000-000000000020","title":"Is the kiln hot?","create_time_ms":1767949200000u64,"messages":1,"branches":["main"],"status":"new"}],"skipped_conversations":[{"file":shown,"index":0,"reason":"it is a subagent's transcript, which is imported with its session, but the session's file 5f0c1a2e-0000-4000-8000-000000000029.jsonl is not beside the session's folder; nothing of it was imported"}],"kinds":{"roles":{"user":1},"parts":{"text":1},"skipped":{}}}));
        }

        /// Item 2: a session as one JSON object `{"loglines": [...]}` (how Claude Code's web
        /// sessions come), pretty-printed over many lines or on one, is read as its lines; the
        /// same lines as JSONL give the same report.
        #[test]
        fn claude_code_loglines_object_is_read() {
            let lines = [
                line(S, "user", "u1", None, 0, prompt("Is the kiln hot?")),
                line(S, "assistant", "a1", Some("u1"), 1, answer("msg_81", "Yes, 1250 degrees.")),
            ];
            let entries: Vec<Value> = lines.iter().map(|l| serde_json::from_str(l).unwrap()).collect();
            let object = serde_json::json!({"loglines": entries});
            let report = r#"{"format":"claude-code","imported":1,"unchanged":0,"skipped":0,"messages":2,"timelines":[{"timeline_id":"tl0","source_id":"5f0c1a2e-0000-4000-8000-000000000020","title":"Is the kiln hot?","create_time_ms":1767949200000,"messages":2,"branches":["main"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":1,"user":1},"parts":{"text":2},"skipped":{}}}"#;
            for text in [serde_json::to_string_pretty(&object).unwrap(), object.to_string(), lines.join("\n")] {
                let db = Db::new();
                let file = db.dir.path().join("session.json");
                std::fs::write(&file, text + "\n").unwrap();
                db.tl(&["import", "--format", "claude-code", "--input", &file.display().to_string()]).ok(report);
                db.tl(&["context", "--node", "n2"]).ok(
                    r#"[{"node":"n1","role":"user","text":"Is the kiln hot?","tokens":4},{"node":"n2","role":"assistant","text":"Yes, 1250 degrees.","tokens":5}]"#,
                );
            }
        }

        /// Item 2: a session whose lines carry `parentUuid: null` throughout (or no parent link
        /// at all) is one conversation in file order: one branch, not one per message. Grown, it
        /// continues main.
        #[test]
        fn claude_code_file_without_parent_links_is_read_in_order() {
            let db = Db::new();
            let mut lines = vec![
                line(S, "user", "u1", None, 0, prompt("Is the kiln hot?")),
                line(S, "assistant", "a1", None, 1, answer("msg_61", "Yes.")),
                line(S, "user", "u2", None, 2, prompt("How hot?")),
            ];
            let file = write_session(&db, S, &lines);
            let input = file.display().to_string();
            db.tl(&["import", "--format", "claude-code", "--input", &input]).ok(
                r#"{"format":"claude-code","imported":1,"unchanged":0,"skipped":0,"messages":3,"timelines":[{"timeline_id":"tl0","source_id":"5f0c1a2e-0000-4000-8000-000000000020","title":"Is the kiln hot?","create_time_ms":1767949200000,"messages":3,"branches":["main"],"status":"new"}],"skipped_conversations":[],"kinds":{"roles":{"assistant":1,"user":2},"parts":{"text":3},"skipped":{}}}"#,
            );
            let mut last = line(S, "assistant", "a2", None, 3, answer("msg_62", "1250 degrees."));
            // The same without the key at all.
            last = last.replace(r#""parentUuid":null,"#, "");
            lines.push(last);
            std::fs::write(&file, lines.join("\n") + "\n").unwrap();
            db.tl(&["import", "--format", "claude-code", "--input", &input]).json();
            db.tl(&["branches"]).ok(r#"[{"name":"main","head":"n4","current":true}]"#);
            db.tl(&["context", "--node", "n4"]).ok(
                r#"[{"node":"n1","role":"user","text":"Is the kiln hot?","tokens":4},{"node":"n2","role":"assistant","text":"Yes.","tokens":1},{"node":"n3","role":"user","text":"How hot?","tokens":2},{"node":"n4","role":"assistant","text":"1250 degrees.","tokens":4}]"#,
            );
        }
    }
}
