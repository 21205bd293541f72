//! State-machine property tests: random sequences of operations, in process.
//!
//! 1. `operations_keep_every_invariant`: sequences of create/append/fork/switch/drop-branch/
//!    rename-branch/pin/unpin/summarize/budget (also dry runs with explanations)/archive-check/
//!    archive-branch/restore-branch run through `ops::run` on an in-memory `Database`
//!    (arguments validated by `spec::validate` first, a failed operation discarded as the store does).
//!    After every step: budget layouts keep B3–B5, nothing already written ever changes (B6, A3: only the
//!    zone of archived nodes), archival neither loses nor duplicates a node nor changes any context, the
//!    snapshot round-trips through `store::encode`/`decode`, every snapshot validates against
//!    `generated/schema/database.json`, and the audit only grows (U1, U2).
//! 2. `idempotent_replays_write_nothing`: sequences with idempotency keys through `service::execute` on a
//!    temporary file: a replay returns the first result and leaves the file's bytes unchanged (I1), a
//!    failure writes nothing and does not consume its key (I2, B4).
//! 3. `sqlite_and_json_engines_agree`, `postgres_and_json_engines_agree`: the same operations on the
//!    SQLite or PostgreSQL engine give the in-memory model's results, errors and database (S8).

use crate::common;

use common::TempDir;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;
use timeline::error::ErrorKind;
use timeline::model::{Database, ROOT, SummaryKind, Timeline};
use timeline::ops::{self, Ctx};
use timeline::service::{self, Output, Request};
use timeline::spec::spec;
use timeline::spec::validate::{Origin, validate};

const NAMES: [&str; 4] = ["main", "b1", "b2", "b3"];

#[derive(Debug, Clone)]
enum Action {
    Create,
    Append {
        role: u8,
        text: String,
        tokens: Option<u64>,
        tag: Option<(String, bool)>,
    },
    Fork {
        node: usize,
        name: usize,
    },
    Switch {
        name: usize,
    },
    DropBranch {
        name: usize,
    },
    Pin {
        node: usize,
    },
    Unpin {
        node: usize,
    },
    Summarize {
        end: usize,
        start: usize,
        tokens: Option<u64>,
        supersede: Option<usize>,
        derived: Option<usize>,
        same_text: bool,
    },
    Budget {
        node: usize,
        max: u64,
    },
    /// A budget of the path's total tokens minus `below`.
    BudgetBelowPath {
        node: usize,
        below: u64,
    },
    /// A dry-run budget with its explanation (a read: it must change nothing), of `percent` of the
    /// path's tokens, so that it usually has to leave messages out.
    BudgetPreview {
        node: usize,
        percent: u64,
    },
    RenameBranch {
        name: usize,
        to: usize,
    },
    RestoreBranch {
        name: usize,
    },
    ArchiveCheck {
        name: usize,
    },
    ArchiveBranch {
        name: usize,
    },
    /// Summarise a branch's whole path, so its watermark can reach its head (makes archival reachable).
    CoverBranch {
        name: usize,
    },
    /// Summarise exactly the range of an existing placeholder, releasing it for archival (Σ2).
    ReplacePlaceholder {
        sel: usize,
    },
    /// Everything archival needs, as ordinary operations: leave the branch, unpin its path, write the
    /// summaries its placeholders wait for, cover it, then archive it.
    ArchiveFlow {
        name: usize,
    },
    /// An archive flow, then restoring the branch (possibly after other branches were archived).
    ArchiveRestore {
        name: usize,
    },
}

/// The primitive actions an `ArchiveFlow` stands for, from the state at the moment it runs.
fn expand(db: &Database, action: &Action) -> Vec<Action> {
    if let Action::ArchiveRestore { name } = *action {
        let mut out = expand(db, &Action::ArchiveFlow { name });
        out.push(Action::RestoreBranch { name });
        return out;
    }
    let Action::ArchiveFlow { name } = *action else {
        return vec![action.clone()];
    };
    let Some(t) = db.timelines.first() else {
        return vec![Action::ArchiveBranch { name }];
    };
    let Some(branch) = t.branches.iter().find(|b| b.name == NAMES[name]) else {
        return vec![Action::ArchiveBranch { name }];
    };
    let mut out = Vec::new();
    if t.current_branch == branch.name
        && let Some(other) = t.branches.iter().find(|b| b.name != branch.name)
    {
        let other = NAMES.iter().position(|n| *n == other.name).unwrap();
        out.push(Action::Switch { name: other });
    }
    let path = t.path(branch.head);
    out.push(Action::CoverBranch { name });
    for &n in &path {
        if t.pins.contains(&n) {
            out.push(Action::Unpin { node: n as usize });
        }
    }
    let mut index = 0;
    for node in &t.nodes {
        if let Some(summary) = node.summary.as_ref().filter(|_| node.is_placeholder()) {
            if path.contains(&summary.from) && path.contains(&summary.to) {
                out.push(Action::ReplacePlaceholder { sel: index });
            }
            index += 1;
        }
    }
    out.push(Action::CoverBranch { name });
    out.push(Action::ArchiveBranch { name });
    out
}

fn tokens() -> impl Strategy<Value = Option<u64>> {
    prop_oneof![
        2 => (0u64..60).prop_map(Some),
        1 => (0u64..400).prop_map(Some),
        1 => Just(None),
    ]
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        1 => Just(Action::Create),
        8 => (
            0u8..4,
            "[a-z 讨论👍]{0,12}",
            tokens(),
            proptest::option::of(("[a-z]{0,3}", any::<bool>())),
        )
            .prop_map(|(role, text, tokens, tag)| Action::Append { role, text, tokens, tag }),
        3 => (any::<usize>(), 0..NAMES.len()).prop_map(|(node, name)| Action::Fork { node, name }),
        5 => (0..NAMES.len()).prop_map(|name| Action::Switch { name }),
        1 => (0..NAMES.len()).prop_map(|name| Action::DropBranch { name }),
        2 => any::<usize>().prop_map(|node| Action::Pin { node }),
        2 => any::<usize>().prop_map(|node| Action::Unpin { node }),
        3 => (
            any::<usize>(),
            any::<usize>(),
            tokens(),
            proptest::option::weighted(0.2, any::<usize>()),
            proptest::option::weighted(0.2, any::<usize>()),
            any::<bool>(),
        )
            .prop_map(|(end, start, tokens, supersede, derived, same_text)| Action::Summarize {
                end,
                start,
                tokens,
                supersede,
                derived,
                same_text,
            }),
        4 => (
            any::<usize>(),
            prop_oneof![0u64..80, 0u64..400, Just(u64::MAX)],
        )
            .prop_map(|(node, max)| Action::Budget { node, max }),
        // Budgets just below the whole path's tokens, where every "does it still fit" decision of the
        // planner meets its boundary.
        4 => (any::<usize>(), 0u64..100).prop_map(|(node, below)| Action::BudgetBelowPath { node, below }),
        2 => (0..NAMES.len()).prop_map(|name| Action::ArchiveCheck { name }),
        4 => (0..NAMES.len()).prop_map(|name| Action::ArchiveBranch { name }),
        4 => (0..NAMES.len()).prop_map(|name| Action::CoverBranch { name }),
        2 => any::<usize>().prop_map(|sel| Action::ReplacePlaceholder { sel }),
        2 => (0..NAMES.len()).prop_map(|name| Action::ArchiveFlow { name }),
        3 => (any::<usize>(), 0u64..110)
            .prop_map(|(node, percent)| Action::BudgetPreview { node, percent }),
        1 => (0..NAMES.len(), 0..NAMES.len()).prop_map(|(name, to)| Action::RenameBranch { name, to }),
        3 => (0..NAMES.len()).prop_map(|name| Action::RestoreBranch { name }),
        2 => (0..NAMES.len()).prop_map(|name| Action::ArchiveRestore { name }),
    ]
}

fn node_id(n: u64) -> String {
    format!("n{n}")
}

/// The operation name and its MCP arguments for `action` against the current state of tl0.
fn request(db: &Database, action: &Action) -> (&'static str, Map<String, Value>) {
    let mut args = Map::new();
    args.insert("timeline_id".into(), json!("tl0"));
    let timeline = db.timelines.first();
    let count = timeline.map_or(1, |t| t.nodes.len());
    let pick = |sel: usize| (sel % count) as u64;
    let real_summaries: Vec<u64> = timeline
        .map(|t| {
            (0..t.nodes.len() as u64)
                .filter(|&n| t.nodes[n as usize].is_real_summary())
                .collect()
        })
        .unwrap_or_default();
    let op = match action {
        Action::Create => {
            args.clear();
            "create"
        }
        Action::Append {
            role,
            text,
            tokens,
            tag,
        } => {
            args.insert(
                "role".into(),
                json!(["user", "assistant", "system", "summary"][*role as usize % 4]),
            );
            args.insert("text".into(), json!(text));
            if let Some(t) = tokens {
                args.insert("tokens".into(), json!(t));
            }
            if let Some((tag, with_note)) = tag {
                // An empty tag is invalid; use a fixed one so the request validates.
                let tag = if tag.is_empty() { "t" } else { tag.as_str() };
                let mut intent = json!({ "tag": tag });
                if *with_note {
                    intent["note"] = json!("why");
                }
                args.insert("intent".into(), intent);
            }
            "append"
        }
        Action::Fork { node, name } => {
            args.insert("node".into(), json!(node_id(pick(*node))));
            args.insert("name".into(), json!(NAMES[*name]));
            "fork"
        }
        Action::Switch { name } => {
            args.insert("name".into(), json!(NAMES[*name]));
            "switch"
        }
        Action::DropBranch { name } => {
            args.insert("name".into(), json!(NAMES[*name]));
            "drop_branch"
        }
        Action::Pin { node } => {
            args.insert("node".into(), json!(node_id(pick(*node))));
            "pin"
        }
        Action::Unpin { node } => {
            args.insert("node".into(), json!(node_id(pick(*node))));
            "unpin"
        }
        Action::Summarize {
            end,
            start,
            tokens,
            supersede,
            derived,
            same_text,
        } => {
            let to = pick(*end);
            let path = timeline.map(|t| t.path(to)).unwrap_or_default();
            let from = if path.is_empty() {
                to
            } else {
                path[start % path.len()]
            };
            args.insert("from".into(), json!(node_id(from)));
            args.insert("to".into(), json!(node_id(to)));
            let text = if *same_text {
                "summary".to_string()
            } else {
                format!("summary of n{from}..n{to}")
            };
            args.insert("summary".into(), json!(text));
            if let Some(t) = tokens {
                args.insert("tokens".into(), json!(t));
            }
            if let (Some(s), false) = (supersede, real_summaries.is_empty()) {
                let old = real_summaries[s % real_summaries.len()];
                args.insert("supersede".into(), json!(node_id(old)));
            }
            if let (Some(d), false) = (derived, real_summaries.is_empty()) {
                let source = real_summaries[d % real_summaries.len()];
                args.insert("derived_from".into(), json!([node_id(source)]));
            }
            "summarize"
        }
        Action::Budget { node, max } => {
            args.insert("node".into(), json!(node_id(pick(*node))));
            args.insert("max_tokens".into(), json!(max));
            "context_budget"
        }
        Action::BudgetBelowPath { node, below } => {
            let target = pick(*node);
            let whole = timeline.map_or(0, |t| t.derived.prefix_tokens[target as usize]);
            args.insert("node".into(), json!(node_id(target)));
            args.insert("max_tokens".into(), json!(whole.saturating_sub(*below)));
            "context_budget"
        }
        Action::BudgetPreview { node, percent } => {
            let target = pick(*node);
            let whole = timeline.map_or(0, |t| t.derived.prefix_tokens[target as usize]);
            args.insert("node".into(), json!(node_id(target)));
            let max = u128::from(whole) * u128::from(*percent) / 100;
            args.insert(
                "max_tokens".into(),
                json!(u64::try_from(max).unwrap_or(u64::MAX)),
            );
            args.insert("dry_run".into(), json!(true));
            args.insert("explain".into(), json!(true));
            "context_budget"
        }
        Action::RenameBranch { name, to } => {
            args.insert("name".into(), json!(NAMES[*name]));
            args.insert("new_name".into(), json!(NAMES[*to]));
            "rename_branch"
        }
        Action::RestoreBranch { name } => {
            args.insert("branch".into(), json!(NAMES[*name]));
            "restore_branch"
        }
        Action::ArchiveCheck { name } => {
            args.insert("branch".into(), json!(NAMES[*name]));
            "archive_check"
        }
        Action::ArchiveBranch { name } => {
            args.insert("branch".into(), json!(NAMES[*name]));
            "archive_branch"
        }
        Action::CoverBranch { name } => {
            let head = timeline
                .and_then(|t| t.branches.iter().find(|b| b.name == NAMES[*name]))
                .map_or(ROOT, |b| b.head);
            let path = timeline.map(|t| t.path(head)).unwrap_or_default();
            args.insert(
                "from".into(),
                json!(node_id(path.first().copied().unwrap_or(ROOT))),
            );
            args.insert("to".into(), json!(node_id(head)));
            args.insert("summary".into(), json!(format!("all of {}", NAMES[*name])));
            args.insert("tokens".into(), json!(3));
            "summarize"
        }
        Action::ArchiveFlow { .. } | Action::ArchiveRestore { .. } => {
            unreachable!("expanded before it runs")
        }
        Action::ReplacePlaceholder { sel } => {
            let placeholders: Vec<(u64, u64)> = timeline
                .map(|t| {
                    t.nodes
                        .iter()
                        .filter_map(|n| n.summary.as_ref().filter(|_| n.is_placeholder()))
                        .map(|s| (s.from, s.to))
                        .collect()
                })
                .unwrap_or_default();
            let (from, to) = placeholders
                .get(sel % placeholders.len().max(1))
                .copied()
                .unwrap_or((ROOT, ROOT));
            args.insert("from".into(), json!(node_id(from)));
            args.insert("to".into(), json!(node_id(to)));
            args.insert(
                "summary".into(),
                json!("the placeholder's range, written out"),
            );
            "summarize"
        }
    };
    (op, args)
}

fn schema_validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/generated/schema/database.json"
        );
        let schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        jsonschema::validator_for(&schema).expect("the published schema compiles")
    })
}

/// Source fields of a node that nothing may change once written (the zone may change by archival).
fn frozen(t: &Timeline, n: usize) -> String {
    let node = &t.nodes[n];
    format!(
        "{}|{}|{:?}|{}|{:?}|{:?}",
        node.parent,
        node.role.as_str(),
        node.text,
        node.tokens,
        node.intent,
        node.summary
    )
}

fn contexts(db: &mut Database) -> HashMap<u64, Value> {
    let Some(t) = db.timelines.first() else {
        return HashMap::new();
    };
    let count = t.nodes.len() as u64;
    let mut out = HashMap::new();
    for n in 1..count {
        let mut args = Map::new();
        args.insert("timeline_id".into(), json!("tl0"));
        args.insert("node".into(), json!(node_id(n)));
        let op = spec().operation("context").unwrap();
        let valid = validate(op, &args, Origin::Mcp).unwrap();
        let value = ops::run_in_memory(
            db,
            "context",
            &valid,
            &Ctx {
                now: 0,
                origin: Origin::Mcp,
            },
        )
        .unwrap();
        out.insert(n, value);
    }
    out
}

/// B3–B5 for one successful budget result on the state it ran against (`after` holds the placeholders).
fn check_budget(
    before: &Database,
    after: &Database,
    args: &Map<String, Value>,
    result: &Value,
) -> Result<(), TestCaseError> {
    let reserve = spec().constants.reserve_tokens;
    let t_before = &before.timelines[0];
    let t = &after.timelines[0];
    let target: u64 = args["node"].as_str().unwrap()[1..].parse().unwrap();
    let max = args["max_tokens"].as_u64().unwrap();
    let path = t.path(target);
    let position: HashMap<u64, usize> = path.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let messages = result["messages"].as_array().unwrap();
    let mut next = 0usize; // the next path position that must be accounted for
    let mut total = 0u128;
    let mut placeholders = Vec::new();
    for message in messages {
        let id: u64 = message["node"].as_str().unwrap()[1..].parse().unwrap();
        let node = &t.nodes[id as usize];
        let tokens = message["tokens"].as_u64().unwrap();
        total += u128::from(tokens);
        prop_assert_eq!(tokens, node.tokens);
        prop_assert_eq!(message["text"].as_str().unwrap(), node.text.as_str());
        match &node.summary {
            Some(summary) if !position.contains_key(&id) => {
                // A summary or placeholder standing for a contiguous run of the path.
                let (Some(&start), Some(&end)) =
                    (position.get(&summary.from), position.get(&summary.to))
                else {
                    return Err(TestCaseError::fail(format!(
                        "{id} covers a range off the path: {result}"
                    )));
                };
                prop_assert_eq!(start, next, "coverage out of path order: {}", result);
                prop_assert!(start <= end);
                for &covered in &path[start..=end] {
                    prop_assert!(
                        covered != target && !t.pins.contains(&covered),
                        "target or pin {} not verbatim: {}",
                        covered,
                        result
                    );
                }
                next = end + 1;
                prop_assert_eq!(message["role"].as_str(), Some("summary"));
                if summary.kind == SummaryKind::Placeholder {
                    prop_assert_eq!(tokens, reserve);
                    placeholders.push(json!(node_id(id)));
                } else {
                    prop_assert!(t.is_current_version(id), "stale or old version used");
                }
            }
            _ => {
                prop_assert_eq!(
                    position.get(&id).copied(),
                    Some(next),
                    "verbatim message out of path order: {}",
                    result
                );
                next += 1;
                prop_assert_eq!(message["role"].as_str(), Some(node.role.as_str()));
                // A placeholder on the path itself (a branch grown from one) is used verbatim and is
                // listed too: summaries_created names every placeholder of the result (B1).
                if node.is_placeholder() {
                    placeholders.push(json!(node_id(id)));
                }
            }
        }
    }
    prop_assert_eq!(
        next,
        path.len(),
        "the path is not fully covered: {}",
        result
    );
    prop_assert_eq!(
        messages.last().map(|m| m["node"].clone()),
        Some(json!(node_id(target)))
    );
    prop_assert_eq!(result["total_tokens"].as_u64().map(u128::from), Some(total));
    prop_assert!(total <= u128::from(max), "total {} over max {}", total, max);
    prop_assert_eq!(&result["summaries_created"], &Value::Array(placeholders));
    // Only placeholders are created, each with the reserve's tokens.
    for node in &t.nodes[t_before.nodes.len()..] {
        prop_assert!(node.is_placeholder());
        prop_assert_eq!(node.tokens, reserve);
    }
    Ok(())
}

/// A dry run with its explanation: nothing written; every path message explained once, in order,
/// by the message that shows it; what is shown adds up to the total; a placeholder that does not
/// exist is shown with node null and its range.
fn check_preview(
    before: &Database,
    after: &Database,
    args: &Map<String, Value>,
    result: &Value,
) -> Result<(), TestCaseError> {
    prop_assert_eq!(after, before, "a dry run changed the database");
    let t = &before.timelines[0];
    let target: u64 = args["node"].as_str().unwrap()[1..].parse().unwrap();
    let path: Vec<Value> = t
        .path(target)
        .into_iter()
        .map(|n| json!(node_id(n)))
        .collect();
    let messages = result["messages"].as_array().unwrap();
    let explanation = result["explanation"].as_array().unwrap();
    let explained: Vec<Value> = explanation.iter().map(|e| e["node"].clone()).collect();
    prop_assert_eq!(
        &explained,
        &path,
        "the explanation does not follow the path"
    );
    let mut shown = BTreeSet::new();
    let mut last = 0u64;
    for entry in explanation {
        let at = entry["shown_at"].as_u64().unwrap();
        prop_assert!(
            at >= last && (at as usize) < messages.len(),
            "shown_at out of order"
        );
        last = at;
        shown.insert(at);
        let message = &messages[at as usize];
        let outcome = entry["outcome"].as_str().unwrap();
        if outcome == "kept" {
            prop_assert_eq!(&message["node"], &entry["node"]);
        }
        if message["node"].is_null() {
            prop_assert_eq!(outcome, "placeholder");
            prop_assert!(message["from"].is_string() && message["to"].is_string());
        }
    }
    prop_assert_eq!(shown.len(), messages.len(), "a message explains nothing");
    let total: u64 = messages.iter().map(|m| m["tokens"].as_u64().unwrap()).sum();
    prop_assert_eq!(result["total_tokens"].as_u64(), Some(total));
    Ok(())
}

/// A restore moves exactly the reported nodes from the cold zone back to the hot one, brings the
/// branch back at its head, and changes no context.
fn check_restore(
    before: &mut Database,
    after: &mut Database,
    args: &Map<String, Value>,
    result: &Value,
) -> Result<(), TestCaseError> {
    let restored: BTreeSet<u64> = result["restored"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap()[1..].parse().unwrap())
        .collect();
    let (tb, ta) = (&before.timelines[0], &after.timelines[0]);
    for n in 1..ta.nodes.len() {
        let back = tb.nodes[n].cold && !ta.nodes[n].cold;
        prop_assert!(tb.nodes[n].cold || !ta.nodes[n].cold, "n{} went cold", n);
        prop_assert_eq!(
            back,
            restored.contains(&(n as u64)),
            "n{} moved unreported",
            n
        );
    }
    let name = args["branch"].as_str().unwrap();
    let branch = ta.branch(name).unwrap();
    prop_assert_eq!(&result["head"], &json!(node_id(branch.head)));
    prop_assert!(
        !ta.nodes[branch.head as usize].cold,
        "a restored head is cold"
    );
    prop_assert_eq!(
        contexts(before),
        contexts(after),
        "a restore changed a context"
    );
    Ok(())
}

fn check_archive(
    before: &mut Database,
    after: &mut Database,
    result: &Value,
) -> Result<(), TestCaseError> {
    let archived: Vec<u64> = result["archived"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap()[1..].parse().unwrap())
        .collect();
    let unique: BTreeSet<u64> = archived.iter().copied().collect();
    prop_assert_eq!(unique.len(), archived.len(), "duplicates in {}", result);
    let (tb, ta) = (&before.timelines[0], &after.timelines[0]);
    prop_assert_eq!(
        tb.nodes.len(),
        ta.nodes.len(),
        "archival added or lost nodes"
    );
    for n in 1..ta.nodes.len() {
        let moved = !tb.nodes[n].cold && ta.nodes[n].cold;
        prop_assert!(!tb.nodes[n].cold || ta.nodes[n].cold, "n{} came back", n);
        prop_assert_eq!(
            moved,
            unique.contains(&(n as u64)),
            "n{} moved unreported",
            n
        );
        if moved {
            prop_assert!(ta.nodes[n].summary.is_none(), "a summary went cold");
            prop_assert!(!tb.pins.contains(&(n as u64)), "a pinned node went cold");
        }
    }
    prop_assert_eq!(
        contexts(before),
        contexts(after),
        "archival changed a context"
    );
    Ok(())
}

fn run_sequence(actions: &[Action]) -> Result<(), TestCaseError> {
    let mut db = Database::default();
    let mut step = 0usize;
    for composite in actions {
        for action in expand(&db, composite) {
            step += 1;
            apply(&mut db, &action, step)?;
        }
    }
    Ok(())
}

fn apply(db: &mut Database, action: &Action, step: usize) -> Result<(), TestCaseError> {
    {
        let (op_name, args) = request(db, action);
        let op = spec().operation(op_name).unwrap();
        let valid = validate(op, &args, Origin::Mcp).map_err(|e| {
            TestCaseError::fail(format!("step {step}: generated invalid args: {e}"))
        })?;
        let mut next = db.clone();
        match ops::run_in_memory(
            &mut next,
            op_name,
            &valid,
            // A clock that jumps back and forth: audit timestamps must still never decrease (U2).
            &Ctx {
                now: 1000 + (step as u64 * 7919) % 100,
                origin: Origin::Mcp,
            },
        ) {
            Err(e) => {
                if e.kind == ErrorKind::BudgetInfeasible {
                    let data = e.data.clone().unwrap_or_default();
                    let required = data["required_tokens"].as_u64().unwrap_or(u64::MAX);
                    prop_assert!(required > data["max_tokens"].as_u64().unwrap());
                }
                // A failed operation is discarded, exactly as the store discards it.
                return Ok(());
            }
            Ok(result) => {
                if let Some(t) = db.timelines.first() {
                    let t2 = &next.timelines[0];
                    prop_assert!(t2.nodes.len() >= t.nodes.len(), "nodes were deleted");
                    for n in 1..t.nodes.len() {
                        prop_assert_eq!(
                            frozen(t, n),
                            frozen(t2, n),
                            "n{} was rewritten by {}",
                            n,
                            op_name
                        );
                    }
                }
                // U1/U2: the audit only grows, old entries are never rewritten, time never goes back.
                prop_assert!(
                    next.audit.starts_with(&db.audit),
                    "an audit entry was rewritten"
                );
                prop_assert!(
                    next.audit.windows(2).all(|w| w[0].ts <= w[1].ts),
                    "audit timestamps decrease"
                );
                match op_name {
                    "context_budget" if args.contains_key("dry_run") => {
                        check_preview(db, &next, &args, &result)?
                    }
                    "context_budget" => check_budget(db, &next, &args, &result)?,
                    "restore_branch" => {
                        check_restore(&mut db.clone(), &mut next.clone(), &args, &result)?
                    }
                    "archive_branch" => check_archive(&mut db.clone(), &mut next.clone(), &result)?,
                    "archive_check" => {
                        prop_assert_eq!(
                            result["eligible"].as_bool(),
                            Some(result["reasons"].as_array().unwrap().is_empty())
                        );
                        prop_assert_eq!(&next, &*db, "archive_check changed the database");
                    }
                    _ => {}
                }
                *db = next;
            }
        }
        let bytes = timeline::store::encode(db);
        let decoded = timeline::store::decode(&bytes).map_err(|e| {
            TestCaseError::fail(format!("step {step}: snapshot does not load: {e}"))
        })?;
        prop_assert_eq!(
            &decoded,
            &*db,
            "step {}: encode/decode changed the database",
            step
        );
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        prop_assert!(
            schema_validator().is_valid(&value),
            "step {}: the snapshot does not match generated/schema/database.json",
            step
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn operations_keep_every_invariant(
        actions in (Just(Action::Create), proptest::collection::vec(action(), 1..45))
            .prop_map(|(first, mut rest)| { rest.insert(0, first); rest })
    ) {
        run_sequence(&actions)?;
    }
}

/// The same operations on the SQLite or PostgreSQL engine give the same results, the same errors
/// and the same database as on the in-memory model the JSON engine uses (S8).
fn run_differential(actions: &[Action], engine: common::Engine) -> Result<(), TestCaseError> {
    let dir = TempDir::new();
    let path = match engine {
        common::Engine::Postgres => std::path::PathBuf::from(
            common::postgres::fresh_uri()
                .expect("the PostgreSQL property checks for a server first"),
        ),
        _ => dir.path().join("db.sqlite"),
    };
    let mut store = timeline::store::Store::open(path.clone()).unwrap();
    let mut db = Database::default();
    let mut step = 0usize;
    for composite in actions {
        for action in expand(&db, composite) {
            step += 1;
            let (op_name, args) = request(&db, &action);
            let op = spec().operation(op_name).unwrap();
            let valid = validate(op, &args, Origin::Mcp).unwrap();
            let ctx = Ctx {
                now: 1000 + (step as u64 * 7919) % 100,
                origin: Origin::Mcp,
            };
            let mut next = db.clone();
            let in_memory = ops::run_in_memory(&mut next, op_name, &valid, &ctx);
            let Ok(ops::Request::Tx(typed)) = ops::Request::from_checked(op, &valid) else {
                panic!("{op_name} does not run inside one transaction");
            };
            let on_engine =
                store.write(|tx| ops::run(tx, &typed, &ctx).map(timeline::store::Outcome::Commit));
            prop_assert_eq!(
                &on_engine,
                &in_memory,
                "step {}: {} answered differently on {:?}",
                step,
                op_name,
                engine
            );
            if in_memory.is_ok() {
                db = next;
            }
            // SQLite: the file as a new process would open it; PostgreSQL: through the same
            // connection (a new one per step would be most of the property's time).
            let stored = match engine {
                common::Engine::Postgres => store.read(|tx| tx.load_database()).unwrap(),
                _ => timeline::store::load_database(&path).unwrap(),
            };
            prop_assert_eq!(
                &stored,
                &db,
                "step {}: after {} the {:?} database differs",
                step,
                op_name,
                engine
            );
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn sqlite_and_json_engines_agree(
        actions in (Just(Action::Create), proptest::collection::vec(action(), 1..45))
            .prop_map(|(first, mut rest)| { rest.insert(0, first); rest })
    ) {
        run_differential(&actions, common::Engine::Sqlite)?;
    }
}

proptest! {
    // Fewer cases than on SQLite: every step is a few round trips to the test server.
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Each case in a schema of its own on the test process's PostgreSQL server; where the server
    /// programs are missing, one loud line and no case (a failure under CI=true).
    #[test]
    fn postgres_and_json_engines_agree(
        actions in (Just(Action::Create), proptest::collection::vec(action(), 1..45))
            .prop_map(|(first, mut rest)| { rest.insert(0, first); rest })
    ) {
        if common::postgres::server().is_none() {
            return Ok(());
        }
        run_differential(&actions, common::Engine::Postgres)?;
    }
}

/// A mutating request with an optional key, as the service sees it.
#[derive(Debug, Clone)]
struct Keyed {
    action: Action,
    key: Option<u8>,
}

fn keyed() -> impl Strategy<Value = Keyed> {
    // A dry-run budget is a read: a key has no effect on it, so it is not a keyed request.
    let mutating = action().prop_filter("mutating operations only", |a| {
        !matches!(
            a,
            Action::ArchiveCheck { .. }
                | Action::ArchiveFlow { .. }
                | Action::ArchiveRestore { .. }
                | Action::BudgetPreview { .. }
        )
    });
    (mutating, proptest::option::weighted(0.6, 0u8..4))
        .prop_map(|(action, key)| Keyed { action, key })
}

/// The bytes a change would alter: the file, and for SQLite its write-ahead log.
fn stored_bytes(path: &std::path::Path) -> Option<Vec<u8>> {
    let mut bytes = std::fs::read(path).ok()?;
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    bytes.extend(std::fs::read(wal).unwrap_or_default());
    Some(bytes)
}

fn run_keyed(requests: &[Keyed], file_name: &str) -> Result<(), TestCaseError> {
    let dir = TempDir::new();
    let path = dir.path().join(file_name);
    // One store for the whole run, as a tl-mcp session keeps one.
    let mut store = timeline::store::Store::open(path.clone()).unwrap();
    // (scope, key) → the first request (operation, arguments without the timeline) and its result.
    let mut first: HashMap<(String, String), (String, Value, Value)> = HashMap::new();
    for (step, keyed) in requests.iter().enumerate() {
        let bytes_before = stored_bytes(&path);
        let db = timeline::store::load_database(&path).unwrap();
        let (op_name, args) = request(&db, &keyed.action);
        let op = spec().operation(op_name).unwrap();
        let key = keyed.key.map(|k| format!("key-{k}"));
        let scope = if op_name == "create" {
            "database"
        } else {
            "tl0"
        }
        .to_string();
        let mut without_timeline = args.clone();
        without_timeline.remove("timeline_id");
        let without_timeline = Value::Object(without_timeline);
        let outcome = service::execute(
            &mut store,
            Request {
                op,
                args: args.clone(),
                idempotency_key: key.clone(),
                origin: Origin::Mcp,
            },
        );
        let bytes_after = stored_bytes(&path);
        let replay = key
            .as_ref()
            .and_then(|k| first.get(&(scope.clone(), k.clone())).cloned());
        match (outcome, replay) {
            (Ok(Output::Json(result)), Some((first_op, first_args, recorded))) => {
                prop_assert!(
                    first_op == op_name && first_args == without_timeline,
                    "step {}: a key reused for another request was not refused",
                    step
                );
                prop_assert_eq!(
                    result,
                    recorded,
                    "step {}: a replay must return the first result",
                    step
                );
                prop_assert!(
                    bytes_before == bytes_after,
                    "step {}: a replay wrote the database",
                    step
                );
            }
            (Ok(Output::Json(result)), None) => {
                if let Some(k) = key {
                    first.insert((scope, k), (op_name.to_string(), without_timeline, result));
                }
            }
            (Ok(Output::Text(_)), _) => return Err(TestCaseError::fail("text output")),
            (Err(e), Some((first_op, first_args, _))) => {
                // I4: only a key reused for another request is refused (or a missing timeline).
                prop_assert!(
                    db.timelines.is_empty()
                        || (e.kind == ErrorKind::Conflict
                            && (first_op != op_name || first_args != without_timeline)),
                    "step {}: a replay failed: {}",
                    step,
                    e
                );
                prop_assert!(
                    bytes_before == bytes_after,
                    "step {}: a refused replay wrote the database",
                    step
                );
            }
            (Err(_), None) => {
                prop_assert!(
                    bytes_before == bytes_after,
                    "step {}: a failure wrote the database",
                    step
                );
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn idempotent_replays_write_nothing_on_both_engines(
        requests in (Just(Keyed { action: Action::Create, key: Some(0) }), proptest::collection::vec(keyed(), 1..25))
            .prop_map(|(first, mut rest)| { rest.insert(0, first); rest })
    ) {
        for file_name in ["db.json", "db.sqlite"] {
            run_keyed(&requests, file_name)?;
        }
    }
}

/// The counterexample of requirement B4 through the same checks, so a regression there is named.
#[test]
fn the_b4_counterexample_through_the_state_machine() {
    let mut db = Database::default();
    let steps: Vec<(&str, Value)> = vec![
        ("create", json!({})),
        (
            "append",
            json!({"timeline_id": "tl0", "role": "user", "text": "a", "tokens": 1000}),
        ),
        (
            "append",
            json!({"timeline_id": "tl0", "role": "user", "text": "b", "tokens": 1}),
        ),
        ("pin", json!({"timeline_id": "tl0", "node": "n2"})),
        (
            "append",
            json!({"timeline_id": "tl0", "role": "user", "text": "c", "tokens": 1000}),
        ),
        (
            "append",
            json!({"timeline_id": "tl0", "role": "user", "text": "d", "tokens": 0}),
        ),
    ];
    for (op, args) in steps {
        let valid = validate(
            spec().operation(op).unwrap(),
            args.as_object().unwrap(),
            Origin::Mcp,
        )
        .unwrap();
        ops::run_in_memory(
            &mut db,
            op,
            &valid,
            &Ctx {
                now: 1,
                origin: Origin::Mcp,
            },
        )
        .unwrap();
    }
    let args = json!({"timeline_id": "tl0", "node": "n4", "max_tokens": 1});
    let valid = validate(
        spec().operation("context_budget").unwrap(),
        args.as_object().unwrap(),
        Origin::Mcp,
    )
    .unwrap();
    let err = ops::run_in_memory(
        &mut db.clone(),
        "context_budget",
        &valid,
        &Ctx {
            now: 1,
            origin: Origin::Mcp,
        },
    )
    .unwrap_err();
    assert_eq!(err.kind, ErrorKind::BudgetInfeasible);
    assert_eq!(
        err.data,
        Some(json!({"required_tokens": 65, "max_tokens": 1}))
    );
    let args = json!({"timeline_id": "tl0", "node": "n4", "max_tokens": 65});
    let map = args.as_object().unwrap().clone();
    let valid = validate(
        spec().operation("context_budget").unwrap(),
        &map,
        Origin::Mcp,
    )
    .unwrap();
    let mut next = db.clone();
    let result = ops::run_in_memory(
        &mut next,
        "context_budget",
        &valid,
        &Ctx {
            now: 1,
            origin: Origin::Mcp,
        },
    )
    .unwrap();
    check_budget(&db, &next, &map, &result).unwrap();
    assert_eq!(result["total_tokens"], json!(65));
    assert_eq!(ROOT, 0);
}
