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

/// The user this process runs as, as the owner of the files it makes (Unix); `None` elsewhere.
pub(crate) fn current_user() -> Option<u32> {
    #[cfg(unix)]
    {
        // SAFETY: geteuid has no preconditions and cannot fail.
        Some(unsafe { libc::geteuid() })
    }
    #[cfg(not(unix))]
    None
}

/// The kernel's `protected_symlinks` rule, whatever the system's setting: in a directory anyone may
/// write to but only owners may delete from (mode 1777, like /tmp), a link is followed only when it
/// belongs to the user running Timeline or to the directory's owner. The owner of `link` (whose
/// metadata is `link_meta`) when the rule refuses it; `None` when it may be followed.
#[cfg(unix)]
pub(crate) fn foreign_link_in_shared_dir(link: &Path, link_meta: &fs::Metadata) -> Option<u32> {
    use std::os::unix::fs::MetadataExt;
    let dir_meta = fs::metadata(parent_dir(link)).ok()?;
    let shared = dir_meta.mode() & 0o1002 == 0o1002;
    let owner = link_meta.uid();
    (shared && Some(owner) != current_user() && owner != dir_meta.uid()).then_some(owner)
}
