//! The JSON snapshot engine: one JSON file, a lock file beside it, and a backup of the previous
//! snapshot.
//!
//! Every read takes a shared lock on `<db>.lock`; every mutation holds an exclusive lock across
//! read-latest → execute → validate → write, so independent processes (CLI and MCP servers) never
//! lose each other's changes. A write goes to a private temporary file in the same directory, is
//! fsynced, the previous snapshot becomes `<db>.bak`, and the temporary file atomically replaces the
//! database. A file that does not load is never overwritten.

use super::fault::{self, Step};
use super::memory::MemTx;
use super::{Engine, Outcome, Tx, io_error};
use crate::error::{Error, Message, Result};
use crate::fsutil::replace::replace;
use crate::fsutil::{parent_dir, private, sync_dir, temp_path_beside, with_suffix};
use crate::model::Database;
use crate::model::file::DatabaseFile;
use std::fs::{self, File};
use std::io::{ErrorKind as IoKind, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Whether an open failed because this process may not write there (read-only media or permissions).
fn cannot_write(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        IoKind::ReadOnlyFilesystem | IoKind::PermissionDenied
    )
}

/// What stops a change.
enum Blocked<'a> {
    /// The file system is mounted read-only.
    Media,
    /// The lock file cannot be opened for writing.
    LockFile(&'a Path),
    /// The database file is write-protected (mode 0444, or another user's).
    File,
    /// The directory does not let this user create the new snapshot beside the old one.
    Directory,
    /// The store was opened for reading only (`reading_only`).
    Requested,
}

/// A database kept as one JSON file.
#[derive(Debug, Clone)]
pub struct JsonStore {
    path: PathBuf,
    /// Never create or write-lock anything (shell completion).
    reads_only: bool,
}

impl JsonStore {
    /// A store for `path`, already checked by `Store::open`. The file is created on first write.
    pub fn new(path: PathBuf) -> JsonStore {
        JsonStore {
            path,
            reads_only: false,
        }
    }

    /// The same store, reading without creating a lock file and refusing every change.
    pub fn reading_only(self) -> JsonStore {
        JsonStore {
            reads_only: true,
            ..self
        }
    }

    pub fn exists(&self) -> bool {
        self.path.exists()
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn backup_path(&self) -> PathBuf {
        with_suffix(&self.path, ".bak")
    }

    pub fn lock_path(&self) -> PathBuf {
        with_suffix(&self.path, ".lock")
    }

    /// Take the lock: shared for a read, exclusive for a change. `None` when a read needs no lock
    /// because none can exist (see below).
    fn lock(&self, exclusive: bool) -> Result<Option<File>> {
        let lock_path = self.lock_path();
        // A lock file is created by Timeline itself; a link there would put the lock somewhere else.
        if let Ok(meta) = fs::symlink_metadata(&lock_path)
            && !meta.is_file()
        {
            let what = if meta.file_type().is_symlink() {
                "a symbolic link"
            } else {
                "not a regular file"
            };
            return Err(Error::database(format!(
                "the lock file {} is {what}; Timeline creates it as a plain file and will not use anything else. Remove it (rm \"{}\") when no tl or tl-mcp process is running, then try again",
                lock_path.display(),
                lock_path.display()
            )));
        }
        let cannot_open = |e| {
            io_error(
                &format!("cannot open the lock file {}", lock_path.display()),
                e,
            )
        };
        if exclusive && self.reads_only {
            return Err(self.cannot_change(Blocked::Requested));
        }
        if !exclusive {
            // A read never creates the lock file (`tl --db examples/x.json export` must leave the
            // checkout as it was): it shares the lock when the file exists and otherwise needs none,
            // as a writer replaces the database by an atomic rename (see below).
            return match private::open_own_read_only(&lock_path) {
                Ok(file) => {
                    file.lock_shared().map_err(|e| {
                        io_error(&format!("cannot lock {}", lock_path.display()), e)
                    })?;
                    Ok(Some(file))
                }
                Err(e) if matches!(e.kind(), IoKind::NotFound | IoKind::PermissionDenied) => {
                    Ok(None)
                }
                Err(e) => Err(cannot_open(e)),
            };
        }
        let file = match private::open_private(&lock_path, false) {
            Ok(file) => file,
            Err(e) if cannot_write(&e) && !self.exists() => {
                return Err(super::cannot_create(&self.path, e));
            }
            Err(e) if cannot_write(&e) => {
                return Err(
                    self.cannot_change(if e.kind() == IoKind::ReadOnlyFilesystem {
                        Blocked::Media
                    } else {
                        Blocked::LockFile(&lock_path)
                    }),
                );
            }
            Err(e) => return Err(cannot_open(e)),
        };
        file.lock()
            .map_err(|e| io_error(&format!("cannot lock {}", lock_path.display()), e))?;
        Ok(Some(file))
    }

    /// A change refused before anything was written, saying what stops it and the ways out.
    fn cannot_change(&self, blocked: Blocked) -> Error {
        let db = self.path.display();
        let why = match blocked {
            Blocked::Media => "it is on a read-only file system".to_string(),
            Blocked::LockFile(lock) => format!(
                "you may not write its lock file {} (permission denied)",
                lock.display()
            ),
            Blocked::File => format!("you may not write the file {db} (permission denied)"),
            Blocked::Directory => format!(
                "you may not create files in its directory {} (a change writes the new snapshot there and renames it into place)",
                parent_dir(&self.path).display()
            ),
            Blocked::Requested => "it was opened for reading only".to_string(),
        };
        Error::database(format!(
            "cannot change the database {db}: {why}. Nothing was written; reading it works. To change it, get write access to the file, its directory and its lock file, or copy it to a writable place (cp \"{db}\" <new path>) and use the copy"
        ))
    }

    /// The latest snapshot's bytes, or None when the database does not exist yet.
    fn read_bytes(&self) -> Result<Option<Vec<u8>>> {
        use std::io::Read;
        let read = || -> std::io::Result<Vec<u8>> {
            let file = File::open(&self.path)?;
            // At most the size the file had when opened: a file that grows while it is read (or a
            // special file that slipped past the checks) cannot make the read go on for ever.
            let len = file.metadata()?.len();
            let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
            file.take(len).read_to_end(&mut bytes)?;
            Ok(bytes)
        };
        match read() {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == IoKind::NotFound => Ok(None),
            Err(e) => Err(io_error(
                &format!("cannot read the database {}", self.path.display()),
                e,
            )),
        }
    }

    /// A database that is missing while its backup exists was most likely deleted or moved by
    /// mistake: starting afresh would soon write the new, nearly empty database over that backup.
    fn refuse_if_only_the_backup_exists(&self) -> Result<()> {
        let backup = self.backup_path();
        if !self.exists() && fs::symlink_metadata(&backup).is_ok() {
            let db = self.path.display();
            let bak = backup.display();
            return Err(Error::database(format!(
                "the database {db} does not exist, but its backup {bak} does: the database was probably deleted or moved by mistake, so nothing was done. To restore the previous state: cp \"{bak}\" \"{db}\". To start a new database here instead, remove the backup first: rm \"{bak}\""
            )));
        }
        Ok(())
    }

    fn load(&self, bytes: Option<&[u8]>) -> Result<Database> {
        match bytes {
            None => Ok(Database::default()),
            Some(bytes) => decode(bytes)
                .map_err(|problem| self.corrupt(problem.problem()).with_source(problem)),
        }
    }

    fn corrupt(&self, problem: &str) -> Error {
        let db = self.path.display();
        let backup = self.backup_path();
        let restore = if backup.exists() {
            format!(
                "then restore the previous snapshot: cp \"{}\" \"{db}\"",
                backup.display()
            )
        } else {
            format!(
                "no backup {} exists, so repair the file by hand or start a new database with --db",
                backup.display()
            )
        };
        Error::database(
            Message::from(format!(
                "the database {db} cannot be used: {problem}. Nothing was changed and nothing will be written to it. "
            ))
            .worded(
                format!(
                    "To recover: stop every tl and tl-mcp process that uses it, keep a copy of the damaged file (cp \"{db}\" \"{db}.corrupt\"), {restore}"
                ),
                crate::error::RECOVER_BY_THE_USER,
            ),
        )
    }

    /// Remove temporary files left by a writer that died mid-write. Only called under the exclusive
    /// lock: a temporary file exists only while its writer holds that lock, so any found now is dead.
    fn remove_leftovers(&self) {
        let Some(name) = self
            .path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
        else {
            return;
        };
        let Ok(entries) = fs::read_dir(parent_dir(&self.path)) else {
            return;
        };
        for entry in entries.flatten() {
            let file_name = entry.file_name();
            let file_name = file_name.to_string_lossy();
            if is_temp_name(&file_name, &name) {
                let _ = fs::remove_file(entry.path());
            }
        }
    }

    /// Write `bytes` as the new snapshot; `previous` becomes the backup.
    fn commit(&self, bytes: &[u8], previous: Option<&[u8]>) -> Result<()> {
        let dir = parent_dir(&self.path);
        let backup = self.backup_path();
        if let Ok(meta) = fs::symlink_metadata(&backup)
            && !meta.is_file()
        {
            return Err(Error::database(format!(
                "{} is not a regular file (a directory, link or special file), so the previous snapshot cannot be kept there; nothing was written. Move it away (mv \"{}\" \"{}.old\") and try again",
                backup.display(),
                backup.display(),
                backup.display()
            )));
        }
        self.remove_leftovers();
        let temp = self.temp_path("tmp");
        let backup_temp = previous.map(|_| self.temp_path("bak"));
        // Everything that needs space is staged first: the new snapshot and the backup of the
        // previous one, each written in full and synced. Until the new snapshot is renamed into
        // place (the commit), a failure removes both and leaves every file as it was, `.bak`
        // included. (Before, the backup was renamed into place first, so a failure after it left
        // the database unchanged but its backup replaced.)
        let staged = (|| -> std::io::Result<()> {
            fault::fail_at(Step::TempWritten)?;
            let mut file = private::open_private(&temp, true)?;
            file.write_all(bytes)?;
            fault::reached(Step::TempWritten);
            if !fault::unsafe_synchronous_off() {
                file.sync_all()?;
            }
            fault::reached(Step::TempSynced);
            drop(file);
            if let (Some(previous), Some(backup_temp)) = (previous, &backup_temp) {
                fault::fail_at(Step::BackupWritten)?;
                let mut backup = private::open_private(backup_temp, true)?;
                backup.write_all(previous)?;
                backup.sync_all()?;
                fault::reached(Step::BackupWritten);
            }
            fault::fail_at(Step::Replaced)?;
            replace(&temp, &self.path)
        })();
        if let Err(e) = staged {
            let _ = fs::remove_file(&temp);
            if let Some(backup_temp) = &backup_temp {
                let _ = fs::remove_file(backup_temp);
            }
            // Every step above makes or renames an entry in the directory.
            if e.kind() == IoKind::PermissionDenied {
                return Err(self.cannot_change(Blocked::Directory));
            }
            return Err(io_error(
                &format!(
                    "cannot write the database {} (it was left as it was)",
                    self.path.display()
                ),
                e,
            ));
        }
        // Committed. The backup follows; should its rename fail, the change stands and the older
        // backup stays (still a whole earlier snapshot), so the change is reported as made.
        if let Some(backup_temp) = &backup_temp
            && fault::fail_at(Step::BackupReplaced)
                .and_then(|()| replace(backup_temp, &backup))
                .is_err()
        {
            let _ = fs::remove_file(backup_temp);
        }
        fault::reached(Step::Replaced);
        sync_dir(&dir);
        fault::reached(Step::DirSynced);
        Ok(())
    }

    fn temp_path(&self, what: &str) -> PathBuf {
        temp_path_beside(&self.path, what)
    }

    /// The format version the file itself has (a version 1 file stays version 1 until its next
    /// change rewrites it), or None before the first change. A file that is not a readable
    /// database gets the damage error a read gives.
    pub fn format_version(&mut self) -> Result<Option<u64>> {
        self.refuse_if_only_the_backup_exists()?;
        if matches!(fs::symlink_metadata(&self.path), Err(e) if e.kind() == IoKind::NotFound) {
            return Ok(None);
        }
        let _lock = self.lock(false)?;
        let Some(bytes) = self.read_bytes()? else {
            return Ok(None);
        };
        match file_format_version(&bytes) {
            Some(version) => Ok(Some(version)),
            // (Not a Timeline database: the load names what is wrong.)
            None => self
                .load(Some(&bytes))
                .map(|_| Some(crate::spec::spec().constants.format_version)),
        }
    }

    pub fn read<R>(&mut self, f: impl FnOnce(&mut dyn Tx) -> Result<R>) -> Result<R> {
        self.refuse_if_only_the_backup_exists()?;
        // A database that does not exist has nothing to lock, and a read must not leave `<db>.lock`
        // behind. A writer creates the database by an atomic rename, so it is either there or not.
        if matches!(fs::symlink_metadata(&self.path), Err(e) if e.kind() == IoKind::NotFound) {
            return f(&mut MemTx {
                db: &mut Database::default(),
                engine: Engine::Json,
            });
        }
        let _lock = self.lock(false)?;
        let bytes = self.read_bytes()?;
        let mut db = self.load(bytes.as_deref())?;
        f(&mut MemTx {
            db: &mut db,
            engine: Engine::Json,
        })
    }

    pub fn write<R>(&mut self, f: impl FnOnce(&mut dyn Tx) -> Result<Outcome<R>>) -> Result<R> {
        let _lock = self.lock(true)?;
        self.refuse_if_only_the_backup_exists()?;
        // A change replaces the file, which its directory allows even when the file itself is
        // write-protected; the protection is honoured, as the SQLite engine must.
        if let Err(e) = fs::OpenOptions::new().write(true).open(&self.path)
            && e.kind() == IoKind::PermissionDenied
        {
            return Err(self.cannot_change(Blocked::File));
        }
        let previous = self.read_bytes()?;
        let mut db = self.load(previous.as_deref())?;
        let audit_before = db.audit.clone();
        let outcome = f(&mut MemTx {
            db: &mut db,
            engine: Engine::Json,
        })?;
        match outcome {
            Outcome::Unchanged(result) => Ok(result),
            Outcome::Commit(result) => {
                let bytes = encode(&db);
                if previous.as_deref() == Some(bytes.as_slice()) {
                    // Nothing changed (a pin already set, a reused summary): keep the file and its backup.
                    return Ok(result);
                }
                // The audit is append-only (U2): old entries are never rewritten or deleted.
                if !db.audit.starts_with(&audit_before) {
                    return Err(Error::internal(
                        "internal error: an operation tried to rewrite or delete audit entries; nothing was written. Please report this.",
                    ));
                }
                // Validate what is about to be written with the same checks a later load applies, and
                // check that the state the operation derived step by step is what a load derives.
                match decode(&bytes) {
                    Err(problem) => {
                        return Err(Error::internal(format!(
                            "internal error: the new snapshot does not validate ({problem}); nothing was written. Please report this."
                        )));
                    }
                    Ok(reloaded) if reloaded != db => {
                        return Err(Error::internal(
                            "internal error: the derived state of the new snapshot differs from a fresh load; nothing was written. Please report this.",
                        ));
                    }
                    Ok(_) => {}
                }
                self.commit(&bytes, previous.as_deref())?;
                Ok(result)
            }
        }
    }
}

impl JsonStore {
    /// Copy the snapshot to `target` under a shared lock, so no writer is half-way through it.
    pub fn backup(&mut self, target: &Path) -> Result<()> {
        super::refuse_existing(target)?;
        if !self.exists() {
            return Err(self.missing());
        }
        let _lock = self.lock(false)?;
        let bytes = self.read_bytes()?.ok_or_else(|| self.missing())?;
        // The copy must load like the original: never hand out a copy of a damaged file as a backup.
        self.load(Some(&bytes))?;
        crate::fsutil::write_new_file(target, &mut |out| out.write_all(&bytes))
            .map_err(|e| Error::new_file(target, e))
    }

    /// Every problem a load finds (the file is read under a shared lock and never written).
    pub fn check(&mut self) -> Result<Vec<String>> {
        if !self.exists() {
            return Err(self.missing());
        }
        let _lock = self.lock(false)?;
        let bytes = self.read_bytes()?.ok_or_else(|| self.missing())?;
        Ok(match decode(&bytes) {
            Ok(_) => Vec::new(),
            Err(problem) => vec![problem.to_string()],
        })
    }

    /// Write `db` as a new snapshot file at `target` (which `Store::create_from` checked is free).
    pub fn create_from(target: &Path, db: &Database) -> Result<()> {
        crate::fsutil::write_new_file(target, &mut |out| out.write_all(&encode(db)))
            .map_err(|e| Error::new_file(target, e))
    }

    fn missing(&self) -> Error {
        Error::database(format!(
            "the database {} does not exist yet; create it with the first change (for example create), or pass --db with the path of an existing database",
            self.path.display()
        ))
    }
}

/// The snapshot bytes of a database.
pub fn encode(db: &Database) -> Vec<u8> {
    let file = db.to_file(crate::spec::spec().constants.format_version);
    let mut bytes = serde_json::to_vec_pretty(&file).unwrap_or_default();
    bytes.push(b'\n');
    bytes
}

/// Why snapshot bytes are not a database: the problem in words (as `db check` lists it), and the
/// parser's or the model's error that found it as the source.
#[derive(Debug, Clone)]
pub struct DecodeError {
    problem: String,
    source: Option<Arc<dyn std::error::Error + Send + Sync>>,
}

impl DecodeError {
    fn caused(problem: String, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        DecodeError {
            problem,
            source: Some(Arc::new(cause)),
        }
    }

    /// The problem, as `db check` lists it.
    pub fn problem(&self) -> &str {
        &self.problem
    }
}

impl From<String> for DecodeError {
    fn from(problem: String) -> Self {
        DecodeError {
            problem,
            source: None,
        }
    }
}

/// Equal when they name the same problem (sources are not comparable values).
impl PartialEq for DecodeError {
    fn eq(&self, other: &Self) -> bool {
        self.problem == other.problem
    }
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.problem)
    }
}

impl std::error::Error for DecodeError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// Parse and check snapshot bytes, rebuilding every derived index.
///
/// A file whose top level is a JSON object is first parsed straight into `DatabaseFile`, which costs
/// about half of building a `serde_json::Value` tree and converting it. For such input that parse
/// accepts exactly what the `Value` route (`decode_via_value`) accepts and yields the same
/// `DatabaseFile`: both reject unknown fields, both accept a nested structure written as a JSON
/// array, and a duplicate key, which the `Value` route resolves as "last one wins", makes the direct
/// parse fail. Whenever the direct parse fails or finds another format version, the `Value` route
/// runs, so every error message stays the same.
pub fn decode(bytes: &[u8]) -> std::result::Result<Database, DecodeError> {
    let supported = crate::spec::spec().constants.format_version;
    // JSON whitespace exactly as serde_json skips it (not `is_ascii_whitespace`, which adds form feed).
    let first = bytes
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    if first == Some(&b'{')
        && let Ok(file) = serde_json::from_slice::<DatabaseFile>(bytes)
        && (1..=supported).contains(&file.format_version)
    {
        return Database::from_file(file, supported)
            .map_err(|e| DecodeError::caused(format!("invalid content ({})", e.message), e));
    }
    decode_via_value(bytes)
}

/// The `format_version` of snapshot bytes, read without building the database (or, when the key
/// is there twice, as `decode` resolves it: the last one).
fn file_format_version(bytes: &[u8]) -> Option<u64> {
    #[derive(serde::Deserialize)]
    struct Head {
        format_version: u64,
    }
    match serde_json::from_slice::<Head>(bytes) {
        Ok(head) => Some(head.format_version),
        Err(_) => serde_json::from_slice::<serde_json::Value>(bytes)
            .ok()?
            .get("format_version")?
            .as_u64(),
    }
}

/// The reference route of `decode`: a `serde_json::Value` first, so that an unsupported version or
/// a file that is not a Timeline database gets a precise message before any structure check.
fn decode_via_value(bytes: &[u8]) -> std::result::Result<Database, DecodeError> {
    let supported = crate::spec::spec().constants.format_version;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(DecodeError::from(format!(
            "the file is empty ({} bytes, no JSON)",
            bytes.len()
        )));
    }
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        let problem = if e.is_eof() {
            format!("the file is truncated ({e})")
        } else {
            format!("it is not valid JSON ({e})")
        };
        DecodeError::caused(problem, e)
    })?;
    match value
        .get("format_version")
        .and_then(serde_json::Value::as_u64)
    {
        Some(v) if (1..=supported).contains(&v) => {}
        Some(v) => {
            return Err(DecodeError::from(format!(
                "unsupported format_version {v} (this version of Timeline reads format_version 1 to {supported}; use the release that wrote it)"
            )));
        }
        None => {
            return Err(DecodeError::from(
                "format_version is missing or not a number, so this is not a Timeline database"
                    .to_string(),
            ));
        }
    }
    let file: DatabaseFile = serde_json::from_value(value)
        .map_err(|e| DecodeError::caused(format!("invalid structure ({e})"), e))?;
    Database::from_file(file, supported)
        .map_err(|e| DecodeError::caused(format!("invalid content ({})", e.message), e))
}

/// Whether `file_name` is one of the temporary files `temp_path` makes for the database `db_name`:
/// `.<db_name>.tmp-<pid>-<nanos>` or `.<db_name>.bak-<pid>-<nanos>`.
fn is_temp_name(file_name: &str, db_name: &str) -> bool {
    let Some(rest) = file_name
        .strip_prefix('.')
        .and_then(|r| r.strip_prefix(db_name))
        .and_then(|r| r.strip_prefix(".tmp-").or_else(|| r.strip_prefix(".bak-")))
    else {
        return false;
    };
    let mut parts = rest.split('-');
    let numeric =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    numeric(parts.next()) && numeric(parts.next()) && parts.next().is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::{self, Ctx};
    use crate::spec::validate::{Origin, validate};
    use serde_json::json;

    fn run(db: &mut Database, op: &str, args: serde_json::Value) -> serde_json::Value {
        let operation = crate::spec::spec().operation(op).unwrap();
        let args = validate(operation, args.as_object().unwrap(), Origin::Mcp).unwrap();
        ops::run_in_memory(
            db,
            &operation.name,
            &args,
            &Ctx {
                now: 1_700_000_000,
                origin: Origin::Mcp,
            },
        )
        .unwrap()
    }

    /// A snapshot that does not parse says so in words and keeps the parser's error as its source.
    #[test]
    fn a_decode_error_keeps_the_parsers_error() {
        use std::error::Error as _;
        let e = decode(b"{\"format_version\": 1, ").unwrap_err();
        assert!(e.problem().starts_with("the file is truncated ("), "{e}");
        let source = e.source().expect("a source");
        assert!(source.downcast_ref::<serde_json::Error>().is_some());
        assert!(decode(b"  ").unwrap_err().source().is_none());
    }

    /// `decode` and its reference route agree exactly: the same database or the same message.
    fn same_as_value_route(bytes: &[u8]) {
        assert_eq!(
            decode(bytes),
            decode_via_value(bytes),
            "{}",
            String::from_utf8_lossy(bytes)
        );
    }

    #[test]
    fn decode_matches_the_value_route() {
        let mut db = Database::default();
        run(&mut db, "create", json!({}));
        for i in 0..6 {
            let mut args =
                json!({"timeline_id": "tl0", "role": "user", "text": format!("m{i} \"é\" \\ 🎉")});
            if i == 2 {
                args["intent"] = json!({"tag": "plan", "note": "n"});
            }
            run(&mut db, "append", args);
        }
        // A side branch n3 -> n7, covered by the summaries below, then archived.
        for (op, args) in [
            ("fork", json!({"node": "n3", "name": "side"})),
            ("switch", json!({"name": "side"})),
            ("append", json!({"role": "assistant", "text": "side"})),
            ("pin", json!({"node": "n5"})),
            ("switch", json!({"name": "main"})),
            (
                "summarize",
                json!({"from": "n1", "to": "n2", "summary": "s"}),
            ),
            (
                "summarize",
                json!({"from": "n1", "to": "n2", "summary": "t", "supersede": "n8"}),
            ),
            (
                "summarize",
                json!({"from": "n7", "to": "n7", "summary": "u", "derived_from": ["n9"]}),
            ),
            (
                "summarize",
                json!({"from": "n3", "to": "n3", "summary": "v"}),
            ),
            ("context_budget", json!({"node": "n6", "max_tokens": 60})),
            ("archive_branch", json!({"branch": "side"})),
        ] {
            let mut args = args;
            args["timeline_id"] = json!("tl0");
            run(&mut db, op, args);
        }
        assert!(db.timelines[0].nodes.iter().any(|n| n.cold));
        let bytes = encode(&db);
        let full = decode_via_value(&bytes).unwrap();
        assert_eq!(decode(&bytes).unwrap(), full);
        assert_eq!(encode(&full), bytes);
        same_as_value_route(&bytes);
        let text = String::from_utf8(bytes.clone()).unwrap();
        let value: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let compact = serde_json::to_vec(&value).unwrap();
        let mut variants: Vec<Vec<u8>> = vec![
            compact.clone(),
            // Leading JSON whitespace, and form feed, which JSON does not allow.
            [b" \t\r\n".as_slice(), &bytes].concat(),
            [b"\x0c".as_slice(), &bytes].concat(),
            [b"\xef\xbb\xbf".as_slice(), &bytes].concat(),
            // Trailing data, truncation, and the empty and blank files.
            [bytes.as_slice(), b"x"].concat(),
            bytes[..bytes.len() / 2].to_vec(),
            Vec::new(),
            b"  \n".to_vec(),
            // Not objects at the top level, including the array form serde accepts for structures.
            b"[1, 0]".to_vec(),
            b"[1, 0, [], [], []]".to_vec(),
            b"1".to_vec(),
            b"null".to_vec(),
            // Versions, unknown and duplicate keys.
            b"{\"format_version\": 99}".to_vec(),
            b"{\"format_version\": 1.0}".to_vec(),
            b"{\"format_version\": \"1\"}".to_vec(),
            b"{\"format_version\": 1, \"x\": 1}".to_vec(),
            b"{\"format_version\": 1}".to_vec(),
            b"{\"format_version\": 2, \"format_version\": 1}".to_vec(),
            b"{\"format_version\": 1, \"format_version\": 2}".to_vec(),
            b"{\"format_version\": 1, \"next_timeline\": 0, \"next_timeline\": 0}".to_vec(),
            b"{}".to_vec(),
        ];
        // Edits inside a valid file: each one changes one thing in the text.
        for (from, to) in [
            ("\"next_node\": ", "\"next_node\": 1 + "),
            ("\"role\": \"user\"", "\"role\": \"usr\""),
            ("\"tokens\": ", "\"tokens\": -"),
            ("\"id\": \"n1\"", "\"id\": \"n01\""),
            (
                "\"current_branch\": \"main\"",
                "\"current_branch\": \"nope\"",
            ),
            ("\"version\": 2", "\"version\": 3"),
            ("\"kind\": \"real\"", "\"kind\": \"Real\""),
            ("\"pins\": [", "\"pins\": [\"n0\", "),
            ("\"prefix_tokens\": ", "\"prefix_tokens\": 0.5 + "),
            (
                "\"prefix_tokens\": ",
                "\"prefix_tokens\": \"x\", \"prefix_tokens\": ",
            ),
            ("\"text\": \"side\"", "\"text\": \"\\ud800\""),
            ("\"text\": \"side\"", "\"text\": \"a\", \"text\": \"side\""),
            ("\"intent\": {", "\"intent\": {\"tag\": \"\", \"x\": 1, "),
        ] {
            assert!(text.contains(from), "{from}");
            for n in [1, usize::MAX] {
                variants.push(text.replacen(from, to, n).into_bytes());
            }
        }
        // Structures written as JSON arrays, which serde accepts in both routes.
        let mut arrays = value.clone();
        arrays["timelines"][0]["branches"][0] = json!(["main", "n6", "n0"]);
        variants.push(serde_json::to_vec(&arrays).unwrap());
        arrays["timelines"][0]["branches"][0] = json!(["main", "n6"]);
        variants.push(serde_json::to_vec(&arrays).unwrap());
        arrays["timelines"][0]["branches"][0] = json!(["main", "n6", "n0", 1]);
        variants.push(serde_json::to_vec(&arrays).unwrap());
        let mut deep = b"{\"format_version\": 1, \"idempotency\": [{\"scope\": \"database\", \"key\": \"k\", \"op\": \"create\", \"ts\": 1, \"result\": ".to_vec();
        deep.extend(std::iter::repeat_n(b'[', 200));
        deep.extend(std::iter::repeat_n(b']', 200));
        deep.extend(b"}]}");
        variants.push(deep);
        for variant in &variants {
            same_as_value_route(variant);
        }
        assert!(variants.iter().any(|v| decode(v).is_ok()));
    }
}
