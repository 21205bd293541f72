//! The first write to an SQLite database that does not exist yet, and `db convert` into a new one.
//!
//! The database is made in a private file beside its path (`.<name>.new-<pid>-<nanos>`, locked while
//! it exists: see `fsutil::leftovers`), committed, checkpointed until its write-ahead log is empty,
//! closed and fsynced, and only then hard-linked into place, and the directory fsynced. A step that
//! fails (a full disk) leaves nothing at the path. Processes creating databases in one directory
//! take turns (a lock on the directory, on Windows on a file beside the database), so the ones that lose the race find the database made and
//! go on as ordinary writers. Files SQLite keeps beside a database (`-wal`, `-shm`, `-journal`) that
//! are found where no database is are never merged into a new one: the write is refused.

use super::open::log_holds_changes;
use super::rows::{insert_archived, sql};
use super::tx::SqlTx;
use super::{BUSY_TIMEOUT, SqliteStore, failure};
use crate::error::{Error, Result};
use crate::fsutil::{leftovers, parent_dir, private, with_suffix};
use crate::model::Database;
use crate::store::{Outcome, Tx, io_error};
use rusqlite::{Connection, TransactionBehavior, params};
use std::fs::{self, File};
use std::io::ErrorKind as IoKind;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

/// The files SQLite keeps beside a database.
const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

impl SqliteStore {
    /// The first change of a database that does not exist yet (see the module's comment).
    pub(super) fn write_new<R>(
        &mut self,
        f: impl FnOnce(&mut dyn Tx) -> Result<Outcome<R>>,
    ) -> Result<R> {
        if self.reads_only {
            return Err(Error::database(format!(
                "cannot create the database {}: it was opened for reading only",
                self.path.display()
            )));
        }
        let turn = take_turn(&self.path)?;
        if self.exists() {
            // Another process created it while this one waited: an ordinary change now.
            drop(turn);
            return self.write_existing(f).map(|(result, _)| result);
        }
        prepare(&self.path)?;
        let path = self.path.clone();
        stage(
            &self.path,
            |staged| staged.write_existing(f),
            || {
                // Only where no turn could be taken (some network file systems).
                Error::database(format!(
                    "the database {} was created by another process at the same moment; nothing was written, so run the command again",
                    path.display()
                ))
            },
        )
    }

    /// Write `db` as a new SQLite database at `target` in one transaction.
    pub fn create_from(target: &Path, db: &Database) -> Result<()> {
        let _turn = take_turn(target)?;
        crate::store::refuse_existing(target)?;
        prepare(target)?;
        stage(
            target,
            |staged| staged.load_all(db).map(|()| ((), true)),
            || match crate::store::refuse_existing(target) {
                Err(e) => e,
                Ok(()) => Error::database(format!(
                    "cannot create {}: it was created meanwhile; nothing was written",
                    target.display()
                )),
            },
        )
    }
}

/// Before a new database is made at `path`: refuse what SQLite would merge into it, and remove what
/// killed first writes left.
fn prepare(path: &Path) -> Result<()> {
    refuse_leftover_companions(path)?;
    remove_leftovers(path);
    Ok(())
}

/// Remove the staged databases (with their `-wal` and `-shm`) that first writes killed midway left
/// beside `path`.
pub(super) fn remove_leftovers(path: &Path) {
    leftovers::remove_stale(
        path,
        "new",
        crate::fsutil::current_user(),
        SystemTime::now(),
    );
}

/// SQLite opens a database together with a `-wal` or `-journal` file of the same name and replays
/// it: such a file left by a database that was deleted would bring old pages into the new one.
fn refuse_leftover_companions(path: &Path) -> Result<()> {
    let found: Vec<PathBuf> = COMPANIONS
        .iter()
        .filter_map(|&suffix| {
            let companion = with_suffix(path, suffix);
            match fs::symlink_metadata(&companion) {
                Err(_) => None,
                // A log that does not start with a log's header (Timeline's last connection leaves
                // it blank, see `kept_log`) brings nothing back.
                Ok(m) if suffix == "-wal" && m.is_file() && !log_holds_changes(&companion) => None,
                Ok(_) => Some(companion),
            }
        })
        .collect();
    if found.is_empty() {
        return Ok(());
    }
    let one = found.len() == 1;
    let names: Vec<String> = found.iter().map(|p| p.display().to_string()).collect();
    let quoted: Vec<String> = names.iter().map(|n| format!("\"{n}\"")).collect();
    Err(Error::database(format!(
        "cannot create the database {db}: {files} {are} left from a database that was at this path before (deleted or moved without {them}, perhaps while a tl or tl-mcp process had it open). SQLite would merge {them} into the new database and bring back old or damaged data, so nothing was written and {they} {were} left untouched. If the old database was moved, move {them} beside it; if it was deleted on purpose, stop every tl and tl-mcp process that used it, delete {them} (rm {quoted}) and run the command again",
        db = path.display(),
        files = names.join(" and "),
        are = if one { "is" } else { "are" },
        were = if one { "was" } else { "were" },
        them = if one { "it" } else { "them" },
        they = if one { "it" } else { "they" },
        quoted = quoted.join(" "),
    )))
}

/// This process's turn at creating a database in the directory of `path`, held until dropped and
/// waited for as long as SQLite waits for a writer. `None` where no lock can be taken (some network
/// file systems); creation then relies on the hard link alone.
fn take_turn(path: &Path) -> Result<Option<File>> {
    let deadline = Instant::now() + BUSY_TIMEOUT;
    loop {
        let Some(handle) = turn_handle(path, deadline)? else {
            return Ok(None);
        };
        match handle.try_lock() {
            Ok(()) => return Ok(Some(handle)),
            Err(fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                drop(handle);
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            Err(fs::TryLockError::WouldBlock) => {
                return Err(Error::database(format!(
                    "cannot create the database {}: another process has been creating a database in {} for more than {} seconds; nothing was written, so try again once it has finished",
                    path.display(),
                    parent_dir(path).display(),
                    BUSY_TIMEOUT.as_secs()
                )));
            }
            Err(fs::TryLockError::Error(_)) => return Ok(None),
        }
    }
}

/// What the creators of databases in one directory lock: on Unix the directory itself.
#[cfg(unix)]
fn turn_handle(path: &Path, _deadline: Instant) -> Result<Option<File>> {
    Ok(File::open(parent_dir(path)).ok())
}

/// Windows cannot lock a directory, so the turn is a lock on `.<name>.creating` beside the database,
/// opened by every creator with delete-on-close: the system removes it once the last creator's
/// handle is closed (also when a process dies), so nothing is left behind. While it is being
/// removed it cannot be opened (access denied); the next creator waits for it to be gone and makes
/// a new one, so two creators never hold locks on different files.
#[cfg(windows)]
fn turn_handle(path: &Path, deadline: Instant) -> Result<Option<File>> {
    use std::os::windows::fs::OpenOptionsExt;
    const FILE_SHARE_READ_WRITE_DELETE: u32 = 0x1 | 0x2 | 0x4;
    const FILE_FLAG_DELETE_ON_CLOSE: u32 = 0x0400_0000;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let lock = parent_dir(path).join(format!(".{name}.creating"));
    loop {
        let opened = fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .share_mode(FILE_SHARE_READ_WRITE_DELETE)
            .custom_flags(FILE_FLAG_DELETE_ON_CLOSE)
            .open(&lock);
        match opened {
            Ok(handle) => return Ok(Some(handle)),
            // Being removed by the creator before: it exists but cannot be opened.
            Err(e)
                if e.kind() == IoKind::PermissionDenied
                    && !matches!(fs::symlink_metadata(&lock), Err(m) if m.kind() == IoKind::NotFound)
                    && Instant::now() < deadline =>
            {
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
            Err(_) => return Ok(None),
        }
    }
}

#[cfg(not(any(unix, windows)))]
fn turn_handle(_path: &Path, _deadline: Instant) -> Result<Option<File>> {
    Ok(None)
}

/// Make the database at `path` in a staged file filled by `fill` (which says whether it committed),
/// then put it in place. `taken` is the error when `path` appeared meanwhile. Every error names
/// `path`, never the staged file.
fn stage<R>(
    path: &Path,
    fill: impl FnOnce(&mut SqliteStore) -> Result<(R, bool)>,
    taken: impl FnOnce() -> Error,
) -> Result<R> {
    let staged_path = crate::fsutil::temp_path_beside(path, "new");
    // Made here first so that a directory this user may not write is named as the problem.
    let file = private::open_private(&staged_path, true)
        .map_err(|e| crate::store::cannot_create(path, e))?;
    // On Windows the lock would be mandatory and SQLite could not read its own file; there a file
    // another process holds open cannot be removed anyway.
    #[cfg(not(windows))]
    leftovers::hold(&file);
    let mut staged = SqliteStore::new(staged_path.clone());
    let filled = fill(&mut staged).and_then(|(result, committed)| {
        if committed {
            seal(staged.conn.take(), &file, &staged_path, path)?;
        }
        Ok((result, committed))
    });
    drop(staged);
    let done = filled.and_then(|(result, committed)| {
        if committed {
            link(&staged_path, path, taken)?;
        }
        Ok(result)
    });
    for suffix in COMPANIONS {
        let _ = fs::remove_file(with_suffix(&staged_path, suffix));
    }
    let _ = fs::remove_file(&staged_path);
    drop(file);
    done.map_err(|e| naming(e, &staged_path, path))
}

/// Make the committed staged database whole in its own file: the write-ahead log checkpointed into
/// it completely and emptied, the connection closed without error, no log left, the file fsynced.
/// Closing alone would ignore a checkpoint that failed for lack of space, and the log holding the
/// commit would then be removed with the staged file.
fn seal(conn: Option<Connection>, file: &File, staged: &Path, path: &Path) -> Result<()> {
    let Some(conn) = conn else {
        return Err(Error::internal(
            "internal error: the new database was not open after its first change; nothing was written. Please report this.",
        ));
    };
    let (busy, logged, moved): (i64, i64, i64) = conn
        .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .map_err(|e| super::failure(path, "cannot finish writing", e))?;
    if busy != 0 || logged != moved {
        return Err(Error::database(format!(
            "cannot finish writing the database {}: SQLite copied {moved} of {logged} pages of the first change into it; nothing was written. If the disk is full, free some space and run the command again",
            path.display()
        )));
    }
    conn.close()
        .map_err(|(_, e)| super::failure(path, "cannot close", e))?;
    // The log is emptied by the checkpoint and removed by the close; one with pages left in it would
    // be lost with the staged file.
    if fs::metadata(with_suffix(staged, "-wal")).is_ok_and(|m| m.len() > 0) {
        return Err(Error::database(format!(
            "cannot finish writing the database {}: its write-ahead log was not emptied into it; nothing was written. If the disk is full, free some space and run the command again",
            path.display()
        )));
    }
    file.sync_all()
        .map_err(|e| io_error(&format!("cannot write the database {}", path.display()), e))
}

/// Link the sealed staged file to `path` (a hard link fails if `path` exists: another's database is
/// never replaced) and make the new entry durable; if that fails, the link is taken back.
fn link(staged: &Path, path: &Path, taken: impl FnOnce() -> Error) -> Result<()> {
    let cannot = |e| io_error(&format!("cannot create the database {}", path.display()), e);
    match fs::hard_link(staged, path) {
        Ok(()) => {}
        Err(e) if e.kind() == IoKind::AlreadyExists => return Err(taken()),
        Err(e) => return Err(cannot(e)),
    }
    if let Err(e) = crate::fsutil::sync_dir_checked(&parent_dir(path)) {
        let _ = fs::remove_file(path);
        return Err(cannot(e));
    }
    Ok(())
}

/// `e` with the staged file's path replaced by the database's own path.
fn naming(e: Error, staged: &Path, path: &Path) -> Error {
    let shown = path.display().to_string();
    let message = e.message.replace(&staged.display().to_string(), &shown);
    if message == e.message {
        return e;
    }
    let renamed = Error::new(e.kind, message);
    match e.data {
        Some(data) => renamed.with_data(data),
        None => renamed,
    }
}

impl SqliteStore {
    pub(super) fn load_all(&mut self, db: &Database) -> Result<()> {
        let path = self.path.clone();
        let conn = self
            .connection(true)?
            .expect("connection(true) opens or creates the database");
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| failure(&path, "cannot start writing", e))?;
        // (create_from's target was checked to be new, so the file is created here directly.)
        // A bulk load indexes its rows as it writes them: nothing waits for the index.
        let pending = super::pending::Pending::default();
        let mut t = SqlTx::new(&tx, &path, &pending);
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
                if let Some(row) = crate::store::memory::node_row(timeline, n) {
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
        // The search index in one segment. As the rows' inserts left it (a segment for each
        // flush of FTS5's memory, merged as they came), the appends after the load would merge
        // its large segments piecemeal: a hundred pages and more in some of their commits. This
        // rewrites what the load wrote, once.
        t.exec(
            "INSERT INTO search_index (search_index) VALUES ('optimize')",
            [],
        )?;
        tx.commit().map_err(|e| failure(&path, "cannot commit", e))
    }
}
