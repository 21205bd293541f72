//! The typed results against the spec: every key of each result schema, in its order.

use super::*;
use crate::spec::spec;
use serde_json::Value;

/// The schema `schema` names, with `$ref`s to the spec's shared definitions followed.
fn resolve(schema: &Value) -> &Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some("#/$defs/message") => &spec().message_schema,
        Some("#/$defs/entry") => &spec().entry_schema,
        Some(other) => panic!("unknown $ref {other}"),
        None => schema,
    }
}

/// Every object in `value` has exactly the keys of its schema's `properties`, in their order,
/// less optional keys that are absent; every required key is present; every value of an
/// enumeration is one of its values.
fn keys_follow(value: &Value, schema: &Value, at: &str) {
    let mut schema = resolve(schema);
    // Of alternatives, the one whose properties hold every key of the object.
    if let (Some(options), Value::Object(object)) = (schema.get("anyOf"), value) {
        schema = options
            .as_array()
            .into_iter()
            .flatten()
            .map(resolve)
            .find(|option| {
                option["properties"]
                    .as_object()
                    .is_some_and(|p| object.keys().all(|k| p.contains_key(k)))
            })
            .unwrap_or_else(|| panic!("{at}: no alternative of the schema fits {value}"));
    }
    match value {
        // A map (counts by name): any keys, each value of the one schema.
        Value::Object(object) if schema["additionalProperties"].is_object() => {
            for (key, item) in object {
                keys_follow(
                    item,
                    &schema["additionalProperties"],
                    &format!("{at}.{key}"),
                );
            }
        }
        Value::Object(object) => {
            let properties = schema["properties"]
                .as_object()
                .unwrap_or_else(|| panic!("{at}: the schema has no properties"));
            let required: Vec<&str> = schema["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let expected: Vec<&str> = properties
                .keys()
                .map(String::as_str)
                .filter(|k| object.contains_key(*k) || required.contains(k))
                .collect();
            let actual: Vec<&str> = object.keys().map(String::as_str).collect();
            assert_eq!(actual, expected, "{at}: keys and their order");
            for (key, item) in object {
                keys_follow(item, &properties[key], &format!("{at}.{key}"));
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                keys_follow(item, &schema["items"], &format!("{at}[{i}]"));
            }
        }
        // A value of an enumeration is one of its values (a status the spec does not list fails).
        _ => {
            if let Some(values) = schema["enum"].as_array() {
                assert!(
                    values.contains(value),
                    "{at}: {value} is not one of {values:?}"
                );
            }
        }
    }
}

fn entry(full: bool) -> Entry {
    Entry {
        node: "n2".into(),
        role: "summary".into(),
        text: "t".into(),
        tokens: 3,
        intent_tag: full.then(|| "decision".into()),
        created_at: Some(1),
        zone: "hot".into(),
        pinned: true,
        summary: full.then(|| EntrySummary {
            kind: "real".into(),
            from: "n1".into(),
            to: "n1".into(),
            version: 1,
        }),
        heads: vec!["main".into()],
    }
}

fn message(full: bool) -> Message {
    Message {
        node: "n1".into(),
        role: "user".into(),
        text: "t".into(),
        tokens: 1,
        intent_tag: full.then(|| "question".into()),
    }
}

/// Every typed result, with every optional key given and with none, against its operation's
/// result schema in the spec.
#[test]
fn typed_results_have_the_keys_of_the_spec_in_its_order() {
    for full in [true, false] {
        let side = |name: &str| DiffSide {
            name: full.then(|| name.to_string()),
            head: "n2".into(),
            messages: vec![entry(full)],
        };
        let cursor = full.then(|| "c".to_string());
        let results: Vec<(&str, Value)> = vec![
            (
                "create",
                json(Created {
                    timeline_id: "tl0".into(),
                }),
            ),
            ("append", json(Appended { node: "n1".into() })),
            (
                "fork",
                json(Forked {
                    branch: "b".into(),
                    head: "n1".into(),
                }),
            ),
            (
                "switch",
                json(Switched {
                    current_branch: "b".into(),
                }),
            ),
            (
                "drop_branch",
                json(Dropped {
                    dropped: "b".into(),
                }),
            ),
            (
                "rename_branch",
                json(Renamed {
                    renamed: "a".into(),
                    to: "b".into(),
                }),
            ),
            (
                "pin",
                json(Pinned {
                    pinned: "n1".into(),
                }),
            ),
            (
                "unpin",
                json(Unpinned {
                    unpinned: "n1".into(),
                }),
            ),
            (
                "branches",
                json(vec![BranchInfo {
                    name: "main".into(),
                    head: "n1".into(),
                    current: true,
                }]),
            ),
            (
                "timelines",
                json(vec![TimelineInfo {
                    timeline_id: "tl0".into(),
                    title: full.then(|| "x".into()),
                    created_at: Some(1),
                    updated_at: full.then_some(2),
                    messages: 1,
                    branches: 1,
                    current_branch: "main".into(),
                }]),
            ),
            ("context", json(vec![message(full)])),
            (
                "log",
                json(LogPage {
                    messages: vec![entry(full)],
                    next_cursor: cursor.clone(),
                }),
            ),
            (
                "search",
                json(SearchPage {
                    hits: vec![SearchHit {
                        timeline_id: "tl0".into(),
                        node: "n1".into(),
                        role: "user".into(),
                        created_at: Some(1),
                        zone: "hot".into(),
                        snippet: "s".into(),
                        score: 1.5,
                    }],
                    next_cursor: cursor.clone(),
                }),
            ),
            (
                "diff",
                json(Diff {
                    timeline_id: "tl0".into(),
                    ancestor: "n1".into(),
                    left: side("a"),
                    right: side("b"),
                }),
            ),
        ];
        let results = results.into_iter().chain([
            ("summarize", json(Summarized { node: "n3".into() })),
            (
                "node",
                json(NodeDetail {
                    node: "n2".into(),
                    timeline_id: "tl0".into(),
                    role: "summary".into(),
                    text: "t".into(),
                    tokens: 1,
                    parent: "n1".into(),
                    children: vec!["n3".into()],
                    zone: "hot".into(),
                    pinned: false,
                    path_tokens: 2,
                    created_at: Some(1),
                    intent: Some(NodeIntent {
                        tag: "decision".into(),
                        note: full.then(|| "why".into()),
                    }),
                    summary: Some(NodeSummary {
                        kind: "real".into(),
                        from: "n1".into(),
                        to: "n1".into(),
                        version: 2,
                        supersedes: full.then(|| "n4".into()),
                        superseded_by: None,
                        derived_from: vec!["n4".into()],
                        stale: false,
                    }),
                    provenance: full.then(|| serde_json::json!({"import": "chatgpt"})),
                }),
            ),
            (
                "archive_check",
                json(ArchiveCheck {
                    eligible: false,
                    reasons: vec!["r".into()],
                }),
            ),
            (
                "archive_branch",
                json(Archived {
                    archived: vec!["n2".into()],
                }),
            ),
            (
                "restore_branch",
                json(Restored {
                    branch: "b".into(),
                    head: "n2".into(),
                    restored: vec!["n2".into()],
                }),
            ),
        ]);
        let results = results.chain([
            (
                "db_info",
                json(DbInfo {
                    engine: "sqlite".into(),
                    path: "p".into(),
                    exists: true,
                    format_version: Some(6),
                    file_bytes: 1,
                    timelines: 1,
                    nodes: 1,
                    cold_nodes: 0,
                    server_version: Some("15.14".into()),
                    sqlite_log: Some("plain_switched_off".into()),
                    sqlite_version: Some("3.50.2".into()),
                }),
            ),
            (
                "db_check",
                json(DbCheck {
                    ok: true,
                    engine: "json".into(),
                    path: "p".into(),
                    problems: Vec::new(),
                    rebuilt: full.then(Vec::new),
                }),
            ),
            (
                "db_convert",
                json(DbConverted {
                    from: "a".into(),
                    to: "b".into(),
                    engine: "json".into(),
                    timelines: 1,
                    nodes: 1,
                }),
            ),
            (
                "db_backup",
                json(DbBackedUp {
                    from: "a".into(),
                    to: "b".into(),
                    engine: "json".into(),
                    file_bytes: 1,
                }),
            ),
        ]);
        let results = results.chain([(
            "context_budget",
            json(BudgetLayout {
                messages: vec![
                    LayoutMessage::Node(Message::new(1, "user", "t", 1, full.then_some("x"))),
                    LayoutMessage::WouldCreate(WouldCreate {
                        node: (),
                        role: "summary".into(),
                        text: "t".into(),
                        tokens: 1,
                        from: "n1".into(),
                        to: "n2".into(),
                    }),
                ],
                total_tokens: 1,
                summaries_created: Vec::new(),
                explanation: full.then(|| {
                    vec![Explained {
                        node: "n1".into(),
                        tokens: 1,
                        outcome: "kept".into(),
                        shown_at: 0,
                        why: "target".into(),
                        reason: "r".into(),
                    }]
                }),
            }),
        )]);
        let results = results.chain([(
            "export",
            json(Exported {
                format: "html".into(),
                timeline_id: "tl0".into(),
                output: "o".into(),
                nodes: 1,
                edges: full.then_some(0),
                node: full.then(|| "n1".into()),
                messages: full.then_some(1),
            }),
        )]);
        let results = results.chain([("import", json(imported(full)))]);
        for (op, value) in results {
            let schema = &spec().operation(op).unwrap().result;
            keys_follow(&value, schema, op);
        }
    }
}

fn json(result: impl Serialize) -> Value {
    serde_json::to_value(result).unwrap()
}

/// An import's result: a conversation written (a new one, or with every optional key), one
/// skipped, and counts by kind.
fn imported(full: bool) -> Imported {
    let name = |s: &str| full.then(|| s.to_string());
    Imported {
        format: "claude-code".into(),
        imported: 1,
        unchanged: 0,
        skipped: 1,
        messages: 2,
        timelines: vec![ImportedConversation {
            timeline_id: "tl0".into(),
            source_id: name("s1"),
            title: name("t"),
            create_time_ms: full.then_some(1),
            messages: 2,
            from: name("n1"),
            branches: vec!["main".into()],
            earlier_import: name("tl1"),
            joined: name("s0"),
            reused_ids: if full { vec!["u1".into()] } else { Vec::new() },
            status: if full {
                ImportStatus::Updated
            } else {
                ImportStatus::Unchanged
            },
        }],
        skipped_conversations: vec![SkippedConversation {
            file: "a.jsonl".into(),
            index: 0,
            source_id: name("s2"),
            title: name("u"),
            reason: "r".into(),
        }],
        kinds: ImportKinds {
            roles: [("user".to_string(), 1)].into(),
            parts: [("text".to_string(), 2)].into(),
            skipped: Default::default(),
        },
    }
}
