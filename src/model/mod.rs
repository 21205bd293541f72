//! The in-memory database: timelines of nodes in a tree, branches, pins, and the indexes derived from them.
//!
//! `from_file` checks the source data and rebuilds every derived index; `to_file` writes source data
//! plus the derived fields people like to read. Operations (`crate::ops`) are the only code that
//! changes a `Database`.
//!
//! This file holds the types and their lookups; `index` keeps the derived indexes up to date,
//! `load` reads and checks the file form (`file`) and writes it.

pub mod file;
mod index;
mod load;

use crate::error::{Error, Message, Result, Step};
use file::{AuditEntry, IdempotencyEntry, ImportRecord};
use sha2::{Digest, Sha256};
use std::collections::{BTreeSet, HashMap};

/// Node number of the root of every timeline (`n0`): the parent of the first messages, never a message itself.
pub const ROOT: u64 = 0;

/// Who wrote a message (or what kind of node it is).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The root node `n0`; not a message.
    Root,
    /// A message from the person.
    User,
    /// A message from the model.
    Assistant,
    /// A system prompt or instruction.
    System,
    /// A summary or placeholder standing in for a range of messages.
    Summary,
}

impl Role {
    /// The role named by `s` as callers spell it (`user`, `assistant`, `system`, `summary`); `None` otherwise.
    pub fn parse(s: &str) -> Option<Role> {
        Some(match s {
            "user" => Role::User,
            "assistant" => Role::Assistant,
            "system" => Role::System,
            "summary" => Role::Summary,
            _ => return None,
        })
    }

    /// The name of the role in the database file and in results.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Root => "root",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::System => "system",
            Role::Summary => "summary",
        }
    }
}

/// Whether a summary node was written by a caller or by `budget`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SummaryKind {
    /// A summary written by a caller with `summarize`.
    Real,
    /// A marker `budget` wrote for a range it had to leave out and that no summary covered.
    Placeholder,
}

impl SummaryKind {
    /// The name used in the database file and in results.
    pub fn as_str(self) -> &'static str {
        match self {
            SummaryKind::Real => "real",
            SummaryKind::Placeholder => "placeholder",
        }
    }
}

/// A short label for why a message was written (`decision`, `question`, ...), with an optional note.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Intent {
    /// The label.
    pub tag: String,
    /// Free text that explains the label.
    pub note: Option<String>,
}

/// What makes a node a summary: the range it stands in for and its version history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Summary {
    /// Real summary or placeholder.
    pub kind: SummaryKind,
    /// First node of the covered range.
    pub from: u64,
    /// Last node of the covered range (an ancestor-or-self path from `from`).
    pub to: u64,
    /// Real summaries this one was built from.
    pub derived_from: Vec<u64>,
    /// The summary this one is a new version of.
    pub supersedes: Option<u64>,
    /// Version number: 1, or one more than the summary it supersedes.
    pub version: u64,
}

/// One node of a timeline's tree: a message, a summary or the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// The node this one follows (`ROOT` for the first message of a branch).
    pub parent: u64,
    /// Who wrote it.
    pub role: Role,
    /// The message text.
    pub text: String,
    /// The token count used by budgets (given by the caller or estimated).
    pub tokens: u64,
    /// Unix seconds; `None` for the root and for messages written before 1.3.
    pub created_at: Option<u64>,
    /// Why it was written, when the caller said.
    pub intent: Option<Intent>,
    /// Where an imported message came from, as compact JSON (`{"import": FORMAT, ...}`, see
    /// `crate::interchange::provenance`). Only importers write it, and it is the only thing exports
    /// rebuild originals from; a caller's intent note, whatever it says, is never read for that.
    pub provenance: Option<String>,
    /// Set for summaries and placeholders.
    pub summary: Option<Summary>,
    /// Archived: moved to the cold zone with its branch, so it cannot be forked from or appended to.
    pub cold: bool,
}

impl Node {
    /// The root n0: not a message, never output.
    pub fn root() -> Node {
        Node {
            parent: ROOT,
            role: Role::Root,
            text: String::new(),
            tokens: 0,
            created_at: None,
            intent: None,
            provenance: None,
            summary: None,
            cold: false,
        }
    }

    /// Whether the node is a summary written by a caller.
    pub fn is_real_summary(&self) -> bool {
        self.summary
            .as_ref()
            .is_some_and(|s| s.kind == SummaryKind::Real)
    }

    /// Whether the node is a placeholder written by `budget`.
    pub fn is_placeholder(&self) -> bool {
        self.summary
            .as_ref()
            .is_some_and(|s| s.kind == SummaryKind::Placeholder)
    }

    /// The digest of the summarize request a real summary answers (`summary_request_digest`);
    /// `None` for every other node.
    pub fn request_digest(&self) -> Option<[u8; 32]> {
        let s = self
            .summary
            .as_ref()
            .filter(|s| s.kind == SummaryKind::Real)?;
        Some(summary_request_digest(
            s.from,
            s.to,
            &self.text,
            self.tokens,
            &s.derived_from,
            s.supersedes,
            self.intent.as_ref(),
        ))
    }

    /// The sources a summary was derived from, as the JSON text the databases store; `None` when
    /// there are none.
    pub fn derived_from_json(&self) -> Option<String> {
        self.summary
            .as_ref()
            .filter(|s| !s.derived_from.is_empty())
            .map(|s| serde_json::to_string(&s.derived_from).unwrap_or_default())
    }
}

/// A named pointer to a head node, like a git branch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Branch {
    /// The branch name, unique in its timeline.
    pub name: String,
    /// The newest node of the branch.
    pub head: u64,
    /// The deepest node of the branch's path with every message above it covered (see docs/budget.md).
    pub watermark: u64,
}

/// A branch that archive-branch removed, as restore-branch needs it to bring the branch back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchivedBranch {
    /// The branch name it had.
    pub name: String,
    /// Its head when it was archived.
    pub head: u64,
    /// Its watermark when it was archived (equal to the head).
    pub watermark: u64,
    /// Its index in the list of branches when it was archived.
    pub position: u64,
    /// The messages its archival moved to the cold zone, in ID order.
    pub nodes: Vec<u64>,
}

/// Indexes rebuilt from source data; never read from disk.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Derived {
    /// Per node: tokens of the path from the root to it, the node included.
    pub prefix_tokens: Vec<u64>,
    /// Per node: its distance from the root.
    pub depth: Vec<u64>,
    /// Per node: its children, oldest first.
    pub children: Vec<Vec<u64>>,
    /// How many summaries and placeholders (any version) cover each node.
    pub cover_count: Vec<u32>,
    /// Summary → the newer version that supersedes it.
    pub superseded_by: HashMap<u64, u64>,
    /// Per node: whether it is a summary built (directly or not) from a superseded summary.
    pub stale: Vec<bool>,
    /// The first node of a range → the summaries and placeholders of ranges that start there, oldest
    /// first (placeholder reuse, usable summaries of a path, open placeholders).
    pub summaries_from: HashMap<u64, Vec<u64>>,
    /// Digest of every summarize parameter (intent included) → the node it created.
    pub summary_requests: HashMap<[u8; 32], u64>,
    /// Summary → summaries that list it in derived_from.
    pub dependents: HashMap<u64, Vec<u64>>,
}

/// One conversation: a tree of nodes with named branches, pins and archived branches.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// The timeline number (`tl3` has 3).
    pub id: u64,
    /// A title given at `create` or by `import`.
    pub title: Option<String>,
    /// Unix seconds; `None` for timelines created before 1.3.
    pub created_at: Option<u64>,
    /// Unix seconds of the last change; `None` for timelines not changed since 1.3.
    pub updated_at: Option<u64>,
    /// Indexed by node number; `nodes[0]` is the root.
    pub nodes: Vec<Node>,
    /// The branches, in creation order.
    pub branches: Vec<Branch>,
    /// Name of the branch `append` and `context` use when none is named.
    pub current_branch: String,
    /// Pinned messages: always kept verbatim by budgets.
    pub pins: BTreeSet<u64>,
    /// Archived branches not restored since, oldest archival first.
    pub archived: Vec<ArchivedBranch>,
    /// Indexes derived from the fields above, rebuilt on load.
    pub derived: Derived,
}

/// Every timeline of one database file, plus idempotency keys, the audit log and imports.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Database {
    /// The number the next `create` gives its timeline.
    pub next_timeline: u64,
    /// The timelines, in creation order.
    pub timelines: Vec<Timeline>,
    /// Idempotency keys remembered for repeated requests.
    pub idempotency: Vec<IdempotencyEntry>,
    /// Every change, in order: who did what and when.
    pub audit: Vec<AuditEntry>,
    /// Conversations brought in by `import`, oldest first.
    pub imports: Vec<ImportRecord>,
    /// Derived: `import_key(format, source_key, None)` → positions in `imports`, oldest first, and
    /// `import_key(format, source_key, Some(digest))` → the positions with that digest, so that a
    /// lookup never reads every earlier record of a source key.
    pub import_index: HashMap<String, Vec<usize>>,
}

/// What a session import needs of an earlier import to pass over an unchanged file.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownImport {
    /// The import's digest.
    pub digest: String,
    /// The conversation's key in its source.
    pub source_key: String,
    /// The timeline it went to ("tl" + digits).
    pub timeline: String,
    /// Its title.
    pub title: Option<String>,
}

/// The earlier imports of a conversation that an import looks up.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Earlier {
    /// The first import with the same digest: the conversation was imported already.
    pub same: Option<ImportRecord>,
    /// The latest import of the same source key.
    pub latest: Option<ImportRecord>,
}

/// A key of `Database::import_index` (the leading letter keeps the two kinds apart).
pub fn import_key(format: &str, source_key: &str, digest: Option<&str>) -> String {
    match digest {
        None => format!("s{format}\n{source_key}"),
        Some(digest) => format!("d{format}\n{digest}\n{source_key}"),
    }
}

/// The ID string of node number `n` (`n12`).
pub fn node_id(n: u64) -> String {
    format!("n{n}")
}

/// The ID string of timeline number `n` (`tl3`).
pub fn timeline_id(n: u64) -> String {
    format!("tl{n}")
}

/// The token estimate used when a caller gives none: max(1, ceil(Unicode scalars / 4)).
pub fn estimate_tokens(text: &str) -> u64 {
    let scalars = text.chars().count() as u64;
    scalars.div_ceil(4).max(1)
}

/// The digest that identifies a summarize request: identical requests reuse the first node.
pub fn summary_request_digest(
    from: u64,
    to: u64,
    text: &str,
    tokens: u64,
    derived_from: &[u64],
    supersedes: Option<u64>,
    intent: Option<&Intent>,
) -> [u8; 32] {
    let canonical = serde_json::json!([
        from,
        to,
        text,
        tokens,
        derived_from,
        supersedes,
        intent.map(|i| (&i.tag, &i.note))
    ]);
    Sha256::digest(canonical.to_string().as_bytes()).into()
}

/// The number of a node ID such as "n12".
pub fn parse_node_id(s: &str) -> Option<u64> {
    parse_prefixed(s, "n")
}

/// The number of a timeline ID such as "tl3".
pub fn parse_timeline_id(s: &str) -> Option<u64> {
    parse_prefixed(s, "tl")
}

fn parse_prefixed(s: &str, prefix: &str) -> Option<u64> {
    let digits = s.strip_prefix(prefix)?;
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || (digits.len() > 1 && digits.starts_with('0'))
    {
        return None;
    }
    digits.parse().ok()
}

impl Timeline {
    /// An empty timeline number `id` with one branch, `first_branch`, at the root.
    pub fn new(id: u64, first_branch: &str) -> Timeline {
        let root = Node::root();
        let mut timeline = Timeline {
            id,
            title: None,
            created_at: None,
            updated_at: None,
            nodes: vec![root],
            branches: vec![Branch {
                name: first_branch.to_string(),
                head: ROOT,
                watermark: ROOT,
            }],
            current_branch: first_branch.to_string(),
            pins: BTreeSet::new(),
            archived: Vec::new(),
            derived: Derived::default(),
        };
        timeline.rebuild().expect("an empty timeline is consistent");
        timeline
    }

    /// The ID string of this timeline (`tl3`).
    pub fn id_str(&self) -> String {
        timeline_id(self.id)
    }

    /// The node number `n`, root included; `None` when it does not exist.
    pub fn node(&self, n: u64) -> Option<&Node> {
        self.nodes.get(usize::try_from(n).ok()?)
    }

    /// A message node (not the root) or a not-found error that says what to do.
    pub fn message(&self, n: u64) -> Result<&Node> {
        match self.node(n) {
            Some(node) if n != ROOT => Ok(node),
            Some(_) => Err(Error::invalid(format!(
                "invalid argument: n0 is the root of {} and not a message; use a node ID returned by append or summarize",
                self.id_str()
            ))),
            None if self.nodes.len() == 1 => Err(Error::not_found(
                Message::from(format!(
                    "node not found: {} does not exist in timeline {} (it has no messages yet); add one with ",
                    node_id(n),
                    self.id_str()
                ))
                .step(Step::new("append").timeline(self.id_str())),
            )),
            None => Err(Error::not_found(
                Message::from(format!(
                    "node not found: {} does not exist in timeline {} (it has n1..n{}); find the node you mean with ",
                    node_id(n),
                    self.id_str(),
                    self.nodes.len() - 1
                ))
                .step(Step::new("log").timeline(self.id_str()))
                .text(" or ")
                .step(Step::new("search").timeline(self.id_str()).needs("query")),
            )),
        }
    }

    /// The branch named `name`, or a not-found error that lists the branches.
    pub fn branch(&self, name: &str) -> Result<&Branch> {
        self.branches
            .iter()
            .find(|b| b.name == name)
            .ok_or_else(|| self.branch_not_found(name))
    }

    /// The position of the branch named `name` in `branches`, or a not-found error.
    pub fn branch_index(&self, name: &str) -> Result<usize> {
        self.branches
            .iter()
            .position(|b| b.name == name)
            .ok_or_else(|| self.branch_not_found(name))
    }

    fn branch_not_found(&self, name: &str) -> Error {
        let names: Vec<&str> = self.branches.iter().map(|b| b.name.as_str()).collect();
        Error::not_found(format!(
            "branch not found: {name:?} does not exist in timeline {} (branches: {})",
            self.id_str(),
            names.join(", ")
        ))
    }

    /// The current branch.
    pub fn current(&self) -> &Branch {
        self.branches
            .iter()
            .find(|b| b.name == self.current_branch)
            .expect("the current branch exists (checked on load, kept by every operation)")
    }

    /// Nodes of root→n, root excluded, oldest first.
    pub fn path(&self, n: u64) -> Vec<u64> {
        let mut path = Vec::new();
        let mut at = n;
        while at != ROOT {
            path.push(at);
            at = self.nodes[at as usize].parent;
        }
        path.reverse();
        path
    }

    /// Whether `ancestor` is `n` or lies on root→n.
    pub fn is_ancestor_or_self(&self, ancestor: u64, n: u64) -> bool {
        let target_depth = self.derived.depth[ancestor as usize];
        let mut at = n;
        while self.derived.depth[at as usize] > target_depth {
            at = self.nodes[at as usize].parent;
        }
        at == ancestor
    }

    /// The latest, non-stale real summary check used by budgets.
    pub fn is_current_version(&self, n: u64) -> bool {
        !self.derived.superseded_by.contains_key(&n) && !self.derived.stale[n as usize]
    }

    /// Whether a node counts as covered for the watermark: pinned, a summary itself, or inside the range
    /// of any summary or placeholder.
    pub fn is_covered(&self, n: u64) -> bool {
        self.pins.contains(&n)
            || self.nodes[n as usize].summary.is_some()
            || self.derived.cover_count[n as usize] > 0
    }
}

impl Database {
    /// Append an audit entry with a timestamp that never goes below the previous one.
    pub fn audit(&mut self, now: u64, mut entry: AuditEntry) {
        let last = self.audit.last().map(|e| e.ts).unwrap_or(0);
        entry.ts = now.max(last);
        self.audit.push(entry);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimate_counts_unicode_scalars() {
        assert_eq!(estimate_tokens(""), 1);
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("abcde"), 2);
        // Four CJK scalars are 12 bytes but one token.
        assert_eq!(estimate_tokens("讨论目标"), 1);
        // A family emoji is one grapheme but seven scalars.
        assert_eq!(estimate_tokens("👨‍👩‍👧‍👦"), 2);
    }
}
