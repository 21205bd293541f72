//! The watermark and archival through the real `tl` binary, with exact outputs (requirements W1–W2,
//! A1–A4, U1, I1).

use crate::common;

use common::Db;
use serde_json::{Value, json};

const NOW: &str = "1700000000";

/// The persisted watermark of a branch, read from the database file.
fn watermark(db: &Db, branch: &str) -> String {
    let f = db.value();
    let branches = f["timelines"][0]["branches"].as_array().unwrap().clone();
    let b = branches
        .iter()
        .find(|b| b["name"] == json!(branch))
        .unwrap();
    b["watermark"].as_str().unwrap().to_string()
}

/// Node IDs of one zone ("nodes" = hot, "cold") in the file.
fn zone(db: &Db, zone: &str) -> Vec<String> {
    db.value()["timelines"][0][zone]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|n| n["id"].as_str().unwrap().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn unpin_refused(node: &str, branch: &str) -> String {
    format!(
        r#"{{"error":"cannot unpin {node}: it lies inside the watermark of branch \"{branch}\" and no summary covers it; summarise it first with `tl summarize --from {node} --to {node} --summary ...`"}}"#
    )
}

/// `tl summarize --from F --to T --summary TEXT --tokens N`, expecting the node `node`.
fn summarize(db: &Db, from: &str, to: &str, text: &str, tokens: u64, node: &str) {
    db.tl(&[
        "summarize",
        "--from",
        from,
        "--to",
        to,
        "--summary",
        text,
        "--tokens",
        &tokens.to_string(),
    ])
    .ok(&format!(r#"{{"node":"{node}"}}"#));
}

/// The database without its audit, which archival and restore both extend.
fn without_audit(db: &Db) -> Value {
    let mut value = db.value();
    value.as_object_mut().unwrap().remove("audit");
    value
}

// --- watermark ------------------------------------------------------------------------------

// --- archival -------------------------------------------------------------------------------

/// main: n1 → n2; a (forked at n2): n3 → n4; b (forked at n3): n5. main is current. Every message
/// has `tokens` tokens.
fn branches_of(tokens: u64) -> Db {
    let db = Db::created_at(NOW);
    db.append("user", "m1", tokens);
    db.append("assistant", "m2", tokens);
    db.tl(&["fork", "--node", "n2", "--name", "a"])
        .ok(r#"{"branch":"a","head":"n2"}"#);
    db.tl(&["switch", "--name", "a"])
        .ok(r#"{"current_branch":"a"}"#);
    db.append("user", "a3", tokens);
    db.append("assistant", "a4", tokens);
    db.tl(&["fork", "--node", "n3", "--name", "b"])
        .ok(r#"{"branch":"b","head":"n3"}"#);
    db.tl(&["switch", "--name", "b"])
        .ok(r#"{"current_branch":"b"}"#);
    db.append("assistant", "b5", tokens);
    db.tl(&["switch", "--name", "main"])
        .ok(r#"{"current_branch":"main"}"#);
    db
}

fn branches() -> Db {
    branches_of(10)
}

#[test]
fn w1_a_file_whose_watermark_covers_a_bare_message_is_refused() {
    let db = Db::created_at(NOW);
    db.append("user", "a", 10);
    db.append("assistant", "b", 10);
    db.tl(&[
        "summarize",
        "--from",
        "n1",
        "--to",
        "n1",
        "--summary",
        "a",
        "--tokens",
        "1",
    ])
    .ok(r#"{"node":"n3"}"#);
    assert_eq!(watermark(&db, "main"), "n1");
    // Hand-edit the watermark past the covered prefix: n2 is bare.
    let mut f = db.value();
    f["timelines"][0]["branches"][0]["watermark"] = json!("n2");
    let tampered = serde_json::to_vec_pretty(&f).unwrap();
    std::fs::write(&db.path, &tampered).unwrap();
    let run = db.tl(&["context", "--node", "n2"]);
    assert_eq!((run.code, run.stdout.as_str()), (3, ""), "{run:?}");
    assert!(
        run.stderr.contains(
            r#"the watermark of branch \"main\" (n2) covers n2, which is neither pinned nor summarised"#
        ),
        "{run:?}"
    );
    // Nothing overwrites the file.
    assert_eq!(db.tl(&["append", "--role", "user", "--text", "c"]).code, 3);
    assert_eq!(db.bytes(), tampered);
}

// Every test below runs on both storage engines (json::… and sqlite::…).
on_every_engine! {
    #[test]
    fn w1_the_watermark_advances_only_after_a_creation_and_only_over_complete_coverage() {
        let db = Db::created_at(NOW);
        db.append("user", "a", 100);
        db.append("assistant", "b", 100);
        db.append("user", "c", 100);
        db.tl(&["pin", "--node", "n1"]).ok(r#"{"pinned":"n1"}"#);
        db.tl(&["pin", "--node", "n2"]).ok(r#"{"pinned":"n2"}"#);
        // Persisted from the start; pins alone do not move it.
        assert_eq!(watermark(&db, "main"), "n0");
        // A budget that creates nothing does not move it either.
        db.tl(&["budget", "--node", "n3", "--max", "300"]).ok(concat!(
            r#"{"messages":[{"node":"n1","role":"user","text":"a","tokens":100},"#,
            r#"{"node":"n2","role":"assistant","text":"b","tokens":100},"#,
            r#"{"node":"n3","role":"user","text":"c","tokens":100}],"total_tokens":300,"summaries_created":[]}"#
        ));
        assert_eq!(watermark(&db, "main"), "n0");
        // A summary elsewhere is a creation: the watermark advances over the pinned prefix, and stops at
        // n3, the first node nothing covers.
        db.append("assistant", "d", 100);
        db.tl(&[
            "summarize",
            "--from",
            "n4",
            "--to",
            "n4",
            "--summary",
            "d",
            "--tokens",
            "1",
        ])
        .ok(r#"{"node":"n5"}"#);
        assert_eq!(watermark(&db, "main"), "n2");
        // A placeholder for n3 completes the coverage up to the head (n4 is summarised by n5).
        db.tl(&["budget", "--node", "n4", "--max", "332"]).ok(concat!(
            r#"{"messages":[{"node":"n1","role":"user","text":"a","tokens":100},"#,
            r#"{"node":"n2","role":"assistant","text":"b","tokens":100},"#,
            r#"{"node":"n6","role":"summary","text":"[placeholder] 1 message(s) n3..n3 (100 tokens) omitted to fit the budget; read them as the context of n3 (MCP: timeline_context with node \"n3\"; CLI: tl context --node n3)","tokens":32},"#,
            r#"{"node":"n4","role":"assistant","text":"d","tokens":100}],"total_tokens":332,"summaries_created":["n6"]}"#
        ));
        assert_eq!(watermark(&db, "main"), "n4");
        // New messages are not covered: the watermark stays where it was, it never moves back.
        db.append("user", "e", 100);
        assert_eq!(watermark(&db, "main"), "n4");
        db.tl(&[
            "summarize",
            "--from",
            "n4",
            "--to",
            "n4",
            "--summary",
            "d",
            "--tokens",
            "1",
        ])
        .ok(r#"{"node":"n5"}"#);
        assert_eq!(watermark(&db, "main"), "n4");
        // W2: both pins are bare (nothing but the pin covers them) inside the watermark.
        let before = db.bytes();
        db.tl(&["unpin", "--node", "n1"])
            .err(1, &unpin_refused("n1", "main"));
        db.tl(&["unpin", "--node", "n2"])
            .err(1, &unpin_refused("n2", "main"));
        assert_eq!(db.bytes(), before);
        assert_eq!(watermark(&db, "main"), "n4");
    }

    #[test]
    fn w1_a_fork_starts_at_n0_and_every_branch_advances_on_any_creation() {
        let db = Db::created_at(NOW);
        db.append("user", "a", 10);
        db.append("assistant", "b", 10);
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n2",
            "--summary",
            "ab",
            "--tokens",
            "2",
        ])
        .ok(r#"{"node":"n3"}"#);
        assert_eq!(watermark(&db, "main"), "n2");
        db.tl(&["fork", "--node", "n2", "--name", "side"])
            .ok(r#"{"branch":"side","head":"n2"}"#);
        assert_eq!(watermark(&db, "side"), "n0");
        db.tl(&["switch", "--name", "side"])
            .ok(r#"{"current_branch":"side"}"#);
        db.append("user", "c", 10);
        // A creation on another range advances every branch as far as its coverage goes.
        db.tl(&[
            "summarize",
            "--from",
            "n2",
            "--to",
            "n2",
            "--summary",
            "b",
            "--tokens",
            "1",
        ])
        .ok(r#"{"node":"n5"}"#);
        assert_eq!(watermark(&db, "side"), "n2");
        assert_eq!(watermark(&db, "main"), "n2");
        // A branch forked from a summary: the summary itself counts as covered.
        db.tl(&["fork", "--node", "n3", "--name", "short"])
            .ok(r#"{"branch":"short","head":"n3"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n4",
            "--to",
            "n4",
            "--summary",
            "c",
            "--tokens",
            "1",
        ])
        .ok(r#"{"node":"n6"}"#);
        assert_eq!(watermark(&db, "short"), "n3");
        assert_eq!(watermark(&db, "side"), "n4");
    }

    #[test]
    fn w2_unpin_is_allowed_outside_the_watermark_and_where_a_summary_covers() {
        let db = Db::created_at(NOW);
        db.append("user", "a", 10);
        db.append("assistant", "b", 10);
        db.append("user", "c", 10);
        for n in ["n1", "n2", "n3"] {
            db.tl(&["pin", "--node", n])
                .ok(&format!(r#"{{"pinned":"{n}"}}"#));
        }
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n1",
            "--summary",
            "a",
            "--tokens",
            "1",
        ])
        .ok(r#"{"node":"n4"}"#);
        assert_eq!(watermark(&db, "main"), "n3");
        // n1 is inside the watermark but covered by the summary n4: unpinning leaves no bare message.
        db.tl(&["unpin", "--node", "n1"]).ok(r#"{"unpinned":"n1"}"#);
        // n2 would be bare.
        db.tl(&["unpin", "--node", "n2"])
            .err(1, &unpin_refused("n2", "main"));
        // Outside every watermark: allowed. n5 is appended after the last creation.
        db.append("assistant", "d", 10);
        db.tl(&["pin", "--node", "n5"]).ok(r#"{"pinned":"n5"}"#);
        db.tl(&["unpin", "--node", "n5"]).ok(r#"{"unpinned":"n5"}"#);
        // Unpinning a node that is not pinned is a no-op, even inside the watermark.
        db.tl(&["unpin", "--node", "n1"]).ok(r#"{"unpinned":"n1"}"#);
        // The watermark of another branch protects its own path too.
        db.tl(&["fork", "--node", "n3", "--name", "side"])
            .ok(r#"{"branch":"side","head":"n3"}"#);
        db.tl(&["unpin", "--node", "n3"])
            .err(1, &unpin_refused("n3", "main"));
    }

    #[test]
    fn a1_archive_check_gives_every_reason() {
        let db = branches_of(100);
        db.tl(&["archive-check", "--name", "main"]).ok(concat!(
            r#"{"eligible":false,"reasons":["\"main\" is the current branch; switch to another branch first","#,
            r#""the watermark does not cover the whole branch: n1 is neither pinned nor summarised; summarise it with `tl summarize` or run a budget that covers it"]}"#
        ));
        db.tl(&["pin", "--node", "n1"]).ok(r#"{"pinned":"n1"}"#);
        // A placeholder for n2..n3 on a's path (n1 pinned, n4 the target).
        db.tl(&["budget", "--node", "n4", "--max", "232"]).ok(concat!(
            r#"{"messages":[{"node":"n1","role":"user","text":"m1","tokens":100},"#,
            r#"{"node":"n6","role":"summary","text":"[placeholder] 2 message(s) n2..n3 (200 tokens) omitted to fit the budget; read them as the context of n3 (MCP: timeline_context with node \"n3\"; CLI: tl context --node n3)","tokens":32},"#,
            r#"{"node":"n4","role":"assistant","text":"a4","tokens":100}],"total_tokens":232,"summaries_created":["n6"]}"#
        ));
        assert_eq!(watermark(&db, "a"), "n3");
        db.tl(&["archive-check", "--name", "a"]).ok(concat!(
            r#"{"eligible":false,"reasons":["#,
            r#""the watermark does not cover the whole branch: n4 is neither pinned nor summarised; summarise it with `tl summarize` or run a budget that covers it","#,
            r#""pinned nodes on the branch: n1; unpin them first","#,
            r#""placeholders without a real summary of the same range: n6 (n2..n3); write those summaries with `tl summarize`"]}"#
        ));
        // Covered but not yet advanced: pinning the head covers it; the watermark waits for a creation.
        db.tl(&["pin", "--node", "n4"]).ok(r#"{"pinned":"n4"}"#);
        db.tl(&["archive-check", "--name", "a"]).ok(concat!(
            r#"{"eligible":false,"reasons":["#,
            r#""the watermark (n3) does not reach the head (n4); it advances when the next summary or placeholder is created","#,
            r#""pinned nodes on the branch: n1, n4; unpin them first","#,
            r#""placeholders without a real summary of the same range: n6 (n2..n3); write those summaries with `tl summarize`"]}"#
        ));
        // A summary of another range (n2 alone) does not release the placeholder, but it is a creation:
        // the watermark now reaches the head.
        db.tl(&[
            "summarize",
            "--from",
            "n2",
            "--to",
            "n2",
            "--summary",
            "m2",
            "--tokens",
            "1",
        ])
        .ok(r#"{"node":"n7"}"#);
        assert_eq!(watermark(&db, "a"), "n4");
        db.tl(&["archive-check", "--name", "a"]).ok(concat!(
            r#"{"eligible":false,"reasons":["#,
            r#""pinned nodes on the branch: n1, n4; unpin them first","#,
            r#""placeholders without a real summary of the same range: n6 (n2..n3); write those summaries with `tl summarize`"]}"#
        ));
        // A real summary of exactly n2..n3 releases the placeholder.
        db.tl(&[
            "summarize",
            "--from",
            "n2",
            "--to",
            "n3",
            "--summary",
            "m2 a3",
            "--tokens",
            "2",
        ])
        .ok(r#"{"node":"n8"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n1",
            "--summary",
            "m1",
            "--tokens",
            "1",
        ])
        .ok(r#"{"node":"n9"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n4",
            "--to",
            "n4",
            "--summary",
            "a4",
            "--tokens",
            "1",
        ])
        .ok(r#"{"node":"n10"}"#);
        db.tl(&["archive-check", "--name", "a"]).ok(
            r#"{"eligible":false,"reasons":["pinned nodes on the branch: n1, n4; unpin them first"]}"#,
        );
        db.tl(&["unpin", "--node", "n1"]).ok(r#"{"unpinned":"n1"}"#);
        db.tl(&["unpin", "--node", "n4"]).ok(r#"{"unpinned":"n4"}"#);
        db.tl(&["archive-check", "--name", "a"])
            .ok(r#"{"eligible":true,"reasons":[]}"#);
        db.tl(&["archive-check", "--name", "nope"]).err(
            1,
            r#"{"error":"branch not found: \"nope\" does not exist in timeline tl0 (branches: main, a, b)"}"#,
        );
    }

    #[test]
    fn a1_archive_branch_refuses_an_ineligible_branch_with_its_reasons_and_changes_nothing() {
        let db = branches();
        let before = db.bytes();
        db.tl(&["archive-branch", "--name", "b"]).err(
            1,
            concat!(
                r#"{"error":"branch \"b\" cannot be archived: the watermark does not cover the whole branch: n1 is neither pinned nor summarised; summarise it with `tl summarize` or run a budget that covers it","#,
                r#""data":{"reasons":["the watermark does not cover the whole branch: n1 is neither pinned nor summarised; summarise it with `tl summarize` or run a budget that covers it"]}}"#
            ),
        );
        db.tl(&["--idempotency-key", "k", "archive-branch", "--name", "main"]).err(
            1,
            concat!(
                r#"{"error":"branch \"main\" cannot be archived: \"main\" is the current branch; switch to another branch first; the watermark does not cover the whole branch: n1 is neither pinned nor summarised; summarise it with `tl summarize` or run a budget that covers it","#,
                r#""data":{"reasons":["\"main\" is the current branch; switch to another branch first","the watermark does not cover the whole branch: n1 is neither pinned nor summarised; summarise it with `tl summarize` or run a budget that covers it"]}}"#
            ),
        );
        assert_eq!(db.bytes(), before);
    }

    #[test]
    fn a2_archival_moves_exactly_the_branch_own_raw_nodes_once() {
        let db = branches();
        // One summary of each branch's whole path makes a and b eligible.
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n4",
            "--summary",
            "all of a",
            "--tokens",
            "4",
        ])
        .ok(r#"{"node":"n6"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n5",
            "--summary",
            "all of b",
            "--tokens",
            "4",
        ])
        .ok(r#"{"node":"n7"}"#);
        // A branch with no message of its own.
        db.tl(&["fork", "--node", "n2", "--name", "empty"])
            .ok(r#"{"branch":"empty","head":"n2"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n2",
            "--to",
            "n2",
            "--summary",
            "m2",
            "--tokens",
            "1",
        ])
        .ok(r#"{"node":"n8"}"#);
        for b in ["a", "b", "empty"] {
            db.tl(&["archive-check", "--name", b])
                .ok(r#"{"eligible":true,"reasons":[]}"#);
        }
        // a: n1, n2 are shared with main (and b), n3 with b; only n4 is a's own.
        db.tl(&["archive-branch", "--name", "a"])
            .ok(r#"{"archived":["n4"]}"#);
        assert_eq!(zone(&db, "cold"), ["n4"]);
        // b now owns n3 as well; n4 is already cold and not on b's path anyway.
        db.tl(&["archive-branch", "--name", "b"])
            .ok(r#"{"archived":["n3","n5"]}"#);
        db.tl(&["archive-branch", "--name", "empty"])
            .ok(r#"{"archived":[]}"#);
        assert_eq!(zone(&db, "cold"), ["n3", "n4", "n5"]);
        // Summaries and main's nodes stay hot; the pointers are gone.
        assert_eq!(zone(&db, "nodes"), ["n1", "n2", "n6", "n7", "n8"]);
        db.tl(&["branches"])
            .ok(r#"[{"name":"main","head":"n2","current":true}]"#);
        let audit: Vec<Value> = db.value()["audit"].as_array().unwrap()[3..].to_vec();
        assert_eq!(
            audit,
            vec![
                json!({"ts":1700000000,"op":"archive","timeline":"tl0","branch":"a","nodes":["n4"]}),
                json!({"ts":1700000000,"op":"archive","timeline":"tl0","branch":"b","nodes":["n3","n5"]}),
                json!({"ts":1700000000,"op":"archive","timeline":"tl0","branch":"empty","nodes":[]}),
            ]
        );
    }

    #[test]
    fn a3_cold_nodes_read_alike_and_cannot_be_forked_or_pinned() {
        let db = branches();
        // A summary of n4 alone: its parent n3 will be cold while it stays hot.
        db.tl(&[
            "summarize",
            "--from",
            "n4",
            "--to",
            "n4",
            "--summary",
            "a4 in short",
            "--tokens",
            "2",
        ])
        .ok(r#"{"node":"n6"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n5",
            "--summary",
            "all of b",
            "--tokens",
            "4",
        ])
        .ok(r#"{"node":"n7"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n3",
            "--summary",
            "a up to n3",
            "--tokens",
            "3",
        ])
        .ok(r#"{"node":"n8"}"#);
        let context_before = db.tl(&["context", "--node", "n4"]).stdout;
        db.tl(&["archive-branch", "--name", "a"])
            .ok(r#"{"archived":["n4"]}"#);
        db.tl(&["archive-branch", "--name", "b"])
            .ok(r#"{"archived":["n3","n5"]}"#);
        // node and context read both zones alike.
        assert_eq!(db.tl(&["context", "--node", "n4"]).stdout, context_before);
        db.tl(&["node", "--node", "n4"]).ok(concat!(
            r#"{"node":"n4","timeline_id":"tl0","role":"assistant","text":"a4","tokens":10,"parent":"n3","children":[],"#,
            r#""zone":"cold","pinned":false,"path_tokens":40,"created_at":1700000000,"intent":null,"summary":null}"#
        ));
        // A budget of a cold message reads it too.
        db.tl(&["budget", "--node", "n4", "--max", "1000"]).ok(concat!(
            r#"{"messages":[{"node":"n8","role":"summary","text":"a up to n3","tokens":3},"#,
            r#"{"node":"n4","role":"assistant","text":"a4","tokens":10}],"total_tokens":13,"summaries_created":[]}"#
        ));
        let before = db.bytes();
        db.tl(&["fork", "--node", "n3", "--name", "again"]).err(
            1,
            r#"{"error":"cannot fork from n3: it is archived (cold); fork from a hot node instead, such as a summary that covers it"}"#,
        );
        db.tl(&["pin", "--node", "n4"]).err(
            1,
            r#"{"error":"cannot pin n4: it is archived (cold); pins are for messages still in use"}"#,
        );
        assert_eq!(db.bytes(), before);
        // Fork from the hot summary whose parent is cold, and keep appending.
        db.tl(&["fork", "--node", "n6", "--name", "resume"])
            .ok(r#"{"branch":"resume","head":"n6"}"#);
        db.tl(&["switch", "--name", "resume"])
            .ok(r#"{"current_branch":"resume"}"#);
        db.tl(&[
            "append", "--role", "user", "--text", "go on", "--tokens", "2",
        ])
        .ok(r#"{"node":"n9"}"#);
        db.tl(&["context", "--node", "n9"]).ok(concat!(
            r#"[{"node":"n1","role":"user","text":"m1","tokens":10},"#,
            r#"{"node":"n2","role":"assistant","text":"m2","tokens":10},"#,
            r#"{"node":"n3","role":"user","text":"a3","tokens":10},"#,
            r#"{"node":"n6","role":"summary","text":"a4 in short","tokens":2},"#,
            r#"{"node":"n9","role":"user","text":"go on","tokens":2}]"#
        ));
        assert_eq!(
            db.tl(&["node", "--node", "n3"]).json()["zone"],
            json!("cold")
        );
        assert_eq!(
            db.tl(&["node", "--node", "n9"]).json()["zone"],
            json!("hot")
        );
        // Archiving a branch that starts from a summary keeps the summary hot and moves only its own
        // raw messages: n9 (n3 is already cold, n1 and n2 belong to main).
        db.tl(&["switch", "--name", "main"])
            .ok(r#"{"current_branch":"main"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n9",
            "--to",
            "n9",
            "--summary",
            "go on",
            "--tokens",
            "1",
        ])
        .ok(r#"{"node":"n10"}"#);
        db.tl(&["archive-branch", "--name", "resume"])
            .ok(r#"{"archived":["n9"]}"#);
        assert_eq!(zone(&db, "cold"), ["n3", "n4", "n5", "n9"]);
        assert_eq!(zone(&db, "nodes"), ["n1", "n2", "n6", "n7", "n8", "n10"]);
    }

    #[test]
    fn a2_archive_branch_with_an_idempotency_key_replays_its_first_result() {
        let db = branches();
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n5",
            "--summary",
            "all of b",
            "--tokens",
            "4",
        ])
        .ok(r#"{"node":"n6"}"#);
        db.tl(&[
            "--idempotency-key",
            "arch-1",
            "archive-branch",
            "--name",
            "b",
        ])
        .ok(r#"{"archived":["n5"]}"#);
        let after = db.bytes();
        db.tl(&[
            "--idempotency-key",
            "arch-1",
            "archive-branch",
            "--name",
            "b",
        ])
        .ok(r#"{"archived":["n5"]}"#);
        assert_eq!(db.bytes(), after);
        // Without the key it is a new request, and the branch is gone.
        db.tl(&["archive-branch", "--name", "b"]).err(
            1,
            r#"{"error":"branch not found: \"b\" does not exist in timeline tl0 (branches: main, a)"}"#,
        );
    }

    #[test]
    fn s5_derived_fields_are_rebuilt_on_load_in_both_zones() {
        let mut db = branches();
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n5",
            "--summary",
            "all of b",
            "--tokens",
            "4",
        ])
        .ok(r#"{"node":"n6"}"#);
        db.tl(&["archive-branch", "--name", "b"])
            .ok(r#"{"archived":["n5"]}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n1",
            "--summary",
            "x",
            "--tokens",
            "1",
        ])
        .ok(r#"{"node":"n7"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n2",
            "--summary",
            "y",
            "--tokens",
            "1",
            "--derived-from",
            "n7",
        ])
        .ok(r#"{"node":"n8"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n1",
            "--summary",
            "x2",
            "--tokens",
            "1",
            "--supersede",
            "n7",
        ])
        .ok(r#"{"node":"n9"}"#);
        let good = db.value();
        // Corrupt the derived fields of a cold node and a hot summary; the source data stays intact.
        let mut bad = good.clone();
        for zone in ["nodes", "cold"] {
            for node in bad["timelines"][0][zone].as_array_mut().unwrap() {
                node["prefix_tokens"] = json!(123456);
                if node.get("stale").is_some() {
                    node["stale"] = json!(false);
                }
            }
        }
        db.replace_with_snapshot(&bad);
        assert_eq!(
            db.tl(&["node", "--node", "n5"]).json()["path_tokens"],
            json!(40)
        );
        assert_eq!(
            db.tl(&["node", "--node", "n5"]).json()["zone"],
            json!("cold")
        );
        assert_eq!(
            db.tl(&["node", "--node", "n8"]).json()["summary"]["stale"],
            json!(true)
        );
        // The next write stores the rebuilt values again, in the right zones.
        db.append("user", "more", 1);
        let rewritten = db.value();
        assert_eq!(
            rewritten["timelines"][0]["cold"],
            good["timelines"][0]["cold"]
        );
        let hot = rewritten["timelines"][0]["nodes"].as_array().unwrap();
        assert_eq!(
            &hot[..hot.len() - 1],
            good["timelines"][0]["nodes"].as_array().unwrap().as_slice()
        );
    }

    // --- restore-branch -------------------------------------------------------------------------

    #[test]
    fn a3_archive_then_restore_gives_back_the_same_database_apart_from_the_audit() {
        let db = branches();
        summarize(&db, "n1", "n4", "all of a", 4, "n6");
        summarize(&db, "n1", "n5", "all of b", 4, "n7");
        let before = without_audit(&db);
        db.tl(&["archive-branch", "--name", "a"])
            .ok(r#"{"archived":["n4"]}"#);
        db.tl(&["archive-branch", "--name", "b"])
            .ok(r#"{"archived":["n3","n5"]}"#);
        // What restore needs is kept beside the cold zone: head, watermark, place, moved nodes.
        assert_eq!(
            db.value()["timelines"][0]["archived_branches"],
            json!([
                {"name": "a", "head": "n4", "watermark": "n4", "position": 1, "nodes": ["n4"]},
                {"name": "b", "head": "n5", "watermark": "n5", "position": 1, "nodes": ["n3", "n5"]},
            ])
        );
        // Restored in the reverse order, each branch takes back its place and its messages.
        db.tl(&["restore-branch", "--branch", "b"])
            .ok(r#"{"branch":"b","head":"n5","restored":["n3","n5"]}"#);
        db.tl(&["restore-branch", "--branch", "a"])
            .ok(r#"{"branch":"a","head":"n4","restored":["n4"]}"#);
        assert_eq!(without_audit(&db), before);
        assert_eq!(zone(&db, "cold"), Vec::<String>::new());
        db.tl(&["branches"]).ok(concat!(
            r#"[{"name":"main","head":"n2","current":true},"#,
            r#"{"name":"a","head":"n4","current":false},"#,
            r#"{"name":"b","head":"n5","current":false}]"#
        ));
        let audit: Vec<Value> = db.value()["audit"].as_array().unwrap()[2..].to_vec();
        assert_eq!(
            audit,
            vec![
                json!({"ts":1700000000,"op":"archive","timeline":"tl0","branch":"a","nodes":["n4"]}),
                json!({"ts":1700000000,"op":"archive","timeline":"tl0","branch":"b","nodes":["n3","n5"]}),
                json!({"ts":1700000000,"op":"restore","timeline":"tl0","branch":"b","nodes":["n3","n5"]}),
                json!({"ts":1700000000,"op":"restore","timeline":"tl0","branch":"a","nodes":["n4"]}),
            ]
        );
        // The restored branches can be archived again.
        db.tl(&["archive-check", "--name", "a"])
            .ok(r#"{"eligible":true,"reasons":[]}"#);
    }

    #[test]
    fn a3_restore_moves_back_what_was_hot_when_the_branch_was_archived() {
        let db = branches();
        summarize(&db, "n1", "n4", "all of a", 4, "n6");
        summarize(&db, "n1", "n5", "all of b", 4, "n7");
        db.tl(&["archive-branch", "--name", "a"])
            .ok(r#"{"archived":["n4"]}"#);
        db.tl(&["archive-branch", "--name", "b"])
            .ok(r#"{"archived":["n3","n5"]}"#);
        // n3 was hot while a existed; b's later archival moved it. Restoring a brings it back too.
        db.tl(&["restore-branch", "--branch", "a"])
            .ok(r#"{"branch":"a","head":"n4","restored":["n3","n4"]}"#);
        assert_eq!(zone(&db, "cold"), ["n5"]);
        db.tl(&["restore-branch", "--branch", "b"])
            .ok(r#"{"branch":"b","head":"n5","restored":["n5"]}"#);
        // Each goes back to the index it had when it was archived: b was second then as well.
        db.tl(&["branches"]).ok(concat!(
            r#"[{"name":"main","head":"n2","current":true},"#,
            r#"{"name":"b","head":"n5","current":false},"#,
            r#"{"name":"a","head":"n4","current":false}]"#
        ));
        // A branch forked from a hot summary over history that was already cold: restoring it
        // brings back its own messages only, and that history stays cold.
        summarize(&db, "n4", "n4", "a4 in short", 1, "n8");
        db.tl(&["archive-branch", "--name", "b"])
            .ok(r#"{"archived":["n5"]}"#);
        db.tl(&["archive-branch", "--name", "a"])
            .ok(r#"{"archived":["n3","n4"]}"#);
        db.tl(&["fork", "--node", "n8", "--name", "resume"])
            .ok(r#"{"branch":"resume","head":"n8"}"#);
        db.tl(&["switch", "--name", "resume"])
            .ok(r#"{"current_branch":"resume"}"#);
        db.append("user", "go on", 2);
        db.tl(&["switch", "--name", "main"])
            .ok(r#"{"current_branch":"main"}"#);
        summarize(&db, "n9", "n9", "go on", 1, "n10");
        db.tl(&["archive-branch", "--name", "resume"])
            .ok(r#"{"archived":["n9"]}"#);
        let before = without_audit(&db);
        db.tl(&["restore-branch", "--branch", "resume"])
            .ok(r#"{"branch":"resume","head":"n9","restored":["n9"]}"#);
        assert_eq!(zone(&db, "cold"), ["n3", "n4", "n5"]);
        db.tl(&["archive-branch", "--name", "resume"])
            .ok(r#"{"archived":["n9"]}"#);
        assert_eq!(without_audit(&db), before);
    }

    #[test]
    fn a3_a_restored_branch_is_forked_from_appended_to_and_restoring_again_changes_nothing() {
        let db = branches();
        summarize(&db, "n1", "n5", "all of b", 4, "n6");
        db.tl(&["archive-branch", "--name", "b"])
            .ok(r#"{"archived":["n5"]}"#);
        db.tl(&["fork", "--node", "n5", "--name", "c"]).err(
            1,
            r#"{"error":"cannot fork from n5: it is archived (cold); fork from a hot node instead, such as a summary that covers it"}"#,
        );
        db.tl(&["restore-branch", "--branch", "b"])
            .ok(r#"{"branch":"b","head":"n5","restored":["n5"]}"#);
        let restored = db.bytes();
        db.tl(&["restore-branch", "--branch", "b"])
            .ok(r#"{"branch":"b","head":"n5","restored":[]}"#);
        assert_eq!(db.bytes(), restored, "a repeated restore writes nothing");
        db.tl(&["node", "--node", "n5"]).ok(concat!(
            r#"{"node":"n5","timeline_id":"tl0","role":"assistant","text":"b5","tokens":10,"parent":"n3","children":[],"#,
            r#""zone":"hot","pinned":false,"path_tokens":40,"created_at":1700000000,"intent":null,"summary":null}"#
        ));
        db.tl(&["fork", "--node", "n5", "--name", "c"])
            .ok(r#"{"branch":"c","head":"n5"}"#);
        db.tl(&["pin", "--node", "n5"]).ok(r#"{"pinned":"n5"}"#);
        db.tl(&["switch", "--name", "b"])
            .ok(r#"{"current_branch":"b"}"#);
        db.append("user", "b again", 1);
        db.tl(&["budget", "--node", "n7", "--max", "100"]).ok(concat!(
            r#"{"messages":[{"node":"n1","role":"user","text":"m1","tokens":10},"#,
            r#"{"node":"n2","role":"assistant","text":"m2","tokens":10},"#,
            r#"{"node":"n3","role":"user","text":"a3","tokens":10},"#,
            r#"{"node":"n5","role":"assistant","text":"b5","tokens":10},"#,
            r#"{"node":"n7","role":"user","text":"b again","tokens":1}],"total_tokens":41,"summaries_created":[]}"#
        ));
        // A key replays the first result.
        db.tl(&["switch", "--name", "main"])
            .ok(r#"{"current_branch":"main"}"#);
        db.tl(&["unpin", "--node", "n5"]).ok(r#"{"unpinned":"n5"}"#);
        summarize(&db, "n7", "n7", "b again", 1, "n8");
        db.tl(&["archive-branch", "--name", "c"])
            .ok(r#"{"archived":[]}"#);
        for _ in 0..2 {
            db.tl(&["--idempotency-key", "r-1", "restore-branch", "--branch", "c"])
                .ok(r#"{"branch":"c","head":"n5","restored":[]}"#);
        }
    }

    #[test]
    fn a3_restore_refuses_unknown_names_and_a_name_in_use() {
        let db = branches();
        db.tl(&["restore-branch", "--branch", "x"]).err(
            1,
            r#"{"error":"no archived branch \"x\" in timeline tl0 (none is archived; a branch archived by a version of Timeline without restore-branch was not recorded and cannot be restored, but its messages stay readable by node ID)"}"#,
        );
        summarize(&db, "n1", "n5", "all of b", 4, "n6");
        db.tl(&["archive-branch", "--name", "b"])
            .ok(r#"{"archived":["n5"]}"#);
        db.tl(&["restore-branch", "--branch", "x"]).err(
            1,
            r#"{"error":"no archived branch \"x\" in timeline tl0 (archived branches: b)"}"#,
        );
        db.tl(&["fork", "--node", "n1", "--name", "b"])
            .ok(r#"{"branch":"b","head":"n1"}"#);
        let before = db.bytes();
        db.tl(&["restore-branch", "--branch", "b"]).err(
            1,
            r#"{"error":"cannot restore \"b\": a branch of that name exists, and an archived one too; rename the existing branch first with `tl rename-branch --name b --to ...`, then restore again"}"#,
        );
        db.tl(&["restore-branch", "--branch", "a/b"]).err(
            2,
            r#"{"error":"invalid argument --branch: must not contain \"/\" (A branch name: any non-empty Unicode text without \"/\".)"}"#,
        );
        db.tl(&["restore-branch"]).err(
            2,
            r#"{"error":"invalid argument --branch: required (The archived branch to restore (the latest one archived under that name).)"}"#,
        );
        assert_eq!(db.bytes(), before);
        db.tl(&["rename-branch", "--name", "b", "--to", "b2"])
            .ok(r#"{"renamed":"b","to":"b2"}"#);
        db.tl(&["restore-branch", "--branch", "b"])
            .ok(r#"{"branch":"b","head":"n5","restored":["n5"]}"#);
    }

    /// W1-W2 with coverage derived from ranges (issue 24 item 3): a range whose end lies on another
    /// branch covers the part of a path it shares, and no more; pins count, and unpin asks the ranges.
    #[test]
    fn w1_w2_a_range_ending_on_another_branch_covers_the_shared_part_of_a_path() {
        let db = range_off_the_path();
        assert_eq!(watermark(&db, "main"), "n2");
        assert_eq!(watermark(&db, "side"), "n4");
        // n2 is covered only by n5's range, whose end n4 is on side: unpinning it leaves it covered.
        db.tl(&["pin", "--node", "n2"]).ok(r#"{"pinned":"n2"}"#);
        db.tl(&["unpin", "--node", "n2"]).ok(r#"{"unpinned":"n2"}"#);
        // A pin covers n3 and the next creation takes main's watermark over it; n3 is then bare
        // but for its pin, so unpinning it is refused.
        db.tl(&["pin", "--node", "n3"]).ok(r#"{"pinned":"n3"}"#);
        summarize(&db, "n4", "n4", "s4", 1, "n6");
        assert_eq!(watermark(&db, "main"), "n3");
        db.tl(&["unpin", "--node", "n3"])
            .err(1, &unpin_refused("n3", "main"));
        db.tl(&["switch", "--name", "side"])
            .ok(r#"{"current_branch":"side"}"#);
        // Its watermark reaches its head: only the pin stands in the way.
        db.tl(&["archive-check", "--name", "main"]).ok(
            r#"{"eligible":false,"reasons":["pinned nodes on the branch: n3; unpin them first"]}"#,
        );
    }
}

/// main: n1 → n2 → n3; side (forked at n2): n4. One summary n5 of n1..n4, whose range leaves main's
/// path at n2: it covers n1 and n2 of main (and all of side's path).
fn range_off_the_path() -> Db {
    let db = Db::created_at(NOW);
    db.append("user", "m1", 10);
    db.append("assistant", "m2", 10);
    db.append("user", "m3", 10);
    db.tl(&["fork", "--node", "n2", "--name", "side"])
        .ok(r#"{"branch":"side","head":"n2"}"#);
    db.tl(&[
        "append", "--branch", "side", "--role", "user", "--text", "s4", "--tokens", "10",
    ])
    .ok(r#"{"node":"n4"}"#);
    summarize(&db, "n1", "n4", "m1 to s4", 3, "n5");
    db
}

/// Schema 9 (issue 24 item 3): a file of schema 8, whose `cover_count` column held the coverage,
/// is migrated by adding the index of summaries alone; its watermarks, unpin refusals and archive
/// checks come from the ranges and are what they were (the old counts, here garbled, are not read).
#[test]
fn sqlite_coverage_of_a_schema_8_file_comes_from_its_ranges() {
    common::use_engine(common::Engine::Sqlite);
    let db = range_off_the_path();
    db.tl(&["pin", "--node", "n3"]).ok(r#"{"pinned":"n3"}"#);
    summarize(&db, "n4", "n4", "s4", 1, "n6");
    let answers = |db: &Db| {
        db.tl(&["unpin", "--node", "n3"])
            .err(1, &unpin_refused("n3", "main"));
        (
            watermark(db, "main"),
            watermark(db, "side"),
            db.tl(&["archive-check", "--name", "main"]).stdout,
            db.tl(&["archive-check", "--name", "side"]).stdout,
        )
    };
    let before = answers(&db);
    assert_eq!(&before.0, "n3");
    assert_eq!(&before.1, "n4");
    // An older schema has every message indexed: index the ones waiting (src/store/sqlite/pending.rs).
    db.tl(&["db", "check", "--repair"]).json();
    {
        let conn = rusqlite::Connection::open(&db.path).unwrap();
        conn.execute_batch(
            "DROP TABLE search_pending; DROP INDEX nodes_summaries; UPDATE nodes SET cover_count = 7 WHERE id % 2 = 1; PRAGMA user_version = 8;",
        )
        .unwrap();
    }
    assert_eq!(answers(&db), before);
    let conn = rusqlite::Connection::open(&db.path).unwrap();
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version as u64, timeline::store::sqlite_schema_version());
    let indexed: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = 'nodes_summaries'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(indexed, 1);
    assert_eq!(db.tl(&["db", "check"]).json()["ok"], json!(true));
}
