//! Atomic create-new: a file written in full beside its path, then linked into place, never over
//! an existing file.

use super::{leftovers, sync_parent, temp_path_beside};
use std::fs::{self, File, OpenOptions};
use std::io::{self, BufWriter, ErrorKind as IoKind, Seek, Write};
use std::path::Path;
use std::time::SystemTime;

/// Why a new file could not be written; the caller says what the file was for.
#[derive(Debug)]
pub(crate) enum NewFileError {
    /// Something exists at the path already (it was left untouched).
    Exists,
    /// Writing, syncing or linking failed.
    Io(io::Error),
}

impl std::fmt::Display for NewFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NewFileError::Exists => f.write_str("the file already exists"),
            NewFileError::Io(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for NewFileError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            NewFileError::Exists => None,
            NewFileError::Io(e) => Some(e),
        }
    }
}

/// A fresh file that only its owner can read and write (Unix); fails if `path` exists.
fn create_new(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Write what `fill` writes to `path`, which must not exist yet; an existing file is never touched.
///
/// The bytes go to a temporary file in the same directory (`.<name>.export-<pid>-<nanos>`, locked by
/// this process while it exists), are fsynced, and the temporary file is hard-linked to `path`, which
/// fails atomically if `path` exists (a rename would replace it). Where the file system has no hard
/// links, `path` is created with `create_new` and the temporary file copied into it, and removed
/// again if that fails. Either way a reader never sees a half-written file under `path` unless the
/// machine crashes during the fallback. Afterwards, temporary files that killed writers left in the
/// directory are removed (see `leftovers`).
pub(crate) fn write_new_file(
    path: &Path,
    fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> Result<(), NewFileError> {
    if fs::symlink_metadata(path).is_ok() {
        return Err(NewFileError::Exists);
    }
    let temp = temp_path_beside(path, "export");
    let mut file = create_new(&temp).map_err(NewFileError::Io)?;
    // Held until the temporary file is removed: a later writer that can take this lock knows this
    // one is gone.
    leftovers::hold(&file);
    let staged = (|| -> io::Result<()> {
        let mut out = BufWriter::with_capacity(1 << 16, &file);
        fill(&mut out)?;
        out.flush()?;
        drop(out);
        file.sync_all()
    })();
    let result = match staged {
        Err(e) => Err(NewFileError::Io(e)),
        Ok(()) => match fs::hard_link(&temp, path) {
            Ok(()) => {
                sync_parent(path);
                Ok(())
            }
            Err(e) if e.kind() == IoKind::AlreadyExists => Err(NewFileError::Exists),
            Err(_) => copy_directly(&mut file, path),
        },
    };
    let _ = fs::remove_file(&temp);
    drop(file);
    leftovers::remove_stale(path, "export", super::current_user(), SystemTime::now());
    result
}

/// The fallback without hard links: create_new, copy the staged file, fsync; remove the partial file
/// on failure.
fn copy_directly(staged: &mut File, path: &Path) -> Result<(), NewFileError> {
    let mut file = match create_new(path) {
        Ok(file) => file,
        Err(e) if e.kind() == IoKind::AlreadyExists => return Err(NewFileError::Exists),
        Err(e) => return Err(NewFileError::Io(e)),
    };
    let written = staged
        .rewind()
        .and_then(|()| io::copy(staged, &mut file))
        .and_then(|_| file.sync_all());
    drop(file);
    if let Err(e) = written {
        let _ = fs::remove_file(path);
        return Err(NewFileError::Io(e));
    }
    sync_parent(path);
    Ok(())
}
