//! The SQLite engine: nodes, branches, idempotency records and the audit as rows, with the derived
//! state (prefix tokens, depth, coverage, stale flags, versions) stored beside each node and kept up to
//! date by the operations, so no operation reads more than the rows it touches.
//!
//! The file is in WAL mode; every change is one `BEGIN IMMEDIATE` transaction with `synchronous=FULL`,
//! covering the operation, its idempotency record and its audit entries. Concurrent processes wait for
//! each other (busy timeout) instead of failing. The schema has a version (`PRAGMA user_version`) and
//! forward migrations; a newer schema than this build knows is refused untouched.

use super::memory::MemTx;
use super::{
    Counts, Engine, NodeChange, NodeRow, Outcome, SearchHit, SearchScope, TimelineRow, Tx,
    io_error, perms, with_suffix,
};
use crate::error::{Error, Result};
use crate::model::file::{AuditEntry, IdempotencyEntry, ImportRecord};
use crate::model::{
    ArchivedBranch, Branch, Database, Intent, Node, ROOT, Role, Summary, SummaryKind, Timeline,
    summary_request_digest,
};
use crate::search::Query;
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use std::fmt::Display;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod create;

/// The first 16 bytes of every SQLite database file.
pub const HEADER: &[u8] = b"SQLite format 3\0";

/// `PRAGMA application_id` of a Timeline database ("TLne"), so another program's SQLite file is
/// recognised and refused instead of being written into.
const APPLICATION_ID: i32 = 0x544c_6e65;

/// How long a change waits for another process's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Forward migrations: `MIGRATIONS[v]` takes the schema from version `v` to `v + 1`. Version 0 is an
/// empty file. The schema version of this build is `MIGRATIONS.len()`. A migration, once released,
/// is never edited: a change of schema is a new migration appended at the end.
const MIGRATIONS: &[&str] = &[
    // 0 → 1: the first schema. The lookups by parent and by range start carry the node ID, so that
    // their `ORDER BY id` walks the index instead of the whole timeline's primary key.
    r#"
CREATE TABLE state (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    next_timeline INTEGER NOT NULL
);
INSERT INTO state (id, next_timeline) VALUES (0, 0);
CREATE TABLE timelines (
    id INTEGER PRIMARY KEY,
    next_node INTEGER NOT NULL,
    current_branch TEXT NOT NULL,
    cold_nodes INTEGER NOT NULL DEFAULT 0,
    title TEXT,
    created_at INTEGER,
    updated_at INTEGER
);
CREATE TABLE nodes (
    timeline INTEGER NOT NULL,
    id INTEGER NOT NULL,
    parent INTEGER NOT NULL,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    intent_tag TEXT,
    intent_note TEXT,
    summary_kind TEXT,
    summary_from INTEGER,
    summary_to INTEGER,
    derived_from TEXT,
    supersedes INTEGER,
    version INTEGER,
    request_digest BLOB,
    cold INTEGER NOT NULL DEFAULT 0,
    pinned INTEGER NOT NULL DEFAULT 0,
    prefix_tokens INTEGER NOT NULL,
    depth INTEGER NOT NULL,
    cover_count INTEGER NOT NULL DEFAULT 0,
    stale INTEGER NOT NULL DEFAULT 0,
    superseded_by INTEGER,
    created_at INTEGER,
    PRIMARY KEY (timeline, id)
);
CREATE INDEX nodes_by_parent ON nodes (timeline, parent, id);
CREATE INDEX nodes_by_range_start ON nodes (timeline, summary_from, id) WHERE summary_from IS NOT NULL;
CREATE INDEX nodes_by_request ON nodes (timeline, request_digest) WHERE request_digest IS NOT NULL;
CREATE TABLE summary_sources (
    timeline INTEGER NOT NULL,
    summary INTEGER NOT NULL,
    source INTEGER NOT NULL,
    PRIMARY KEY (timeline, summary, source)
);
CREATE INDEX summary_sources_by_source ON summary_sources (timeline, source, summary);
CREATE TABLE branches (
    seq INTEGER PRIMARY KEY,
    timeline INTEGER NOT NULL,
    name TEXT NOT NULL,
    head INTEGER NOT NULL,
    watermark INTEGER NOT NULL,
    UNIQUE (timeline, name)
);
CREATE TABLE idempotency (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    op TEXT NOT NULL,
    result TEXT NOT NULL,
    ts INTEGER NOT NULL,
    request TEXT,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_by_ts ON idempotency (ts);
CREATE TABLE audit (
    seq INTEGER PRIMARY KEY,
    ts INTEGER NOT NULL,
    entry TEXT NOT NULL
);
"#,
    // 1 → 2, archived branches (restore-branch): what archive-branch removed, so that
    // restore-branch can bring it back. `nodes` is a JSON array of the node numbers the archival
    // moved to the cold zone; `seq` orders the archivals.
    r#"
CREATE TABLE archived_branches (
    seq INTEGER PRIMARY KEY,
    timeline INTEGER NOT NULL,
    name TEXT NOT NULL,
    head INTEGER NOT NULL,
    watermark INTEGER NOT NULL,
    position INTEGER NOT NULL,
    nodes TEXT NOT NULL
);
CREATE INDEX archived_branches_by_name ON archived_branches (timeline, name, seq);
-- Also 1 → 2, imports (tl import, issue 15): one row per conversation brought in. The record column
-- is the ImportRecord as JSON; the other columns are its lookup keys.
CREATE TABLE imports (
    seq INTEGER PRIMARY KEY,
    format TEXT NOT NULL,
    source_key TEXT NOT NULL,
    digest TEXT NOT NULL,
    timeline INTEGER NOT NULL,
    ts INTEGER NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX imports_by_source ON imports (format, source_key, seq);
"#,
    // 2 → 3 (issue 14, full-text search): the search index, filled from the existing messages.
    MIGRATION_SEARCH_INDEX,
    // 3 → 4 (issue 21, item 7): where an imported message came from, in a column only import
    // writes (see `Node::provenance`). Import records written before kept it in the intent note;
    // it moves only for the nodes an import record says that import created, so a caller's
    // look-alike note on any other node stays an ordinary note.
    r#"
ALTER TABLE nodes ADD COLUMN provenance TEXT;
UPDATE nodes SET provenance = intent_note, intent_note = NULL
WHERE intent_note LIKE '{"import":%'
  AND json_valid(intent_note)
  AND json_type(intent_note, '$.import') = 'text'
  AND EXISTS (
    SELECT 1 FROM imports i
    WHERE i.timeline = nodes.timeline
      AND nodes.id >= CAST(substr(json_extract(i.record, '$.first_node'), 2) AS INTEGER)
      AND nodes.id < CAST(substr(json_extract(i.record, '$.first_node'), 2) AS INTEGER)
                     + json_extract(i.record, '$.nodes')
  );
"#,
    // 4 → 5 (issue 21, item 11): an import looks up a conversation's digest by index, not by
    // reading every earlier record of its source key (linear time for many shared source IDs).
    // IF NOT EXISTS: tests that rebuild an older schema by dropping tables keep this index.
    "CREATE INDEX IF NOT EXISTS imports_by_digest ON imports (format, source_key, digest, seq);",
    // 5 → 6 (issue 21, item 6): the rows whose parent is not older than them, which Timeline never
    // writes. A parent cycle always contains one, so every change checks that this index is empty
    // (one lookup) before it writes: nothing is written to a file that claims a cycle anywhere.
    "CREATE INDEX nodes_with_newer_parent ON nodes (timeline, id) WHERE parent >= id AND id != 0;",
];

/// The migration that adds full-text search (issue 14). `search_docs` gives each searchable message a
/// stable document number (an INTEGER PRIMARY KEY survives VACUUM); `search_index` is a contentless
/// FTS5 table over the message's terms as `crate::search` cuts them, joined by spaces, so its `ascii`
/// tokenizer only splits at those spaces. Both are written in the transaction that inserts the node.
/// The terms come from the SQL function `tl_search_terms`, registered on every connection.
const MIGRATION_SEARCH_INDEX: &str = r#"
CREATE TABLE search_docs (
    doc INTEGER PRIMARY KEY,
    timeline INTEGER NOT NULL,
    node INTEGER NOT NULL,
    UNIQUE (timeline, node)
);
CREATE VIRTUAL TABLE search_index USING fts5(terms, content = '', tokenize = 'ascii');
"#;

/// Fill the search index from every searchable message (after the migration, and by
/// `tl db check --repair` after emptying it).
const FILL_SEARCH_INDEX: &str = r#"
INSERT INTO search_docs (timeline, node)
    SELECT timeline, id FROM nodes
    WHERE id != 0 AND summary_kind IS NOT 'placeholder' AND tl_search_terms(text) != ''
    ORDER BY timeline, id;
INSERT INTO search_index (rowid, terms)
    SELECT d.doc, tl_search_terms(n.text) FROM search_docs d
    JOIN nodes n ON n.timeline = d.timeline AND n.id = d.node
    ORDER BY d.doc;
"#;

/// The schema version this build writes.
pub fn schema_version() -> u64 {
    MIGRATIONS.len() as u64
}

/// One entry of `sqlite_schema`: a table, index, trigger or view.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SchemaObject {
    kind: String,
    name: String,
    table: String,
    sql: Option<String>,
}

impl SchemaObject {
    /// "trigger t on nodes", "view v", "table nodes (defined otherwise than Timeline defines it)".
    fn describe(&self, changed: bool) -> String {
        let mut text = format!("{} {}", self.kind, self.name);
        if matches!(self.kind.as_str(), "trigger" | "index") && self.table != self.name {
            text.push_str(&format!(" on {}", self.table));
        }
        if changed {
            text.push_str(" (defined otherwise than Timeline defines it)");
        }
        text
    }
}

fn schema_objects(conn: &Connection) -> rusqlite::Result<Vec<SchemaObject>> {
    let mut stmt =
        conn.prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY rowid")?;
    stmt.query_map([], |r| {
        Ok(SchemaObject {
            kind: r.get(0)?,
            name: r.get(1)?,
            table: r.get(2)?,
            sql: r.get(3)?,
        })
    })?
    .collect()
}

/// Tables SQLite itself creates and manages (AUTOINCREMENT counters, ANALYZE statistics): data the
/// query planner reads, never code.
const SQLITE_INTERNAL_TABLES: &[&str] = &["sqlite_sequence", "sqlite_stat1", "sqlite_stat4"];

/// The schema objects of the file that Timeline's migrations up to `version` do not create, each
/// with whether it is one of Timeline's names defined otherwise. The expected list is what those
/// migrations create in an empty in-memory database: every table, index, FTS5 shadow table and
/// automatic index, exactly, with its SQL text. Reading `sqlite_schema` runs none of the objects.
fn foreign_objects(conn: &Connection, version: u64) -> rusqlite::Result<Vec<(SchemaObject, bool)>> {
    let found = schema_objects(conn)?;
    let reference = Connection::open_in_memory()?;
    let upto = usize::try_from(version).map_or(MIGRATIONS.len(), |v| v.min(MIGRATIONS.len()));
    // One transaction, never committed: the cost of building the reference on every open is the
    // statements alone.
    reference.execute_batch("BEGIN")?;
    for migration in &MIGRATIONS[..upto] {
        reference.execute_batch(migration)?;
    }
    let expected = schema_objects(&reference)?;
    // The shadow tables of a virtual table (search_index_data, ...) are written by SQLite's FTS5
    // module, whose wording of their definition is its own and may differ between SQLite releases;
    // they are matched by name (defensive mode makes them read-only to SQL, and no table is code).
    let virtual_tables: Vec<&str> = expected
        .iter()
        .filter(|e| {
            e.sql
                .as_deref()
                .is_some_and(|sql| sql.starts_with("CREATE VIRTUAL TABLE"))
        })
        .map(|e| e.name.as_str())
        .collect();
    let shadow = |e: &SchemaObject| {
        e.kind == "table"
            && virtual_tables.iter().any(|v| {
                e.name
                    .strip_prefix(v)
                    .is_some_and(|rest| rest.starts_with('_'))
            })
    };
    let expected_here = |o: &SchemaObject| {
        expected.iter().any(|e| {
            (e.kind.as_str(), e.name.as_str(), e.table.as_str())
                == (o.kind.as_str(), o.name.as_str(), o.table.as_str())
                && (e.sql == o.sql || shadow(e))
        })
    };
    Ok(found
        .into_iter()
        .filter(|o| !(o.kind == "table" && SQLITE_INTERNAL_TABLES.contains(&o.name.as_str())))
        .filter(|o| !expected_here(o))
        .map(|o| {
            let changed = expected.iter().any(|e| e.name == o.name);
            (o, changed)
        })
        .collect())
}

/// The foreign objects of the schema and the schema cookie they were read with, both in one read
/// transaction: a trigger another process adds at that moment either is read or changes the cookie,
/// so it is never taken for verified.
fn verify_schema(
    conn: &Connection,
    version: u64,
) -> rusqlite::Result<(i32, Vec<(SchemaObject, bool)>)> {
    conn.execute_batch("BEGIN")?;
    let read = schema_cookie(conn).and_then(|cookie| Ok((cookie, foreign_objects(conn, version)?)));
    let _ = conn.execute_batch("COMMIT");
    read
}

/// The cookie SQLite changes with every change of the schema.
fn schema_cookie(conn: &Connection) -> rusqlite::Result<i32> {
    conn.query_row("PRAGMA schema_version", [], |r| r.get(0))
}

/// Inside a transaction, before anything else: when the schema changed since it was last verified
/// (another program added a trigger while a `tl-mcp` session was open), verify it again. The
/// transaction's snapshot (or its write lock) keeps the schema as verified until it ends.
fn guard_schema(conn: &Connection, path: &Path, verified: &mut Option<i32>) -> Result<()> {
    let cookie = schema_cookie(conn).map_err(|e| failure(path, "cannot read", e))?;
    if *verified == Some(cookie) {
        return Ok(());
    }
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| failure(path, "cannot read", e))?;
    let version = u64::try_from(version).unwrap_or(u64::MAX);
    let foreign = foreign_objects(conn, version).map_err(|e| failure(path, "cannot read", e))?;
    if !foreign.is_empty() {
        *verified = None;
        return Err(foreign_schema(path, &foreign));
    }
    *verified = Some(cookie);
    Ok(())
}

/// Inside a change, before anything is written: refuse a file with a row whose parent is not older
/// than it (part of any parent cycle), wherever it is. The partial index holds only such rows, so
/// this costs one lookup whatever the size; `INDEXED BY` makes a plan without it an error.
fn refuse_newer_parents(conn: &Connection, path: &Path) -> Result<()> {
    let found: Option<(i64, i64, i64)> = conn
        .query_row(
            "SELECT timeline, id, parent FROM nodes INDEXED BY nodes_with_newer_parent WHERE parent >= id AND id != 0 ORDER BY timeline, id LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()
        .map_err(|e| failure(path, "cannot read", e))?;
    match found {
        None => Ok(()),
        Some((tl, id, parent)) => Err(newer_parent(path, tl, id, parent)),
    }
}

/// The damage of a node whose parent is not older than it.
fn newer_parent(path: &Path, tl: impl Display, id: impl Display, parent: impl Display) -> Error {
    corrupt(
        path,
        &format!(
            "timeline tl{tl}: node n{id} has parent n{parent}, which is not older than it (Timeline always writes a parent before its children, so something else changed the file)"
        ),
    )
}

/// The statement that removes a foreign object.
fn drop_statement(o: &SchemaObject) -> String {
    format!(
        "DROP {} \"{}\";",
        o.kind.to_uppercase(),
        o.name.replace('"', "\"\"")
    )
}

/// What `db check` reports of foreign schema objects: one problem each, with how to remove it
/// (one of Timeline's own names defined otherwise only a backup gives back).
fn foreign_problems(foreign: &[(SchemaObject, bool)]) -> Vec<String> {
    foreign
        .iter()
        .map(|(o, changed)| {
            if *changed {
                format!(
                    "{} is not part of Timeline's schema; restore a backup of the database",
                    o.describe(true)
                )
            } else {
                format!(
                    "{} is not part of Timeline's schema (a database file is data, not code); remove it with the sqlite3 shell ({})",
                    o.describe(false),
                    drop_statement(o)
                )
            }
        })
        .collect()
}

/// The refusal of a database that holds schema objects Timeline did not create.
fn foreign_schema(path: &Path, foreign: &[(SchemaObject, bool)]) -> Error {
    let names: Vec<String> = foreign.iter().map(|(o, c)| o.describe(*c)).collect();
    // Triggers and views first: they may name the tables and indexes dropped after them.
    let mut removable: Vec<&SchemaObject> = foreign
        .iter()
        .filter(|(_, changed)| !changed)
        .map(|(o, _)| o)
        .collect();
    removable.sort_by_key(|o| match o.kind.as_str() {
        "trigger" => 0,
        "view" => 1,
        "index" => 2,
        _ => 3,
    });
    let drops: Vec<String> = removable.into_iter().map(drop_statement).collect();
    let remove = if drops.is_empty() {
        String::new()
    } else {
        format!(
            " remove them with the sqlite3 shell ({}), or",
            drops.join(" ")
        )
    };
    Error::database(format!(
        "the database {} holds schema objects that Timeline did not create: {}. A database file is data, not code: a trigger or view can run whenever the database is read or changed, and any object Timeline did not make can change what its queries do, so Timeline does not use this file; nothing was changed. If you added them yourself,{remove} restore a backup of the database you trust; otherwise the file may have been tampered with: keep a copy of it for inspection and restore a backup",
        path.display(),
        names.join(", ")
    ))
}

/// The SQL functions the schema's statements use: `tl_search_terms(text)`, a message's terms as the
/// search index stores them.
fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    conn.create_scalar_function(
        "tl_search_terms",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let text: String = ctx.get(0)?;
            Ok(crate::search::indexed_text(&text))
        },
    )
}

/// SQLite stores signed 64-bit integers; Timeline's counters are unsigned. The bits are kept as they
/// are, so every u64 survives the round trip (nothing compares them in SQL beyond equality).
fn sql(v: u64) -> i64 {
    v as i64
}

fn unsql(v: i64) -> u64 {
    v as u64
}

pub struct SqliteStore {
    path: PathBuf,
    /// Kept open for the life of the store (a whole `tl-mcp` session).
    conn: Option<Connection>,
    /// Why the open connection can only read, if it can only read.
    read_only: Option<ReadOnly>,
    /// Never open the file for writing, whatever the permissions allow (shell completion).
    reads_only: bool,
    /// For a connection opened as immutable, the file as it was before it was opened: such a
    /// connection trusts its cache, so it serves one read only and the read must find the file as
    /// it was (see `end_immutable_read`).
    immutable_since: Option<FileStamp>,
    /// The schema cookie (`PRAGMA schema_version`) of the schema last verified to hold only what
    /// Timeline created; a transaction that finds another verifies the schema again (`guard_schema`).
    verified_schema: Option<i32>,
    /// `Some` while `db check` opens the file: a database with foreign schema objects is opened
    /// anyway (not migrated, the objects untouched), and they are collected here to be listed.
    foreign: Option<Vec<(SchemaObject, bool)>>,
    /// Whether this store has removed the temporaries of dead first writes (see `create`).
    swept: bool,
}

/// What changes when anything writes to a file or replaces it.
#[derive(Debug, Clone, PartialEq, Eq)]
struct FileStamp {
    len: u64,
    modified: Option<std::time::SystemTime>,
    #[cfg(unix)]
    inode: (u64, u64, i64, i64),
}

fn file_stamp(path: &Path) -> Option<FileStamp> {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    use std::os::unix::fs::MetadataExt;
    Some(FileStamp {
        len: meta.len(),
        modified: meta.modified().ok(),
        #[cfg(unix)]
        inode: (meta.dev(), meta.ino(), meta.ctime(), meta.ctime_nsec()),
    })
}

/// How a connection opens the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Opening {
    ReadWrite,
    ReadOnly,
    /// Read-only, without locks or -wal/-shm files: only for a file nothing writes to.
    Immutable,
}

/// Why a database this process may read cannot be changed by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadOnly {
    /// The file system is mounted read-only: nobody can change the file while it is read.
    Media,
    /// The file is not writable by this user (another user's database, or mode 0444).
    Permission,
    /// The file is writable, but SQLite cannot create its -wal and -shm files in the directory.
    Directory,
    /// Its `-wal` or `-shm` file (the suffix) is a symbolic link, which SQLite does not open.
    Link(&'static str),
    /// Opened for reading only on purpose (`SqliteStore::reading_only`).
    Requested,
}

/// Whether this process may write the database file at `path`, tried with an open for writing
/// that neither creates nor truncates anything.
fn write_access(path: &Path) -> Option<ReadOnly> {
    match std::fs::OpenOptions::new().write(true).open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem => Some(ReadOnly::Media),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Some(ReadOnly::Permission),
        _ => None,
    }
}

/// An SQLite URI that opens `path` as immutable: no lock, no -wal or -shm file, which is right only
/// where nothing writes to the file while it is read (see `open_checked`). `?`, `#` and `%` are
/// escaped so any file name works; an absolute path gets an empty authority (`file:///…`), so a path
/// that starts with `//` (a Windows share) is not taken for a host name.
fn immutable_uri(path: &Path) -> String {
    let text = path.to_string_lossy();
    #[cfg(windows)]
    let text = {
        // \\?\C:\x and \\?\UNC\host\share\x (what canonicalize gives) are C:\x and \\host\share\x.
        let plain = match text.strip_prefix(r"\\?\") {
            Some(rest) => match rest.strip_prefix(r"UNC\") {
                Some(share) => format!(r"\\{share}"),
                None => rest.to_string(),
            },
            None => text.into_owned(),
        };
        let plain = plain.replace('\\', "/");
        if plain.chars().nth(1) == Some(':') {
            format!("/{plain}")
        } else {
            plain
        }
    };
    let mut uri = String::from(if text.starts_with('/') {
        "file://"
    } else {
        "file:"
    });
    for c in text.chars() {
        match c {
            '%' => uri.push_str("%25"),
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            c => uri.push(c),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

impl SqliteStore {
    pub fn new(path: PathBuf) -> SqliteStore {
        SqliteStore {
            path,
            conn: None,
            read_only: None,
            reads_only: false,
            immutable_since: None,
            verified_schema: None,
            foreign: None,
            swept: false,
        }
    }

    /// A store that never opens the file for writing and refuses every change: for reading a database
    /// without touching it at all (no -wal, -shm or migration), as shell completion does.
    pub fn reading_only(path: PathBuf) -> SqliteStore {
        SqliteStore {
            reads_only: true,
            ..SqliteStore::new(path)
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn exists(&self) -> bool {
        self.path.exists()
    }

    /// The open connection, opening (and with `create`, creating) the database first. `None` when the
    /// file does not exist and `create` is false: a read of a database not created yet.
    fn connection(&mut self, create: bool) -> Result<Option<&mut Connection>> {
        if self.conn.is_none() {
            if !self.exists() {
                if !create {
                    return Ok(None);
                }
                // Created by us first, so the file (and the -wal and -shm files SQLite derives their
                // mode from) is private from the start.
                match perms::open_private(&self.path, true) {
                    Ok(_) => super::sync_parent(&self.path),
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                    Err(e) => {
                        return Err(io_error(
                            &format!("cannot create the database {}", self.path.display()),
                            e,
                        ));
                    }
                }
            }
            let conn = self.open_checked()?;
            self.conn = Some(conn);
        }
        Ok(self.conn.as_mut())
    }

    fn open_checked(&mut self) -> Result<Connection> {
        self.read_only = if self.reads_only {
            Some(ReadOnly::Requested)
        } else {
            write_access(&self.path)
        };
        let wal_has_changes = self.wal_has_changes();
        // Reading without write access: a read-only connection through the -shm file of a
        // connection that is open now, or, when none is open (no -shm file) and no changes wait in
        // the -wal file, the file as it stands. A read-only connection would otherwise create a
        // -shm and a -wal file owned by this user beside someone else's database, which its owner
        // could then not write: a read must change nothing.
        let shm_exists = with_suffix(&self.path, "-shm").exists();
        let without_writing = if shm_exists {
            Opening::ReadOnly
        } else if !wal_has_changes || self.reads_only {
            // (Reading only on purpose, changes a stopped writer left in the -wal file are not
            // seen: bringing them in means creating the -shm file. The next change brings them in.)
            Opening::Immutable
        } else {
            Opening::ReadOnly
        };
        if self.read_only == Some(ReadOnly::Permission) && !shm_exists && wal_has_changes {
            let db = self.path.display();
            return Err(Error::database(format!(
                "cannot read the database {db} without changing files beside it: its -wal file holds changes that a program writing it left when it stopped, and only someone who may write the database can bring them in. Nothing was changed. Ask its owner to run any command on it (such as tl --db \"{db}\" branches), or copy the database with its -wal file to a place of your own and use the copy"
            )));
        }
        let mut how = match self.read_only {
            None => Opening::ReadWrite,
            // Nothing can write on read-only media; a -wal file left with changes by a writer
            // stopped before the media became read-only must be read through its -shm file.
            Some(ReadOnly::Media) if !wal_has_changes => Opening::Immutable,
            Some(_) => without_writing,
        };
        let stamp = file_stamp(&self.path);
        let mut opened = self.open_as(how);
        // SQLite could not create or use a file beside the database (-wal, -shm): fall back to
        // reading without them. A writable file in a directory this user may not write is read-only
        // for this user all the same.
        while let Err(e) = &opened
            && matches!(
                e.sqlite_error_code(),
                Some(rusqlite::ErrorCode::CannotOpen | rusqlite::ErrorCode::ReadOnly)
            )
        {
            how = match how {
                Opening::ReadWrite => {
                    self.read_only =
                        Some(linked_side_file(&self.path).unwrap_or(ReadOnly::Directory));
                    without_writing
                }
                Opening::ReadOnly if !wal_has_changes => Opening::Immutable,
                _ => break,
            };
            opened = self.open_as(how);
        }
        if how == Opening::Immutable {
            self.immutable_since = stamp;
        }
        let (conn, (version, app, tables)) = opened.map_err(|e| self.open_failure(e))?;
        let empty = version == 0 && app == 0 && tables == 0;
        if !empty && app != APPLICATION_ID {
            return Err(Error::database(format!(
                "the file {} is an SQLite database of another program, not a Timeline database; nothing was changed. Pass --db with the path of a Timeline database",
                self.path.display()
            )));
        }
        let version = u64::try_from(version).unwrap_or(u64::MAX);
        if version > schema_version() {
            return Err(Error::database(format!(
                "the database {} has schema version {version}, newer than this version of Timeline reads ({}); nothing was changed. Use the release of Timeline that wrote it, or a newer one",
                self.path.display(),
                schema_version()
            )));
        }
        // Before anything else touches the schema: a trigger or view Timeline did not create is code
        // the file brings, and nothing may run it (not even a migration's writes).
        let (cookie, foreign) =
            verify_schema(&conn, version).map_err(|e| self.failure("cannot read", e))?;
        if !foreign.is_empty() {
            if let Some(listed) = &mut self.foreign {
                *listed = foreign;
                return Ok(conn);
            }
            return Err(foreign_schema(&self.path, &foreign));
        }
        // Verified now; after a migration (its own change of the schema) the first transaction
        // verifies again.
        self.verified_schema = (version == schema_version()).then_some(cookie);
        conn.execute_batch("PRAGMA synchronous = FULL; PRAGMA foreign_keys = OFF;")
            .map_err(|e| self.failure("cannot configure", e))?;
        register_functions(&conn).map_err(|e| self.failure("cannot configure", e))?;
        if let Some(why) = self.read_only
            && (empty || version < schema_version())
        {
            return Err(Error::database(format!(
                "the database {} has schema version {version} and must be upgraded to version {} before this version of Timeline can read it, but {}; nothing was changed. Open it once with write access, or copy it to a writable place and use the copy",
                self.path.display(),
                schema_version(),
                why.reason(&self.path)
            )));
        }
        if empty {
            // WAL is a property of the file, set once; readers then never block the writer.
            conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
                .map_err(|e| self.failure("cannot set up", e))?;
        }
        if version < schema_version() {
            self.migrate(&conn, version)?;
        }
        Ok(conn)
    }

    /// Apply the migrations from `from` to the current version in one transaction.
    fn migrate(&self, conn: &Connection, from: u64) -> Result<()> {
        let run = || -> rusqlite::Result<()> {
            conn.execute_batch("BEGIN IMMEDIATE")?;
            // Another process may have migrated while this one waited for the lock.
            let now: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            let mut at = u64::try_from(now).unwrap_or(u64::MAX).max(from);
            while at < schema_version() {
                let migration = MIGRATIONS[at as usize];
                conn.execute_batch(migration)?;
                if migration == MIGRATION_SEARCH_INDEX {
                    // The index starts out holding every message written before it existed.
                    conn.execute_batch(FILL_SEARCH_INDEX)?;
                }
                at += 1;
            }
            conn.execute_batch(&format!(
                "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {at}; COMMIT"
            ))
        };
        run().map_err(|e| {
            let _ = conn.execute_batch("ROLLBACK");
            self.failure("cannot set up the schema of", e)
        })
    }

    pub fn schema_version(&mut self) -> Result<Option<u64>> {
        Ok(self.connection(false)?.map(|_| schema_version()))
    }

    pub fn read<R>(&mut self, f: impl FnOnce(&mut dyn Tx) -> Result<R>) -> Result<R> {
        let path = self.path.clone();
        if self.connection(false)?.is_none() {
            return f(&mut MemTx {
                db: &mut Database::default(),
                engine: Engine::Sqlite,
            });
        }
        let conn = self.conn.as_mut().expect("opened above");
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(|e| failure(&path, "cannot read", e))?;
        let result = guard_schema(&tx, &path, &mut self.verified_schema).and_then(|()| {
            f(&mut SqlTx {
                conn: &tx,
                path: &path,
            })
        });
        // A read changes nothing; ending it either way releases the snapshot.
        let _ = tx.rollback();
        self.end_immutable_read()?;
        result
    }

    /// After a read through an immutable connection: close it, so the next read sees the file as it
    /// is then, and refuse what was read if the file changed meanwhile (its owner wrote to it), since
    /// such a connection may have mixed pages from before and after.
    fn end_immutable_read(&mut self) -> Result<()> {
        let Some(before) = self.immutable_since.take() else {
            return Ok(());
        };
        self.conn = None;
        if file_stamp(&self.path) != Some(before) {
            return Err(Error::database(format!(
                "the database {} changed while it was being read (another program wrote to it); nothing was changed. Run the command again",
                self.path.display()
            )));
        }
        Ok(())
    }

    pub fn write<R>(&mut self, f: impl FnOnce(&mut dyn Tx) -> Result<Outcome<R>>) -> Result<R> {
        if self.conn.is_none() && !self.exists() {
            return self.write_new(f);
        }
        if !self.swept {
            // Once per store (process or session): what killed first writes left beside it.
            self.swept = true;
            create::remove_leftovers(&self.path);
        }
        self.write_existing(f).map(|(result, _)| result)
    }

    /// Run `f` in one `BEGIN IMMEDIATE` transaction; also says whether it committed.
    fn write_existing<R>(
        &mut self,
        f: impl FnOnce(&mut dyn Tx) -> Result<Outcome<R>>,
    ) -> Result<(R, bool)> {
        let path = self.path.clone();
        self.connection(true)?;
        self.refuse_change_if_read_only()?;
        let conn = self
            .conn
            .as_mut()
            .expect("connection(true) opens or creates the database");
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| failure(&path, "cannot start a change of", e))?;
        guard_schema(&tx, &path, &mut self.verified_schema)?;
        refuse_newer_parents(&tx, &path)?;
        let outcome = f(&mut SqlTx {
            conn: &tx,
            path: &path,
        })?;
        match outcome {
            Outcome::Unchanged(result) => Ok((result, false)),
            Outcome::Commit(result) => {
                tx.commit()
                    .map_err(|e| failure(&path, "cannot commit the change to", e))?;
                Ok((result, true))
            }
        }
    }

    /// A consistent copy made with SQLite's online backup while other processes keep writing.
    pub fn backup(&mut self, target: &Path) -> Result<()> {
        super::refuse_existing(target)?;
        let path = self.path.clone();
        let Some(conn) = self.connection(false)? else {
            return Err(missing(&path));
        };
        perms::open_private(target, true)
            .map_err(|e| io_error(&format!("cannot create {}", target.display()), e))?;
        let copy = || -> rusqlite::Result<()> {
            let mut dst = Connection::open(target)?;
            {
                let backup = rusqlite::backup::Backup::new(conn, &mut dst)?;
                // One step copies every page inside one read transaction: a consistent snapshot.
                backup.step(-1)?;
            }
            dst.execute_batch("PRAGMA journal_mode = DELETE")?;
            Ok(())
        };
        if let Err(e) = copy() {
            let _ = std::fs::remove_file(target);
            let _ = self.end_immutable_read();
            return Err(failure(&path, "cannot back up", e));
        }
        if let Err(e) = self.end_immutable_read() {
            let _ = std::fs::remove_file(target);
            return Err(e);
        }
        super::sync_parent(target);
        Ok(())
    }

    /// SQLite's integrity check, then every row checked against what a fresh derivation gives.
    pub fn check(&mut self) -> Result<Vec<String>> {
        // Foreign schema objects are listed, not refused (and nothing else is checked while they
        // are there: the checks below read the tables they may hang on).
        if self.conn.is_none() {
            self.foreign = Some(Vec::new());
        }
        let opened = self.connection(false).map(|c| c.is_some());
        let foreign = self.foreign.take().unwrap_or_default();
        opened?;
        if !foreign.is_empty() {
            self.conn = None;
            self.immutable_since = None;
            return Ok(foreign_problems(&foreign));
        }
        let problems = self.check_open();
        // A file that changed under an immutable connection is reported as that, not as damage.
        self.end_immutable_read()?;
        problems
    }

    fn check_open(&mut self) -> Result<Vec<String>> {
        let path = self.path.clone();
        if self.connection(false)?.is_none() {
            return Err(missing(&path));
        }
        let read_only = self.read_only.is_some();
        let conn = self.conn.as_mut().expect("opened above");
        let mut problems = Vec::new();
        let mut stmt = conn
            .prepare("PRAGMA integrity_check")
            .map_err(|e| failure(&path, "cannot check", e))?;
        let rows: Vec<String> = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| failure(&path, "cannot check", e))?;
        drop(stmt);
        problems.extend(rows.into_iter().filter(|r| r != "ok"));
        if !problems.is_empty() {
            return Ok(problems);
        }
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(|e| failure(&path, "cannot read", e))?;
        let mut sql_tx = SqlTx {
            conn: &tx,
            path: &path,
        };
        match sql_tx.load_database() {
            Err(e) => problems.push(e.message),
            Ok(db) => {
                for timeline in &db.timelines {
                    for n in 0..timeline.nodes.len() as u64 {
                        let stored = sql_tx.node(timeline.id, n)?;
                        let expected = super::memory::node_row(timeline, n);
                        if stored != expected {
                            problems.push(format!(
                                "timeline tl{}: the stored state of n{n} differs from what its history gives",
                                timeline.id
                            ));
                        }
                    }
                }
                problems.extend(sql_tx.check_search_index(&db, read_only)?);
                // The values themselves, by the checks a snapshot's load applies (a non-empty
                // intent tag, ...): what db convert could not write otherwise.
                if let Err(problem) = super::json::decode(&super::json::encode(&db)) {
                    problems.push(problem);
                }
            }
        }
        let _ = tx.rollback();
        Ok(problems)
    }

    /// Empty the search index and fill it again from the messages, in one transaction.
    pub fn repair(&mut self) -> Result<Vec<String>> {
        let path = self.path.clone();
        if self.connection(false)?.is_none() {
            return Err(missing(&path));
        }
        self.refuse_change_if_read_only()?;
        let conn = self.conn.as_mut().expect("opened above");
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| failure(&path, "cannot start a change of", e))?;
        guard_schema(&tx, &path, &mut self.verified_schema)?;
        tx.execute_batch(&format!(
            "DELETE FROM search_docs; INSERT INTO search_index (search_index) VALUES ('delete-all'); {FILL_SEARCH_INDEX}"
        ))
        .map_err(|e| failure(&path, "cannot rebuild the search index of", e))?;
        tx.commit()
            .map_err(|e| failure(&path, "cannot commit the change to", e))?;
        Ok(vec!["search index".to_string()])
    }

    fn load_all(&mut self, db: &Database) -> Result<()> {
        let path = self.path.clone();
        let conn = self
            .connection(true)?
            .expect("connection(true) opens or creates the database");
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| failure(&path, "cannot start writing", e))?;
        // (create_from's target was checked to be new, so the file is created here directly.)
        let mut t = SqlTx {
            conn: &tx,
            path: &path,
        };
        for timeline in &db.timelines {
            let cold = timeline.nodes.iter().filter(|n| n.cold).count() as i64;
            t.exec(
                "INSERT INTO timelines (id, next_node, current_branch, cold_nodes, title, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    sql(timeline.id),
                    sql(timeline.nodes.len() as u64),
                    timeline.current_branch,
                    cold,
                    timeline.title,
                    timeline.created_at.map(sql),
                    timeline.updated_at.map(sql)
                ],
            )?;
            for n in 0..timeline.nodes.len() as u64 {
                if let Some(row) = super::memory::node_row(timeline, n) {
                    t.put_node(timeline.id, &row)?;
                }
            }
            for branch in &timeline.branches {
                t.put_branch(timeline.id, branch)?;
            }
            for archived in &timeline.archived {
                insert_archived(&t, timeline.id, archived)?;
            }
        }
        t.exec(
            "UPDATE state SET next_timeline = ?1 WHERE id = 0",
            params![sql(db.next_timeline)],
        )?;
        for entry in &db.idempotency {
            t.put_idempotency(entry)?;
        }
        // Audit timestamps never decrease (checked on load), so each entry keeps its own.
        for entry in &db.audit {
            t.append_audit(entry.ts, entry.clone())?;
        }
        for record in &db.imports {
            t.put_import_row(record)?;
        }
        tx.commit().map_err(|e| failure(&path, "cannot commit", e))
    }

    /// Open the file and read its header, the first access to it: a damaged file fails here,
    /// unchanged. Gives the user version, application ID and number of schema entries.
    fn open_as(&self, how: Opening) -> rusqlite::Result<(Connection, (i64, i32, i64))> {
        let read_only = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = match how {
            Opening::ReadWrite => Connection::open_with_flags(
                &self.path,
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
            )?,
            Opening::ReadOnly => Connection::open_with_flags(&self.path, read_only)?,
            Opening::Immutable => Connection::open_with_flags(
                immutable_uri(&self.path),
                read_only | OpenFlags::SQLITE_OPEN_URI,
            )?,
        };
        conn.busy_timeout(BUSY_TIMEOUT)?;
        // The file is data, not code: functions and virtual tables may not be used from the schema
        // (triggers, views, defaults), and SQL cannot corrupt the file on purpose (writable_schema,
        // journal_mode=OFF, writes to FTS5 shadow tables). Set before the first read of the schema.
        conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE, true)?;
        conn.execute_batch("PRAGMA trusted_schema = OFF")?;
        let header = conn.query_row(
            "SELECT (SELECT user_version FROM pragma_user_version), (SELECT application_id FROM pragma_application_id), (SELECT count(*) FROM sqlite_schema)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        Ok((conn, header))
    }

    /// Whether a -wal file with committed changes not yet copied into the database exists.
    fn wal_has_changes(&self) -> bool {
        std::fs::metadata(with_suffix(&self.path, "-wal")).is_ok_and(|m| m.len() > 0)
    }

    /// A failure to open or first read the file: damage is reported as damage, anything else (a
    /// missing -shm file that cannot be created, permissions) as what it is.
    fn open_failure(&self, e: rusqlite::Error) -> Error {
        use rusqlite::ErrorCode as C;
        match (e.sqlite_error_code(), self.read_only) {
            (Some(C::DatabaseCorrupt | C::NotADatabase), _) | (None, _) => {
                self.corrupt(&e.to_string())
            }
            (Some(C::CannotOpen | C::ReadOnly | C::PermissionDenied), Some(why))
                if self.wal_has_changes() =>
            {
                let db = self.path.display();
                Error::database(format!(
                    "cannot read the database {db}: {}, and SQLite needs to create its shared-memory file {db}-shm to read the changes still in {db}-wal; nothing was changed. Copy the database with its -wal file to a writable place and use the copy",
                    why.reason(&self.path)
                ))
            }
            _ => self.failure("cannot open", e),
        }
    }

    /// Refuse a change to a database this process can only read.
    fn refuse_change_if_read_only(&self) -> Result<()> {
        let Some(why) = self.read_only else {
            return Ok(());
        };
        let db = self.path.display();
        if let ReadOnly::Link(_) = why {
            return Err(Error::database(format!(
                "cannot change the database {db}: {}. Nothing was written; reading it works",
                why.reason(&self.path)
            )));
        }
        Err(Error::database(format!(
            "cannot change the database {db}: {}. Nothing was written; reading it works. To change it, get write access to the file and its directory, or copy it to a writable place (cp \"{db}\" <new path>) and use the copy",
            why.reason(&self.path)
        )))
    }

    fn corrupt(&self, problem: &str) -> Error {
        corrupt(&self.path, problem)
    }

    fn failure(&self, what: &str, e: rusqlite::Error) -> Error {
        failure(&self.path, what, e)
    }
}

/// Damage found in the file, with the steps that recover from it.
fn corrupt(path: &Path, problem: &str) -> Error {
    let db = path.display();
    Error::database(format!(
        "the database {db} cannot be used: {problem}. Nothing was changed and nothing will be written to it. To recover: stop every tl and tl-mcp process that uses it, keep a copy of the damaged file and its -wal file (cp \"{db}\" \"{db}.corrupt\"), then restore a copy made with tl db backup, or salvage what SQLite can read (sqlite3 \"{db}\" .recover | sqlite3 recovered.db) and check it with tl --db recovered.db db check"
    ))
}

fn missing(path: &Path) -> Error {
    Error::database(format!(
        "the database {} does not exist yet; create it with the first change (for example create), or pass --db with the path of an existing database",
        path.display()
    ))
}

impl ReadOnly {
    fn reason(self, path: &Path) -> String {
        match self {
            ReadOnly::Media => "it is on a read-only file system".into(),
            ReadOnly::Permission => format!(
                "you may not write the file {} (permission denied)",
                path.display()
            ),
            ReadOnly::Directory => format!(
                "you may not create files in its directory {} (SQLite keeps its -wal and -shm files there while it changes the database)",
                super::parent_dir(path).display()
            ),
            ReadOnly::Link(suffix) => {
                let mut link = path.as_os_str().to_owned();
                link.push(suffix);
                let link = Path::new(&link).display().to_string();
                format!(
                    "its {suffix} file {link} is a symbolic link, which SQLite never opens (a link there could make it write elsewhere); remove the link (rm \"{link}\") once no tl or tl-mcp process uses the database"
                )
            }
            ReadOnly::Requested => "it was opened for reading only".into(),
        }
    }
}

/// The `-wal` or `-shm` file beside `path` that is a symbolic link, if one is: why SQLite cannot
/// open the database for writing, which otherwise looks like a directory it may not write.
fn linked_side_file(path: &Path) -> Option<ReadOnly> {
    ["-wal", "-shm"].into_iter().find_map(|suffix| {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        std::fs::symlink_metadata(&side)
            .is_ok_and(|m| m.file_type().is_symlink())
            .then_some(ReadOnly::Link(suffix))
    })
}

/// An SQLite error as a database error that names the file and, where it can, what to do.
fn failure(path: &Path, what: &str, e: rusqlite::Error) -> Error {
    use rusqlite::ErrorCode as C;
    let hint = match e.sqlite_error_code() {
        Some(C::DatabaseBusy) | Some(C::DatabaseLocked) => format!(
            "; another process kept it locked for more than {} seconds, so try again once it has finished",
            BUSY_TIMEOUT.as_secs()
        ),
        Some(C::DiskFull) => {
            "; the disk is full: free some space and try again (nothing was changed)".into()
        }
        Some(C::SystemIoFailure) => {
            "; the disk may be full or failing: free some space, check the disk and try again (nothing was changed)".into()
        }
        Some(C::ReadOnly) => {
            "; the file or its directory is read-only: check their owner and mode".into()
        }
        Some(C::PermissionDenied) | Some(C::CannotOpen) => {
            "; check the owner and mode of the file and its directory".into()
        }
        Some(C::DatabaseCorrupt) | Some(C::NotADatabase) => {
            "; the file is damaged: see tl db check, and restore a copy made with tl db backup"
                .into()
        }
        _ => String::new(),
    };
    Error::database(format!("{what} the database {}: {e}{hint}", path.display()))
}

/// `Tx` over one SQLite transaction.
pub struct SqlTx<'a> {
    conn: &'a Connection,
    path: &'a Path,
}

impl SqlTx<'_> {
    fn fail(&self, e: rusqlite::Error) -> Error {
        failure(self.path, "cannot use", e)
    }

    fn exec(&self, sql: &str, params: impl rusqlite::Params) -> Result<usize> {
        self.conn
            .prepare_cached(sql)
            .and_then(|mut s| s.execute(params))
            .map_err(|e| self.fail(e))
    }

    fn ids(&self, sql: &str, params: impl rusqlite::Params) -> Result<Vec<u64>> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(|e| self.fail(e))?;
        let rows = stmt
            .query_map(params, |r| r.get::<_, i64>(0))
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<i64>>>())
            .map_err(|e| self.fail(e))?;
        Ok(rows.into_iter().map(unsql).collect())
    }

    fn put_import_row(&self, record: &ImportRecord) -> Result<()> {
        let json = serde_json::to_string(record).map_err(|e| Error::database(e.to_string()))?;
        let timeline = crate::model::parse_timeline_id(&record.timeline).ok_or_else(|| {
            Error::database(format!(
                "internal error: import record of an invalid timeline {:?}",
                record.timeline
            ))
        })?;
        self.exec(
            "INSERT INTO imports (format, source_key, digest, timeline, ts, record) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                record.format,
                record.source_key,
                record.digest,
                sql(timeline),
                sql(record.ts),
                json
            ],
        )?;
        Ok(())
    }

    fn import_records(
        &self,
        sql_text: &str,
        params: impl rusqlite::Params,
    ) -> Result<Vec<ImportRecord>> {
        let mut stmt = self
            .conn
            .prepare_cached(sql_text)
            .map_err(|e| self.fail(e))?;
        let rows: Vec<String> = stmt
            .query_map(params, |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.fail(e))?;
        rows.iter()
            .map(|json| {
                serde_json::from_str(json).map_err(|e| {
                    Error::database(format!(
                        "the database {} has a damaged import record ({e}); run tl db check",
                        self.path.display()
                    ))
                })
            })
            .collect()
    }

    /// Insert one node row as it is (used by `insert_node` and bulk loads).
    fn put_node(&self, tl: u64, row: &NodeRow) -> Result<()> {
        let node = &row.node;
        let summary = node.summary.as_ref();
        let derived_from = summary
            .filter(|s| !s.derived_from.is_empty())
            .map(|s| serde_json::to_string(&s.derived_from).unwrap_or_default());
        let digest = summary.filter(|s| s.kind == SummaryKind::Real).map(|s| {
            summary_request_digest(
                s.from,
                s.to,
                &node.text,
                node.tokens,
                &s.derived_from,
                s.supersedes,
                node.intent.as_ref(),
            )
            .to_vec()
        });
        self.exec(
            "INSERT INTO nodes (timeline, id, parent, role, text, tokens, intent_tag, intent_note, summary_kind, summary_from, summary_to, derived_from, supersedes, version, request_digest, cold, pinned, prefix_tokens, depth, cover_count, stale, superseded_by, created_at, provenance) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24)",
            params![
                sql(tl),
                sql(row.id),
                sql(node.parent),
                node.role.as_str(),
                node.text,
                sql(node.tokens),
                node.intent.as_ref().map(|i| i.tag.as_str()),
                node.intent.as_ref().and_then(|i| i.note.as_deref()),
                summary.map(|s| s.kind.as_str()),
                summary.map(|s| sql(s.from)),
                summary.map(|s| sql(s.to)),
                derived_from,
                summary.and_then(|s| s.supersedes).map(sql),
                summary.map(|s| sql(s.version)),
                digest,
                node.cold,
                row.pinned,
                sql(row.prefix_tokens),
                sql(row.depth),
                row.cover_count,
                row.stale,
                row.superseded_by.map(sql),
                node.created_at.map(sql),
                node.provenance,
            ],
        )?;
        if let Some(s) = summary {
            for &source in &s.derived_from {
                self.exec(
                    "INSERT OR IGNORE INTO summary_sources (timeline, summary, source) VALUES (?1, ?2, ?3)",
                    params![sql(tl), sql(row.id), sql(source)],
                )?;
            }
        }
        self.index_node(tl, row)
    }

    /// Problems of the search index: a searchable message missing from it or indexed with another
    /// number of terms, an entry for a message that is not searchable, FTS5's own integrity check.
    /// `read_only`: FTS5 runs its own integrity check as a write, which a read-only connection
    /// refuses; the row-by-row comparison below still runs.
    fn check_search_index(&self, db: &Database, read_only: bool) -> Result<Vec<String>> {
        let advice = "; run tl db check --repair to rebuild the search index";
        let mut problems = Vec::new();
        if !read_only
            && let Err(e) = self.conn.execute(
                "INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 0)",
                [],
            )
        {
            problems.push(format!("the search index is damaged ({e}){advice}"));
            return Ok(problems);
        }
        let mut stmt = self
            .conn
            .prepare(
                "SELECT d.timeline, d.node, s.sz FROM search_docs d \
                 LEFT JOIN search_index_docsize s ON s.id = d.doc ORDER BY d.timeline, d.node",
            )
            .map_err(|e| self.fail(e))?;
        let indexed: Vec<(u64, u64, Option<Vec<u8>>)> = stmt
            .query_map([], |r| {
                Ok((
                    unsql(r.get(0)?),
                    unsql(r.get(1)?),
                    r.get::<_, Option<Vec<u8>>>(2)?,
                ))
            })
            .and_then(|rows| rows.collect())
            .map_err(|e| self.fail(e))?;
        drop(stmt);
        let mut indexed = indexed.into_iter().peekable();
        let mut missing = 0usize;
        let mut wrong = 0usize;
        let mut extra = 0usize;
        for timeline in &db.timelines {
            for (i, node) in timeline.nodes.iter().enumerate() {
                let n = i as u64;
                let terms = if super::searchable(n, node) {
                    crate::search::terms(&node.text).len()
                } else {
                    0
                };
                while indexed
                    .peek()
                    .is_some_and(|(t, m, _)| (*t, *m) < (timeline.id, n))
                {
                    indexed.next();
                    extra += 1;
                }
                let entry = indexed
                    .next_if(|(t, m, _)| (*t, *m) == (timeline.id, n))
                    .map(|(_, _, size)| size);
                match (terms, entry) {
                    (0, None) => {}
                    (0, Some(_)) => extra += 1,
                    (_, None | Some(None)) => missing += 1,
                    (terms, Some(Some(size))) => {
                        if varint(&size) != Some(terms as u64) {
                            wrong += 1;
                        }
                    }
                }
            }
        }
        extra += indexed.count();
        for (count, what) in [
            (
                missing,
                "searchable message(s) missing from the search index",
            ),
            (
                wrong,
                "message(s) indexed with other terms than their text has",
            ),
            (extra, "search index entries for no searchable message"),
        ] {
            if count > 0 {
                problems.push(format!("{count} {what}{advice}"));
            }
        }
        Ok(problems)
    }

    /// Add a searchable node to the search index (same transaction as the node itself).
    fn index_node(&self, tl: u64, row: &NodeRow) -> Result<()> {
        if !super::searchable(row.id, &row.node) {
            return Ok(());
        }
        let terms = crate::search::indexed_text(&row.node.text);
        if terms.is_empty() {
            return Ok(());
        }
        self.exec(
            "INSERT INTO search_docs (timeline, node) VALUES (?1, ?2)",
            params![sql(tl), sql(row.id)],
        )?;
        let doc = self.conn.last_insert_rowid();
        self.exec(
            "INSERT INTO search_index (rowid, terms) VALUES (?1, ?2)",
            params![doc, terms],
        )?;
        Ok(())
    }
}

/// An SQLite variable-length integer (as FTS5 stores a message's term count in `_docsize`).
fn varint(bytes: &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(9) {
        if i == 8 {
            return Some((value << 8) | u64::from(b));
        }
        value = (value << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

/// Add the record of an archived branch after every other (`seq` orders the archivals).
fn insert_archived(t: &SqlTx, tl: u64, archived: &ArchivedBranch) -> Result<()> {
    let nodes =
        serde_json::to_string(&archived.nodes).map_err(|e| Error::database(e.to_string()))?;
    t.exec(
        "INSERT INTO archived_branches (timeline, name, head, watermark, position, nodes) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            sql(tl),
            archived.name,
            sql(archived.head),
            sql(archived.watermark),
            sql(archived.position),
            nodes
        ],
    )?;
    Ok(())
}

const TIMELINE_COLUMNS: &str = "id, next_node, current_branch, title, created_at, updated_at";

fn read_timeline(r: &rusqlite::Row) -> rusqlite::Result<TimelineRow> {
    Ok(TimelineRow {
        id: unsql(r.get(0)?),
        next_node: unsql(r.get(1)?),
        current_branch: r.get(2)?,
        title: r.get(3)?,
        created_at: r.get::<_, Option<i64>>(4)?.map(unsql),
        updated_at: r.get::<_, Option<i64>>(5)?.map(unsql),
    })
}

const NODE_COLUMNS: &str = "id, parent, role, text, tokens, intent_tag, intent_note, summary_kind, summary_from, summary_to, derived_from, supersedes, version, cold, pinned, prefix_tokens, depth, cover_count, stale, superseded_by, created_at, provenance";

fn read_node(r: &rusqlite::Row) -> rusqlite::Result<NodeRow> {
    let bad = |what: String| {
        rusqlite::Error::FromSqlConversionFailure(
            0,
            rusqlite::types::Type::Text,
            Box::<dyn std::error::Error + Send + Sync>::from(what),
        )
    };
    let role: String = r.get(2)?;
    let role = Role::parse(&role)
        .or((role == "root").then_some(Role::Root))
        .ok_or_else(|| bad(format!("invalid role {role:?}")))?;
    let intent = r
        .get::<_, Option<String>>(5)?
        .map(|tag| Intent { tag, note: None });
    let intent = match (intent, r.get::<_, Option<String>>(6)?) {
        (Some(i), note) => Some(Intent { note, ..i }),
        (None, _) => None,
    };
    let summary = match r.get::<_, Option<String>>(7)? {
        None => None,
        Some(kind) => {
            let kind = match kind.as_str() {
                "real" => SummaryKind::Real,
                "placeholder" => SummaryKind::Placeholder,
                other => return Err(bad(format!("invalid summary kind {other:?}"))),
            };
            let derived_from: Vec<u64> = match r.get::<_, Option<String>>(10)? {
                None => Vec::new(),
                Some(json) => serde_json::from_str(&json)
                    .map_err(|e| bad(format!("invalid derived_from ({e})")))?,
            };
            Some(Summary {
                kind,
                from: unsql(r.get(8)?),
                to: unsql(r.get(9)?),
                derived_from,
                supersedes: r.get::<_, Option<i64>>(11)?.map(unsql),
                version: unsql(r.get(12)?),
            })
        }
    };
    Ok(NodeRow {
        id: unsql(r.get(0)?),
        node: Node {
            parent: unsql(r.get(1)?),
            role,
            text: r.get(3)?,
            tokens: unsql(r.get(4)?),
            created_at: r.get::<_, Option<i64>>(20)?.map(unsql),
            intent,
            provenance: r.get(21)?,
            summary,
            cold: r.get(13)?,
        },
        pinned: r.get(14)?,
        prefix_tokens: unsql(r.get(15)?),
        depth: unsql(r.get(16)?),
        cover_count: r.get(17)?,
        stale: r.get(18)?,
        superseded_by: r.get::<_, Option<i64>>(19)?.map(unsql),
    })
}

impl Tx for SqlTx<'_> {
    fn engine(&self) -> Engine {
        Engine::Sqlite
    }

    fn next_timeline(&mut self) -> Result<u64> {
        self.conn
            .prepare_cached("SELECT next_timeline FROM state WHERE id = 0")
            .and_then(|mut s| s.query_row([], |r| r.get::<_, i64>(0)))
            .map(unsql)
            .map_err(|e| self.fail(e))
    }

    fn timeline_ids(&mut self, limit: usize) -> Result<Vec<u64>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.ids(
            "SELECT id FROM timelines ORDER BY id LIMIT ?1",
            params![limit],
        )
    }

    fn timeline(&mut self, tl: u64) -> Result<Option<TimelineRow>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {TIMELINE_COLUMNS} FROM timelines WHERE id = ?1"
            ))
            .and_then(|mut s| s.query_row(params![sql(tl)], read_timeline).optional())
            .map_err(|e| self.fail(e))
    }

    fn create_timeline(
        &mut self,
        id: u64,
        first_branch: &str,
        title: Option<&str>,
        now: u64,
    ) -> Result<()> {
        let next = id.checked_add(1).ok_or_else(Error::overflow)?;
        self.exec(
            "INSERT INTO timelines (id, next_node, current_branch, title, created_at, updated_at) VALUES (?1, 0, ?2, ?3, ?4, ?4)",
            params![sql(id), first_branch, title, sql(now)],
        )?;
        self.insert_node(
            id,
            &NodeRow {
                id: ROOT,
                node: Node::root(),
                prefix_tokens: 0,
                depth: 0,
                pinned: false,
                cover_count: 0,
                stale: false,
                superseded_by: None,
            },
        )?;
        self.put_branch(
            id,
            &Branch {
                name: first_branch.to_string(),
                head: ROOT,
                watermark: ROOT,
            },
        )?;
        self.exec(
            "UPDATE state SET next_timeline = ?1 WHERE id = 0",
            params![sql(next)],
        )?;
        Ok(())
    }

    fn touch_timeline(&mut self, tl: u64, now: u64) -> Result<()> {
        self.exec(
            "UPDATE timelines SET updated_at = ?2 WHERE id = ?1",
            params![sql(tl), sql(now)],
        )?;
        Ok(())
    }

    fn timeline_list(&mut self) -> Result<Vec<(TimelineRow, u64)>> {
        let query = format!(
            "SELECT {TIMELINE_COLUMNS}, (SELECT count(*) FROM branches b WHERE b.timeline = t.id) FROM timelines t ORDER BY id"
        );
        let mut stmt = self.conn.prepare(&query).map_err(|e| self.fail(e))?;
        stmt.query_map([], |r| Ok((read_timeline(r)?, unsql(r.get(6)?))))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.fail(e))
    }

    fn set_current_branch(&mut self, tl: u64, name: &str) -> Result<()> {
        self.exec(
            "UPDATE timelines SET current_branch = ?2 WHERE id = ?1",
            params![sql(tl), name],
        )?;
        Ok(())
    }

    fn node(&mut self, tl: u64, n: u64) -> Result<Option<NodeRow>> {
        let query = format!("SELECT {NODE_COLUMNS} FROM nodes WHERE timeline = ?1 AND id = ?2");
        let row = self
            .conn
            .prepare_cached(&query)
            .and_then(|mut s| s.query_row(params![sql(tl), sql(n)], read_node).optional())
            .map_err(|e| self.fail(e))?;
        // A parent is written before its children, so it is always older. Refusing any other row
        // here, where every walk reads it, makes each step up the tree go to a smaller ID: no walk
        // can circle a parent cycle the file claims, and nothing is written on top of one.
        if let Some(row) = &row
            && row.id == ROOT
            && (row.node.parent != ROOT || row.depth != 0)
        {
            // Walks end at the root, which is where depth 0 is.
            return Err(corrupt(
                self.path,
                &format!(
                    "timeline tl{tl}: its root n0 claims parent n{} and depth {} (a root has neither)",
                    row.node.parent, row.depth
                ),
            ));
        }
        if let Some(row) = &row
            && row.id != ROOT
            && row.node.parent >= row.id
        {
            return Err(newer_parent(self.path, tl, row.id, row.node.parent));
        }
        Ok(row)
    }

    fn children(&mut self, tl: u64, n: u64) -> Result<Vec<u64>> {
        // (Only newer nodes: a child older than its parent is damage, refused when it is read.)
        self.ids(
            "SELECT id FROM nodes WHERE timeline = ?1 AND parent = ?2 AND id > ?2 ORDER BY id",
            params![sql(tl), sql(n)],
        )
    }

    fn summaries_from(&mut self, tl: u64, from: u64) -> Result<Vec<u64>> {
        self.ids(
            "SELECT id FROM nodes WHERE timeline = ?1 AND summary_from = ?2 ORDER BY id",
            params![sql(tl), sql(from)],
        )
    }

    fn summary_by_request(&mut self, tl: u64, digest: &[u8; 32]) -> Result<Option<u64>> {
        Ok(self
            .ids(
                "SELECT id FROM nodes WHERE timeline = ?1 AND request_digest = ?2 ORDER BY id LIMIT 1",
                params![sql(tl), digest.as_slice()],
            )?
            .first()
            .copied())
    }

    fn dependents(&mut self, tl: u64, n: u64) -> Result<Vec<u64>> {
        self.ids(
            "SELECT summary FROM summary_sources WHERE timeline = ?1 AND source = ?2 ORDER BY summary",
            params![sql(tl), sql(n)],
        )
    }

    fn insert_node(&mut self, tl: u64, row: &NodeRow) -> Result<()> {
        let next = self
            .timeline(tl)?
            .map(|t| t.next_node)
            .ok_or_else(|| Error::database(format!("internal error: no timeline tl{tl}")))?;
        if row.id != next {
            return Err(Error::database(format!(
                "internal error: node n{} inserted where n{next} is next",
                row.id
            )));
        }
        self.put_node(tl, row)?;
        self.exec(
            "UPDATE timelines SET next_node = next_node + 1, cold_nodes = cold_nodes + ?2 WHERE id = ?1",
            params![sql(tl), i64::from(row.node.cold)],
        )?;
        Ok(())
    }

    fn change_node(&mut self, tl: u64, n: u64, change: NodeChange) -> Result<()> {
        let key = params![sql(tl), sql(n)];
        let changed = match change {
            NodeChange::Pin(pinned) => self.exec(
                &format!(
                    "UPDATE nodes SET pinned = {} WHERE timeline = ?1 AND id = ?2",
                    i64::from(pinned)
                ),
                key,
            )?,
            NodeChange::Covered => self.exec(
                "UPDATE nodes SET cover_count = cover_count + 1 WHERE timeline = ?1 AND id = ?2",
                key,
            )?,
            NodeChange::Stale => self.exec(
                "UPDATE nodes SET stale = 1 WHERE timeline = ?1 AND id = ?2",
                key,
            )?,
            NodeChange::SupersededBy(newer) => self.exec(
                "UPDATE nodes SET superseded_by = ?3 WHERE timeline = ?1 AND id = ?2",
                params![sql(tl), sql(n), sql(newer)],
            )?,
            NodeChange::Archived => {
                let moved = self.exec(
                    "UPDATE nodes SET cold = 1 WHERE timeline = ?1 AND id = ?2 AND cold = 0",
                    key,
                )?;
                self.exec(
                    "UPDATE timelines SET cold_nodes = cold_nodes + ?2 WHERE id = ?1",
                    params![sql(tl), moved as i64],
                )?;
                1
            }
            NodeChange::Restored => {
                let moved = self.exec(
                    "UPDATE nodes SET cold = 0 WHERE timeline = ?1 AND id = ?2 AND cold = 1",
                    key,
                )?;
                self.exec(
                    "UPDATE timelines SET cold_nodes = cold_nodes - ?2 WHERE id = ?1",
                    params![sql(tl), moved as i64],
                )?;
                1
            }
        };
        if changed != 1 || n == ROOT {
            return Err(Error::database(format!(
                "internal error: no message n{n} to change"
            )));
        }
        Ok(())
    }

    fn branches(&mut self, tl: u64) -> Result<Vec<Branch>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT name, head, watermark FROM branches WHERE timeline = ?1 ORDER BY seq",
            )
            .map_err(|e| self.fail(e))?;
        stmt.query_map(params![sql(tl)], |r| {
            Ok(Branch {
                name: r.get(0)?,
                head: unsql(r.get(1)?),
                watermark: unsql(r.get(2)?),
            })
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| self.fail(e))
    }

    fn branch(&mut self, tl: u64, name: &str) -> Result<Option<Branch>> {
        self.conn
            .prepare_cached(
                "SELECT head, watermark FROM branches WHERE timeline = ?1 AND name = ?2",
            )
            .and_then(|mut s| {
                s.query_row(params![sql(tl), name], |r| {
                    Ok(Branch {
                        name: name.to_string(),
                        head: unsql(r.get(0)?),
                        watermark: unsql(r.get(1)?),
                    })
                })
                .optional()
            })
            .map_err(|e| self.fail(e))
    }

    fn put_branch(&mut self, tl: u64, branch: &Branch) -> Result<()> {
        self.exec(
            "INSERT INTO branches (timeline, name, head, watermark) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (timeline, name) DO UPDATE SET head = excluded.head, watermark = excluded.watermark",
            params![
                sql(tl),
                branch.name,
                sql(branch.head),
                sql(branch.watermark)
            ],
        )?;
        Ok(())
    }

    fn remove_branch(&mut self, tl: u64, name: &str) -> Result<()> {
        self.exec(
            "DELETE FROM branches WHERE timeline = ?1 AND name = ?2",
            params![sql(tl), name],
        )?;
        Ok(())
    }

    fn insert_branch(&mut self, tl: u64, index: u64, branch: &Branch) -> Result<()> {
        // Branches are listed in row order: the ones after the place are taken out and added again
        // behind the new one (a new row always comes after every existing one).
        let index = usize::try_from(index).unwrap_or(usize::MAX);
        let later: Vec<Branch> = self.branches(tl)?.into_iter().skip(index).collect();
        for b in &later {
            self.remove_branch(tl, &b.name)?;
        }
        self.put_branch(tl, branch)?;
        for b in &later {
            self.put_branch(tl, b)?;
        }
        Ok(())
    }

    fn rename_branch(&mut self, tl: u64, old: &str, new: &str) -> Result<()> {
        let changed = self.exec(
            "UPDATE branches SET name = ?3 WHERE timeline = ?1 AND name = ?2",
            params![sql(tl), old, new],
        )?;
        if changed != 1 {
            return Err(Error::database(format!(
                "internal error: no branch {old:?} to rename"
            )));
        }
        Ok(())
    }

    fn archived_branches(&mut self, tl: u64) -> Result<Vec<ArchivedBranch>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT name, head, watermark, position, nodes FROM archived_branches WHERE timeline = ?1 ORDER BY seq",
            )
            .map_err(|e| self.fail(e))?;
        let rows = stmt
            .query_map(params![sql(tl)], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, String>(4)?,
                ))
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.fail(e))?;
        rows.into_iter()
            .map(|(name, head, watermark, position, nodes)| {
                let nodes: Vec<u64> = serde_json::from_str(&nodes).map_err(|e| {
                    Error::database(format!(
                        "the database {} has a damaged record of archived branch {name:?} ({e}); run tl db check",
                        self.path.display()
                    ))
                })?;
                Ok(ArchivedBranch {
                    name,
                    head: unsql(head),
                    watermark: unsql(watermark),
                    position: unsql(position),
                    nodes,
                })
            })
            .collect()
    }

    fn push_archived_branch(&mut self, tl: u64, archived: &ArchivedBranch) -> Result<()> {
        insert_archived(self, tl, archived)
    }

    fn remove_archived_branch(&mut self, tl: u64, name: &str) -> Result<()> {
        self.exec(
            "DELETE FROM archived_branches WHERE seq = (SELECT max(seq) FROM archived_branches WHERE timeline = ?1 AND name = ?2)",
            params![sql(tl), name],
        )?;
        Ok(())
    }

    fn idempotency(&mut self, scope: &str, key: &str) -> Result<Option<IdempotencyEntry>> {
        let row = self
            .conn
            .prepare_cached(
                "SELECT op, result, ts, request FROM idempotency WHERE scope = ?1 AND key = ?2",
            )
            .and_then(|mut s| {
                s.query_row(params![scope, key], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, Option<String>>(3)?,
                    ))
                })
                .optional()
            })
            .map_err(|e| self.fail(e))?;
        row.map(|(op, result, ts, request)| {
            Ok(IdempotencyEntry {
                scope: scope.to_string(),
                key: key.to_string(),
                op,
                result: serde_json::from_str(&result).map_err(|e| {
                    Error::database(format!(
                        "the database {} has a damaged idempotency record ({e}); run tl db check",
                        self.path.display()
                    ))
                })?,
                ts: unsql(ts),
                request,
            })
        })
        .transpose()
    }

    fn put_idempotency(&mut self, entry: &IdempotencyEntry) -> Result<()> {
        self.exec(
            "INSERT OR REPLACE INTO idempotency (scope, key, op, result, ts, request) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                entry.scope,
                entry.key,
                entry.op,
                entry.result.to_string(),
                sql(entry.ts),
                entry.request
            ],
        )?;
        Ok(())
    }

    fn purge_idempotency(&mut self, cutoff: u64) -> Result<()> {
        // Timestamps are far below 2^63, so the signed comparison in SQL is the unsigned one.
        self.exec(
            "DELETE FROM idempotency WHERE ts <= ?1",
            params![sql(cutoff)],
        )?;
        Ok(())
    }

    fn append_audit(&mut self, now: u64, mut entry: AuditEntry) -> Result<()> {
        let last = self
            .ids("SELECT ts FROM audit ORDER BY seq DESC LIMIT 1", [])?
            .first()
            .copied()
            .unwrap_or(0);
        entry.ts = now.max(last);
        let json = serde_json::to_string(&entry).map_err(|e| Error::database(e.to_string()))?;
        self.exec(
            "INSERT INTO audit (ts, entry) VALUES (?1, ?2)",
            params![sql(entry.ts), json],
        )?;
        Ok(())
    }

    fn earlier_imports(
        &mut self,
        format: &str,
        source_key: &str,
        digest: &str,
    ) -> Result<crate::model::Earlier> {
        // One row each, through imports_by_digest and imports_by_source.
        let same = self.import_records(
            "SELECT record FROM imports WHERE format = ?1 AND source_key = ?2 AND digest = ?3 ORDER BY seq LIMIT 1",
            params![format, source_key, digest],
        )?;
        let latest = self.import_records(
            "SELECT record FROM imports WHERE format = ?1 AND source_key = ?2 ORDER BY seq DESC LIMIT 1",
            params![format, source_key],
        )?;
        Ok(crate::model::Earlier {
            same: same.into_iter().next(),
            latest: latest.into_iter().next(),
        })
    }

    fn import_digests(&mut self, format: &str) -> Result<Vec<crate::model::KnownImport>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT digest, source_key, timeline, json_extract(record, '$.title') FROM imports WHERE format = ?1 ORDER BY seq",
            )
            .map_err(|e| self.fail(e))?;
        let rows = stmt
            .query_map(params![format], |r| {
                Ok(crate::model::KnownImport {
                    digest: r.get(0)?,
                    source_key: r.get(1)?,
                    timeline: crate::model::timeline_id(unsql(r.get::<_, i64>(2)?)),
                    title: r.get(3)?,
                })
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.fail(e))?;
        Ok(rows)
    }

    fn imports_of(&mut self, format: &str, source_key: &str) -> Result<Vec<ImportRecord>> {
        self.import_records(
            "SELECT record FROM imports WHERE format = ?1 AND source_key = ?2 ORDER BY seq",
            params![format, source_key],
        )
    }

    fn put_import(&mut self, record: &ImportRecord) -> Result<()> {
        self.put_import_row(record)
    }

    fn created_at(&mut self, tl: u64, n: u64) -> Result<Option<u64>> {
        self.conn
            .prepare_cached("SELECT created_at FROM nodes WHERE timeline = ?1 AND id = ?2")
            .and_then(|mut s| {
                s.query_row(params![sql(tl), sql(n)], |r| r.get::<_, Option<i64>>(0))
                    .optional()
            })
            .map(|t| t.flatten().map(unsql))
            .map_err(|e| self.fail(e))
    }

    fn search(&mut self, query: &Query, scope: &SearchScope) -> Result<Vec<SearchHit>> {
        let read = |r: &rusqlite::Row| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, f64>(2)?,
            ))
        };
        // The nodes are joined only to filter by role or zone: a word most messages hold matches
        // most of the index, and each join is one more lookup per match.
        let rows = if scope.role.is_some() || scope.cold.is_some() {
            self.conn
                .prepare_cached(
                    "SELECT d.timeline, d.node, bm25(search_index) FROM search_index \
                     JOIN search_docs d ON d.doc = search_index.rowid \
                     JOIN nodes n ON n.timeline = d.timeline AND n.id = d.node \
                     WHERE search_index MATCH ?1 AND (?2 IS NULL OR d.timeline = ?2) \
                     AND (?3 IS NULL OR n.role = ?3) AND (?4 IS NULL OR n.cold = ?4)",
                )
                .and_then(|mut stmt| {
                    stmt.query_map(
                        params![
                            query.fts5(),
                            scope.timeline.map(sql),
                            scope.role.map(|r| r.as_str()),
                            scope.cold
                        ],
                        read,
                    )?
                    .collect::<rusqlite::Result<Vec<_>>>()
                })
        } else {
            self.conn
                .prepare_cached(
                    "SELECT d.timeline, d.node, bm25(search_index) FROM search_index \
                     JOIN search_docs d ON d.doc = search_index.rowid \
                     WHERE search_index MATCH ?1 AND (?2 IS NULL OR d.timeline = ?2)",
                )
                .and_then(|mut stmt| {
                    stmt.query_map(params![query.fts5(), scope.timeline.map(sql)], read)?
                        .collect::<rusqlite::Result<Vec<_>>>()
                })
        }
        .map_err(|e| self.fail(e))?;
        let mut hits = Vec::with_capacity(rows.len());
        for (timeline, node, bm25) in rows {
            let (timeline, node) = (unsql(timeline), unsql(node));
            hits.push(SearchHit {
                timeline,
                node,
                score: -bm25,
                created_at: self.created_at(timeline, node)?,
            });
        }
        Ok(hits)
    }

    fn load_timeline(&mut self, tl: u64) -> Result<Timeline> {
        let info = self
            .timeline(tl)?
            .ok_or_else(|| Error::database(format!("internal error: no timeline tl{tl}")))?;
        let query = format!("SELECT {NODE_COLUMNS} FROM nodes WHERE timeline = ?1 ORDER BY id");
        let mut stmt = self.conn.prepare(&query).map_err(|e| self.fail(e))?;
        let rows: Vec<NodeRow> = stmt
            .query_map(params![sql(tl)], read_node)
            .and_then(|rows| rows.collect())
            .map_err(|e| self.fail(e))?;
        drop(stmt);
        let damaged = |what: String| {
            Error::database(format!(
                "the database {} is damaged: timeline tl{tl}: {what}; run tl db check",
                self.path.display()
            ))
        };
        let mut nodes = Vec::with_capacity(rows.len());
        let mut pins = std::collections::BTreeSet::new();
        for (i, row) in rows.into_iter().enumerate() {
            if row.id != i as u64 {
                return Err(damaged(format!("node n{i} is missing")));
            }
            if row.pinned {
                pins.insert(row.id);
            }
            nodes.push(row.node);
        }
        if nodes.len() as u64 != info.next_node {
            return Err(damaged(format!(
                "next_node {} does not match the {} stored nodes",
                info.next_node,
                nodes.len()
            )));
        }
        let mut timeline = Timeline {
            id: tl,
            title: info.title,
            created_at: info.created_at,
            updated_at: info.updated_at,
            nodes,
            branches: self.branches(tl)?,
            current_branch: info.current_branch,
            pins,
            archived: self.archived_branches(tl)?,
            derived: Default::default(),
        };
        timeline.rebuild().map_err(|e| damaged(e.message))?;
        timeline.check_archived().map_err(|e| damaged(e.message))?;
        Ok(timeline)
    }

    fn load_database(&mut self) -> Result<Database> {
        let ids = self.timeline_ids(usize::MAX)?;
        let mut timelines = Vec::with_capacity(ids.len());
        for id in ids {
            timelines.push(self.load_timeline(id)?);
        }
        let mut stmt = self
            .conn
            .prepare("SELECT scope, key, op, result, ts, request FROM idempotency ORDER BY rowid")
            .map_err(|e| self.fail(e))?;
        let idempotency = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, Option<String>>(5)?,
                ))
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.fail(e))?;
        drop(stmt);
        let idempotency = idempotency
            .into_iter()
            .map(|(scope, key, op, result, ts, request)| IdempotencyEntry {
                scope,
                key,
                op,
                result: serde_json::from_str(&result).unwrap_or(serde_json::Value::Null),
                ts: unsql(ts),
                request,
            })
            .collect();
        let mut stmt = self
            .conn
            .prepare("SELECT entry FROM audit ORDER BY seq")
            .map_err(|e| self.fail(e))?;
        let audit: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.fail(e))?;
        drop(stmt);
        let audit = audit
            .iter()
            .map(|json| {
                serde_json::from_str(json).map_err(|e| {
                    Error::database(format!(
                        "the database {} has a damaged audit entry ({e}); run tl db check",
                        self.path.display()
                    ))
                })
            })
            .collect::<Result<Vec<AuditEntry>>>()?;
        let imports = self.import_records("SELECT record FROM imports ORDER BY seq", [])?;
        let mut db = Database {
            next_timeline: self.next_timeline()?,
            timelines,
            idempotency,
            audit,
            imports,
            import_index: Default::default(),
        };
        db.index_imports();
        Ok(db)
    }

    fn counts(&mut self) -> Result<Counts> {
        self.conn
            .query_row(
                "SELECT count(*), coalesce(sum(next_node - 1), 0), coalesce(sum(cold_nodes), 0) FROM timelines",
                [],
                |r| {
                    Ok(Counts {
                        timelines: unsql(r.get(0)?),
                        nodes: unsql(r.get(1)?),
                        cold_nodes: unsql(r.get(2)?),
                    })
                },
            )
            .map_err(|e| self.fail(e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Defence in depth behind the schema check: every way of opening the file is defensive and
    /// does not trust the schema, so a trigger cannot call Timeline's own SQL functions.
    #[test]
    fn every_connection_is_defensive_and_does_not_trust_the_schema() {
        let path =
            std::env::temp_dir().join(format!("timeline-unit-defensive-{}.db", std::process::id()));
        let conn = Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE t (x TEXT); CREATE TABLE copy (y TEXT); \
             CREATE TRIGGER t_copy AFTER INSERT ON t BEGIN INSERT INTO copy VALUES (tl_search_terms(new.x)); END;",
        )
        .unwrap();
        drop(conn);
        let store = SqliteStore::new(path.clone());
        for how in [Opening::ReadWrite, Opening::ReadOnly, Opening::Immutable] {
            let (conn, _) = store.open_as(how).unwrap();
            assert!(
                conn.db_config(DbConfig::SQLITE_DBCONFIG_DEFENSIVE).unwrap(),
                "{how:?}"
            );
            let trusted: i64 = conn
                .query_row("PRAGMA trusted_schema", [], |r| r.get(0))
                .unwrap();
            assert_eq!(trusted, 0, "{how:?}");
        }
        let (conn, _) = store.open_as(Opening::ReadWrite).unwrap();
        register_functions(&conn).unwrap();
        let e = conn
            .execute("INSERT INTO t VALUES ('a b')", [])
            .unwrap_err();
        assert!(
            e.to_string().contains("unsafe use of tl_search_terms"),
            "{e}"
        );
        // Called directly (as Timeline's own statements do), the function works.
        let terms: String = conn
            .query_row("SELECT tl_search_terms('a b')", [], |r| r.get(0))
            .unwrap();
        assert_eq!(terms, "a b");
        drop(conn);
        for suffix in ["", "-wal", "-shm", "-journal"] {
            let _ = std::fs::remove_file(with_suffix(&path, suffix));
        }
    }
}
