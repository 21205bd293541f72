//! Typed results of the operations that have them: serialised at the edge (`ops::run`) in the key
//! order the spec documents (a field's place here is its place in the JSON; the test below checks
//! both against the spec's result schemas), and read back as types by the text views of `tl`.
//! Optional keys the spec leaves out of `required` are left out when absent.

use serde::{Deserialize, Serialize};

/// `create`: the new timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Created {
    /// Its ID (`tl0`).
    pub timeline_id: String,
}

/// `append`: the new message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Appended {
    /// Its node ID.
    pub node: String,
}

/// `fork`: the new branch and its head.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Forked {
    /// The branch's name.
    pub branch: String,
    /// Its head.
    pub head: String,
}

/// `switch`: the branch that is now current.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Switched {
    /// Its name.
    pub current_branch: String,
}

/// `drop_branch`: the branch removed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Dropped {
    /// Its name.
    pub dropped: String,
}

/// `rename_branch`: the old and the new name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Renamed {
    /// The old name.
    pub renamed: String,
    /// The new name.
    pub to: String,
}

/// `pin`: the node pinned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pinned {
    /// Its node ID.
    pub pinned: String,
}

/// `unpin`: the node unpinned.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Unpinned {
    /// Its node ID.
    pub unpinned: String,
}

/// One branch of `branches` (the result is a list of them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BranchInfo {
    /// The branch's name.
    pub name: String,
    /// Its head.
    pub head: String,
    /// Whether it is the current branch.
    pub current: bool,
}

/// One timeline of `timelines` (the result is a list of them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineInfo {
    /// Its ID.
    pub timeline_id: String,
    /// Its title, if it has one.
    pub title: Option<String>,
    /// When it was created (Unix seconds), if known.
    pub created_at: Option<u64>,
    /// When it last changed (Unix seconds), if known.
    pub updated_at: Option<u64>,
    /// How many messages it has.
    pub messages: u64,
    /// How many branches it has.
    pub branches: u64,
    /// Its current branch.
    pub current_branch: String,
}

/// One message of `context` (the result is a list of them) and of a budget's layout
/// (`#/$defs/message`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Its node ID.
    pub node: String,
    /// Who wrote it.
    pub role: String,
    /// Its text.
    pub text: String,
    /// Its token count.
    pub tokens: u64,
    /// Its intent's tag, only when it has an intent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent_tag: Option<String>,
}

impl Message {
    /// A node as `context` and `budget` show it.
    pub fn of(row: &crate::store::NodeRow) -> Message {
        let node = &row.node;
        Message {
            node: crate::model::node_id(row.id),
            role: node.role.as_str().to_string(),
            text: node.text.clone(),
            tokens: node.tokens,
            intent_tag: node.intent.as_ref().map(|i| i.tag.clone()),
        }
    }
}

impl Message {
    /// A message from its parts (a budget's summary or placeholder shown in place of a range).
    pub fn new(n: u64, role: &str, text: &str, tokens: u64, intent_tag: Option<&str>) -> Message {
        Message {
            node: crate::model::node_id(n),
            role: role.to_string(),
            text: text.to_string(),
            tokens,
            intent_tag: intent_tag.map(str::to_string),
        }
    }
}

/// One message of a budget's layout: a node of the database, or a placeholder a dry run would
/// create.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum LayoutMessage {
    /// A kept message, a summary or a placeholder that exists.
    Node(Message),
    /// A placeholder not created (a dry run, an infeasible request).
    WouldCreate(WouldCreate),
}

/// A placeholder a dry run would create: no node yet (`node` is null), and the range it covers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct WouldCreate {
    /// Always null: the node does not exist.
    pub node: (),
    /// Always `summary`.
    pub role: String,
    /// The placeholder's text.
    pub text: String,
    /// Its token cost.
    pub tokens: u64,
    /// The first message of the range.
    pub from: String,
    /// The last message of the range.
    pub to: String,
}

/// `context_budget` with `explain`: what shows one message of the path, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Explained {
    /// The message of the path.
    pub node: String,
    /// Its own tokens.
    pub tokens: u64,
    /// `kept`, `summary` or `placeholder`.
    pub outcome: String,
    /// The index in `messages` of what shows it.
    pub shown_at: usize,
    /// The planner's reason, as a word.
    pub why: String,
    /// The same in words.
    pub reason: String,
}

/// `context_budget`: the layout that fits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BudgetLayout {
    /// The messages, in path order.
    pub messages: Vec<LayoutMessage>,
    /// Their tokens in all.
    pub total_tokens: u64,
    /// The placeholders the layout uses.
    pub summaries_created: Vec<String>,
    /// With `explain`: one entry per message of the path.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub explanation: Option<Vec<Explained>>,
}

/// One message of `log` or of a `diff` side (`#/$defs/entry`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    /// Its node ID.
    pub node: String,
    /// Who wrote it.
    pub role: String,
    /// Its text.
    pub text: String,
    /// Its token count.
    pub tokens: u64,
    /// Its intent's tag, only when it has an intent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent_tag: Option<String>,
    /// When it was written (Unix seconds), if recorded.
    pub created_at: Option<u64>,
    /// `hot` or `cold`.
    pub zone: String,
    /// Whether it is pinned.
    pub pinned: bool,
    /// The range it summarises, only for a summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<EntrySummary>,
    /// The branches whose head it is, in branch order.
    pub heads: Vec<String>,
}

/// The summary range of an [`Entry`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EntrySummary {
    /// `summary` or `placeholder`.
    pub kind: String,
    /// The first node summarised.
    pub from: String,
    /// The last node summarised.
    pub to: String,
    /// Its version (1 for the first).
    pub version: u64,
}

/// `log`: one page of a branch, newest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogPage {
    /// The messages of the page.
    pub messages: Vec<Entry>,
    /// The cursor of the next page, when there is one.
    pub next_cursor: Option<String>,
}

/// One hit of `search`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchHit {
    /// The timeline of the message.
    pub timeline_id: String,
    /// Its node ID.
    pub node: String,
    /// Who wrote it.
    pub role: String,
    /// When it was written (Unix seconds), if recorded.
    pub created_at: Option<u64>,
    /// `hot` or `cold`.
    pub zone: String,
    /// The part of the text that matched, with the matches marked.
    pub snippet: String,
    /// Its BM25 score (higher is better).
    pub score: f64,
}

/// `search`: one page of hits, best first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchPage {
    /// The hits of the page.
    pub hits: Vec<SearchHit>,
    /// The cursor of the next page, when there is one.
    pub next_cursor: Option<String>,
}

/// One side of a `diff`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DiffSide {
    /// The branch named, or `None` for a node ID.
    pub name: Option<String>,
    /// The side's last node.
    pub head: String,
    /// Its messages after the common ancestor, oldest first.
    pub messages: Vec<Entry>,
}

/// `diff`: the common ancestor of two sides and what each has after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Diff {
    /// The timeline.
    pub timeline_id: String,
    /// The last node both sides share.
    pub ancestor: String,
    /// The left side.
    pub left: DiffSide,
    /// The right side.
    pub right: DiffSide,
}

/// `summarize`: the summary node (new, or the one a replayed request made).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Summarized {
    /// Its node ID.
    pub node: String,
}

/// `node`: one node in full.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeDetail {
    /// Its node ID.
    pub node: String,
    /// Its timeline.
    pub timeline_id: String,
    /// Who wrote it.
    pub role: String,
    /// Its text.
    pub text: String,
    /// Its token count.
    pub tokens: u64,
    /// Its parent.
    pub parent: String,
    /// Its children, in order.
    pub children: Vec<String>,
    /// `hot` or `cold`.
    pub zone: String,
    /// Whether it is pinned.
    pub pinned: bool,
    /// The tokens of the path from the root to it.
    pub path_tokens: u64,
    /// When it was written (Unix seconds), if recorded.
    pub created_at: Option<u64>,
    /// Its intent, if any.
    pub intent: Option<NodeIntent>,
    /// What it summarises, for a summary.
    pub summary: Option<NodeSummary>,
    /// Where an imported message came from; only imported messages have one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<serde_json::Value>,
}

/// The intent of a [`NodeDetail`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeIntent {
    /// The label.
    pub tag: String,
    /// The note, only when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The summary part of a [`NodeDetail`]: its range and versions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NodeSummary {
    /// `real` or `placeholder`.
    pub kind: String,
    /// The first node summarised.
    pub from: String,
    /// The last node summarised.
    pub to: String,
    /// Its version (1 for the first).
    pub version: u64,
    /// The version it replaces.
    pub supersedes: Option<String>,
    /// The version that replaces it.
    pub superseded_by: Option<String>,
    /// The summaries it was derived from.
    pub derived_from: Vec<String>,
    /// Whether a summary it was derived from has a newer version.
    pub stale: bool,
}

/// `archive_check`: whether the branch can be archived, and why not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ArchiveCheck {
    /// True when nothing stands in the way.
    pub eligible: bool,
    /// What stands in the way, with what to do.
    pub reasons: Vec<String>,
}

/// `archive_branch`: the messages moved to the cold zone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Archived {
    /// Their node IDs.
    pub archived: Vec<String>,
}

/// `restore_branch`: the branch back, and the messages brought back to the hot zone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Restored {
    /// The branch's name.
    pub branch: String,
    /// Its head.
    pub head: String,
    /// The node IDs restored.
    pub restored: Vec<String>,
}

/// `db_info`: the storage engine, file, format version, size and counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DbInfo {
    /// `sqlite` or `json`.
    pub engine: String,
    /// The database file.
    pub path: String,
    /// Whether the file exists yet.
    pub exists: bool,
    /// Its format version, when it has one.
    pub format_version: Option<u64>,
    /// Its size in bytes.
    pub file_bytes: u64,
    /// How many timelines it holds.
    pub timelines: u64,
    /// How many messages and summaries (roots excluded).
    pub nodes: u64,
    /// How many of them are archived.
    pub cold_nodes: u64,
    /// The server's version, for a database on a server (PostgreSQL); absent for a file.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub server_version: Option<String>,
}

/// `db_check`: the report of a database without problems (one with problems is an error).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DbCheck {
    /// True when nothing is wrong.
    pub ok: bool,
    /// `sqlite` or `json`.
    pub engine: String,
    /// The database file.
    pub path: String,
    /// The problems found.
    pub problems: Vec<String>,
    /// With `repair`: what was rebuilt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rebuilt: Option<Vec<String>>,
}

/// `db_convert`: the copy in another engine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DbConverted {
    /// The database copied.
    pub from: String,
    /// The new file.
    pub to: String,
    /// Its engine.
    pub engine: String,
    /// How many timelines were copied.
    pub timelines: u64,
    /// How many messages and summaries were copied.
    pub nodes: u64,
}

/// `db_backup`: the exact copy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DbBackedUp {
    /// The database copied.
    pub from: String,
    /// The copy's file.
    pub to: String,
    /// Its engine (the database's).
    pub engine: String,
    /// The copy's size in bytes.
    pub file_bytes: u64,
}

/// `export` to a file: what was written where. A tree export counts its links (`edges`); a context
/// export names its target (`node`, also an HTML page opened at a message) and its messages.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exported {
    /// The format written.
    pub format: String,
    /// The timeline exported.
    pub timeline_id: String,
    /// The file written.
    pub output: String,
    /// Messages (nodes) written.
    pub nodes: u64,
    /// Links written (tree formats).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub edges: Option<u64>,
    /// The target message (context formats; an HTML page opened at a message).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// Messages of the context (context formats).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<u64>,
}

#[cfg(test)]
mod tests {
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
    /// less optional keys that are absent; every required key is present.
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
            _ => {}
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
                kind: "summary".into(),
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
            for (op, value) in results {
                let schema = &spec().operation(op).unwrap().result;
                keys_follow(&value, schema, op);
            }
        }
    }

    fn json(result: impl Serialize) -> Value {
        serde_json::to_value(result).unwrap()
    }
}
