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
    /// `real` or `placeholder`.
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
    /// SQLite only: the write-ahead log this process's writers use (`kept`, or SQLite's own VFS:
    /// `plain_switched_off`, `plain_unverified_sqlite_version`, `plain_unavailable`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sqlite_log: Option<String>,
    /// SQLite only: the version of SQLite linked in.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub sqlite_version: Option<String>,
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

/// `import`: what was imported, what was skipped and why, and what the input held by kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Imported {
    /// The format read.
    pub format: String,
    /// Conversations written (new timelines, branches or updates).
    pub imported: u64,
    /// Conversations already imported as they are: nothing written.
    pub unchanged: u64,
    /// Conversations skipped (`skipped_conversations`).
    pub skipped: u64,
    /// Messages (nodes) written.
    pub messages: u64,
    /// One entry per conversation in a timeline, in input order: written (new, updated) or
    /// already there (unchanged).
    pub timelines: Vec<ImportedConversation>,
    /// One entry per conversation skipped, with its reason.
    pub skipped_conversations: Vec<SkippedConversation>,
    /// What the conversations written held, counted by kind.
    pub kinds: ImportKinds,
}

/// One conversation an import wrote or found already imported: where it is and what it added.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImportedConversation {
    /// The timeline it is in.
    pub timeline_id: String,
    /// Its ID in the source, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_id: Option<String>,
    /// Its title, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// When it was created in the source (Unix milliseconds), for a new timeline.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub create_time_ms: Option<u64>,
    /// The messages (nodes) written: all of a new one, those added by an update, 0 when unchanged.
    pub messages: u64,
    /// With `--node`: the node the new branch starts from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// The branches made, or for an update the branches that moved or were made (none when
    /// unchanged).
    pub branches: Vec<String>,
    /// The timeline of an earlier version of the conversation (formats not kept up to date).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub earlier_import: Option<String>,
    /// The session whose timeline it joined (resumed, forked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joined: Option<String>,
    /// The source IDs of its messages that an earlier import of another session in the timeline
    /// used for a different message (a Claude Code `uuid` reused with another text or place):
    /// written as messages of their own, not joined to the other session's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reused_ids: Vec<String>,
    /// What the import did with it.
    pub status: ImportStatus,
}

/// What an import did with a conversation that is in a timeline (one it skipped is in
/// `skipped_conversations`, with its reason).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ImportStatus {
    /// A new timeline (or branch).
    New,
    /// Its new messages were added to the timeline of its earlier import.
    Updated,
    /// Imported before as it is now: nothing was written.
    Unchanged,
}

/// One conversation an import passed over, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkippedConversation {
    /// The file it is in (inside a zip or folder, the entry).
    pub file: String,
    /// Its position in that file, from 0.
    pub index: usize,
    /// Its ID in the source, when readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_id: Option<String>,
    /// Its title, when readable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Why it was not imported.
    pub reason: String,
}

/// What the conversations an import wrote held: counts by name, in name order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ImportKinds {
    /// Messages by their original role.
    pub roles: std::collections::BTreeMap<String, u64>,
    /// Message parts by kind (text, image, tool_call, ...).
    pub parts: std::collections::BTreeMap<String, u64>,
    /// What was left out, by reason.
    pub skipped: std::collections::BTreeMap<String, u64>,
}

#[cfg(test)]
mod tests;
