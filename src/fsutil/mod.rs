//! File safety, the bottom layer under the store and export: names beside a file (temporary names,
//! `-wal`-style suffixes), private files (owner-only, never through a link), atomic create-new and
//! replace, leftovers of killed writers, directory sync, and telling files and owners apart. It
//! knows nothing of databases or exports: it returns `std::io` results and its own small error
//! types, and each caller says in its own words what failed (jj's `lib/src/file_util.rs` is the
//! model).

pub(crate) mod leftovers;
mod new_file;
pub(crate) mod private;
#[cfg(windows)]
mod private_windows;
pub(crate) mod replace;

pub(crate) use new_file::{NewFileError, write_new_file};

use std::fs;
use std::path::{Path, PathBuf};

/// Open for reading without blocking on a FIFO that replaced the file since it was checked.
pub(crate) fn open_no_block(path: &Path) -> std::io::Result<fs::File> {
    let mut options = fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
}

/// Whether `path` names the file `opened` is open on (same device and inode). Windows has no such
/// identity in the standard library; a link there is followed by the system's own path resolution.
pub(crate) fn same_file(opened: &fs::File, path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (opened.metadata(), fs::metadata(path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (opened, path);
        true
    }
}

pub(crate) fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

pub(crate) fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
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

/// Make a new or renamed entry in the directory of `path` durable.
pub(crate) fn sync_parent(path: &Path) {
    sync_dir(&parent_dir(path));
}

pub(crate) fn sync_dir(dir: &Path) {
    let _ = sync_dir_checked(dir);
}

/// `sync_dir`, saying whether the fsync failed (a directory that cannot be opened is not a failure).
pub(crate) fn sync_dir_checked(dir: &Path) -> std::io::Result<()> {
    // Makes the rename durable on Unix; directories cannot be opened this way on Windows, where the
    // rename is already durable once it returns.
    #[cfg(unix)]
    if let Ok(d) = fs::File::open(dir) {
        return d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
    Ok(())
}
