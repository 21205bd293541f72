//! The SQLite engine: nodes, branches, idempotency records and the audit as rows, with the derived
//! state (prefix tokens, depth, coverage, stale flags, versions) stored beside each node and kept up to
//! date by the operations, so no operation reads more than the rows it touches.
//!
//! The file is in WAL mode; every change is one `BEGIN IMMEDIATE` transaction with `synchronous=FULL`,
//! covering the operation, its idempotency record and its audit entries. Concurrent processes wait for
//! each other (a busy handler trying every millisecond for 30 s) instead of failing. The schema has a
//! version (`PRAGMA user_version`) and forward migrations; a newer schema than this build knows is
//! refused untouched.
//!
//! This module owns the store and its transactions' entry points (read, write, backup) and the
//! errors that name the file; `migrations` (the numbered schema changes), `schema` (what the file
//! may hold), `open` (access modes and the checks before first use), `check` (`db check`, repair),
//! `rows` (values to and from rows), `tx` (the `Tx` implementation) and `create` (first writes and
//! `db convert`) hold the rest.

use super::memory::MemTx;
use super::{Engine, Outcome, Tx, io_error};
use crate::error::{Error, Message, RECOVER_BY_THE_USER, Result};
use crate::fsutil::private;
use crate::model::Database;
use rusqlite::{Connection, TransactionBehavior};
use std::path::{Path, PathBuf};
use std::time::Duration;

mod check;
mod create;
#[cfg(unix)]
mod kept_log;
mod log_choice;
mod migrations;
mod open;
mod pending;
mod phrase_counts;
mod rows;
mod schema;
mod tx;

pub use log_choice::{SqliteLog, current as sqlite_log, sqlite_version};
pub use migrations::schema_version;
use open::ReadOnly;
pub(crate) use schema::render_compiled_schema;
use schema::{SchemaObject, guard_schema, refuse_newer_parents};
use tx::SqlTx;

/// The first 16 bytes of every SQLite database file.
pub const HEADER: &[u8] = b"SQLite format 3\0";

/// How long a log may stay between transactions: SQLite's automatic checkpoint starts the log over
/// after 1,000 pages (of 4 KiB, with their 24-byte frame headers), and some room is left for the
/// transaction that crosses the mark. `kept_log` keeps a log this long.
const LOG_SIZE: u64 = 4 << 20;

/// `PRAGMA application_id` of a Timeline database ("TLne"), so another program's SQLite file is
/// recognised and refused instead of being written into.
const APPLICATION_ID: i32 = 0x544c_6e65;

/// How long a change waits for another process's transaction before giving up.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

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
    /// When the messages waiting for the search index are indexed (`pending.rs`).
    pending: pending::Pending,
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
            pending: pending::Pending::default(),
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
                match private::open_private(&self.path, true) {
                    Ok(_) => crate::fsutil::sync_parent(&self.path),
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
            // On Unix SQLite gives the -wal and -shm files the database's mode; on Windows they
            // inherit the directory's ACL, so a writer makes them owner-only like the database.
            #[cfg(windows)]
            if self.read_only.is_none() {
                for suffix in ["-wal", "-shm"] {
                    let companion = crate::fsutil::with_suffix(&self.path, suffix);
                    if companion.exists() {
                        let _ = private::restrict_existing(&companion);
                    }
                }
            }
            self.conn = Some(conn);
        }
        Ok(self.conn.as_mut())
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
        let result = guard_schema(&tx, &path, &mut self.verified_schema)
            .and_then(|()| f(&mut SqlTx::new(&tx, &path, &self.pending)));
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
        self.write_sql(|t| f(t))
    }

    /// For a `tl-mcp` session: let up to `SESSION_PENDING_LIMIT` messages wait for the search
    /// index, which the session indexes while its client is quiet (`index_waiting`).
    pub fn index_while_idle(&mut self) {
        self.pending.limit = pending::SESSION_PENDING_LIMIT;
    }

    /// Whether enough messages wait for the search index to index them while the client is quiet.
    pub fn has_idle_work(&self) -> bool {
        self.pending.waiting.get() >= pending::IDLE_INDEX_FROM
    }

    /// Index the messages that wait for the search index, in a change of its own; while another
    /// process holds the write lock, leave them for later rather than wait.
    pub fn index_waiting(&mut self) -> Result<()> {
        let Some(conn) = self.conn.as_ref() else {
            return Ok(());
        };
        let path = self.path.clone();
        conn.busy_handler(None)
            .map_err(|e| failure(&path, "cannot use", e))?;
        let indexed = self.write_sql(|t| {
            t.index_pending()?;
            Ok(Outcome::Commit(()))
        });
        if let Some(conn) = self.conn.as_ref() {
            conn.busy_handler(Some(open::wait_for_the_lock))
                .map_err(|e| failure(&path, "cannot use", e))?;
        }
        indexed?;
        self.pending.waiting.set(0);
        Ok(())
    }

    /// `write_existing` for the engine's own changes, which need its own transaction type.
    fn write_sql<R>(
        &mut self,
        f: impl FnOnce(&mut SqlTx) -> Result<Outcome<R>>,
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
        let outcome = f(&mut SqlTx::new(&tx, &path, &self.pending))?;
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
        private::open_private(target, true)
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
        crate::fsutil::sync_parent(target);
        Ok(())
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
    Error::database(
        Message::from(format!(
            "the database {db} cannot be used: {problem}. Nothing was changed and nothing will be written to it. "
        ))
        .worded(
            format!(
                "To recover: stop every tl and tl-mcp process that uses it, keep a copy of the damaged file and its -wal file (cp \"{db}\" \"{db}.corrupt\"), then restore a copy made with tl db backup, or salvage what SQLite can read (sqlite3 \"{db}\" .recover | sqlite3 recovered.db) and check it with tl --db recovered.db db check"
            ),
            RECOVER_BY_THE_USER,
        ),
    )
}

fn missing(path: &Path) -> Error {
    Error::database(format!(
        "the database {} does not exist yet; create it with the first change (for example create), or pass --db with the path of an existing database",
        path.display()
    ))
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
            let message = Message::from(format!("{what} the database {}: {e}; ", path.display()))
                .worded(
                    "the file is damaged: see tl db check, and restore a copy made with tl db backup",
                    RECOVER_BY_THE_USER,
                );
            return Error::database(message).with_source(e);
        }
        _ => String::new(),
    };
    Error::database(format!("{what} the database {}: {e}{hint}", path.display())).with_source(e)
}
