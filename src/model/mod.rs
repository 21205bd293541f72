//! The in-memory database: timelines of nodes in a tree, branches, pins, and the indexes derived from them.
//!
//! `from_file` checks the source data and rebuilds every derived index; `to_file` writes source data
//! plus the derived fields people like to read. Operations (`crate::ops`) are the only code that
//! changes a `Database`.

pub mod file;

use crate::error::{Error, Message, Result, Step};
use file::{
    ArchivedBranchFile, AuditEntry, BranchFile, DatabaseFile, IdempotencyEntry, ImportRecord,
    IntentFile, NodeFile, SummaryFile, TimelineFile,
};
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

    /// Record the lookup keys of summary `n` (its range start, request digest and sources). The
    /// effects on other nodes (coverage, versions, stale flags) are the caller's: `rebuild` derives
    /// them all at once, operations apply them one change at a time.
    pub(crate) fn index_summary_keys(&mut self, n: u64) {
        let node = &self.nodes[n as usize];
        let Some(summary) = &node.summary else {
            return;
        };
        self.derived
            .summaries_from
            .entry(summary.from)
            .or_default()
            .push(n);
        if summary.kind == SummaryKind::Real {
            let digest = summary_request_digest(
                summary.from,
                summary.to,
                &node.text,
                node.tokens,
                &summary.derived_from,
                summary.supersedes,
                node.intent.as_ref(),
            );
            self.derived.summary_requests.entry(digest).or_insert(n);
            for &source in &summary.derived_from {
                self.derived.dependents.entry(source).or_default().push(n);
            }
        }
    }

    fn index_summary(&mut self, n: u64) {
        self.index_summary_keys(n);
        if let Some(old) = self.nodes[n as usize]
            .summary
            .as_ref()
            .and_then(|s| s.supersedes)
        {
            self.derived.superseded_by.insert(old, n);
        }
    }

    /// Entry and exit times of a depth-first walk from the root: `a` is `b` or one of its ancestors
    /// exactly when `tin[a] <= tin[b] && tout[b] <= tout[a]`. O(n), so checks over many branches or
    /// summaries cost O(1) each instead of a walk up the tree.
    pub fn euler_tour(&self) -> (Vec<u32>, Vec<u32>) {
        let count = self.nodes.len();
        let (mut tin, mut tout) = (vec![0u32; count], vec![0u32; count]);
        let mut clock = 0u32;
        let mut stack: Vec<(usize, usize)> = vec![(0, 0)];
        tin[0] = 0;
        while let Some(&mut (node, ref mut next)) = stack.last_mut() {
            if let Some(&child) = self.derived.children[node].get(*next) {
                *next += 1;
                clock += 1;
                tin[child as usize] = clock;
                stack.push((child as usize, 0));
            } else {
                tout[node] = clock;
                stack.pop();
            }
        }
        (tin, tout)
    }

    /// Mark stale every summary whose derived_from reaches a superseded or stale summary.
    fn propagate_stale(&mut self) {
        let mut stale = vec![false; self.nodes.len()];
        let mut queue: Vec<u64> = self.derived.superseded_by.keys().copied().collect();
        let mut seen: BTreeSet<u64> = BTreeSet::new();
        while let Some(source) = queue.pop() {
            if !seen.insert(source) {
                continue;
            }
            if let Some(users) = self.derived.dependents.get(&source) {
                for &user in users {
                    stale[user as usize] = true;
                    queue.push(user);
                }
            }
        }
        self.derived.stale = stale;
    }

    /// The records of archived branches must let restore-branch bring back a valid branch: the
    /// watermark on the head's path with everything above it covered (coverage never shrinks, so
    /// this held when the branch was archived and still holds), archived nodes on that path and not
    /// summaries. Both engines check it when they load a timeline.
    pub fn check_archived(&self) -> Result<()> {
        for a in &self.archived {
            if !self.is_ancestor_or_self(a.watermark, a.head) {
                return Err(Error::database(format!(
                    "the watermark of archived branch {:?} is not on its path",
                    a.name
                )));
            }
            if let Some(bare) = self
                .path(a.watermark)
                .into_iter()
                .find(|&n| !self.is_covered(n))
            {
                return Err(Error::database(format!(
                    "the watermark of archived branch {:?} ({}) covers {}, which is neither pinned nor summarised",
                    a.name,
                    node_id(a.watermark),
                    node_id(bare)
                )));
            }
            for &n in &a.nodes {
                if self.nodes[n as usize].summary.is_some() || !self.is_ancestor_or_self(n, a.head)
                {
                    return Err(Error::database(format!(
                        "archived branch {:?} lists {}, which is a summary or not on its path",
                        a.name,
                        node_id(n)
                    )));
                }
            }
        }
        Ok(())
    }

    /// Rebuild every derived index from the source data, checking it as it goes.
    pub fn rebuild(&mut self) -> Result<()> {
        let count = self.nodes.len();
        self.derived = Derived {
            prefix_tokens: vec![0; count],
            depth: vec![0; count],
            children: vec![Vec::new(); count],
            cover_count: vec![0; count],
            stale: vec![false; count],
            ..Derived::default()
        };
        for n in 1..count {
            let parent = self.nodes[n].parent as usize;
            // Parents are always older than their children, which also rules out cycles.
            if parent >= n {
                return Err(Error::database(format!(
                    "node {} has parent {} that is not older than it",
                    node_id(n as u64),
                    node_id(parent as u64)
                )));
            }
            self.derived.prefix_tokens[n] = self.derived.prefix_tokens[parent]
                .checked_add(self.nodes[n].tokens)
                .ok_or_else(|| {
                    Error::database(format!(
                        "the token counts on the path to {} add up to more than fits in 64 bits",
                        node_id(n as u64)
                    ))
                })?;
            self.derived.depth[n] = self.derived.depth[parent] + 1;
            self.derived.children[parent].push(n as u64);
        }
        let (tin, tout) = self.euler_tour();
        let contains = |a: u64, b: u64| {
            tin[a as usize] <= tin[b as usize] && tout[b as usize] <= tout[a as usize]
        };
        // Coverage by difference: +1 at the end of each range, -1 above its start; a node's count is
        // the sum over its subtree (O(n + summaries) instead of a walk over every range).
        let mut cover_delta = vec![0i64; count];
        for n in 1..count as u64 {
            if let Some(summary) = &self.nodes[n as usize].summary {
                let (from, to) = (summary.from, summary.to);
                // A summary is written after the messages it stands for, so its range is older than it.
                if from == ROOT || from >= n || to >= n || !contains(from, to) {
                    return Err(Error::database(format!(
                        "summary {} has an invalid range {}..{}",
                        node_id(n),
                        node_id(from),
                        node_id(to)
                    )));
                }
                if self.nodes[n as usize].parent != self.nodes[from as usize].parent {
                    return Err(Error::database(format!(
                        "summary {} must be a sibling of {} (the start of its range)",
                        node_id(n),
                        node_id(from)
                    )));
                }
                for &source in summary.derived_from.iter().chain(summary.supersedes.iter()) {
                    // Sources always exist before the summaries built from them.
                    if source >= n || !self.nodes[source as usize].is_real_summary() {
                        return Err(Error::database(format!(
                            "summary {} refers to {} which is not an older summary",
                            node_id(n),
                            node_id(source)
                        )));
                    }
                }
                let expected_version = match summary.supersedes {
                    None => Some(1),
                    Some(old) => self.nodes[old as usize]
                        .summary
                        .as_ref()
                        .and_then(|s| s.version.checked_add(1)),
                };
                if expected_version != Some(summary.version) {
                    return Err(Error::database(format!(
                        "summary {} has version {}, which does not follow its supersede chain",
                        node_id(n),
                        summary.version
                    )));
                }
                if let Some(old) = summary.supersedes
                    && let Some(&other) = self.derived.superseded_by.get(&old)
                {
                    return Err(Error::database(format!(
                        "summary {} is superseded twice (by {} and {})",
                        node_id(old),
                        node_id(other),
                        node_id(n)
                    )));
                }
                cover_delta[to as usize] += 1;
                cover_delta[self.nodes[from as usize].parent as usize] -= 1;
                self.index_summary(n);
            }
        }
        for n in (1..count).rev() {
            let parent = self.nodes[n].parent as usize;
            cover_delta[parent] += cover_delta[n];
            self.derived.cover_count[n] = u32::try_from(cover_delta[n]).unwrap_or(u32::MAX);
        }
        self.propagate_stale();
        Ok(())
    }
}

impl Database {
    /// Record an import and index it.
    pub fn add_import(&mut self, record: ImportRecord) {
        self.index_import(&record, self.imports.len());
        self.imports.push(record);
    }

    fn index_import(&mut self, record: &ImportRecord, at: usize) {
        for digest in [None, Some(record.digest.as_str())] {
            self.import_index
                .entry(import_key(&record.format, &record.source_key, digest))
                .or_default()
                .push(at);
        }
    }

    /// The earlier imports of one conversation (same format and source key): the first with this
    /// digest, and the latest; each found through the index, whatever the number of records.
    pub fn earlier_imports(&self, format: &str, source_key: &str, digest: &str) -> Earlier {
        let first = |digest: Option<&str>, last: bool| {
            let at = self
                .import_index
                .get(&import_key(format, source_key, digest))?;
            let i = if last { at.last() } else { at.first() }?;
            Some(self.imports[*i].clone())
        };
        Earlier {
            same: first(Some(digest), false),
            latest: first(None, true),
        }
    }

    /// Every import of one conversation (same format and source key), oldest first.
    pub fn imports_of(&self, format: &str, source_key: &str) -> Vec<ImportRecord> {
        self.import_index
            .get(&import_key(format, source_key, None))
            .map(|at| at.iter().map(|&i| self.imports[i].clone()).collect())
            .unwrap_or_default()
    }

    /// Rebuild `import_index` from `imports`.
    pub fn index_imports(&mut self) {
        self.import_index.clear();
        let imports = std::mem::take(&mut self.imports);
        for (i, record) in imports.iter().enumerate() {
            self.index_import(record, i);
        }
        self.imports = imports;
    }

    /// Append an audit entry with a timestamp that never goes below the previous one.
    pub fn audit(&mut self, now: u64, mut entry: AuditEntry) {
        let last = self.audit.last().map(|e| e.ts).unwrap_or(0);
        entry.ts = now.max(last);
        self.audit.push(entry);
    }

    /// A database from its file form: checks the source data (format version 1 to
    /// `supported_version`) and rebuilds every index.
    pub fn from_file(file: DatabaseFile, supported_version: u64) -> Result<Database> {
        if !(1..=supported_version).contains(&file.format_version) {
            return Err(Error::database(format!(
                "unsupported format_version {} (this build reads versions 1 to {supported_version})",
                file.format_version
            )));
        }
        if file.format_version == 1 && file.timelines.iter().any(has_provenance) {
            return Err(Error::database(
                "a format_version 1 file cannot hold provenance, which came with format_version 2",
            ));
        }
        let mut timelines = Vec::new();
        let mut seen = BTreeSet::new();
        for tf in file.timelines {
            let timeline = load_timeline(tf)?;
            if !seen.insert(timeline.id) {
                return Err(Error::database(format!(
                    "timeline {} appears twice",
                    timeline.id_str()
                )));
            }
            if timeline.id >= file.next_timeline {
                return Err(Error::database(format!(
                    "timeline {} is not below next_timeline {}",
                    timeline.id_str(),
                    file.next_timeline
                )));
            }
            timelines.push(timeline);
        }
        timelines.sort_by_key(|t| t.id);
        for window in file.audit.windows(2) {
            if window[1].ts < window[0].ts {
                return Err(Error::database("audit timestamps decrease"));
            }
        }
        for record in &file.imports {
            let target = parse_prefixed(&record.timeline, "tl")
                .and_then(|id| timelines.binary_search_by_key(&id, |t| t.id).ok());
            let first = parse_prefixed(&record.first_node, "n");
            let fits = match (target, first) {
                (Some(t), Some(first)) => first
                    .checked_add(record.nodes)
                    .is_some_and(|end| first >= 1 && end <= timelines[t].nodes.len() as u64),
                _ => false,
            };
            if !fits {
                return Err(Error::database(format!(
                    "the import record of {} names nodes that do not exist",
                    record.timeline
                )));
            }
            if file.format_version == 1
                && let (Some(t), Some(first)) = (target, first)
            {
                // Version 1 kept an imported message's provenance in its intent note; only the
                // nodes this record says the import created are trusted to hold it (the same rule
                // as SQLite's migration 3 → 4).
                let end = (first + record.nodes) as usize;
                for node in &mut timelines[t].nodes[first as usize..end] {
                    adopt_provenance(node);
                }
            }
        }
        let mut db = Database {
            next_timeline: file.next_timeline,
            timelines,
            idempotency: file.idempotency,
            audit: file.audit,
            imports: file.imports,
            import_index: HashMap::new(),
        };
        db.index_imports();
        Ok(db)
    }

    /// The file form of the database, with format version `format_version`, for saving.
    pub fn to_file(&self, format_version: u64) -> DatabaseFile {
        DatabaseFile {
            format_version,
            next_timeline: self.next_timeline,
            timelines: self.timelines.iter().map(save_timeline).collect(),
            idempotency: self.idempotency.clone(),
            audit: self.audit.clone(),
            imports: self.imports.clone(),
        }
    }
}

fn has_provenance(t: &TimelineFile) -> bool {
    t.nodes
        .iter()
        .chain(&t.cold)
        .any(|n| n.provenance.is_some())
}

/// Move an import's record out of the intent note of a node that import created (format_version 1)
/// into its provenance. The tag stays: it names what the original was.
fn adopt_provenance(node: &mut Node) {
    let Some(intent) = &mut node.intent else {
        return;
    };
    let record = intent
        .note
        .as_deref()
        .filter(|note| note.starts_with("{\"import\":"))
        .and_then(|note| serde_json::from_str::<serde_json::Value>(note).ok())
        .filter(|v| v.get("import").is_some_and(serde_json::Value::is_string));
    if let Some(record) = record
        && node.provenance.is_none()
    {
        // In the form a version 2 file holds it, so that the database encodes and reloads equal.
        node.provenance = Some(record.to_string());
        intent.note = None;
    }
}

fn bad(timeline: &str, what: String) -> Error {
    Error::database(format!("timeline {timeline}: {what}"))
}

fn load_timeline(tf: TimelineFile) -> Result<Timeline> {
    let id = parse_prefixed(&tf.id, "tl")
        .ok_or_else(|| Error::database(format!("invalid timeline ID {:?}", tf.id)))?;
    let name = tf.id.clone();
    let count = usize::try_from(tf.next_node)
        .ok()
        .filter(|&c| c >= 1 && c <= tf.nodes.len() + tf.cold.len() + 1);
    let Some(count) = count.filter(|&c| c == tf.nodes.len() + tf.cold.len() + 1) else {
        return Err(bad(
            &name,
            format!(
                "next_node {} does not match the {} stored nodes",
                tf.next_node,
                tf.nodes.len() + tf.cold.len()
            ),
        ));
    };
    let mut slots: Vec<Option<Node>> = vec![None; count];
    for (cold, nf) in tf
        .nodes
        .into_iter()
        .map(|n| (false, n))
        .chain(tf.cold.into_iter().map(|n| (true, n)))
    {
        let n = parse_prefixed(&nf.id, "n")
            .filter(|&n| n >= 1 && (n as usize) < count)
            .ok_or_else(|| bad(&name, format!("invalid node ID {:?}", nf.id)))?;
        if slots[n as usize].is_some() {
            return Err(bad(
                &name,
                format!(
                    "node {} is stored twice (hot and cold zones must not overlap)",
                    nf.id
                ),
            ));
        }
        slots[n as usize] = Some(load_node(nf, cold, &name)?);
    }
    let mut nodes = Vec::with_capacity(count);
    nodes.push(Node::root());
    for (n, slot) in slots.into_iter().enumerate().skip(1) {
        nodes.push(
            slot.ok_or_else(|| bad(&name, format!("node {} is missing", node_id(n as u64))))?,
        );
    }
    let parse_node = |s: &str, what: &str| {
        parse_prefixed(s, "n")
            .filter(|&n| (n as usize) < count)
            .ok_or_else(|| {
                bad(
                    &name,
                    format!("{what} {s:?} is not a node of this timeline"),
                )
            })
    };
    let mut branches = Vec::new();
    let mut names = std::collections::HashSet::new();
    for bf in tf.branches {
        if bf.name.is_empty() || bf.name.contains('/') || !names.insert(bf.name.clone()) {
            return Err(bad(
                &name,
                format!("invalid or duplicate branch name {:?}", bf.name),
            ));
        }
        let head = parse_node(&bf.head, "branch head")?;
        let watermark = match &bf.watermark {
            Some(w) => parse_node(w, "watermark")?,
            None => ROOT,
        };
        branches.push(Branch {
            name: bf.name,
            head,
            watermark,
        });
    }
    if !branches.iter().any(|b| b.name == tf.current_branch) {
        return Err(bad(
            &name,
            format!("current branch {:?} does not exist", tf.current_branch),
        ));
    }
    let mut pins = BTreeSet::new();
    for p in &tf.pins {
        let n = parse_node(p, "pin")?;
        if n == ROOT || nodes[n as usize].cold {
            return Err(bad(
                &name,
                format!("pin {p} is the root or an archived node"),
            ));
        }
        pins.insert(n);
    }
    for (n, node) in nodes.iter().enumerate().skip(1) {
        if node.parent as usize >= count {
            return Err(bad(
                &name,
                format!("node {} has an unknown parent", node_id(n as u64)),
            ));
        }
    }
    if tf.title.as_deref().is_some_and(str::is_empty) {
        return Err(bad(&name, "the title is empty".into()));
    }
    let mut archived = Vec::new();
    for af in tf.archived_branches {
        if af.name.is_empty() || af.name.contains('/') {
            return Err(bad(
                &name,
                format!("invalid archived branch name {:?}", af.name),
            ));
        }
        let nodes = af
            .nodes
            .iter()
            .map(|n| {
                parse_node(n, "archived node").and_then(|n| match n {
                    ROOT => Err(bad(&name, "the root n0 cannot be archived".into())),
                    n => Ok(n),
                })
            })
            .collect::<Result<Vec<u64>>>()?;
        archived.push(ArchivedBranch {
            head: parse_node(&af.head, "archived branch head")?,
            watermark: parse_node(&af.watermark, "archived branch watermark")?,
            name: af.name,
            position: af.position,
            nodes,
        });
    }
    let mut timeline = Timeline {
        id,
        title: tf.title,
        created_at: tf.created_at,
        updated_at: tf.updated_at,
        nodes,
        branches,
        current_branch: tf.current_branch,
        pins,
        archived,
        derived: Derived::default(),
    };
    timeline.rebuild().map_err(|e| bad(&name, e.message))?;
    let (tin, tout) = timeline.euler_tour();
    // The first bare (neither pinned nor summarised) node on root→n, for every n: O(n).
    let mut first_bare: Vec<Option<u64>> = vec![None; timeline.nodes.len()];
    for n in 1..timeline.nodes.len() {
        let parent = timeline.nodes[n].parent as usize;
        first_bare[n] = first_bare[parent].or((!timeline.is_covered(n as u64)).then_some(n as u64));
    }
    timeline
        .check_archived()
        .map_err(|e| bad(&name, e.message))?;
    for b in &timeline.branches {
        let (w, h) = (b.watermark as usize, b.head as usize);
        if !(tin[w] <= tin[h] && tout[h] <= tout[w]) {
            return Err(bad(
                &name,
                format!("the watermark of branch {:?} is not on its path", b.name),
            ));
        }
        // W1: everything up to the watermark is covered; a watermark over a bare message would let
        // unpin and archival rely on coverage that does not exist.
        if let Some(bare) = first_bare[w] {
            return Err(bad(
                &name,
                format!(
                    "the watermark of branch {:?} ({}) covers {}, which is neither pinned nor summarised",
                    b.name,
                    node_id(b.watermark),
                    node_id(bare)
                ),
            ));
        }
        if timeline.nodes[b.head as usize].cold {
            return Err(bad(
                &name,
                format!("branch {:?} has an archived head", b.name),
            ));
        }
    }
    Ok(timeline)
}

fn load_node(nf: NodeFile, cold: bool, timeline: &str) -> Result<Node> {
    let role = Role::parse(&nf.role).ok_or_else(|| {
        bad(
            timeline,
            format!("node {} has an invalid role {:?}", nf.id, nf.role),
        )
    })?;
    let parent = parse_prefixed(&nf.parent, "n").ok_or_else(|| {
        bad(
            timeline,
            format!("node {} has an invalid parent {:?}", nf.id, nf.parent),
        )
    })?;
    if let Some(p) = &nf.provenance
        && !p.get("import").is_some_and(serde_json::Value::is_string)
    {
        return Err(bad(
            timeline,
            format!(
                "node {} has an invalid provenance: it must be an object whose \"import\" names the format",
                nf.id
            ),
        ));
    }
    let intent = match nf.intent {
        None => None,
        Some(i) if i.tag.is_empty() => {
            return Err(bad(
                timeline,
                format!(
                    "node {} has an invalid intent: the tag must be a non-empty string",
                    nf.id
                ),
            ));
        }
        Some(i) => Some(Intent {
            tag: i.tag,
            note: i.note,
        }),
    };
    if nf.text.len() > crate::spec::spec().constants.max_text_bytes {
        return Err(bad(
            timeline,
            format!("node {} has a text over the size limit", nf.id),
        ));
    }
    let summary = match nf.summary {
        None => None,
        Some(s) => {
            let kind = match s.kind.as_str() {
                "real" => SummaryKind::Real,
                "placeholder" => SummaryKind::Placeholder,
                other => {
                    return Err(bad(
                        timeline,
                        format!("node {} has an invalid summary kind {other:?}", nf.id),
                    ));
                }
            };
            let id = |v: &str| {
                parse_prefixed(v, "n").ok_or_else(|| {
                    bad(
                        timeline,
                        format!("node {} has an invalid node reference {v:?}", nf.id),
                    )
                })
            };
            let derived_from = s
                .derived_from
                .iter()
                .map(|d| id(d))
                .collect::<Result<Vec<_>>>()?;
            let supersedes = s.supersedes.as_deref().map(id).transpose()?;
            if role != Role::Summary || s.version == 0 {
                return Err(bad(
                    timeline,
                    format!("node {} has summary data but is not a valid summary", nf.id),
                ));
            }
            if kind == SummaryKind::Placeholder
                && (nf.tokens != crate::spec::spec().constants.reserve_tokens
                    || !derived_from.is_empty()
                    || supersedes.is_some())
            {
                return Err(bad(
                    timeline,
                    format!(
                        "placeholder {} must have exactly the reserve tokens and no versions",
                        nf.id
                    ),
                ));
            }
            Some(Summary {
                kind,
                from: id(&s.from)?,
                to: id(&s.to)?,
                derived_from,
                supersedes,
                version: s.version,
            })
        }
    };
    if cold && summary.is_some() {
        return Err(bad(
            timeline,
            format!(
                "summary {} is in the cold zone; summaries always stay hot",
                nf.id
            ),
        ));
    }
    Ok(Node {
        parent,
        role,
        text: nf.text,
        tokens: nf.tokens,
        created_at: nf.created_at,
        intent,
        provenance: nf.provenance.map(|p| p.to_string()),
        summary,
        cold,
    })
}

fn save_timeline(t: &Timeline) -> TimelineFile {
    let mut hot = Vec::new();
    let mut cold = Vec::new();
    for (n, node) in t.nodes.iter().enumerate().skip(1) {
        let n = n as u64;
        let nf = NodeFile {
            id: node_id(n),
            parent: node_id(node.parent),
            role: node.role.as_str().to_string(),
            text: node.text.clone(),
            tokens: node.tokens,
            created_at: node.created_at,
            intent: node.intent.as_ref().map(|i| IntentFile {
                tag: i.tag.clone(),
                note: i.note.clone(),
            }),
            provenance: node
                .provenance
                .as_deref()
                .and_then(|p| serde_json::from_str(p).ok()),
            summary: node.summary.as_ref().map(|s| SummaryFile {
                kind: s.kind.as_str().into(),
                from: node_id(s.from),
                to: node_id(s.to),
                derived_from: s.derived_from.iter().map(|&d| node_id(d)).collect(),
                supersedes: s.supersedes.map(node_id),
                version: s.version,
            }),
            prefix_tokens: serde_json::json!(t.derived.prefix_tokens[n as usize]),
            stale: if node.is_real_summary() {
                serde_json::json!(t.derived.stale[n as usize])
            } else {
                serde_json::Value::Null
            },
        };
        if node.cold {
            cold.push(nf)
        } else {
            hot.push(nf)
        }
    }
    TimelineFile {
        id: t.id_str(),
        title: t.title.clone(),
        created_at: t.created_at,
        updated_at: t.updated_at,
        next_node: t.nodes.len() as u64,
        current_branch: t.current_branch.clone(),
        branches: t
            .branches
            .iter()
            .map(|b| BranchFile {
                name: b.name.clone(),
                head: node_id(b.head),
                watermark: Some(node_id(b.watermark)),
            })
            .collect(),
        pins: t.pins.iter().map(|&p| node_id(p)).collect(),
        nodes: hot,
        cold,
        archived_branches: t
            .archived
            .iter()
            .map(|a| ArchivedBranchFile {
                name: a.name.clone(),
                head: node_id(a.head),
                watermark: node_id(a.watermark),
                position: a.position,
                nodes: a.nodes.iter().map(|&n| node_id(n)).collect(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node_file(n: u64, parent: u64, role: &str) -> NodeFile {
        NodeFile {
            id: node_id(n),
            parent: node_id(parent),
            role: role.into(),
            text: String::new(),
            tokens: 1,
            created_at: None,
            intent: None,
            provenance: None,
            summary: None,
            prefix_tokens: serde_json::Value::Null,
            stale: serde_json::Value::Null,
        }
    }

    fn timeline_file(
        nodes: Vec<NodeFile>,
        branches: Vec<BranchFile>,
        pins: Vec<String>,
    ) -> TimelineFile {
        TimelineFile {
            id: "tl0".into(),
            title: None,
            created_at: None,
            updated_at: None,
            next_node: nodes.len() as u64 + 1,
            current_branch: "main".into(),
            branches,
            pins,
            nodes,
            cold: Vec::new(),
            archived_branches: Vec::new(),
        }
    }

    fn chain(len: u64) -> Vec<NodeFile> {
        (1..=len).map(|n| node_file(n, n - 1, "user")).collect()
    }

    fn branch(name: String, head: u64, watermark: u64) -> BranchFile {
        BranchFile {
            name,
            head: node_id(head),
            watermark: Some(node_id(watermark)),
        }
    }

    // Issue 12 item 5: shapes on which a load used to be quadratic. Each loads in linear or n log n
    // time now; a quadratic step would not finish in the lifetime of the test run.

    #[test]
    fn a_hundred_thousand_branches_load_without_pairwise_name_checks() {
        let branches = (0..100_000u64)
            .map(|i| {
                branch(
                    if i == 0 {
                        "main".into()
                    } else {
                        format!("b{i}")
                    },
                    10,
                    0,
                )
            })
            .collect();
        let t = load_timeline(timeline_file(chain(10), branches, Vec::new())).unwrap();
        assert_eq!(t.branches.len(), 100_000);
        // A duplicate name is still found.
        let mut names: Vec<BranchFile> = (0..50_000u64)
            .map(|i| {
                branch(
                    if i == 0 {
                        "main".into()
                    } else {
                        format!("b{i}")
                    },
                    1,
                    0,
                )
            })
            .collect();
        names.push(branch("b7".into(), 1, 0));
        let err = load_timeline(timeline_file(chain(1), names, Vec::new())).unwrap_err();
        assert!(
            err.message.contains("duplicate branch name \"b7\""),
            "{}",
            err.message
        );
    }

    #[test]
    fn thousands_of_advanced_watermarks_on_a_long_chain_are_checked_once() {
        // 50k pinned messages, 5k branches whose watermarks are deep in the chain.
        let len = 50_000u64;
        let pins = (1..=len).map(node_id).collect();
        let branches = (0..5_000u64)
            .map(|i| {
                branch(
                    if i == 0 {
                        "main".into()
                    } else {
                        format!("b{i}")
                    },
                    len,
                    len - i,
                )
            })
            .collect();
        let t = load_timeline(timeline_file(chain(len), branches, pins)).unwrap();
        assert_eq!(t.branches[4_999].watermark, len - 4_999);
        // A watermark over a bare message is still refused, naming the first bare one.
        let mut pins: Vec<String> = (1..=len).map(node_id).collect();
        pins.remove(99);
        let err = load_timeline(timeline_file(
            chain(len),
            vec![branch("main".into(), len, len)],
            pins,
        ))
        .unwrap_err();
        assert!(
            err.message
                .contains("covers n100, which is neither pinned nor summarised"),
            "{}",
            err.message
        );
    }

    #[test]
    fn thousands_of_summaries_over_one_long_range_are_counted_once() {
        // 20k messages and 5k summaries of the whole range: 10^8 steps if each range were walked.
        let len = 20_000u64;
        let mut nodes = chain(len);
        for k in 0..5_000u64 {
            let mut s = node_file(len + 1 + k, 0, "summary");
            s.text = format!("summary {k}");
            s.summary = Some(SummaryFile {
                kind: "real".into(),
                from: node_id(1),
                to: node_id(len),
                derived_from: Vec::new(),
                supersedes: None,
                version: 1,
            });
            nodes.push(s);
        }
        let t = load_timeline(timeline_file(
            nodes,
            vec![branch("main".into(), len, 0)],
            Vec::new(),
        ))
        .unwrap();
        assert_eq!(t.derived.cover_count[1], 5_000);
        assert_eq!(t.derived.cover_count[len as usize], 5_000);
        assert_eq!(t.derived.cover_count[len as usize + 1], 0);
    }

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
