//! Claude Code sessions imported while they are written (issue 42, item 3): Claude Code writes one
//! JSONL line per content block of an API response, all with the response's `message.id`, so an
//! import may run between two lines of one answer. Random sessions shaped like real transcripts
//! (prompts, responses of one to four blocks, tool calls and their results, progress events) are
//! imported through the real `tl` after every prefix of their lines and then whole; the timeline
//! must be the one a single import of the whole file makes, node by node, and (nothing being
//! edited) have one branch, also with parallel tool calls written as Claude Code writes them.

use crate::common::{self, Db};
use proptest::prelude::*;
use serde_json::{Value, json};

const SESSION: &str = "7c1e2a90-0000-4000-8000-00000000000a";

/// A content block of an assistant's response.
#[derive(Debug, Clone, Copy)]
enum Block {
    Thinking,
    Text,
    ToolUse,
}

/// One exchange: the user's prompt, then responses; a response ending in a tool call is followed
/// by its result (and perhaps a hook's progress event) and the next response.
#[derive(Debug, Clone)]
struct Turn {
    responses: Vec<Vec<Block>>,
    progress: bool,
    /// How a response's tool calls get their results: 0, one result for its last line; 1, a
    /// result for every call, written after all of them; 2, each call's result written right
    /// after it. With 1 and 2, Claude Code's shape of parallel calls (issue 46, item 1): each
    /// further call below the call before it, each result below its call.
    parallel: u8,
}

fn block() -> impl Strategy<Value = Block> {
    prop_oneof![
        Just(Block::Thinking),
        Just(Block::Text),
        Just(Block::ToolUse)
    ]
}

fn turn() -> impl Strategy<Value = Turn> {
    (
        proptest::collection::vec(proptest::collection::vec(block(), 1..4), 1..3),
        any::<bool>(),
        0..3u8,
    )
        .prop_map(|(responses, progress, parallel)| Turn {
            responses,
            progress,
            parallel,
        })
}

/// The session's lines, as Claude Code writes them.
fn lines(turns: &[Turn]) -> Vec<String> {
    let mut out = Vec::new();
    let mut parent: Option<String> = None;
    let mut second = 0u32;
    let mut line = |kind: &str, uuid: String, parent: &mut Option<String>, extra: Value| {
        second += 1;
        let mut value = json!({
            "parentUuid": parent.clone(),
            "isSidechain": false,
            "userType": "external",
            "cwd": "/home/ada/src/kiln",
            "sessionId": SESSION,
            "version": "2.0.14",
            "gitBranch": "main",
            "type": kind,
            "uuid": uuid,
            "timestamp": format!("2026-01-05T10:{:02}:{:02}.000Z", second / 60, second % 60),
        });
        for (k, v) in extra.as_object().unwrap() {
            value[k] = v.clone();
        }
        *parent = Some(uuid);
        value.to_string()
    };
    for (t, turn) in turns.iter().enumerate() {
        out.push(line(
            "user",
            format!("u{t}"),
            &mut parent,
            json!({"message": {"role": "user", "content": format!("Question {t}: why is the kiln slow?")}}),
        ));
        for (r, blocks) in turn.responses.iter().enumerate() {
            let id = format!("msg_{t}_{r}");
            let last_response = r + 1 == turn.responses.len();
            let calls = blocks
                .iter()
                .filter(|b| matches!(b, Block::ToolUse))
                .count();
            let parallel = if last_response || calls == 0 {
                0
            } else {
                turn.parallel
            };
            let mut results: Vec<(String, String)> = Vec::new();
            let result = |b: usize| json!({"message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": format!("toolu_{t}_{r}_{b}"), "content": format!("result {t}.{r}.{b}")}]}, "toolUseResult": {"type": "text"}});
            for (b, kind) in blocks.iter().enumerate() {
                let content = match kind {
                    Block::Thinking => {
                        json!({"type": "thinking", "thinking": format!("Think {t}.{r}.{b}"), "signature": "c2ln"})
                    }
                    Block::Text => json!({"type": "text", "text": format!("Answer {t}.{r}.{b}")}),
                    Block::ToolUse => {
                        json!({"type": "tool_use", "id": format!("toolu_{t}_{r}_{b}"), "name": "Read", "input": {"file_path": "src/kiln.rs"}})
                    }
                };
                let uuid = format!("a{t}_{r}_{b}");
                out.push(line(
                    "assistant",
                    uuid.clone(),
                    &mut parent,
                    json!({"requestId": format!("req_{id}"), "message": {"id": id, "type": "message", "role": "assistant", "model": "claude-sonnet-4-5", "content": [content], "stop_reason": null, "usage": {"input_tokens": 10, "output_tokens": 5}}}),
                ));
                if parallel > 0 && matches!(kind, Block::ToolUse) {
                    results.push((format!("t{t}_{r}_{b}"), uuid.clone()));
                    if parallel == 2 {
                        // The result below its call, beside the response's next line.
                        let mut below = Some(uuid);
                        out.push(line("user", format!("t{t}_{r}_{b}"), &mut below, result(b)));
                    }
                }
            }
            if parallel > 0 {
                for (b, (result_uuid, call)) in results.iter().enumerate() {
                    if parallel == 1 {
                        let b: usize = result_uuid.rsplit('_').next().unwrap().parse().unwrap();
                        let mut below = Some(call.clone());
                        out.push(line("user", result_uuid.clone(), &mut below, result(b)));
                    }
                    // The next response follows the last result written.
                    if b + 1 == results.len() {
                        parent = Some(result_uuid.clone());
                    }
                }
            } else if r + 1 < turn.responses.len() {
                let call = format!("toolu_{t}_{r}_{}", blocks.len() - 1);
                out.push(line(
                    "user",
                    format!("t{t}_{r}"),
                    &mut parent,
                    json!({"message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call, "content": "const TEMP: u32 = 1250;"}]}, "toolUseResult": {"type": "text"}}),
                ));
                if turn.progress {
                    out.push(line(
                        "progress",
                        format!("p{t}_{r}"),
                        &mut parent,
                        json!({"data": {"type": "hook_progress", "hookName": "PostToolUse"}}),
                    ));
                }
            }
        }
    }
    out
}

/// Everything a timeline shows: its listing, its branches and each node.
fn shown(db: &Db) -> Vec<Value> {
    let timelines = db.tl(&["timelines"]).json();
    let count = timelines[0]["messages"].as_u64().unwrap_or(0);
    let mut out = vec![timelines, db.tl(&["branches"]).json()];
    for n in 1..=count {
        out.push(db.tl(&["node", "--node", &format!("n{n}")]).json());
    }
    out
}

fn import(db: &Db, file: &std::path::Path) -> Value {
    db.tl(&[
        "import",
        "--format",
        "claude-code",
        "--input",
        &file.display().to_string(),
    ])
    .json()
}

/// Import after every prefix of the session's lines, then whole, and once whole into a second
/// database: the two timelines are the same.
fn imported_after_every_prefix_is_a_fresh_import(turns: &[Turn]) {
    let lines = lines(turns);
    let incremental = Db::new();
    let file = incremental.dir.path().join(format!("{SESSION}.jsonl"));
    for k in 1..=lines.len() {
        std::fs::write(&file, lines[..k].join("\n") + "\n").unwrap();
        let report = import(&incremental, &file);
        assert_eq!(report["skipped"], json!(0), "after {k} lines: {report}");
    }
    let fresh = Db::new();
    import(&fresh, &file);
    assert_eq!(shown(&incremental), shown(&fresh), "{}", lines.join("\n"));
    // Nothing was edited or rewound: one branch, however the tool calls ran (issue 46, item 1).
    assert_eq!(
        fresh.tl(&["branches"]).json().as_array().unwrap().len(),
        1,
        "{}",
        lines.join("\n")
    );
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    #[test]
    fn claude_code_imported_after_every_prefix_is_a_fresh_import_on_json(
        turns in proptest::collection::vec(turn(), 1..4),
    ) {
        common::use_engine(common::Engine::Json);
        imported_after_every_prefix_is_a_fresh_import(&turns);
    }

    #[test]
    fn claude_code_imported_after_every_prefix_is_a_fresh_import_on_sqlite(
        turns in proptest::collection::vec(turn(), 1..4),
    ) {
        common::use_engine(common::Engine::Sqlite);
        imported_after_every_prefix_is_a_fresh_import(&turns);
    }
}
