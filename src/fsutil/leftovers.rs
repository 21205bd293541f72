//! Temporary files that a killed process left beside a database or an export: an export's staged file
//! (`.<name>.export-<pid>-<nanos>`) and a new SQLite database staged before it is linked into place
//! (`.<name>.new-<pid>-<nanos>` with its `-wal`, `-shm` or `-journal`).
//!
//! A writer holds an advisory lock on its temporary file for as long as the file exists, so a later
//! command that can take the lock knows the writer is gone and removes the file.

use std::fs::{self, File};
use std::path::Path;
use std::time::{Duration, SystemTime};

/// How long a temporary file must have been left unchanged before another process may remove it.
/// Its lock is what tells a live writer from a dead one; the delay only covers the moment between
/// creating the file and locking it, and clocks that disagree a little on network file systems.
const STALE_AFTER: Duration = Duration::from_secs(10);

/// The files SQLite keeps beside a database it writes.
const COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// Mark `file` as in use by this process until it is closed. Where the file system has no locks,
/// later commands leave the file alone.
pub(crate) fn hold(file: &File) {
    let _ = file.try_lock();
}

/// Whether `file_name` has the form of a temporary file of kind `what`: `.<name>.<what>-<pid>-<nanos>`,
/// and if so the companion suffix it ends with (`""` for the temporary file itself).
fn temporary_suffix<'a>(file_name: &'a str, what: &str) -> Option<&'a str> {
    let rest = file_name.strip_prefix('.')?;
    let marker = format!(".{what}-");
    let at = rest.rfind(&marker).filter(|&at| at > 0)?;
    let tail = &rest[at + marker.len()..];
    let (numbers, suffix) = match COMPANIONS.iter().find(|s| tail.ends_with(*s)) {
        Some(s) => (
            &tail[..tail.len() - s.len()],
            &file_name[file_name.len() - s.len()..],
        ),
        None => (tail, ""),
    };
    let mut parts = numbers.split('-');
    let numeric =
        |p: Option<&str>| p.is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    (numeric(parts.next()) && numeric(parts.next()) && parts.next().is_none()).then_some(suffix)
}

/// Remove the temporary files of kind `what` that processes killed before they finished left in the
/// directory of `path`: regular files named like such a temporary file, owned by `owner` (the user
/// running this command; on Unix), unchanged for `STALE_AFTER`, and not locked, so no live process is
/// writing them. A staged database's `-wal`, `-shm` and `-journal` go with it (before it, so that a
/// companion is never left without the file whose lock speaks for it); a companion whose file is
/// already gone is removed once it is old enough. Anything that cannot be checked is left alone;
/// nothing here makes the command fail.
pub(crate) fn remove_stale(path: &Path, what: &str, owner: Option<u32>, now: SystemTime) {
    let dir = super::parent_dir(path);
    let Ok(entries) = fs::read_dir(&dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(suffix) = name.to_str().and_then(|n| temporary_suffix(n, what)) else {
            continue;
        };
        let candidate = entry.path();
        let Ok(meta) = fs::symlink_metadata(&candidate) else {
            continue;
        };
        // Another user's file is never opened: it could be a FIFO put there to block this command.
        let owned = owner_of(&meta) == owner;
        let old = meta
            .modified()
            .is_ok_and(|m| now.duration_since(m).is_ok_and(|age| age >= STALE_AFTER));
        if !meta.is_file() || !owned || !old {
            continue;
        }
        if !suffix.is_empty() {
            let main = candidate.to_string_lossy();
            let main = Path::new(&main[..main.len() - suffix.len()]);
            if fs::symlink_metadata(main).is_err() {
                let _ = fs::remove_file(&candidate);
            }
            continue;
        }
        let Ok(file) = File::open(&candidate) else {
            continue;
        };
        if file.try_lock().is_ok() {
            for companion in COMPANIONS {
                let _ = fs::remove_file(super::with_suffix(&candidate, companion));
            }
            let _ = fs::remove_file(&candidate);
        }
    }
}

/// The owner of a file on Unix; elsewhere files are not told apart by owner.
#[cfg(unix)]
fn owner_of(meta: &fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    Some(meta.uid())
}

#[cfg(not(unix))]
fn owner_of(_meta: &fs::Metadata) -> Option<u32> {
    None
}

#[cfg(test)]
mod tests {
    use super::temporary_suffix;

    #[test]
    fn temporary_names_and_their_companions() {
        assert_eq!(temporary_suffix(".a.db.new-12-34", "new"), Some(""));
        assert_eq!(temporary_suffix(".a.db.new-12-34-wal", "new"), Some("-wal"));
        assert_eq!(temporary_suffix(".a.db.new-12-34-shm", "new"), Some("-shm"));
        assert_eq!(
            temporary_suffix(".a.db.new-12-34-journal", "new"),
            Some("-journal")
        );
        assert_eq!(temporary_suffix(".x.md.export-1-2", "export"), Some(""));
        assert_eq!(temporary_suffix(".a.db.new-12-34", "export"), None);
        for not in [
            "a.db.new-12-34",
            "..new-1-2",
            ".a.db.new-12",
            ".a.db.new-12-34-5",
            ".a.db.new-1x-34",
            ".a.db.new-12-34-wal-wal",
        ] {
            assert_eq!(temporary_suffix(not, "new"), None, "{not}");
        }
    }
}
