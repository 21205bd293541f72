//! The storage engine: one JSON snapshot file, a lock file beside it, and a backup of the previous
//! snapshot.
//!
//! Every read takes a shared lock on `<db>.lock`; every mutation holds an exclusive lock across
//! read-latest → execute → validate → write, so independent processes (CLI and MCP servers) never
//! lose each other's changes. A write goes to a private temporary file in the same directory, is
//! fsynced, the previous snapshot becomes `<db>.bak`, and the temporary file atomically replaces the
//! database. A file that does not load is never overwritten.

mod fault;
mod perms;
#[cfg(windows)]
mod perms_windows;

use crate::error::{Error, Result};
use crate::model::Database;
use crate::model::file::DatabaseFile;
use fault::Step;
use std::fs::{self, File};
use std::io::{ErrorKind as IoKind, Write};
use std::path::{Path, PathBuf};

/// What a mutation asks the store to do with its result.
pub enum Outcome<R> {
    /// Write the changed database.
    Commit(R),
    /// Nothing changed (an idempotent replay): write nothing at all.
    Unchanged(R),
}

/// The narrow interface operations run behind. A journal backend can implement it later without
/// touching the operations.
pub trait Store {
    /// Run `f` on the latest snapshot under a shared lock. Changes made by `f` are discarded.
    fn read<R>(&self, f: impl FnOnce(&mut Database) -> Result<R>) -> Result<R>;
    /// Run `f` on the latest snapshot under an exclusive lock and persist what it commits.
    fn write<R>(&self, f: impl FnOnce(&mut Database) -> Result<Outcome<R>>) -> Result<R>;
}

/// A database kept as one JSON file.
#[derive(Debug, Clone)]
pub struct FileStore {
    path: PathBuf,
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

impl FileStore {
    /// A store for `path`. The parent directory must exist; the file itself is created on first write.
    pub fn open(path: PathBuf) -> Result<FileStore> {
        if path
            .as_os_str()
            .to_string_lossy()
            .ends_with(std::path::is_separator)
        {
            return Err(Error::database(format!(
                "{} ends with a path separator, so it names a directory; pass --db with a file path such as {}",
                path.display(),
                path.join("timeline.json").display()
            )));
        }
        // A symbolic link (e.g. a database kept in a synced folder) is followed, so the lock, the
        // backup and the temporary files live beside the real file, every name for it shares one
        // lock, and writes go through the link instead of replacing it. A link to a database that
        // does not exist yet is followed too, so the checks below apply to its target.
        let path = match fs::symlink_metadata(&path) {
            Ok(meta) if meta.file_type().is_symlink() => {
                fs::canonicalize(&path).unwrap_or_else(|_| dangling_target(&path))
            }
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
            Err(_) => {
                return Err(Error::database(format!(
                    "the directory {} does not exist; create it first (mkdir -p \"{}\") or pass --db with another path",
                    parent.display(),
                    parent.display()
                )));
            }
        }
        if path.is_dir() {
            return Err(Error::database(format!(
                "{} is a directory, not a database file; pass --db with a file path",
                path.display()
            )));
        }
        Ok(FileStore { path })
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

    fn lock(&self, exclusive: bool) -> Result<File> {
        let lock_path = self.lock_path();
        let file = perms::open_private(&lock_path, false).map_err(|e| {
            io_error(
                &format!("cannot open the lock file {}", lock_path.display()),
                e,
            )
        })?;
        let locked = if exclusive {
            file.lock()
        } else {
            file.lock_shared()
        };
        locked.map_err(|e| io_error(&format!("cannot lock {}", lock_path.display()), e))?;
        Ok(file)
    }

    /// The latest snapshot's bytes, or None when the database does not exist yet.
    fn read_bytes(&self) -> Result<Option<Vec<u8>>> {
        match fs::read(&self.path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == IoKind::NotFound => Ok(None),
            Err(e) => Err(io_error(
                &format!("cannot read the database {}", self.path.display()),
                e,
            )),
        }
    }

    fn load(&self, bytes: Option<&[u8]>) -> Result<Database> {
        match bytes {
            None => Ok(Database::default()),
            Some(bytes) => decode(bytes).map_err(|problem| self.corrupt(&problem)),
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
        Error::database(format!(
            "the database {db} cannot be used: {problem}. Nothing was changed and nothing will be written to it. To recover: stop every tl and tl-mcp process that uses it, keep a copy of the damaged file (cp \"{db}\" \"{db}.corrupt\"), {restore}"
        ))
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
        self.remove_leftovers();
        let temp = self.temp_path("tmp");
        let result = (|| -> std::io::Result<()> {
            let mut file = perms::open_private(&temp, true)?;
            file.write_all(bytes)?;
            fault::reached(Step::TempWritten);
            file.sync_all()?;
            fault::reached(Step::TempSynced);
            drop(file);
            if let Some(previous) = previous {
                let backup_temp = self.temp_path("bak");
                let written = (|| {
                    let mut backup = perms::open_private(&backup_temp, true)?;
                    backup.write_all(previous)?;
                    backup.sync_all()?;
                    fs::rename(&backup_temp, self.backup_path())
                })();
                if written.is_err() {
                    let _ = fs::remove_file(&backup_temp);
                }
                written?;
                fault::reached(Step::BackupWritten);
            }
            fs::rename(&temp, &self.path)?;
            fault::reached(Step::Replaced);
            sync_dir(&dir);
            fault::reached(Step::DirSynced);
            Ok(())
        })();
        if let Err(e) = result {
            let _ = fs::remove_file(&temp);
            return Err(io_error(
                &format!(
                    "cannot write the database {} (it was left as it was)",
                    self.path.display()
                ),
                e,
            ));
        }
        Ok(())
    }

    fn temp_path(&self, what: &str) -> PathBuf {
        temp_path_beside(&self.path, what)
    }
}

/// A private temporary name in the same directory as `path`: `.<name>.<what>-<pid>-<nanos>`. Being in
/// the same directory makes the final rename or link atomic.
pub(crate) fn temp_path_beside(path: &Path, what: &str) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    parent_dir(path).join(format!(".{name}.{what}-{}-{nanos}", std::process::id()))
}

impl Store for FileStore {
    fn read<R>(&self, f: impl FnOnce(&mut Database) -> Result<R>) -> Result<R> {
        // A database that does not exist has nothing to lock, and a read must not leave `<db>.lock`
        // behind. A writer creates the database by an atomic rename, so it is either there or not.
        if matches!(fs::symlink_metadata(&self.path), Err(e) if e.kind() == IoKind::NotFound) {
            return f(&mut Database::default());
        }
        let _lock = self.lock(false)?;
        let bytes = self.read_bytes()?;
        let mut db = self.load(bytes.as_deref())?;
        f(&mut db)
    }

    fn write<R>(&self, f: impl FnOnce(&mut Database) -> Result<Outcome<R>>) -> Result<R> {
        let _lock = self.lock(true)?;
        let previous = self.read_bytes()?;
        let mut db = self.load(previous.as_deref())?;
        let audit_before = db.audit.clone();
        match f(&mut db)? {
            Outcome::Unchanged(result) => Ok(result),
            Outcome::Commit(result) => {
                let bytes = encode(&db);
                if previous.as_deref() == Some(bytes.as_slice()) {
                    // Nothing changed (a pin already set, a reused summary): keep the file and its backup.
                    return Ok(result);
                }
                // The audit is append-only (U2): old entries are never rewritten or deleted.
                if !db.audit.starts_with(&audit_before) {
                    return Err(Error::database(
                        "internal error: an operation tried to rewrite or delete audit entries; nothing was written. Please report this.",
                    ));
                }
                // Validate what is about to be written with the same checks a later load applies.
                if let Err(problem) = decode(&bytes) {
                    return Err(Error::database(format!(
                        "internal error: the new snapshot does not validate ({problem}); nothing was written. Please report this."
                    )));
                }
                self.commit(&bytes, previous.as_deref())?;
                Ok(result)
            }
        }
    }
}

/// The snapshot bytes of a database.
pub fn encode(db: &Database) -> Vec<u8> {
    let file = db.to_file(crate::spec::spec().constants.format_version);
    let mut bytes = serde_json::to_vec_pretty(&file).unwrap_or_default();
    bytes.push(b'\n');
    bytes
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
pub fn decode(bytes: &[u8]) -> std::result::Result<Database, String> {
    let supported = crate::spec::spec().constants.format_version;
    // JSON whitespace exactly as serde_json skips it (not `is_ascii_whitespace`, which adds form feed).
    let first = bytes
        .iter()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
    if first == Some(&b'{')
        && let Ok(file) = serde_json::from_slice::<DatabaseFile>(bytes)
        && file.format_version == supported
    {
        return Database::from_file(file, supported)
            .map_err(|e| format!("invalid content ({})", e.message));
    }
    decode_via_value(bytes)
}

/// The reference route of `decode`: a `serde_json::Value` first, so that an unsupported version or
/// a file that is not a Timeline database gets a precise message before any structure check.
fn decode_via_value(bytes: &[u8]) -> std::result::Result<Database, String> {
    let supported = crate::spec::spec().constants.format_version;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(format!(
            "the file is empty ({} bytes, no JSON)",
            bytes.len()
        ));
    }
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(|e| {
        if e.is_eof() {
            format!("the file is truncated ({e})")
        } else {
            format!("it is not valid JSON ({e})")
        }
    })?;
    match value
        .get("format_version")
        .and_then(serde_json::Value::as_u64)
    {
        Some(v) if v == supported => {}
        Some(v) => {
            return Err(format!(
                "unsupported format_version {v} (this version of Timeline reads format_version {supported}; use the release that wrote it)"
            ));
        }
        None => {
            return Err(
                "format_version is missing or not a number, so this is not a Timeline database"
                    .into(),
            );
        }
    }
    let file: DatabaseFile =
        serde_json::from_value(value).map_err(|e| format!("invalid structure ({e})"))?;
    Database::from_file(file, supported).map_err(|e| format!("invalid content ({})", e.message))
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

/// The file a dangling symbolic link names (a write creates it there). Follows a chain of at most 40
/// links, like the system does; a relative target is relative to the link's directory.
fn dangling_target(link: &Path) -> PathBuf {
    let mut at = link.to_path_buf();
    for _ in 0..40 {
        match fs::read_link(&at) {
            Ok(target) => at = parent_dir(&at).join(target),
            Err(_) => break,
        }
    }
    at
}

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Make a new or renamed entry in the directory of `path` durable.
pub(crate) fn sync_parent(path: &Path) {
    sync_dir(&parent_dir(path));
}

fn sync_dir(dir: &Path) {
    // Makes the rename durable on Unix; directories cannot be opened this way on Windows, where the
    // rename is already durable once it returns.
    #[cfg(unix)]
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

fn io_error(what: &str, e: std::io::Error) -> Error {
    let hint = match e.kind() {
        IoKind::PermissionDenied => " (permission denied: check the file's owner and mode)",
        IoKind::NotFound => " (a directory on the path does not exist)",
        _ => "",
    };
    Error::database(format!("{what}: {e}{hint}"))
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
        ops::run(db, op, &args, &Ctx { now: 1_700_000_000 }).unwrap()
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
