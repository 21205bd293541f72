//! The on-disk format: what a database file holds, exactly, with its JSON Schema (schemars).
//!
//! Only source data is trusted from disk. Fields marked derived (`prefix_tokens`, `stale`) are written
//! for people who read the file, ignored on load and rebuilt from the source data.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
/// A Timeline database (format_version 2; version 1 files, which have no `provenance`, are read too).
pub struct DatabaseFile {
    /// 2 (1 for files written before node provenance, which are read and written as 2). Files of
    /// another version are refused, never rewritten.
    pub format_version: u64,
    /// The number the next created timeline gets (`tl<N>`).
    #[serde(default)]
    pub next_timeline: u64,
    /// The timelines, in creation order.
    #[serde(default)]
    pub timelines: Vec<TimelineFile>,
    /// Idempotency keys and the first result each one produced.
    #[serde(default)]
    pub idempotency: Vec<IdempotencyEntry>,
    /// Append-only log of summaries, placeholders, archival and idempotency mappings.
    #[serde(default)]
    pub audit: Vec<AuditEntry>,
    /// Conversations brought in by `import`, oldest first (absent in files written before 1.3, and
    /// written only when there is one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub imports: Vec<ImportRecord>,
}

/// One timeline: its branches, pins and nodes.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TimelineFile {
    /// "tl" followed by digits.
    pub id: String,
    /// An optional title given at creation (absent before 1.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Unix seconds of creation (absent before 1.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<u64>,
    /// Unix seconds of the last change (absent before 1.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub updated_at: Option<u64>,
    /// The number the next node gets (`n<N>`); n0 is the root and is never stored.
    pub next_node: u64,
    /// Name of the current branch: the one append and context use when none is named.
    pub current_branch: String,
    /// The branches, in creation order.
    pub branches: Vec<BranchFile>,
    /// Pinned node IDs.
    #[serde(default)]
    pub pins: Vec<String>,
    /// Nodes in the hot zone, in ID order.
    #[serde(default)]
    pub nodes: Vec<NodeFile>,
    /// Nodes moved to the cold zone by archival, in ID order.
    #[serde(default)]
    pub cold: Vec<NodeFile>,
    /// Branches archived and not restored since, oldest archival first: what restore-branch needs to
    /// bring one back. Absent when there are none (and in files written before restore-branch).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub archived_branches: Vec<ArchivedBranchFile>,
}

#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
/// A branch as archive-branch left it.
pub struct ArchivedBranchFile {
    /// The branch name it had.
    pub name: String,
    /// The head it had.
    pub head: String,
    /// The watermark it had (its head: archival needs the watermark to reach the head).
    pub watermark: String,
    /// Its index in the list of branches when it was archived; restore puts it back there.
    pub position: u64,
    /// The messages its archival moved to the cold zone, in ID order.
    #[serde(default)]
    pub nodes: Vec<String>,
}

/// A named pointer to a head node.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct BranchFile {
    /// The branch name, unique in its timeline.
    pub name: String,
    /// ID of the newest node of the branch.
    pub head: String,
    /// The deepest node of root→head whose whole path is pinned or summarised. Missing in old files: n0.
    #[serde(default)]
    pub watermark: Option<String>,
}

/// One node: a message, a summary or a placeholder.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NodeFile {
    /// "n" followed by digits.
    pub id: String,
    /// ID of the node this one follows ("n0" for the first message of a branch).
    pub parent: String,
    /// user, assistant, system or summary.
    pub role: String,
    /// The message text.
    pub text: String,
    /// The token count budgets use (given by the caller or estimated).
    pub tokens: u64,
    /// Unix seconds of creation (absent for messages written before 1.3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub created_at: Option<u64>,
    /// Why the message was written, when the caller said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub intent: Option<IntentFile>,
    /// Present on imported messages (format_version 2): the source format and what an export needs
    /// to rebuild the original, `{"import": FORMAT, "message": ORIGINAL}` (or `"system"`, or
    /// `"part"`/`"of"` for a later part of a split message, or `"original_bytes"` when the original
    /// was too large to keep). Written only by import, never by append.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub provenance: Option<Value>,
    /// Present on summaries and placeholders: the range they stand in for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<SummaryFile>,
    /// Derived: tokens of the path root→node. Ignored on load and rebuilt.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    #[schemars(with = "Option<u64>")]
    pub prefix_tokens: Value,
    /// Derived: a summary derived from a superseded one. Ignored on load and rebuilt.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    #[schemars(with = "Option<bool>")]
    pub stale: Value,
}

/// A short label for why a message was written, with an optional note.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Eq, Hash)]
#[serde(deny_unknown_fields)]
pub struct IntentFile {
    /// Non-empty.
    pub tag: String,
    /// Free text that explains the tag.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The range a summary or placeholder stands in for, and its version history.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SummaryFile {
    /// "real" (written by summarize) or "placeholder" (created by budget, 32 tokens).
    pub kind: String,
    /// ID of the first node of the range.
    pub from: String,
    /// ID of the last node of the range.
    pub to: String,
    /// IDs of the real summaries this one was built from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived_from: Vec<String>,
    /// ID of the summary this one is a new version of.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supersedes: Option<String>,
    /// 1 for a first version; supersedes.version + 1 otherwise.
    #[serde(default = "one")]
    pub version: u64,
}

fn one() -> u64 {
    1
}

/// An idempotency key and the first result it produced.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct IdempotencyEntry {
    /// "database" for create, else the timeline ID.
    pub scope: String,
    /// The key the caller sent.
    pub key: String,
    /// The operation that first used the key.
    pub op: String,
    /// The first result, returned again on replay (a budget's messages by node ID only).
    pub result: Value,
    /// Unix seconds of the first success.
    pub ts: u64,
    /// SHA-256 (hex) of the operation and its arguments: a replay must match it. Absent in entries
    /// written before 1.3, which match any request of the same operation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request: Option<String>,
}

/// One entry of the audit log; which fields are present depends on `op`.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct AuditEntry {
    /// Unix seconds; never decreases along the array.
    pub ts: u64,
    /// summarize, supersede, placeholder, archive, restore or idempotency.
    pub op: String,
    /// The timeline ID the change was made in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<String>,
    /// First node of a summarized range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// Last node of a summarized range.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub to: Option<String>,
    /// The node the change created.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    /// The summary a new version supersedes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supersedes: Option<String>,
    /// The branch archived or restored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The nodes moved between the hot and cold zones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<String>>,
    /// The idempotency key recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The scope of the idempotency key ("database" or a timeline ID).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The result recorded for the idempotency key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
}

/// One conversation brought in by `import`: what a later import of the same conversation is matched
/// against (format, source key, digest), and what the source said that Timeline has no field for
/// yet (its title and creation times).
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ImportRecord {
    /// chatgpt, claude, openai or anthropic.
    pub format: String,
    /// The conversation's ID in its source (ChatGPT `id`, Claude `uuid`), else the digest: imports
    /// with the same format and key are versions of one conversation.
    pub source_key: String,
    /// SHA-256 (hex) of the format, the conversation's JSON and, for an import into an existing
    /// timeline, the node it was attached to: an identical import has the same digest.
    pub digest: String,
    /// The timeline the messages went to ("tl" + digits).
    pub timeline: String,
    /// The branch created for the messages when they were attached to an existing timeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The first node created; the import's nodes are this one and the ones after it.
    pub first_node: String,
    /// How many nodes the import created.
    pub nodes: u64,
    /// The conversation's title in its source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The conversation's creation time in its source, Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_time_ms: Option<u64>,
    /// The conversation's last update in its source, Unix milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update_time_ms: Option<u64>,
    /// Per node created, in node order: the ID of the source message it came from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub message_ids: Vec<Option<String>>,
    /// Per node created, in node order: the source message's creation time, Unix milliseconds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub message_times_ms: Vec<Option<u64>>,
    /// Unix seconds of the import.
    pub ts: u64,
}

/// The JSON Schema of the database file, published under generated/schema/.
pub fn database_schema() -> Value {
    serde_json::to_value(schemars::schema_for!(DatabaseFile)).unwrap_or(Value::Null)
}
