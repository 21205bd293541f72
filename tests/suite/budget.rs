//! Budgets and summaries through the real `tl` binary, with exact outputs (requirements B1–B6, Σ1–Σ5,
//! M5, U1).

use crate::common;

use common::Db;
use serde_json::{Value, json};

const NOW: &str = "1700000000";

fn audit(db: &Db) -> Vec<Value> {
    db.value()["audit"].as_array().cloned().unwrap_or_default()
}

/// The counterexample path of requirement B4: [1000, 1 (pinned), 1000, 0 (target)].
fn counterexample() -> Db {
    let db = Db::created_at(NOW);
    db.append("user", "long question", 1000);
    db.append("assistant", "key fact", 1);
    db.tl(&["pin", "--node", "n2"]).ok(r#"{"pinned":"n2"}"#);
    db.append("user", "long answer", 1000);
    db.append("user", "", 0);
    db
}

const INFEASIBLE: &str =
    r#"{"error":"budget infeasible","data":{"required_tokens":65,"max_tokens":1}}"#;

const COUNTEREXAMPLE_AT_65: &str = concat!(
    r#"{"messages":["#,
    r#"{"node":"n5","role":"summary","text":"[placeholder] 1 message(s) n1..n1 (1000 tokens) omitted to fit the budget; read them as the context of n1 (MCP: timeline_context with node \"n1\"; CLI: tl context --node n1)","tokens":32},"#,
    r#"{"node":"n2","role":"assistant","text":"key fact","tokens":1},"#,
    r#"{"node":"n6","role":"summary","text":"[placeholder] 1 message(s) n3..n3 (1000 tokens) omitted to fit the budget; read them as the context of n3 (MCP: timeline_context with node \"n3\"; CLI: tl context --node n3)","tokens":32},"#,
    r#"{"node":"n4","role":"user","text":"","tokens":0}"#,
    r#"],"total_tokens":65,"summaries_created":["n5","n6"]}"#
);

/// n1 user 40, n2 assistant 40 (pinned), n3 user 40 tagged "plan" with a note, n4 assistant 40,
/// n5 user 10 (the target).
fn five() -> Db {
    let db = Db::created_at(NOW);
    db.append("user", "one", 40);
    db.append("assistant", "two", 40);
    db.tl(&["pin", "--node", "n2"]).ok(r#"{"pinned":"n2"}"#);
    db.tl(&[
        "append",
        "--role",
        "user",
        "--text",
        "three",
        "--tokens",
        "40",
        "--intent-tag",
        "plan",
        "--intent-note",
        "private reasoning",
    ])
    .ok(r#"{"node":"n3"}"#);
    db.append("assistant", "four", 40);
    db.append("user", "five", 10);
    db
}

const N1: &str = r#"{"node":"n1","role":"user","text":"one","tokens":40}"#;
const N2: &str = r#"{"node":"n2","role":"assistant","text":"two","tokens":40}"#;
const N3: &str = r#"{"node":"n3","role":"user","text":"three","tokens":40,"intent_tag":"plan"}"#;
const N4: &str = r#"{"node":"n4","role":"assistant","text":"four","tokens":40}"#;
const N5: &str = r#"{"node":"n5","role":"user","text":"five","tokens":10}"#;

fn result(messages: &[&str], total: u64, created: &[&str]) -> String {
    let created: Vec<String> = created.iter().map(|c| format!("{c:?}")).collect();
    format!(
        r#"{{"messages":[{}],"total_tokens":{total},"summaries_created":[{}]}}"#,
        messages.join(","),
        created.join(",")
    )
}

fn placeholder(node: &str, count: u64, from: &str, to: &str, omitted: u64) -> String {
    format!(
        r#"{{"node":"{node}","role":"summary","text":"[placeholder] {count} message(s) {from}..{to} ({omitted} tokens) omitted to fit the budget; read them as the context of {to} (MCP: timeline_context with node \"{to}\"; CLI: tl context --node {to})","tokens":32}}"#
    )
}

// --- summarize ------------------------------------------------------------------------------

/// main: n1 → n2 → n3; side (forked at n1): n4.
fn tree() -> Db {
    let db = Db::created_at(NOW);
    db.append("user", "q1", 10);
    db.append("assistant", "a1", 10);
    db.append("user", "q2", 10);
    db.tl(&["fork", "--node", "n1", "--name", "side"])
        .ok(r#"{"branch":"side","head":"n1"}"#);
    db.tl(&["switch", "--name", "side"])
        .ok(r#"{"current_branch":"side"}"#);
    db.append("assistant", "other", 10);
    db.tl(&["switch", "--name", "main"])
        .ok(r#"{"current_branch":"main"}"#);
    db
}

// Every test below runs on both storage engines (json::… and sqlite::…).
on_every_engine! {
    #[test]
    fn b4_the_counterexample_is_infeasible_and_commits_nothing() {
        let db = counterexample();
        let before = db.bytes();
        let backup = db.json_backup();
        db.tl(&["budget", "--node", "n4", "--max", "1"])
            .err(1, INFEASIBLE);
        assert_eq!(db.bytes(), before, "a failed budget wrote the database");
        assert_eq!(db.json_backup(), backup);

        // With a key: still nothing committed, and the key is not consumed (I2).
        db.tl(&[
            "--idempotency-key",
            "k1",
            "budget",
            "--node",
            "n4",
            "--max",
            "1",
        ])
        .err(1, INFEASIBLE);
        assert_eq!(db.bytes(), before);
        let f = db.value();
        assert_eq!(f["timelines"][0]["next_node"], json!(5), "no counter moved");
        assert_eq!(f["idempotency"], json!([]));
        assert_eq!(f["audit"], json!([]));

        // A retry with the same key and a feasible budget executes, and the key then replays it.
        db.tl(&[
            "--idempotency-key",
            "k1",
            "budget",
            "--node",
            "n4",
            "--max",
            "65",
        ])
        .ok(COUNTEREXAMPLE_AT_65);
        let after = db.bytes();
        db.tl(&[
            "--idempotency-key",
            "k1",
            "budget",
            "--node",
            "n4",
            "--max",
            "65",
        ])
        .ok(COUNTEREXAMPLE_AT_65);
        assert_eq!(db.bytes(), after);
        // I4: the same key with other arguments is a conflict, and nothing is written.
        db.tl(&[
            "--idempotency-key",
            "k1",
            "budget",
            "--node",
            "n4",
            "--max",
            "1",
        ])
        .err(
            1,
            r#"{"error":"the idempotency key \"k1\" was already used on tl0 for another request (context_budget with other arguments) within the last 7 days; nothing was written. Use a new key for a new request","data":{"idempotency_key":"k1","first_operation":"context_budget"}}"#,
        );
        assert_eq!(db.bytes(), after);
    }

    #[test]
    fn b4_infeasible_reports_what_it_would_take_one_below_and_exactly_at_the_minimum() {
        let db = counterexample();
        db.tl(&["budget", "--node", "n4", "--max", "64"]).err(
            1,
            r#"{"error":"budget infeasible","data":{"required_tokens":65,"max_tokens":64}}"#,
        );
        db.tl(&["budget", "--node", "n4", "--max", "65"])
            .ok(COUNTEREXAMPLE_AT_65);
        // Pins alone over the budget are infeasible too (B4 D): pins are never dropped.
        db.tl(&["pin", "--node", "n1"]).ok(r#"{"pinned":"n1"}"#);
        db.tl(&["budget", "--node", "n4", "--max", "1000"]).err(
            1,
            r#"{"error":"budget infeasible","data":{"required_tokens":1033,"max_tokens":1000}}"#,
        );
    }

    #[test]
    fn b1_placeholders_are_reused_and_a_repeated_budget_changes_nothing() {
        let db = counterexample();
        db.tl(&["budget", "--node", "n4", "--max", "65"])
            .ok(COUNTEREXAMPLE_AT_65);
        let after_first = db.bytes();
        // The same call again: same JSON, no node, no audit entry, the file is byte for byte the same.
        db.tl(&["budget", "--node", "n4", "--max", "65"])
            .ok(COUNTEREXAMPLE_AT_65);
        db.tl(&["budget", "--node", "n4", "--max", "100"])
            .ok(COUNTEREXAMPLE_AT_65);
        assert_eq!(db.bytes(), after_first);

        // A larger budget keeps n3 and reuses only n5, which is still listed in summaries_created.
        db.tl(&["budget", "--node", "n4", "--max", "1033"]).ok(concat!(
            r#"{"messages":["#,
            r#"{"node":"n5","role":"summary","text":"[placeholder] 1 message(s) n1..n1 (1000 tokens) omitted to fit the budget; read them as the context of n1 (MCP: timeline_context with node \"n1\"; CLI: tl context --node n1)","tokens":32},"#,
            r#"{"node":"n2","role":"assistant","text":"key fact","tokens":1},"#,
            r#"{"node":"n3","role":"user","text":"long answer","tokens":1000},"#,
            r#"{"node":"n4","role":"user","text":"","tokens":0}"#,
            r#"],"total_tokens":1033,"summaries_created":["n5"]}"#
        ));
        assert_eq!(db.bytes(), after_first);

        // A budget for n3 reuses n5 as well: same parent (n0), same range (n1..n1).
        db.tl(&["budget", "--node", "n3", "--max", "1033"]).ok(concat!(
            r#"{"messages":["#,
            r#"{"node":"n5","role":"summary","text":"[placeholder] 1 message(s) n1..n1 (1000 tokens) omitted to fit the budget; read them as the context of n1 (MCP: timeline_context with node \"n1\"; CLI: tl context --node n1)","tokens":32},"#,
            r#"{"node":"n2","role":"assistant","text":"key fact","tokens":1},"#,
            r#"{"node":"n3","role":"user","text":"long answer","tokens":1000}"#,
            r#"],"total_tokens":1033,"summaries_created":["n5"]}"#
        ));
        assert_eq!(db.bytes(), after_first);

        // Creations are audited once each (U1); reuse is not logged.
        assert_eq!(
            audit(&db),
            vec![
                json!({"ts":1700000000,"op":"placeholder","timeline":"tl0","from":"n1","to":"n1","node":"n5"}),
                json!({"ts":1700000000,"op":"placeholder","timeline":"tl0","from":"n3","to":"n3","node":"n6"}),
            ]
        );
        // A placeholder is a real node: 32 tokens, role summary, a sibling of the start of its range.
        db.tl(&["node", "--node", "n6"]).ok(concat!(
            r#"{"node":"n6","timeline_id":"tl0","role":"summary","#,
            r#""text":"[placeholder] 1 message(s) n3..n3 (1000 tokens) omitted to fit the budget; read them as the context of n3 (MCP: timeline_context with node \"n3\"; CLI: tl context --node n3)","#,
            r#""tokens":32,"parent":"n2","children":[],"zone":"hot","pinned":false,"path_tokens":1033,"created_at":1700000000,"intent":null,"#,
            r#""summary":{"kind":"placeholder","from":"n3","to":"n3","version":1,"supersedes":null,"superseded_by":null,"derived_from":[],"stale":false}}"#
        ));
    }

    #[test]
    fn b2_b3_everything_that_fits_is_kept_verbatim_in_path_order() {
        let db = five();
        let all = result(&[N1, N2, N3, N4, N5], 170, &[]);
        db.tl(&["budget", "--node", "n5", "--max", "170"]).ok(&all);
        db.tl(&["budget", "--node", "n5", "--max", "100000"])
            .ok(&all);
        // The same messages as context, which shows the tag but never the note (M5).
        db.tl(&["context", "--node", "n5"])
            .ok(&format!("[{}]", [N1, N2, N3, N4, N5].join(",")));
        db.tl(&["node", "--node", "n3"]).ok(concat!(
            r#"{"node":"n3","timeline_id":"tl0","role":"user","text":"three","tokens":40,"parent":"n2","children":["n4"],"#,
            r#""zone":"hot","pinned":false,"path_tokens":120,"created_at":1700000000,"intent":{"tag":"plan","note":"private reasoning"},"summary":null}"#
        ));
    }

    #[test]
    fn b2_target_then_pins_then_newest_messages() {
        let db = five();
        // Minimum: placeholder n1, pin n2, placeholder n3..n4, target n5 = 114.
        let p1 = placeholder("n6", 1, "n1", "n1", 40);
        let p34 = placeholder("n7", 2, "n3", "n4", 80);
        db.tl(&["budget", "--node", "n5", "--max", "114"])
            .ok(&result(&[&p1, N2, &p34, N5], 114, &["n6", "n7"]));
        // One token short of keeping n4 (which splits n3 off into its own placeholder): n4 does not fit,
        // so the next newest that fits is taken, n1 (its placeholder goes: +40 -32).
        db.tl(&["budget", "--node", "n5", "--max", "153"])
            .ok(&result(&[N1, N2, &p34, N5], 122, &["n7"]));
        // 154 keeps the newest message n4; n3 gets a placeholder of its own.
        let p3 = placeholder("n8", 1, "n3", "n3", 40);
        db.tl(&["budget", "--node", "n5", "--max", "154"])
            .ok(&result(&[&p1, N2, &p3, N4, N5], 154, &["n6", "n8"]));
        // 162 keeps n3 and n4 but not the older n1, although n1 alone would have fitted too.
        db.tl(&["budget", "--node", "n5", "--max", "162"])
            .ok(&result(&[&p1, N2, N3, N4, N5], 162, &["n6"]));
        // Every call stays within max_tokens (B5 D).
    }

    #[test]
    fn b2_a_usable_real_summary_comes_before_messages() {
        let db = five();
        db.tl(&[
            "summarize",
            "--from",
            "n3",
            "--to",
            "n4",
            "--summary",
            "three and four",
            "--tokens",
            "20",
        ])
        .ok(r#"{"node":"n6"}"#);
        let s = r#"{"node":"n6","role":"summary","text":"three and four","tokens":20}"#;
        // Minimum: placeholder n1 + n2 + summary + n5 = 102; then n1 is kept (110).
        db.tl(&["budget", "--node", "n5", "--max", "102"])
            .ok(&result(
                &[&placeholder("n7", 1, "n1", "n1", 40), N2, s, N5],
                102,
                &["n7"],
            ));
        db.tl(&["budget", "--node", "n5", "--max", "110"])
            .ok(&result(&[N1, N2, s, N5], 110, &[]));
        // Even with room for every message the summary stands for its range (priority tier 2).
        db.tl(&["budget", "--node", "n5", "--max", "100000"])
            .ok(&result(&[N1, N2, s, N5], 110, &[]));
        // A summary whose range holds a pin or the target is not usable for this path.
        db.tl(&[
            "summarize",
            "--from",
            "n2",
            "--to",
            "n3",
            "--summary",
            "holds a pin",
            "--tokens",
            "1",
        ])
        .ok(r#"{"node":"n8"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n4",
            "--to",
            "n5",
            "--summary",
            "holds the target",
            "--tokens",
            "1",
        ])
        .ok(r#"{"node":"n9"}"#);
        db.tl(&["budget", "--node", "n5", "--max", "110"])
            .ok(&result(&[N1, N2, s, N5], 110, &[]));
        // For n4 as the target, n6 (n3..n4) holds the target and is not usable either.
        db.tl(&["budget", "--node", "n4", "--max", "144"])
            .ok(&result(
                &[
                    &placeholder("n7", 1, "n1", "n1", 40),
                    N2,
                    &placeholder("n10", 1, "n3", "n3", 40),
                    N4,
                ],
                144,
                &["n7", "n10"],
            ));
    }

    #[test]
    fn b5_a_budget_that_holds_the_whole_path_returns_it_verbatim() {
        // Regression: the cheapest layout puts n1 and n2 under one placeholder (32 tokens); keeping the
        // newest, n2, alone would cost 32 + 32, so the planner used to keep only n1 and show a
        // placeholder for n2 although the whole path (33 tokens) fits in 33.
        let db = Db::created_at(NOW);
        db.append("user", "a", 1);
        db.append("assistant", "b", 32);
        db.append("user", "c", 0);
        db.tl(&["budget", "--node", "n3", "--max", "33"]).ok(concat!(
            r#"{"messages":[{"node":"n1","role":"user","text":"a","tokens":1},"#,
            r#"{"node":"n2","role":"assistant","text":"b","tokens":32},"#,
            r#"{"node":"n3","role":"user","text":"c","tokens":0}],"total_tokens":33,"summaries_created":[]}"#
        ));
        db.tl(&["budget", "--node", "n3", "--max", "32"]).ok(concat!(
            r#"{"messages":[{"node":"n4","role":"summary","text":"[placeholder] 2 message(s) n1..n2 (33 tokens) omitted to fit the budget; read them as the context of n2 (MCP: timeline_context with node \"n2\"; CLI: tl context --node n2)","tokens":32},"#,
            r#"{"node":"n3","role":"user","text":"c","tokens":0}],"total_tokens":32,"summaries_created":["n4"]}"#
        ));
    }

    #[test]
    fn b6_budget_never_deletes_original_text() {
        let db = counterexample();
        let context = db.tl(&["context", "--node", "n4"]).stdout;
        db.tl(&["budget", "--node", "n4", "--max", "65"])
            .ok(COUNTEREXAMPLE_AT_65);
        assert_eq!(db.tl(&["context", "--node", "n4"]).stdout, context);
        // The placeholder says where the text is, and it is there.
        db.tl(&["context", "--node", "n1"])
            .ok(r#"[{"node":"n1","role":"user","text":"long question","tokens":1000}]"#);
    }

    #[test]
    fn budget_errors_name_the_problem() {
        let db = counterexample();
        db.tl(&["budget", "--node", "n9", "--max", "10"]).err(
            1,
            r#"{"error":"node not found: n9 does not exist in timeline tl0 (it has n1..n4); find the node you mean with `tl log` or `tl search --query ...`"}"#,
        );
        db.tl(&["budget", "--node", "n0", "--max", "10"]).err(
            2,
            r#"{"error":"invalid argument: n0 is the root of tl0 and not a message; use a node ID returned by `tl append` or `tl summarize`"}"#,
        );
    }

    #[test]
    fn s1_the_range_end_must_be_the_start_or_below_it() {
        let db = tree();
        let before = db.bytes();
        db.tl(&["summarize", "--from", "n3", "--to", "n1", "--summary", "x"]).err(
            2,
            r#"{"error":"invalid range n3..n1: the end must be the start itself or a descendant of it; check the order with `tl context --node n1`"}"#,
        );
        // n4 is on another branch: not a descendant of n2.
        db.tl(&["summarize", "--from", "n2", "--to", "n4", "--summary", "x"]).err(
            2,
            r#"{"error":"invalid range n2..n4: the end must be the start itself or a descendant of it; check the order with `tl context --node n4`"}"#,
        );
        db.tl(&["summarize", "--from", "n0", "--to", "n2", "--summary", "x"]).err(
            2,
            r#"{"error":"invalid argument: n0 is the root of tl0 and not a message; use a node ID returned by `tl append` or `tl summarize`"}"#,
        );
        db.tl(&["summarize", "--from", "n1", "--to", "n7", "--summary", "x"]).err(
            1,
            r#"{"error":"node not found: n7 does not exist in timeline tl0 (it has n1..n4); find the node you mean with `tl log` or `tl search --query ...`"}"#,
        );
        assert_eq!(db.bytes(), before);
        // A single node and a range crossing into a branch are fine.
        db.tl(&[
            "summarize",
            "--from",
            "n2",
            "--to",
            "n2",
            "--summary",
            "only a1",
        ])
        .ok(r#"{"node":"n5"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n4",
            "--summary",
            "side story",
        ])
        .ok(r#"{"node":"n6"}"#);
    }

    #[test]
    fn s1_a_summary_sits_beside_its_range_and_can_be_continued() {
        let db = tree();
        db.tl(&[
            "summarize",
            "--from",
            "n2",
            "--to",
            "n3",
            "--summary",
            "a1 and q2",
            "--tokens",
            "4",
        ])
        .ok(r#"{"node":"n5"}"#);
        // Its parent is the parent of the range start, so its context is the prefix plus itself.
        db.tl(&["context", "--node", "n5"]).ok(concat!(
            r#"[{"node":"n1","role":"user","text":"q1","tokens":10},"#,
            r#"{"node":"n5","role":"summary","text":"a1 and q2","tokens":4}]"#
        ));
        db.tl(&["node", "--node", "n5"]).ok(concat!(
            r#"{"node":"n5","timeline_id":"tl0","role":"summary","text":"a1 and q2","tokens":4,"parent":"n1","children":[],"#,
            r#""zone":"hot","pinned":false,"path_tokens":14,"created_at":1700000000,"intent":null,"#,
            r#""summary":{"kind":"real","from":"n2","to":"n3","version":1,"supersedes":null,"superseded_by":null,"derived_from":[],"stale":false}}"#
        ));
        // Fork from it and keep going: the new message follows the summary.
        db.tl(&["fork", "--node", "n5", "--name", "short"])
            .ok(r#"{"branch":"short","head":"n5"}"#);
        db.tl(&["switch", "--name", "short"])
            .ok(r#"{"current_branch":"short"}"#);
        db.tl(&[
            "append", "--role", "user", "--text", "next", "--tokens", "3",
        ])
        .ok(r#"{"node":"n6"}"#);
        db.tl(&["context", "--node", "n6"]).ok(concat!(
            r#"[{"node":"n1","role":"user","text":"q1","tokens":10},"#,
            r#"{"node":"n5","role":"summary","text":"a1 and q2","tokens":4},"#,
            r#"{"node":"n6","role":"user","text":"next","tokens":3}]"#
        ));
        // The original range is still there (Σ5).
        db.tl(&["context", "--node", "n3"]).ok(concat!(
            r#"[{"node":"n1","role":"user","text":"q1","tokens":10},"#,
            r#"{"node":"n2","role":"assistant","text":"a1","tokens":10},"#,
            r#"{"node":"n3","role":"user","text":"q2","tokens":10}]"#
        ));
        // Budgets through the summary count it as an ordinary path message.
        db.tl(&["budget", "--node", "n6", "--max", "100"]).ok(concat!(
            r#"{"messages":[{"node":"n1","role":"user","text":"q1","tokens":10},"#,
            r#"{"node":"n5","role":"summary","text":"a1 and q2","tokens":4},"#,
            r#"{"node":"n6","role":"user","text":"next","tokens":3}],"total_tokens":17,"summaries_created":[]}"#
        ));
    }

    #[test]
    fn s1_derived_from_must_name_real_summaries() {
        let db = counterexample();
        db.tl(&["budget", "--node", "n4", "--max", "65"])
            .ok(COUNTEREXAMPLE_AT_65);
        let before = db.bytes();
        db.tl(&["summarize", "--from", "n1", "--to", "n2", "--summary", "x", "--derived-from", "n2"]).err(
            2,
            r#"{"error":"invalid argument derived_from: n2 is not a summary; list the summaries this one was built from"}"#,
        );
        db.tl(&["summarize", "--from", "n1", "--to", "n2", "--summary", "x", "--derived-from", "n5"]).err(
            2,
            r#"{"error":"invalid argument derived_from: n5 is a placeholder, not a summary written by summarize; list the summaries this one was built from"}"#,
        );
        db.tl(&["summarize", "--from", "n1", "--to", "n2", "--summary", "x", "--derived-from", "n9"]).err(
            1,
            r#"{"error":"node not found: n9 does not exist in timeline tl0 (it has n1..n6); find the node you mean with `tl log` or `tl search --query ...`"}"#,
        );
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n2",
            "--summary",
            "x",
            "--supersede",
            "n5",
        ])
        .err(
            2,
            r#"{"error":"invalid argument supersede: n5 is not a summary written by summarize"}"#,
        );
        assert_eq!(db.bytes(), before);
        db.tl(&["summarize", "--from", "n1", "--to", "n1", "--summary", "q1"])
            .ok(r#"{"node":"n7"}"#);
        db.tl(&["summarize", "--from", "n3", "--to", "n3", "--summary", "a1"])
            .ok(r#"{"node":"n8"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n3",
            "--summary",
            "both",
            "--derived-from",
            "n7,n8",
        ])
        .ok(r#"{"node":"n9"}"#);
        let node = db.tl(&["node", "--node", "n9"]).json();
        assert_eq!(node["summary"]["derived_from"], json!(["n7", "n8"]));
        // Placeholders never rewritten (Σ2): n5 is still the same placeholder.
        assert_eq!(
            db.tl(&["node", "--node", "n5"]).json()["summary"]["kind"],
            json!("placeholder")
        );
    }

    #[test]
    fn s4_supersede_makes_a_version_chain_and_old_versions_stay_readable() {
        let db = tree();
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n2",
            "--summary",
            "v1",
            "--tokens",
            "2",
        ])
        .ok(r#"{"node":"n5"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n2",
            "--summary",
            "v2",
            "--tokens",
            "2",
            "--supersede",
            "n5",
        ])
        .ok(r#"{"node":"n6"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n2",
            "--summary",
            "v3",
            "--tokens",
            "2",
            "--supersede",
            "n6",
        ])
        .ok(r#"{"node":"n7"}"#);
        let version = |n: &str| db.tl(&["node", "--node", n]).json()["summary"].clone();
        assert_eq!(
            version("n5"),
            json!({"kind":"real","from":"n1","to":"n2","version":1,"supersedes":null,"superseded_by":"n6","derived_from":[],"stale":false})
        );
        assert_eq!(
            version("n6"),
            json!({"kind":"real","from":"n1","to":"n2","version":2,"supersedes":"n5","superseded_by":"n7","derived_from":[],"stale":false})
        );
        assert_eq!(
            version("n7"),
            json!({"kind":"real","from":"n1","to":"n2","version":3,"supersedes":"n6","superseded_by":null,"derived_from":[],"stale":false})
        );
        assert_eq!(db.tl(&["node", "--node", "n5"]).json()["text"], json!("v1"));
        // Only the latest version is used by budgets.
        db.tl(&["budget", "--node", "n3", "--max", "12"]).ok(concat!(
            r#"{"messages":[{"node":"n7","role":"summary","text":"v3","tokens":2},"#,
            r#"{"node":"n3","role":"user","text":"q2","tokens":10}],"total_tokens":12,"summaries_created":[]}"#
        ));
        let before = db.bytes();
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n2",
            "--summary",
            "v2b",
            "--supersede",
            "n5",
        ])
        .err(
            1,
            r#"{"error":"n5 is already superseded by n6; supersede the latest version n7 instead"}"#,
        );
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n2",
            "--summary",
            "x",
            "--supersede",
            "n1",
        ])
        .err(
            2,
            r#"{"error":"invalid argument supersede: n1 is not a summary written by summarize"}"#,
        );
        assert_eq!(db.bytes(), before);
        assert_eq!(
            audit(&db),
            vec![
                json!({"ts":1700000000,"op":"summarize","timeline":"tl0","from":"n1","to":"n2","node":"n5"}),
                json!({"ts":1700000000,"op":"supersede","timeline":"tl0","from":"n1","to":"n2","node":"n6","supersedes":"n5"}),
                json!({"ts":1700000000,"op":"supersede","timeline":"tl0","from":"n1","to":"n2","node":"n7","supersedes":"n6"}),
            ]
        );
    }

    #[test]
    fn s4_superseding_marks_every_summary_derived_from_it_stale_transitively() {
        let db = tree();
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n1",
            "--summary",
            "A",
            "--tokens",
            "1",
        ])
        .ok(r#"{"node":"n5"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n2",
            "--summary",
            "B",
            "--tokens",
            "1",
            "--derived-from",
            "n5",
        ])
        .ok(r#"{"node":"n6"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n3",
            "--summary",
            "C",
            "--tokens",
            "1",
            "--derived-from",
            "n6",
        ])
        .ok(r#"{"node":"n7"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n2",
            "--to",
            "n2",
            "--summary",
            "D",
            "--tokens",
            "1",
        ])
        .ok(r#"{"node":"n8"}"#);
        let stale = |n: &str| db.tl(&["node", "--node", n]).json()["summary"]["stale"].clone();
        assert_eq!(
            [stale("n5"), stale("n6"), stale("n7"), stale("n8")],
            [json!(false), json!(false), json!(false), json!(false)]
        );
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n1",
            "--summary",
            "A2",
            "--tokens",
            "1",
            "--supersede",
            "n5",
        ])
        .ok(r#"{"node":"n9"}"#);
        assert_eq!(
            [
                stale("n5"),
                stale("n6"),
                stale("n7"),
                stale("n8"),
                stale("n9")
            ],
            [
                json!(false),
                json!(true),
                json!(true),
                json!(false),
                json!(false)
            ]
        );
        // Stale and superseded summaries are not used by budgets: for n3 only A2 (n1) and D (n2) are
        // usable (B is stale, A superseded, and C is stale and holds the target).
        db.tl(&["budget", "--node", "n3", "--max", "12"]).ok(concat!(
            r#"{"messages":[{"node":"n9","role":"summary","text":"A2","tokens":1},"#,
            r#"{"node":"n8","role":"summary","text":"D","tokens":1},"#,
            r#"{"node":"n3","role":"user","text":"q2","tokens":10}],"total_tokens":12,"summaries_created":[]}"#
        ));
        // The stale flag is derived: it survives a reload (every tl call reloads) and is in the file.
        let f = db.value();
        let nodes = f["timelines"][0]["nodes"].as_array().unwrap();
        let flag = |id: &str| nodes.iter().find(|n| n["id"] == json!(id)).unwrap()["stale"].clone();
        assert_eq!(
            [flag("n6"), flag("n7"), flag("n8")],
            [json!(true), json!(true), json!(false)]
        );
        // Superseding B as well keeps C stale (it still derives from B, now superseded).
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n2",
            "--summary",
            "B2",
            "--tokens",
            "1",
            "--supersede",
            "n6",
            "--derived-from",
            "n9",
        ])
        .ok(r#"{"node":"n10"}"#);
        assert_eq!([stale("n7"), stale("n10")], [json!(true), json!(false)]);
    }

    #[test]
    fn s3_an_identical_request_returns_the_first_node_and_any_difference_makes_a_new_one() {
        let db = tree();
        let base = [
            "summarize",
            "--from",
            "n1",
            "--to",
            "n2",
            "--summary",
            "same",
            "--tokens",
            "3",
        ];
        db.tl(&base).ok(r#"{"node":"n5"}"#);
        let after_first = db.bytes();
        // Each tl call is a new process that reloads the file: the reuse survives restarts.
        db.tl(&base).ok(r#"{"node":"n5"}"#);
        db.tl(&base).ok(r#"{"node":"n5"}"#);
        assert_eq!(db.bytes(), after_first, "reuse wrote something");
        let with = |extra: &[&str]| {
            let mut args = base.to_vec();
            args.extend_from_slice(extra);
            db.tl(&args).json()["node"].as_str().unwrap().to_string()
        };
        assert_eq!(with(&["--intent-tag", "goal"]), "n6");
        assert_eq!(with(&["--intent-tag", "goal"]), "n6");
        assert_eq!(
            with(&["--intent-tag", "goal", "--intent-note", "why"]),
            "n7"
        );
        assert_eq!(
            with(&["--intent-tag", "goal", "--intent-note", "why not"]),
            "n8"
        );
        assert_eq!(with(&["--intent-tag", "other"]), "n9");
        assert_eq!(with(&["--derived-from", "n5"]), "n10");
        assert_eq!(with(&["--supersede", "n5"]), "n11");
        // Superseding again with the identical request returns the first result instead of a conflict.
        assert_eq!(with(&["--supersede", "n5"]), "n11");
        // The default token estimate is part of the request: "same" is 1 token, not 3.
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n2",
            "--summary",
            "same",
        ])
        .ok(r#"{"node":"n12"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n2",
            "--summary",
            "same",
            "--tokens",
            "1",
        ])
        .ok(r#"{"node":"n12"}"#);
        db.tl(&[
            "summarize",
            "--from",
            "n2",
            "--to",
            "n2",
            "--summary",
            "same",
            "--tokens",
            "3",
        ])
        .ok(r#"{"node":"n13"}"#);
        // The summary's intent is shown in full by node and as a tag in context (M5).
        db.tl(&["context", "--node", "n7"])
            .ok(r#"[{"node":"n7","role":"summary","text":"same","tokens":3,"intent_tag":"goal"}]"#);
        assert_eq!(
            db.tl(&["node", "--node", "n7"]).json()["intent"],
            json!({"tag":"goal","note":"why"})
        );
        // Reuse is not a creation: one audit entry per node.
        let nodes: Vec<Value> = audit(&db).iter().map(|e| e["node"].clone()).collect();
        let expected: Vec<Value> = (5..=13).map(|n| json!(format!("n{n}"))).collect();
        assert_eq!(nodes, expected);
    }

    #[test]
    fn m5_intent_tags_in_budgets_and_notes_never() {
        let db = five();
        db.tl(&[
            "summarize",
            "--from",
            "n3",
            "--to",
            "n4",
            "--summary",
            "s",
            "--tokens",
            "5",
            "--intent-tag",
            "digest",
            "--intent-note",
            "hidden note",
        ])
        .ok(r#"{"node":"n6"}"#);
        let run = db.tl(&["budget", "--node", "n5", "--max", "1000"]);
        run.ok(&result(
            &[
                N1,
                N2,
                r#"{"node":"n6","role":"summary","text":"s","tokens":5,"intent_tag":"digest"}"#,
                N5,
            ],
            95,
            &[],
        ));
        assert!(!run.stdout.contains("note"));
        let context = db.tl(&["context", "--node", "n5"]).stdout;
        assert!(context.contains(r#""intent_tag":"plan""#) && !context.contains("private reasoning"));
        assert_eq!(
            db.tl(&["node", "--node", "n6"]).json()["intent"],
            json!({"tag":"digest","note":"hidden note"})
        );
    }

    #[test]
    fn b1_a_placeholder_on_the_path_is_listed_in_summaries_created() {
        let db = counterexample();
        db.tl(&["budget", "--node", "n4", "--max", "65"])
            .ok(COUNTEREXAMPLE_AT_65);
        let p6 = r#"{"node":"n6","role":"summary","text":"[placeholder] 1 message(s) n3..n3 (1000 tokens) omitted to fit the budget; read them as the context of n3 (MCP: timeline_context with node \"n3\"; CLI: tl context --node n3)","tokens":32}"#;
        // The placeholder as the target: it is a placeholder used in the result.
        db.tl(&["budget", "--node", "n6", "--max", "1033"]).ok(&format!(
            r#"{{"messages":[{{"node":"n1","role":"user","text":"long question","tokens":1000}},{{"node":"n2","role":"assistant","text":"key fact","tokens":1}},{p6}],"total_tokens":1033,"summaries_created":["n6"]}}"#
        ));
        // A branch forked from it carries it on its path.
        db.tl(&["fork", "--node", "n6", "--name", "short"])
            .ok(r#"{"branch":"short","head":"n6"}"#);
        db.tl(&["switch", "--name", "short"])
            .ok(r#"{"current_branch":"short"}"#);
        db.append("user", "next", 5);
        db.tl(&["budget", "--node", "n7", "--max", "70"]).ok(concat!(
            r#"{"messages":[{"node":"n5","role":"summary","text":"[placeholder] 1 message(s) n1..n1 (1000 tokens) omitted to fit the budget; read them as the context of n1 (MCP: timeline_context with node \"n1\"; CLI: tl context --node n1)","tokens":32},"#,
            r#"{"node":"n2","role":"assistant","text":"key fact","tokens":1},"#,
            r#"{"node":"n6","role":"summary","text":"[placeholder] 1 message(s) n3..n3 (1000 tokens) omitted to fit the budget; read them as the context of n3 (MCP: timeline_context with node \"n3\"; CLI: tl context --node n3)","tokens":32},"#,
            r#"{"node":"n7","role":"user","text":"next","tokens":5}],"total_tokens":70,"summaries_created":["n5","n6"]}"#
        ));
    }

    /// Σ4: derived_from names each source once, and never the version being superseded (the new version
    /// would be stale the moment it exists). Refused requests write nothing.
    #[test]
    fn s4_derived_from_refuses_duplicates_and_the_superseded_version() {
        let db = Db::new();
        db.tl(&["create"]).json();
        db.append("user", "a", 3);
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n1",
            "--summary",
            "first",
            "--tokens",
            "1",
        ])
        .ok(r#"{"node":"n2"}"#);
        let before = db.bytes();
        db.tl(&["summarize", "--from", "n1", "--to", "n1", "--summary", "b", "--derived-from", "n2,n2"]).err(
            2,
            r#"{"error":"invalid argument derived_from: n2 is listed twice; name each source summary once"}"#,
        );
        db.tl(&["summarize", "--from", "n1", "--to", "n1", "--summary", "b", "--supersede", "n2", "--derived-from", "n2"])
            .err(
                2,
                r#"{"error":"invalid argument derived_from: n2 is the summary this one supersedes; a new version derived from the version it replaces would be stale at once, so leave it out of derived_from"}"#,
            );
        assert_eq!(db.bytes(), before);
        db.tl(&[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n1",
            "--summary",
            "b",
            "--supersede",
            "n2",
        ])
        .ok(r#"{"node":"n3"}"#);
    }

    /// I2, U1: a keyed budget's mapping is audited with its messages named by node ID (texts stay in the
    /// nodes), while the replay still returns the full first result.
    #[test]
    fn i2_a_keyed_budget_is_audited_by_node_ids() {
        let db = Db::new();
        db.tl(&["create"]).json();
        db.append("user", "first words", 3);
        db.append("assistant", "second words", 4);
        let first = r#"{"messages":[{"node":"n1","role":"user","text":"first words","tokens":3},{"node":"n2","role":"assistant","text":"second words","tokens":4}],"total_tokens":7,"summaries_created":[]}"#;
        db.tl(&[
            "--idempotency-key",
            "b1",
            "budget",
            "--node",
            "n2",
            "--max",
            "100",
        ])
        .ok(first);
        db.tl(&[
            "--idempotency-key",
            "b1",
            "budget",
            "--node",
            "n2",
            "--max",
            "100",
        ])
        .ok(first);
        let entries: Vec<Value> = audit(&db)
            .into_iter()
            .filter(|e| e["op"] == "idempotency")
            .collect();
        assert_eq!(entries.len(), 1);
        assert_eq!(
            entries[0]["result"],
            json!({"messages": ["n1", "n2"], "total_tokens": 7, "summaries_created": []})
        );
    }

    // --- dry run and explanation ----------------------------------------------------------------

    #[test]
    fn dry_run_writes_nothing_and_shows_what_would_be_created() {
        let db = counterexample();
        let before = db.bytes();
        let backup = db.json_backup();
        let dry = concat!(
            r#"{"messages":["#,
            r#"{"node":null,"role":"summary","text":"[placeholder] 1 message(s) n1..n1 (1000 tokens) omitted to fit the budget; read them as the context of n1 (MCP: timeline_context with node \"n1\"; CLI: tl context --node n1)","tokens":32,"from":"n1","to":"n1"},"#,
            r#"{"node":"n2","role":"assistant","text":"key fact","tokens":1},"#,
            r#"{"node":null,"role":"summary","text":"[placeholder] 1 message(s) n3..n3 (1000 tokens) omitted to fit the budget; read them as the context of n3 (MCP: timeline_context with node \"n3\"; CLI: tl context --node n3)","tokens":32,"from":"n3","to":"n3"},"#,
            r#"{"node":"n4","role":"user","text":"","tokens":0}"#,
            r#"],"total_tokens":65,"summaries_created":[]}"#
        );
        db.tl(&["budget", "--node", "n4", "--max", "65", "--dry-run"]).ok(dry);
        // A key has no effect: nothing is recorded, so the same key then serves the real budget.
        db.tl(&[
            "--idempotency-key",
            "k-1",
            "budget",
            "--node",
            "n4",
            "--max",
            "65",
            "--dry-run",
        ])
        .ok(dry);
        assert_eq!(db.bytes(), before, "a dry run wrote the database");
        assert_eq!(db.json_backup(), backup, "a dry run replaced the backup");
        db.tl(&["--idempotency-key", "k-1", "budget", "--node", "n4", "--max", "65"])
            .ok(COUNTEREXAMPLE_AT_65);
        // Now the placeholders exist: the dry run shows them by node and lists them.
        let after = db.bytes();
        db.tl(&["budget", "--node", "n4", "--max", "65", "--dry-run"])
            .ok(COUNTEREXAMPLE_AT_65);
        assert_eq!(db.bytes(), after);
        // A dry run of a database that does not exist creates nothing.
        let empty = Db::new();
        empty
            .tl(&["budget", "--node", "n1", "--max", "5", "--dry-run"])
            .err(
                1,
                r#"{"error":"no timeline in this database yet; run `tl create` first (or pass --db to use another file)"}"#,
            );
        assert!(!empty.path.exists());
    }

    #[test]
    fn explain_says_why_for_every_message_and_what_makes_up_required_tokens() {
        let db = counterexample();
        let before = db.bytes();
        let did_not_fit = |p: &str, n: &str| {
            format!(
                r#"{{"node":"{n}","tokens":1000,"outcome":"placeholder","shown_at":{},"why":"did_not_fit","reason":"covered by {p}: keeping it would have brought the total to 1033, over the budget of 65"}}"#,
                if n == "n1" { 0 } else { 2 }
            )
        };
        let kept = r#"{"node":"n2","tokens":1,"outcome":"kept","shown_at":1,"why":"pinned","reason":"pinned: pinned messages are always kept verbatim"}"#;
        let target = r#"{"node":"n4","tokens":0,"outcome":"kept","shown_at":3,"why":"target","reason":"the target of the budget: always kept verbatim"}"#;
        // Infeasible: the cheapest layout, which costs required_tokens = 32 + 1 + 32 + 0.
        let run = db.tl(&["budget", "--node", "n4", "--max", "1", "--explain"]);
        assert_eq!(run.code, 1, "{run:?}");
        let error: Value = serde_json::from_str(&run.stderr).unwrap();
        assert_eq!(error["error"], json!("budget infeasible"));
        assert_eq!(
            (&error["data"]["required_tokens"], &error["data"]["max_tokens"]),
            (&json!(65), &json!(1))
        );
        let why: Vec<&str> = error["data"]["explanation"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["why"].as_str().unwrap())
            .collect();
        assert_eq!(
            why,
            ["placeholder_cheapest", "pinned", "placeholder_cheapest", "target"]
        );
        assert_eq!(
            error["data"]["explanation"][0]["reason"],
            json!("left out by the cheapest layout: covered by a placeholder for n1..n1 (not created), which costs 32 tokens")
        );
        // Without --explain the error is exactly B4's.
        db.tl(&["budget", "--node", "n4", "--max", "1"]).err(1, INFEASIBLE);
        assert_eq!(db.bytes(), before, "an infeasible budget wrote the database");
        // Feasible: the same layout as without --explain, plus the explanation.
        let with = db.tl(&["budget", "--node", "n4", "--max", "65", "--explain"]);
        let mut expected: Value = serde_json::from_str(COUNTEREXAMPLE_AT_65).unwrap();
        expected["explanation"] = serde_json::from_str(&format!(
            "[{},{kept},{},{target}]",
            did_not_fit("placeholder n5 (n1..n1)", "n1"),
            did_not_fit("placeholder n6 (n3..n3)", "n3")
        ))
        .unwrap();
        assert_eq!(with.json(), expected);
        assert_eq!(with.stderr, "");
        // Without --explain, the same call prints what it always printed.
        db.tl(&["budget", "--node", "n4", "--max", "65"])
            .ok(COUNTEREXAMPLE_AT_65);
    }
}

/// (id, jump, path_min_tokens) of every node of tl0 in a SQLite file.
fn path_columns(path: &std::path::Path) -> Vec<(i64, i64, i64)> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare("SELECT id, jump, path_min_tokens FROM nodes WHERE timeline = 0 ORDER BY id")
        .unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// Schema 8 (issue 24): every node stores its skew-binary jump pointer and the smallest tokens on
/// its path, written at insert; a file of schema 7 gets the same values from its migration, its
/// budgets do not change, and `db check` names a stored value that differs from the history.
#[test]
fn sqlite_path_columns_are_written_at_insert_migrated_and_checked() {
    common::use_engine(common::Engine::Sqlite);
    let db = Db::created_at(NOW);
    for i in 0..12u64 {
        db.append("user", &format!("m{i}"), 50 - 3 * i + (i % 3) * 9);
    }
    db.tl(&["pin", "--node", "n4"]).ok(r#"{"pinned":"n4"}"#);
    // A branch from n5, so that some jumps go along another path than the head's.
    db.tl(&["fork", "--node", "n5", "--name", "side"])
        .ok(r#"{"branch":"side","head":"n5"}"#);
    db.tl(&["switch", "--name", "side"])
        .ok(r#"{"current_branch":"side"}"#);
    db.append("user", "side", 7);
    let fresh = path_columns(&db.path);
    // n0, the chain n1..n12 (depth = ID), then n13 below n5.
    let jumps: Vec<i64> = fresh.iter().map(|c| c.1).collect();
    assert_eq!(jumps, [0, 0, 1, 0, 3, 4, 3, 0, 7, 8, 7, 10, 11, 3]);
    let mins: Vec<i64> = fresh.iter().map(|c| c.2).collect();
    assert_eq!(mins, [0, 50, 50, 50, 41, 41, 41, 32, 32, 32, 23, 23, 23, 7]);
    let budget = ["budget", "--node", "n12", "--max", "200", "--dry-run"];
    let before = db.tl(&budget).json();
    // An older schema has every message indexed: index the ones waiting (src/store/sqlite/pending.rs).
    db.tl(&["db", "check", "--repair"]).json();
    {
        let conn = rusqlite::Connection::open(&db.path).unwrap();
        conn.execute_batch(
            "DROP TABLE search_pending; DROP INDEX nodes_summaries; DROP INDEX nodes_pinned; DROP INDEX nodes_by_real_start; ALTER TABLE nodes DROP COLUMN jump; ALTER TABLE nodes DROP COLUMN path_min_tokens; PRAGMA user_version = 7;",
        )
        .unwrap();
    }
    assert_eq!(db.tl(&budget).json(), before);
    assert_eq!(path_columns(&db.path), fresh);
    db.tl(&["db", "check"]).json();
    {
        let conn = rusqlite::Connection::open(&db.path).unwrap();
        conn.execute_batch("UPDATE nodes SET jump = 2 WHERE timeline = 0 AND id = 9")
            .unwrap();
    }
    let check = db.tl(&["db", "check"]);
    assert_eq!(check.code, 3, "{check:?}");
    assert!(
        check.stderr.contains("timeline tl0: the stored path columns of n9 (jump n2, smallest tokens on its path 32) differ from what its history gives; rebuild the database with tl db convert"),
        "{check:?}"
    );
}

/// #42 item 10: a token count is at most 2^32 - 1 (the spec's `token_count`), checked where both
/// front-ends check arguments, and a path from the root holds at most `max_path_tokens` (2^53 - 1),
/// checked at the append that would pass it; before, `tokens: 2^64 - 1` was stored and every later
/// append on that branch failed with an overflow.
mod token_limits {
    use super::*;
    use common::McpSession;

    const CLI_TOO_MANY: &str = r#"{"error":"invalid argument --tokens: must be at most 4294967295, got 18446744073709551615"}"#;

    /// A database whose only message, n1, claims `tokens` (as an earlier release could store it).
    fn with_first_message_of(tokens: u64) -> Db {
        let dir = common::TempDir::new();
        let file = dir.path().join("snapshot.json");
        common::output_of(
            std::process::Command::new(common::TL)
                .arg("--db")
                .arg(&file)
                .arg("create")
                .env("TIMELINE_NOW", common::CLOCK),
        );
        let mut snapshot: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
        snapshot["timelines"][0]["next_node"] = json!(2);
        snapshot["timelines"][0]["branches"][0]["head"] = json!("n1");
        snapshot["timelines"][0]["nodes"] = json!([{
            "id": "n1", "parent": "n0", "role": "user", "text": "huge", "tokens": tokens,
            "created_at": 1767225600_u64, "prefix_tokens": tokens
        }]);
        std::fs::write(&file, serde_json::to_vec(&snapshot).unwrap()).unwrap();
        let db = Db::new();
        db.fill_from_snapshot(&file);
        db
    }

    on_every_engine! {
        #[test]
        fn a_token_count_over_the_limit_is_refused_by_both_front_ends_and_the_branch_goes_on() {
            let db = Db::new();
            db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
            let before = db.bytes();
            db.tl(&["append", "--role", "user", "--text", "x", "--tokens", "18446744073709551615"])
                .err(2, CLI_TOO_MANY);
            db.tl(&["append", "--role", "user", "--text", "x", "--tokens", "4294967296"]).err(
                2,
                r#"{"error":"invalid argument --tokens: must be at most 4294967295, got 4294967296"}"#,
            );
            db.tl(&["summarize", "--from", "n0", "--to", "n0", "--summary", "s", "--tokens", "4294967296"])
                .err(
                    2,
                    r#"{"error":"invalid argument --tokens: must be at most 4294967295, got 4294967296"}"#,
                );
            assert_eq!(db.bytes(), before, "a refused argument writes nothing");
            let mut mcp = McpSession::start(&db);
            let refused = mcp
                .call(
                    "timeline_append",
                    json!({"timeline_id": "tl0", "role": "user", "text": "x", "tokens": 18446744073709551615_u64}),
                )
                .unwrap_err();
            assert_eq!(
                refused,
                json!({"error": "invalid argument tokens: must be at most 4294967295, got 18446744073709551615"})
            );
            // The largest count is taken, and the branch still takes messages after it.
            assert_eq!(
                mcp.ok(
                    "timeline_append",
                    json!({"timeline_id": "tl0", "role": "user", "text": "x", "tokens": 4294967295_u64}),
                ),
                json!({"node": "n1"})
            );
            mcp.close();
            db.tl(&["append", "--role", "user", "--text", "y", "--tokens", "4294967295"])
                .ok(r#"{"node":"n2"}"#);
            db.tl(&["append", "--role", "user", "--text", "z"]).ok(r#"{"node":"n3"}"#);
            let node = db.tl(&["node", "--node", "n3"]).json();
            assert_eq!(node["path_tokens"], json!(8589934591_u64));
        }

        #[test]
        fn a_path_holds_at_most_max_path_tokens_and_the_append_past_it_is_refused() {
            let max: u64 = (1 << 53) - 1;
            // A path exactly at the limit: a message of 0 tokens still fits, 1 more does not.
            let db = with_first_message_of(max - 1);
            db.tl(&["append", "--role", "user", "--text", "a", "--tokens", "1"]).ok(r#"{"node":"n2"}"#);
            let before = db.bytes();
            let past = r#"{"error":"too many tokens on one path: the path from the root to the new node would hold 9007199254740992 tokens (9007199254740991 above it and 1 of its own), more than the most a path may hold, 9007199254740991; nothing was written. Give a smaller --tokens value (the real token count of the text), or continue in a new timeline"}"#;
            db.tl(&["append", "--role", "user", "--text", "b", "--tokens", "1"]).err(1, past);
            // A summary is a node of the path too.
            db.tl(&["summarize", "--from", "n2", "--to", "n2", "--summary", "s", "--tokens", "2"])
                .err(1, &past.replace("(9007199254740991 above it and 1 ", "(9007199254740990 above it and 2 "));
            assert_eq!(db.bytes(), before);
            let mut mcp = McpSession::start(&db);
            assert_eq!(
                mcp.call(
                    "timeline_append",
                    json!({"timeline_id": "tl0", "role": "user", "text": "b", "tokens": 1}),
                )
                .unwrap_err(),
                json!({"error": "too many tokens on one path: the path from the root to the new node would hold 9007199254740992 tokens (9007199254740991 above it and 1 of its own), more than the most a path may hold, 9007199254740991; nothing was written. Give a smaller `tokens` value (the real token count of the text), or continue in a new timeline"})
            );
            assert_eq!(
                mcp.ok("timeline_append", json!({"timeline_id": "tl0", "role": "user", "text": "b", "tokens": 0})),
                json!({"node": "n3"})
            );
            mcp.close();
        }

        /// A branch an earlier release let past 2^64 - 1 gets a message that says what to do.
        #[test]
        fn a_branch_written_past_the_limit_by_an_earlier_release_says_how_to_go_on() {
            let db = with_first_message_of(u64::MAX);
            let before = db.bytes();
            db.tl(&["append", "--role", "user", "--text", "b", "--tokens", "0"]).err(
                1,
                r#"{"error":"too many tokens on one path: the messages from the root to the parent of the new node already hold 18446744073709551615 tokens, more than the most a path may hold, 9007199254740991 (an earlier release accepted any token count); nothing was written. Fork a new branch from a node above the message with the huge token count and continue there, or continue in a new timeline"}"#,
            );
            assert_eq!(db.bytes(), before);
        }
    }
}
