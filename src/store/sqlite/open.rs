//! Opening the file: access modes (read-write, read-only, immutable), why a file can only be read,
//! and the checks and migration a connection gets before its first use.

use super::migrations::schema_version;
use super::schema::{foreign_schema, register_functions, verify_schema};
use super::{APPLICATION_ID, BUSY_TIMEOUT, LOG_SIZE, SqliteStore, file_stamp};
use crate::error::{Error, Message, Result};
use crate::fsutil::with_suffix;
use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags};
use std::cell::Cell;
use std::path::Path;
use std::time::{Duration, Instant};

/// How a connection opens the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Opening {
    ReadWrite,
    ReadOnly,
    /// Read-only, without locks or -wal/-shm files: only for a file nothing writes to.
    Immutable,
}

/// Why a database this process may read cannot be changed by it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ReadOnly {
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
pub(super) fn write_access(path: &Path) -> Option<ReadOnly> {
    match std::fs::OpenOptions::new().write(true).open(path) {
        Err(e) if e.kind() == std::io::ErrorKind::ReadOnlyFilesystem => Some(ReadOnly::Media),
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Some(ReadOnly::Permission),
        _ => None,
    }
}

/// Whether the file at `wal` (a database's -wal) starts with a log's header, so that SQLite would
/// read changes from it. A log Timeline's last connection left behind is blank (see `kept_log`), and
/// a missing or short one holds nothing either.
pub(super) fn log_holds_changes(wal: &Path) -> bool {
    // (Not blocking: a FIFO at the log's name would wait for a writer; it holds no log either.)
    crate::fsutil::open_no_block(wal)
        .is_ok_and(|log| log.metadata().is_ok_and(|m| m.is_file()) && starts_with_log_header(log))
}

/// SQLite keeps the database's write-ahead log and its index at `<db>-wal` and `<db>-shm`, and only
/// a regular file will do there: a FIFO would block a read, and SQLite would write changes into a
/// pipe or a device. (A link there is refused by changes only, with its own message: SQLite never
/// opens one, and a read does not need to.)
fn refuse_special_companions(db: &Path) -> Result<()> {
    for (suffix, what) in [
        ("-wal", "write-ahead log"),
        ("-shm", "write-ahead log's index"),
    ] {
        let companion = with_suffix(db, suffix);
        let special = |m: std::fs::Metadata| !m.is_file() && !m.file_type().is_symlink();
        if std::fs::symlink_metadata(&companion).is_ok_and(special) {
            return Err(Error::database(format!(
                "{} is not a regular file (it is a directory, FIFO, socket or device), and SQLite keeps the database's {what} under that name; nothing was read or written. Remove it when no program uses the database {}, then try again",
                companion.display(),
                db.display()
            )));
        }
    }
    Ok(())
}

/// Whether what `log` reads from its start is a log's magic number: SQLite's two (big-endian), one
/// for each byte order of its checksums.
pub(super) fn starts_with_log_header(mut log: impl std::io::Read) -> bool {
    let mut magic = [0; 4];
    log.read_exact(&mut magic).is_ok()
        && matches!(u32::from_be_bytes(magic), 0x377f_0682 | 0x377f_0683)
}

/// An SQLite URI that opens `path` as immutable: no lock, no -wal or -shm file, which is right only
/// where nothing writes to the file while it is read (see `open_checked`). `?`, `#` and `%` are
/// escaped so any file name works; an absolute path gets an empty authority (`file:///…`), so a path
/// that starts with `//` (a Windows share) is not taken for a host name.
pub(super) fn immutable_uri(path: &Path) -> String {
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
    pub(super) fn open_checked(&mut self) -> Result<Connection> {
        // (An invalid TIMELINE_SQLITE_KEPT_LOG is refused before anything is opened.)
        super::log_choice::current()?;
        refuse_special_companions(&self.path)?;
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
            return Err(Error::database(
                Message::from(format!(
                    "cannot read the database {db} without changing files beside it: its -wal file holds changes that a program writing it left when it stopped, and only someone who may write the database can bring them in. Nothing was changed. "
                ))
                .worded(
                    format!(
                        "Ask its owner to run any command on it (such as tl --db \"{db}\" branches), or copy the database with its -wal file to a place of your own and use the copy"
                    ),
                    "No MCP tool can do that: stop and tell the user that the database's owner must open it once with Timeline, or that the user can copy the database with its -wal file and start this server on the copy",
                ),
            ));
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
        // A log that a large transaction made longer than the one `kept_log` keeps is cut back to
        // it when SQLite next starts the log over.
        conn.execute_batch(&format!(
            "PRAGMA synchronous = FULL; PRAGMA foreign_keys = OFF; PRAGMA journal_size_limit = {LOG_SIZE};"
        ))
            .map_err(|e| self.failure("cannot configure", e))?;
        if super::super::fault::unsafe_synchronous_off() {
            conn.execute_batch("PRAGMA synchronous = OFF")
                .map_err(|e| self.failure("cannot configure", e))?;
        }
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

    /// Open the file and read its header, the first access to it: a damaged file fails here,
    /// unchanged. Gives the user version, application ID and number of schema entries.
    pub(super) fn open_as(&self, how: Opening) -> rusqlite::Result<(Connection, (i64, i32, i64))> {
        let read_only = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = match how {
            // Only a writer's last connection deletes the log, so only writers keep it.
            #[cfg(unix)]
            Opening::ReadWrite if super::log_choice::kept() => Connection::open_with_flags_and_vfs(
                &self.path,
                OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
                super::kept_log::VFS_NAME,
            )?,
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
        conn.busy_handler(Some(wait_for_the_lock))?;
        // The operations prepare about 30 distinct cached statements; rusqlite keeps 16 by
        // default, so a `tl-mcp` session mixing searches, reads and appends prepared some again.
        conn.set_prepared_statement_cache_capacity(64);
        if super::super::count::enabled() {
            use super::super::count::{SQLITE_INSTRUCTION_STEP, SQLITE_INSTRUCTIONS};
            let step = SQLITE_INSTRUCTION_STEP;
            conn.progress_handler(
                i32::from(step),
                Some(move || {
                    SQLITE_INSTRUCTIONS
                        .fetch_add(u64::from(step), std::sync::atomic::Ordering::Relaxed);
                    false
                }),
            );
        }
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

    /// Whether a -wal file that may hold committed changes not yet copied into the database exists.
    pub(super) fn wal_has_changes(&self) -> bool {
        log_holds_changes(&with_suffix(&self.path, "-wal"))
    }

    /// A failure to open or first read the file: damage is reported as damage, anything else (a
    /// missing -shm file that cannot be created, permissions) as what it is.
    pub(super) fn open_failure(&self, e: rusqlite::Error) -> Error {
        use rusqlite::ErrorCode as C;
        match (e.sqlite_error_code(), self.read_only) {
            (Some(C::DatabaseCorrupt | C::NotADatabase), _) | (None, _) => {
                self.corrupt(&e.to_string()).with_source(e)
            }
            (Some(C::CannotOpen | C::ReadOnly | C::PermissionDenied), Some(why))
                if self.wal_has_changes() =>
            {
                let db = self.path.display();
                Error::database(format!(
                    "cannot read the database {db}: {}, and SQLite needs to create its shared-memory file {db}-shm to read the changes still in {db}-wal; nothing was changed. Copy the database with its -wal file to a writable place and use the copy",
                    why.reason(&self.path)
                ))
                .with_source(e)
            }
            _ => self.failure("cannot open", e),
        }
    }

    /// Refuse a change to a database this process can only read.
    pub(super) fn refuse_change_if_read_only(&self) -> Result<()> {
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
}

impl ReadOnly {
    pub(super) fn reason(self, path: &Path) -> String {
        match self {
            ReadOnly::Media => "it is on a read-only file system".into(),
            ReadOnly::Permission => format!(
                "you may not write the file {} (permission denied)",
                path.display()
            ),
            ReadOnly::Directory => format!(
                "you may not create files in its directory {} (SQLite keeps its -wal and -shm files there while it changes the database)",
                crate::fsutil::parent_dir(path).display()
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
pub(super) fn linked_side_file(path: &Path) -> Option<ReadOnly> {
    ["-wal", "-shm"].into_iter().find_map(|suffix| {
        let mut side = path.as_os_str().to_owned();
        side.push(suffix);
        std::fs::symlink_metadata(&side)
            .is_ok_and(|m| m.file_type().is_symlink())
            .then_some(ReadOnly::Link(suffix))
    })
}

/// SQLite's busy handler: called while another connection holds the lock this one needs, it waits
/// a millisecond and asks to try again, until [`BUSY_TIMEOUT`] has passed since the wait began.
/// SQLite's own handler (`busy_timeout`) waits up to 100 ms between tries, which misses the short
/// pauses a long import leaves between its transactions; polling every millisecond catches them.
pub(super) fn wait_for_the_lock(tries: i32) -> bool {
    /// Calls further apart than this belong to two waits: SQLite does not restart `tries` at 0
    /// for every wait (a second wait within one statement, a backup step), and calls within one
    /// wait come a millisecond apart.
    const SAME_WAIT: Duration = Duration::from_millis(250);
    thread_local! {
        /// When this thread's current wait began, and its latest call.
        static WAIT: Cell<Option<(Instant, Instant)>> = const { Cell::new(None) };
    }
    let now = Instant::now();
    let began = WAIT.with(|wait| {
        let began = wait_began(wait.get(), tries, now, SAME_WAIT);
        wait.set(Some((began, now)));
        began
    });
    if now.duration_since(began) >= BUSY_TIMEOUT {
        return false;
    }
    std::thread::sleep(Duration::from_millis(1));
    true
}

/// When the wait that a busy handler's call at `now` belongs to began, given the previous call's
/// (began, called at): a new wait when SQLite counts from 0 again or the previous call is older
/// than `same_wait`.
fn wait_began(
    previous: Option<(Instant, Instant)>,
    tries: i32,
    now: Instant,
    same_wait: Duration,
) -> Instant {
    match previous {
        Some((began, last)) if tries > 0 && now.duration_since(last) < same_wait => began,
        _ => now,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_busy_wait_is_timed_from_its_first_call_not_from_an_earlier_wait() {
        let start = Instant::now();
        let at = |ms: u64| start + Duration::from_millis(ms);
        let same = Duration::from_millis(250);
        // The first call of a thread, and any call SQLite counts from 0, begins a wait.
        assert_eq!(wait_began(None, 0, at(5), same), at(5));
        assert_eq!(wait_began(Some((at(0), at(4))), 0, at(5), same), at(5));
        // Calls a millisecond apart are one wait, timed from its first call.
        assert_eq!(wait_began(Some((at(0), at(4))), 5, at(5), same), at(0));
        // A call long after the previous one begins a new wait even if SQLite did not count from
        // 0, so a wait that ended minutes ago does not make this one give up at once.
        assert_eq!(
            wait_began(Some((at(0), at(4))), 3, at(60_000), same),
            at(60_000)
        );
    }

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
