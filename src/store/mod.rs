//! Storage: one typed interface (`Tx`) that every operation is written against, and two engines
//! behind it.
//!
//! - SQLite (`sqlite/`) for new databases: rows and indexes, so an operation costs what it touches;
//!   WAL mode, `synchronous=FULL`, one `BEGIN IMMEDIATE` transaction per change.
//! - The JSON snapshot (`json.rs`) for files ending in `.json`: the whole database in one file, loaded
//!   into the in-memory model (`memory.rs`) under a lock and replaced atomically with a `.bak` copy.
//!
//! - PostgreSQL (`postgres/`) for a `postgresql://` or `postgres://` URI: the SQLite engine's rows on a
//!   server, shared by many machines; row locks per timeline, so writers to different timelines
//!   run in parallel.
//!
//! An existing file is recognised by its content, a new one by its extension (see `Engine::detect`);
//! a connection URI is never a file (`Store::open`).
//!
//! How files are made, replaced and synced safely (private, never through a link, atomic) is
//! `crate::fsutil`'s; this module says what a failure means for a database.

mod count;
mod cover;
mod fault;
mod json;
mod jumps;
mod memory;
mod postgres;
mod sqlite;

pub use count::VARIABLE as COUNT_READS_VARIABLE;
pub use json::{DecodeError, decode, encode};
pub use memory::MemTx;

/// Whether a `--db` value is a PostgreSQL connection URI rather than a file path.
pub use postgres::is_uri;
/// The schema version new PostgreSQL databases get.
pub use postgres::schema_version as postgres_schema_version;
pub(crate) use sqlite::render_compiled_schema as render_sqlite_schema;
/// The schema version new SQLite databases get (and older ones are migrated to).
pub use sqlite::schema_version as sqlite_schema_version;
pub use sqlite::{SqliteLog, sqlite_version};

use crate::error::{Error, Message, Result};
use crate::fsutil::{open_no_block, parent_dir, same_file};
use crate::model::file::{AuditEntry, IdempotencyEntry, ImportRecord};
use crate::model::{ArchivedBranch, Branch, Database, Node, Role, Timeline};
use crate::search::Query;
use std::fs;
use std::io::{ErrorKind as IoKind, Read};
use std::path::{Path, PathBuf};

/// What a mutation asks the store to do with its result.
pub enum Outcome<R> {
    /// Write the changes.
    Commit(R),
    /// Nothing changed (an idempotent replay): write nothing at all.
    Unchanged(R),
}

/// The storage engine of a database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// A SQLite database: changes are written row by row in a transaction.
    Sqlite,
    /// A JSON snapshot: the whole file is rewritten atomically on each change.
    Json,
    /// A PostgreSQL database on a server, named by a connection URI.
    Postgres,
}

impl Engine {
    /// The engine's name in results (`sqlite`, `json`).
    pub fn as_str(self) -> &'static str {
        match self {
            Engine::Sqlite => "sqlite",
            Engine::Json => "json",
            Engine::Postgres => "postgres",
        }
    }

    /// The engine a new database at `path` gets: a connection URI → PostgreSQL, `.json` → the JSON
    /// snapshot, anything else → SQLite.
    pub fn for_new_path(path: &Path) -> Engine {
        if is_uri(&path.to_string_lossy()) {
            return Engine::Postgres;
        }
        let json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        if json { Engine::Json } else { Engine::Sqlite }
    }

    /// The engine of the file at `path`: by content when it exists, by extension when it does not.
    /// `Ok(None)` means the file exists but is neither engine's.
    fn detect(path: &Path) -> Result<Option<Engine>> {
        let mut file = match fs::File::open(path) {
            Ok(file) => file,
            Err(e) if e.kind() == IoKind::NotFound => return Ok(Some(Engine::for_new_path(path))),
            Err(e) => {
                return Err(io_error(
                    &format!("cannot open the database {}", path.display()),
                    e,
                ));
            }
        };
        let mut head = [0u8; 16];
        let mut filled = 0;
        while filled < head.len() {
            match file.read(&mut head[filled..]) {
                Ok(0) => break,
                Ok(n) => filled += n,
                Err(e) if e.kind() == IoKind::Interrupted => {}
                Err(e) => {
                    return Err(io_error(
                        &format!("cannot read the database {}", path.display()),
                        e,
                    ));
                }
            }
        }
        let head = &head[..filled];
        if head == sqlite::HEADER {
            return Ok(Some(Engine::Sqlite));
        }
        // The JSON engine reports every problem of a would-be snapshot precisely (empty, truncated,
        // not JSON), so a `.json` file goes there whatever it holds.
        let json_start = head
            .iter()
            .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .is_some_and(|&b| b == b'{');
        if json_start || Engine::for_new_path(path) == Engine::Json {
            return Ok(Some(Engine::Json));
        }
        Ok(None)
    }
}

/// Where a node sits in its timeline's tree: what a step of a walk is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Place {
    /// The node number.
    pub id: u64,
    /// Its parent's number (the root's is its own, 0).
    pub parent: u64,
    /// Edges from the root.
    pub depth: u64,
}

impl From<&NodeRow> for Place {
    fn from(row: &NodeRow) -> Self {
        Place {
            id: row.id,
            parent: row.node.parent,
            depth: row.depth,
        }
    }
}

/// What a new child of a node is derived from and checked against (`Tx::parent_of_new`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewParent {
    /// Where the parent sits.
    pub place: Place,
    /// Tokens of root→parent.
    pub prefix_tokens: u64,
    /// Where the parent's own parent sits: `None` for the root's, or when it is missing.
    pub grandparent: Option<Place>,
}

/// A node with the state derived from the rest of the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeRow {
    /// The node number.
    pub id: u64,
    /// The node's source data.
    pub node: Node,
    /// Tokens of root→this node.
    pub prefix_tokens: u64,
    /// Edges from the root.
    pub depth: u64,
    /// Whether the node is pinned.
    pub pinned: bool,
    /// A real summary built from a superseded or stale summary.
    pub stale: bool,
    /// The newer version that supersedes this summary, if any.
    pub superseded_by: Option<u64>,
}

impl NodeRow {
    /// The latest version and not stale: a real summary the budget may use.
    pub fn is_current_version(&self) -> bool {
        self.superseded_by.is_none() && !self.stale
    }
}

/// A timeline's own record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimelineRow {
    /// The timeline number.
    pub id: u64,
    /// The number the next node gets; also 1 + the number of messages.
    pub next_node: u64,
    /// Name of the current branch.
    pub current_branch: String,
    /// Title given at creation or by import.
    pub title: Option<String>,
    /// Unix seconds of creation; `None` for timelines created before 1.3.
    pub created_at: Option<u64>,
    /// Unix seconds of the last change; `None` when not changed since 1.3.
    pub updated_at: Option<u64>,
}

/// One change to a node's derived state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeChange {
    /// Pinned (`true`) or unpinned (`false`).
    Pin(bool),
    /// A summary it was built from was superseded.
    Stale,
    /// A newer version of this summary is the given node.
    SupersededBy(u64),
    /// Moved to the cold zone.
    Archived,
    /// Moved back to the hot zone (restore-branch).
    Restored,
}

/// The typed interface operations run against: one consistent view of the database, inside a
/// transaction. Reads see the transaction's own writes. Every method costs what it touches (an index
/// lookup or the rows named), never a scan of the database.
pub trait Tx {
    /// The engine behind this transaction.
    fn engine(&self) -> Engine;

    /// The ID the next timeline gets.
    fn next_timeline(&mut self) -> Result<u64>;
    /// Up to `limit` timeline IDs, smallest first.
    fn timeline_ids(&mut self, limit: usize) -> Result<Vec<u64>>;
    /// Timeline `tl`'s record; `None` when it does not exist.
    fn timeline(&mut self, tl: u64) -> Result<Option<TimelineRow>>;
    /// Add timeline `id` with its root and first branch, created at `now`; the next timeline
    /// becomes `id + 1`.
    fn create_timeline(
        &mut self,
        id: u64,
        first_branch: &str,
        title: Option<&str>,
        now: u64,
    ) -> Result<()>;
    /// Record a change of the timeline at `now` (its last-change time).
    fn touch_timeline(&mut self, tl: u64, now: u64) -> Result<()>;
    /// Every timeline with its number of branches, smallest ID first.
    fn timeline_list(&mut self) -> Result<Vec<(TimelineRow, u64)>>;
    /// Make `name` the current branch of timeline `tl`.
    fn set_current_branch(&mut self, tl: u64, name: &str) -> Result<()>;

    /// A node, the root n0 included.
    fn node(&mut self, tl: u64, n: u64) -> Result<Option<NodeRow>>;
    /// What a new child of node `n` is derived from and checked against (`ops::walk::new_row`):
    /// `n`'s place and token sum and, unless `n` is the root, its parent's place. `None` when `n`
    /// is missing. SQLite reads them, and the rows the child's path columns need, in one query.
    fn parent_of_new(&mut self, tl: u64, n: u64) -> Result<Option<NewParent>> {
        let Some(row) = self.node(tl, n)? else {
            return Ok(None);
        };
        let grandparent = if row.id == crate::model::ROOT {
            None
        } else {
            self.node(tl, row.node.parent)?.as_ref().map(Place::from)
        };
        Ok(Some(NewParent {
            place: Place::from(&row),
            prefix_tokens: row.prefix_tokens,
            grandparent,
        }))
    }
    /// A path window: node `n` and its ancestors, newest first, at most `limit` rows (the root n0
    /// last when the window reaches it). One read whose cost is the rows it returns: SQLite answers
    /// with one recursive query that follows parent links (each step to an older node, so it ends);
    /// a server engine answers with the same query in one round trip. Empty when `n` does not exist.
    /// The rows are as stored: the caller checks that they form a path (`ops::walk::path_rows`).
    fn ancestors(&mut self, tl: u64, n: u64, limit: u64) -> Result<Vec<NodeRow>>;
    /// A budget's window: node `n` and its ancestors, newest first, until the messages read hold
    /// more than `max_tokens` tokens (the last row is the first that passes the budget) or the path
    /// ends (the root n0 last). One read like `ancestors`: prefix sums (`prefix_tokens`) say when to
    /// stop, so its cost is the window, not the path.
    fn budget_window(&mut self, tl: u64, n: u64, max_tokens: u64) -> Result<Vec<NodeRow>>;
    /// One row on root→n (root excluded) that `find` names; `None` when there is none. One read that
    /// returns at most one row (SQLite: a recursive query that follows parent links inside the
    /// database).
    fn find_on_path(&mut self, tl: u64, n: u64, find: PathFind) -> Result<Option<NodeRow>>;
    /// Children of `n`, oldest first.
    fn children(&mut self, tl: u64, n: u64) -> Result<Vec<u64>>;
    /// Summaries and placeholders whose range starts at `from`, oldest first.
    fn summaries_from(&mut self, tl: u64, from: u64) -> Result<Vec<u64>>;
    /// The first real summary made by an identical summarize request.
    fn summary_by_request(&mut self, tl: u64, digest: &[u8; 32]) -> Result<Option<u64>>;
    /// Summaries that list `n` in their derived_from, oldest first.
    fn dependents(&mut self, tl: u64, n: u64) -> Result<Vec<u64>>;
    /// Add `row` as node `row.id`, which must be the timeline's next node number.
    fn insert_node(&mut self, tl: u64, row: &NodeRow) -> Result<()>;
    /// Add `rows` as the timeline's next nodes, in order (the first is its next node number, each
    /// after the one before): what `insert_node` of each in turn would store, in fewer statements
    /// (the timeline's counters written once; a parent among the rows is not read back).
    fn insert_nodes(&mut self, tl: u64, rows: &[NodeRow]) -> Result<()>;
    /// Apply `change` to node `n`'s derived state.
    fn change_node(&mut self, tl: u64, n: u64, change: NodeChange) -> Result<()>;
    /// A new summary or placeholder covers `to`'s path up to `from` (both included; never the root).
    /// Returns how many messages that is, which the caller checks against the depths: 0 when `from`
    /// is not an ancestor-or-self of `to`. The JSON engine counts the cover on every message of its
    /// in-memory model; the SQL engines derive coverage from the ranges (src/store/cover.rs) and
    /// only check the ends (O(log n)), whatever the range.
    fn cover_path(&mut self, tl: u64, from: u64, to: u64) -> Result<u64>;
    /// Whether some summary's or placeholder's range (any version) holds message `n`, its own pin
    /// and its being a summary aside (unpin's W2 check). Costs the summaries newer than `n`.
    fn in_a_range(&mut self, tl: u64, n: &NodeRow) -> Result<bool>;

    /// Branches in the order they were created.
    fn branches(&mut self, tl: u64) -> Result<Vec<Branch>>;
    /// The branch named `name`; `None` when it does not exist.
    fn branch(&mut self, tl: u64, name: &str) -> Result<Option<Branch>>;
    /// Add a branch, or update the head and watermark of the branch of that name (keeping its place).
    fn put_branch(&mut self, tl: u64, branch: &Branch) -> Result<()>;
    /// Remove the branch named `name` (its nodes stay).
    fn remove_branch(&mut self, tl: u64, name: &str) -> Result<()>;
    /// Add a branch (whose name no branch has) at `index` in the list of branches, or at its end
    /// when the list is shorter.
    fn insert_branch(&mut self, tl: u64, index: u64, branch: &Branch) -> Result<()>;
    /// Give branch `old` the name `new` (which no branch has), keeping its head, watermark and place.
    /// The current-branch marker is the caller's.
    fn rename_branch(&mut self, tl: u64, old: &str, new: &str) -> Result<()>;

    /// Archived branches not restored since, oldest archival first.
    fn archived_branches(&mut self, tl: u64) -> Result<Vec<ArchivedBranch>>;
    /// Record an archived branch (the newest).
    fn push_archived_branch(&mut self, tl: u64, archived: &ArchivedBranch) -> Result<()>;
    /// Forget the newest record of an archived branch of that name.
    fn remove_archived_branch(&mut self, tl: u64, name: &str) -> Result<()>;

    /// The idempotency entry of `key` in `scope`, if recorded.
    fn idempotency(&mut self, scope: &str, key: &str) -> Result<Option<IdempotencyEntry>>;
    /// Record a key's result, replacing an expired entry of the same scope and key.
    fn put_idempotency(&mut self, entry: &IdempotencyEntry) -> Result<()>;
    /// Forget entries recorded at or before `cutoff`.
    fn purge_idempotency(&mut self, cutoff: u64) -> Result<()>;
    /// Append an audit entry; its timestamp is `now`, or the previous entry's if that is later.
    fn append_audit(&mut self, now: u64, entry: AuditEntry) -> Result<()>;

    /// The earlier imports of one conversation (this format and source key): the first with this
    /// digest and the latest, found by index (an import looks them up once per conversation).
    fn earlier_imports(
        &mut self,
        format: &str,
        source_key: &str,
        digest: &str,
    ) -> Result<crate::model::Earlier>;
    /// (digest, source key, timeline, title) of every import of `format`, oldest first: what lets a
    /// session import pass over unchanged files without parsing them.
    fn import_digests(&mut self, format: &str) -> Result<Vec<crate::model::KnownImport>>;
    /// Every import of one conversation (this format and source key), oldest first: what a
    /// session import that grew reads to find the nodes its earlier messages became.
    fn imports_of(&mut self, format: &str, source_key: &str) -> Result<Vec<ImportRecord>>;
    /// Record an import.
    fn put_import(&mut self, record: &ImportRecord) -> Result<()>;

    /// When node `n` was created, in Unix seconds; `None` for the root and for messages written
    /// before Timeline recorded creation times.
    fn created_at(&mut self, tl: u64, n: u64) -> Result<Option<u64>>;

    /// Every searchable message that matches `query` within `scope`, with its score, in no particular
    /// order. Searchable: every message and real summary whose text has at least one term
    /// (placeholders are not). Scores are FTS5's `bm25()` over all searchable messages of the
    /// database, negated (higher is better). SQLite answers from its full-text index (the cost is the
    /// number of matches); the JSON engine scans every message with the same rules.
    fn search(&mut self, query: &Query, scope: &SearchScope) -> Result<Vec<SearchHit>>;

    /// A whole timeline in the in-memory model (export reads every node anyway).
    fn load_timeline(&mut self, tl: u64) -> Result<Timeline>;
    /// The whole database in the in-memory model (convert, check).
    fn load_database(&mut self) -> Result<Database>;
    /// What `db info` reports beyond the engine and path.
    fn counts(&mut self) -> Result<Counts>;
}

/// What `Tx::find_on_path` looks for on a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathFind {
    /// The node at this depth (1: the path's first message).
    Depth(u64),
    /// Any node that could change a budget's layout if it were left out with the rest of the path
    /// above a window: pinned, of at most this many tokens, or where a real summary's range starts.
    Obstacle {
        /// Tokens a message must exceed not to be an obstacle.
        tokens: u64,
    },
    /// The bare node (neither pinned nor a summary nor in any summary's or placeholder's range)
    /// closest to the root among those deeper than this: what bounds a watermark.
    OldestBare {
        /// The depth of the current watermark; only nodes below it are looked at.
        deeper_than: u64,
    },
}

/// What a search looks at besides its query: one timeline or all, one role, one zone.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SearchScope {
    /// Only this timeline; `None`: every timeline.
    pub timeline: Option<u64>,
    /// Only messages with this role.
    pub role: Option<Role>,
    /// `Some(true)`: archived (cold) messages only; `Some(false)`: hot ones only.
    pub cold: Option<bool>,
}

impl SearchScope {
    /// Whether a message of `timeline`, `role` and zone (`cold`) is in the scope (a role that
    /// cannot be read is in a scope of every role only).
    pub fn admits(&self, timeline: u64, role: Option<Role>, cold: bool) -> bool {
        self.timeline.is_none_or(|id| id == timeline)
            && self.role.is_none_or(|r| Some(r) == role)
            && self.cold.is_none_or(|c| c == cold)
    }
}

/// A message that matches a search.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchHit {
    /// The timeline of the message.
    pub timeline: u64,
    /// The message's node number.
    pub node: u64,
    /// Relevance: BM25 as FTS5's `bm25()` defines it (`crate::search::Scorer`), negated, so higher
    /// is better.
    pub score: f64,
    /// The message's creation time (`Tx::created_at`).
    pub created_at: Option<u64>,
}

/// Whether a node is searchable at all: a message or real summary, not the root or a placeholder.
pub fn searchable(n: u64, node: &Node) -> bool {
    n != crate::model::ROOT && !node.is_placeholder()
}

/// Sizes reported by `db info`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    /// Number of timelines.
    pub timelines: u64,
    /// Number of messages and summaries (hot and cold), roots excluded.
    pub nodes: u64,
    /// Number of archived nodes (the cold zone).
    pub cold_nodes: u64,
}

/// An open database: one of the two engines.
// One store per process or session, never kept in a collection: its size does not matter, and a box
// would only add an indirection to every call.
#[allow(clippy::large_enum_variant)]
pub enum Store {
    /// The SQLite engine.
    Sqlite(sqlite::SqliteStore),
    /// The JSON snapshot engine.
    Json(json::JsonStore),
    /// The PostgreSQL engine.
    Postgres(postgres::PgStore),
}

impl Store {
    /// Open the database at `path` (created by the first change if it does not exist). A file that
    /// is neither engine's is refused and left untouched.
    /// A `postgresql://` or `postgres://` URI names a PostgreSQL database instead (nothing is
    /// connected to until the first read or change).
    pub fn open(path: PathBuf) -> Result<Store> {
        if let Some(uri) = path.to_str().filter(|p| is_uri(p)) {
            return Ok(Store::Postgres(postgres::PgStore::new(
                postgres::PgTarget::parse(uri)?,
            )));
        }
        // Not UTF-8, so not taken for a URI above: it must not be taken for a file either, whose
        // errors would show it, password and all.
        if is_uri(&path.to_string_lossy()) {
            return Err(Error::invalid(
                "invalid argument --db: the PostgreSQL connection URI cannot be used: it is not valid UTF-8 text; percent-encode any other bytes (%XX)",
            ));
        }
        let path = check_path(path)?;
        match Engine::detect(&path)? {
            Some(Engine::Json) => Ok(Store::Json(json::JsonStore::new(path))),
            Some(Engine::Sqlite) => Ok(Store::Sqlite(sqlite::SqliteStore::new(path))),
            // (`detect` reads files; a URI was opened above.)
            Some(Engine::Postgres) | None => Err(Error::database(format!(
                "the file {} is neither a Timeline SQLite database nor a JSON snapshot; nothing was changed. Pass --db with the path of a Timeline database, or with a new file name (ending in .json for a JSON snapshot, anything else for SQLite)",
                path.display()
            ))),
        }
    }

    /// Open the database at `path` to read it without changing anything on disk: no lock file,
    /// `-wal` or `-shm` file is created, an older SQLite schema is not migrated (the read fails
    /// instead), and every change is refused. For shell completion, which runs at each Tab.
    pub fn open_reading_only(path: PathBuf) -> Result<Store> {
        Ok(match Store::open(path)? {
            Store::Sqlite(s) => Store::Sqlite(sqlite::SqliteStore::reading_only(s.path().into())),
            Store::Json(s) => Store::Json(s.reading_only()),
            Store::Postgres(s) => Store::Postgres(s.reading_only()),
        })
    }

    /// Which engine the file uses.
    pub fn engine(&self) -> Engine {
        match self {
            Store::Sqlite(_) => Engine::Sqlite,
            Store::Json(_) => Engine::Json,
            Store::Postgres(_) => Engine::Postgres,
        }
    }

    /// The database file's path; for a PostgreSQL database its URI without the password (the only
    /// form errors and results show).
    pub fn path(&self) -> &Path {
        match self {
            Store::Sqlite(s) => s.path(),
            Store::Json(s) => s.path(),
            Store::Postgres(s) => s.path(),
        }
    }

    /// For a SQLite database, the write-ahead log its writers use in this process (`db info`).
    pub fn sqlite_log(&self) -> Result<Option<SqliteLog>> {
        match self {
            Store::Sqlite(_) => sqlite::sqlite_log().map(Some),
            _ => Ok(None),
        }
    }

    /// The server's version, for a database on a server.
    pub fn server_version(&mut self) -> Result<Option<String>> {
        match self {
            Store::Postgres(s) => s.server_version().map(Some),
            _ => Ok(None),
        }
    }

    /// Run `f` on a consistent view. Nothing it changes is kept.
    pub fn read<R>(&mut self, f: impl FnOnce(&mut dyn Tx) -> Result<R>) -> Result<R> {
        match self {
            Store::Sqlite(s) => s.read(|tx| count::run(tx, f)),
            Store::Json(s) => s.read(|tx| count::run(tx, f)),
            Store::Postgres(s) => s.read(|tx| count::run(tx, f)),
        }
    }

    /// Run `f` in one exclusive transaction and keep what it commits; a failure keeps nothing.
    pub fn write<R>(&mut self, f: impl FnOnce(&mut dyn Tx) -> Result<Outcome<R>>) -> Result<R> {
        match self {
            Store::Sqlite(s) => {
                refuse_missing_directory(s.path())?;
                s.write(|tx| count::run(tx, f))
            }
            Store::Json(s) => {
                refuse_missing_directory(s.path())?;
                s.write(|tx| count::run(tx, f))
            }
            Store::Postgres(s) => s.write(|tx| count::run(tx, f)),
        }
    }

    /// For a long-lived `tl-mcp` session: on SQLite, messages written one at a time wait for the
    /// search index until the session indexes them while its client is quiet (`index_waiting`);
    /// the other engines index as they write.
    pub fn index_while_idle(&mut self) {
        if let Store::Sqlite(s) = self {
            s.index_while_idle();
        }
    }

    /// Whether the store has work worth doing while its client is quiet (`index_waiting`).
    pub fn has_idle_work(&self) -> bool {
        matches!(self, Store::Sqlite(s) if s.has_idle_work())
    }

    /// Index what waits for the search index (SQLite), in a change of its own.
    pub fn index_waiting(&mut self) -> Result<()> {
        match self {
            Store::Sqlite(s) => s.index_waiting(),
            Store::Json(_) | Store::Postgres(_) => Ok(()),
        }
    }

    /// `write` for a change that can be run again from the start: on a server, a transaction that
    /// lost a serialization conflict or a deadlock (nothing of it kept) is retried, with bounded,
    /// jittered backoff. The file engines never have such conflicts (one writer at a time).
    pub fn write_retrying<R>(
        &mut self,
        mut f: impl FnMut(&mut dyn Tx) -> Result<Outcome<R>>,
    ) -> Result<R> {
        match self {
            Store::Postgres(s) => s.write_retrying(|tx| count::run(tx, &mut f)),
            _ => self.write(f),
        }
    }

    /// The schema version (SQLite) or format version (JSON) of the file, if it exists.
    pub fn format_version(&mut self) -> Result<Option<u64>> {
        match self {
            Store::Sqlite(s) => s.schema_version(),
            Store::Json(s) => s.format_version(),
            Store::Postgres(s) => s.schema_version(),
        }
    }

    /// A consistent copy of the database at `target`, a file that must not exist yet; returns the
    /// copy's engine (a file engine's own; for a server database the one the file name gives).
    pub fn backup(&mut self, target: &Path) -> Result<Engine> {
        match self {
            Store::Sqlite(s) => s.backup(target).map(|()| Engine::Sqlite),
            Store::Json(s) => s.backup(target).map(|()| Engine::Json),
            Store::Postgres(s) => s.backup(target),
        }
    }

    /// Problems found by an integrity check; empty when there are none. Changes nothing.
    pub fn check(&mut self) -> Result<Vec<String>> {
        match self {
            Store::Sqlite(s) => s.check(),
            Store::Json(s) => s.check(),
            Store::Postgres(s) => s.check(),
        }
    }

    /// Rebuild the derived indexes a file stores (SQLite: the full-text search index) from the
    /// messages, in one transaction; returns the names of what was rebuilt (none for a JSON snapshot,
    /// which stores no index).
    pub fn repair(&mut self) -> Result<Vec<String>> {
        match self {
            Store::Sqlite(s) => s.repair(),
            Store::Json(_) => Ok(Vec::new()),
            Store::Postgres(s) => s.repair(),
        }
    }

    /// Write `db` as a new database at `target` (which must not exist), in the engine its extension
    /// names, or into the PostgreSQL database a connection URI names (whose schema must hold no
    /// Timeline tables).
    pub fn create_from(target: &Path, db: &Database) -> Result<Engine> {
        if let Some(uri) = target.to_str().filter(|t| is_uri(t)) {
            postgres::PgStore::create_from(&postgres::PgTarget::parse(uri)?, db)?;
            return Ok(Engine::Postgres);
        }
        refuse_existing(target)?;
        let engine = Engine::for_new_path(target);
        match engine {
            Engine::Json => json::JsonStore::create_from(target, db)?,
            Engine::Sqlite => sqlite::SqliteStore::create_from(target, db)?,
            Engine::Postgres => {
                return Err(Error::internal(
                    "internal error: a URI reached the file engines",
                ));
            }
        }
        Ok(engine)
    }
}

/// How a `--db` or `--to` value may be shown: a connection URI without its password, a path as it is.
pub fn shown(location: &str) -> String {
    if is_uri(location) {
        postgres::PgTarget::parse(location)
            .map(|t| t.redacted())
            .unwrap_or_else(|_| "a postgresql:// URI".to_string())
    } else {
        location.to_string()
    }
}

/// `text` with every connection URI of `given` (command-line arguments, `--db=URI` included) in it
/// replaced by its `shown` form: for messages that repeat what was typed (a misspelt command), so
/// that no password in a URI is ever printed.
pub fn hide_uris<'a>(text: &str, given: impl IntoIterator<Item = &'a str>) -> String {
    let mut out = text.to_string();
    for arg in given {
        let start = ["postgresql://", "postgres://"]
            .iter()
            .filter_map(|scheme| arg.find(scheme))
            .min();
        if let Some(uri) = start.map(|at| &arg[at..]) {
            out = out.replace(uri, &shown(uri));
        }
    }
    out
}

/// The whole database at `path`, whichever engine holds it (tests, tools).
pub fn load_database(path: &Path) -> Result<Database> {
    Store::open(path.to_path_buf())?.read(|tx| tx.load_database())
}

/// Refuse a `--to` target that exists (never overwrite) or whose directory does not.
pub(crate) fn refuse_existing(target: &Path) -> Result<()> {
    if fs::symlink_metadata(target).is_ok() {
        return Err(Error::new(
            crate::error::ErrorKind::Output,
            format!(
                "{} already exists; nothing was written. Choose a new file name (Timeline never overwrites a file)",
                target.display()
            ),
        ));
    }
    let parent = parent_dir(target);
    if !parent.is_dir() {
        return Err(Error::new(
            crate::error::ErrorKind::Output,
            format!(
                "the directory {} does not exist; create it first or choose another path",
                parent.display()
            ),
        ));
    }
    Ok(())
}

/// Checks every engine needs before a path is used: not a directory, parent directory exists, a
/// regular file if it exists. A symbolic link is opened by the kernel (see `follow_link`), so the
/// lock, backup and temporary files live beside the real file and writes go through the link instead
/// of replacing it.
fn check_path(path: PathBuf) -> Result<PathBuf> {
    if path
        .as_os_str()
        .to_string_lossy()
        .ends_with(std::path::is_separator)
    {
        return Err(Error::database(format!(
            "{} ends with a path separator, so it names a directory; pass --db with a file path such as {}",
            path.display(),
            path.join("timeline.db").display()
        )));
    }
    let path = match fs::symlink_metadata(&path) {
        Ok(meta) if meta.file_type().is_symlink() => follow_link(&path, &meta)?,
        _ => path,
    };
    let parent = parent_dir(&path);
    match fs::metadata(&parent) {
        Ok(meta) if meta.is_dir() => {}
        Ok(_) => {
            return Err(Error::database(format!(
                "{} is not a directory; pass --db with a path inside an existing directory",
                parent.display()
            )));
        }
        // A read of a database whose directory does not exist finds an empty database, as for a
        // missing file, and creates nothing; a change is refused by `Store::write`.
        Err(_) => return Ok(path),
    }
    if path.is_dir() {
        return Err(Error::database(format!(
            "{} is a directory, not a database file; pass --db with a file path",
            path.display()
        )));
    }
    if let Ok(meta) = fs::metadata(&path) {
        refuse_special_file(&path, &meta)?;
    }
    Ok(path)
}

/// A change needs the database's directory: Timeline creates only the default one (before the change,
/// `service::DbLocation::before_change`), never a directory a typo in `--db` named.
fn refuse_missing_directory(path: &Path) -> Result<()> {
    let parent = parent_dir(path);
    if fs::metadata(&parent).is_ok() {
        return Ok(());
    }
    // The same words on every platform: the conformance cases compare them exactly.
    Err(Error::database(format!(
        "the directory {} does not exist; create it first (mkdir -p \"{}\") or pass --db with another path",
        parent.display(),
        parent.display()
    )))
}

/// A FIFO would block the read for ever (while holding the lock) and a device would read without
/// end: only a regular file can be a database.
fn refuse_special_file(path: &Path, meta: &fs::Metadata) -> Result<()> {
    if meta.is_file() {
        return Ok(());
    }
    Err(Error::database(format!(
        "{} is not a regular file (it is a FIFO, socket or device), so it cannot be a database; nothing was read or written. Pass --db with the path of a database file",
        path.display()
    )))
}

/// The real path of the database a symbolic link names. The kernel follows the link (so its own rules,
/// such as Linux's `protected_symlinks`, apply), and the path returned is checked to be the file the
/// kernel opened. Resolving the link in user space instead would let a link planted in a shared
/// directory such as /tmp send a write anywhere its target names.
fn follow_link(link: &Path, link_meta: &fs::Metadata) -> Result<PathBuf> {
    #[cfg(unix)]
    refuse_foreign_link_in_shared_dir(link, link_meta)?;
    #[cfg(not(unix))]
    let _ = link_meta;
    let target = || {
        fs::read_link(link)
            .map(|t| t.display().to_string())
            .unwrap_or_else(|_| "?".into())
    };
    let meta = match fs::metadata(link) {
        Ok(meta) => meta,
        Err(e) if e.kind() == IoKind::NotFound => {
            return Err(Error::database(
                Message::from(format!(
                    "{} is a symbolic link to {}, which does not exist; nothing was read or written. Timeline does not create a database through a link (it could not tell who may write where the link points): ",
                    link.display(),
                    target()
                ))
                .worded(
                    "create the database at the real path (tl --db <real path> create) or remove the link",
                    "stop and tell the user to start this server on the real path or to remove the link",
                ),
            ));
        }
        Err(e) => {
            return Err(io_error(
                &format!(
                    "cannot follow the symbolic link {} (to {})",
                    link.display(),
                    target()
                ),
                e,
            ));
        }
    };
    if !meta.is_dir() {
        // (A directory is named as one by `check_path`.)
        refuse_special_file(link, &meta)?;
    }
    let opened = open_no_block(link).map_err(|e| {
        io_error(
            &format!(
                "cannot open the database {} (a link to {})",
                link.display(),
                target()
            ),
            e,
        )
    })?;
    let real = fs::canonicalize(link).map_err(|e| {
        io_error(
            &format!("cannot follow the symbolic link {}", link.display()),
            e,
        )
    })?;
    if !same_file(&opened, &real) {
        return Err(Error::database(format!(
            "the symbolic link {} changed while it was being opened; nothing was read or written. Try again, and check who else can write in {}",
            link.display(),
            parent_dir(link).display()
        )));
    }
    Ok(real)
}

/// The kernel's `protected_symlinks` rule, applied whatever the system's setting (see
/// `fsutil::foreign_link_in_shared_dir`).
#[cfg(unix)]
fn refuse_foreign_link_in_shared_dir(link: &Path, link_meta: &fs::Metadata) -> Result<()> {
    let dir = parent_dir(link);
    if let Some(owner) = crate::fsutil::foreign_link_in_shared_dir(link, link_meta) {
        return Err(Error::database(format!(
            "{} is a symbolic link owned by another user (uid {owner}) in {}, a directory anyone can write to, so Timeline will not follow it: such a link can be planted to make you read or write a file elsewhere. Nothing was read or written. Pass --db with the real path of the database, or keep the database in a directory only you can write to",
            link.display(),
            dir.display()
        )));
    }
    Ok(())
}

/// A new database that cannot be created where its path says, naming the directory that is the
/// problem rather than a file that does not exist.
pub(crate) fn cannot_create(path: &Path, e: std::io::Error) -> Error {
    let dir = parent_dir(path);
    let why = match e.kind() {
        IoKind::ReadOnlyFilesystem => format!(
            "its directory {} is on a read-only file system",
            dir.display()
        ),
        IoKind::PermissionDenied => format!(
            "you may not create files in its directory {} (permission denied)",
            dir.display()
        ),
        _ => return io_error(&format!("cannot create the database {}", path.display()), e),
    };
    Error::database(format!(
        "cannot create the database {}: {why}; nothing was written. Pass --db with a path in a directory you may write to",
        path.display()
    ))
    .with_source(e)
}

pub(crate) fn io_error(what: &str, e: std::io::Error) -> Error {
    let hint = match e.kind() {
        IoKind::PermissionDenied => " (permission denied: check the file's owner and mode)",
        IoKind::NotFound => " (a directory on the path does not exist)",
        IoKind::ReadOnlyFilesystem => {
            " (the file system is read-only: reading works, but a change needs a copy of the database in a writable place)"
        }
        IoKind::StorageFull | IoKind::QuotaExceeded => {
            " (the disk is full: free some space and try again)"
        }
        IoKind::FileTooLarge => {
            " (the file would be larger than this process may write: raise the file size limit (ulimit -f) or use a file system that takes larger files)"
        }
        _ => "",
    };
    Error::database(format!("{what}: {e}{hint}")).with_source(e)
}
