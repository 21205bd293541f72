//! The write-ahead log kept between processes (Unix).
//!
//! SQLite deletes a database's `-wal` file when its last connection closes, so the next process
//! creates it again and every commit of that process makes the file longer. A sync that makes a
//! file longer must also write the file's new length (its inode, or a journal entry for it) before
//! the data counts as durable; a sync after writing over blocks the file already has need not. Measured on the
//! benchmark's disk: 4 KiB written over existing blocks and `fdatasync`ed costs 0.6 to 0.8 × a
//! 300-byte append that grows the file, 4 KiB appended 1.3 to 1.5 ×.
//!
//! So Timeline's connections go through a VFS that is SQLite's own in every respect but one: when
//! SQLite deletes a `-wal` file (only after its last connection has copied every change into the
//! database and synced it, holding the database's exclusive lock), the file stays, with its header
//! overwritten by zeros. A log whose header is not a log's header is empty to SQLite: the next
//! connection reads nothing from it, and its first commit writes a new header and its pages over
//! the blocks the file has. Nothing is synced here: if the zeros are lost in a crash, the old header
//! comes back with pages that are already in the database, and SQLite copies the same pages again.
//!
//! A log of a database of `LARGE_DATABASE` or more is also made as long as SQLite lets a log grow
//! between its automatic checkpoints (`LOG_SIZE`, zeros, synced once), so that a long-running
//! `tl-mcp` writes over blocks from its first commit; a log longer than that (after a large
//! transaction) is cut back to it. A smaller database's log keeps the length it reached, and an
//! empty one is deleted as before.

use super::LOG_SIZE;
use super::open::starts_with_log_header;
use rusqlite::ffi;
use std::ffi::{CStr, OsStr, c_char, c_int};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::OnceLock;

/// The VFS's name, as connections ask for it.
pub(super) const VFS_NAME: &str = "timeline-kept-log";
const VFS_NAME_C: &CStr = c"timeline-kept-log";

/// The length of a log's header (SQLite's file format, "WAL file format").
const HEADER_LEN: usize = 32;

/// A database at least this large gets a log of `LOG_SIZE` from its first close on (a quarter
/// of its size or less).
const LARGE_DATABASE: u64 = 4 * LOG_SIZE;

/// SQLite's own VFS, which this one passes every call to but `xDelete`'s of a log.
static BASE: OnceLock<Option<Base>> = OnceLock::new();

/// A pointer to a VFS SQLite keeps for the life of the process (its built-in ones are never freed).
struct Base(*mut ffi::sqlite3_vfs);
// SAFETY: SQLite's VFS objects are immutable once registered and safe to use from any thread.
unsafe impl Send for Base {}
unsafe impl Sync for Base {}

/// Register the VFS once per process. `false` when SQLite has no default VFS or refuses the
/// registration; connections then use SQLite's default VFS and the log is deleted as usual.
pub(super) fn registered() -> bool {
    BASE.get_or_init(|| {
        // SAFETY: `sqlite3_vfs_find` initializes SQLite if needed and returns its default VFS,
        // which lives as long as the process. The copy registered is leaked, so it does too; it
        // keeps the base's `pAppData` (the Unix VFS finds its locking style there) and every method
        // but `xDelete`.
        unsafe {
            let base = ffi::sqlite3_vfs_find(std::ptr::null());
            if base.is_null() || (*base).xDelete.is_none() {
                return None;
            }
            let mut vfs = std::ptr::read(base);
            vfs.zName = VFS_NAME_C.as_ptr();
            vfs.pNext = std::ptr::null_mut();
            vfs.xDelete = Some(delete);
            let vfs = Box::leak(Box::new(vfs));
            (ffi::sqlite3_vfs_register(vfs, 0) == ffi::SQLITE_OK).then_some(Base(base))
        }
    })
    .is_some()
}

/// `xDelete`: a log is kept (see the module's comment), anything else is deleted by the base VFS.
unsafe extern "C" fn delete(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    sync_dir: c_int,
) -> c_int {
    // (Registered only with a base whose `xDelete` exists; nothing here may panic across SQLite.)
    let Some(Some(Base(base))) = BASE.get() else {
        return ffi::SQLITE_IOERR_DELETE;
    };
    // SAFETY: the base VFS lives as long as the process.
    let Some(base_delete) = (unsafe { (**base).xDelete }) else {
        return ffi::SQLITE_IOERR_DELETE;
    };
    // SAFETY: SQLite passes a NUL-terminated file name that outlives the call.
    let path = Path::new(OsStr::from_bytes(
        unsafe { CStr::from_ptr(name) }.to_bytes(),
    ));
    if path.as_os_str().as_bytes().ends_with(b"-wal") && keep(path) {
        return ffi::SQLITE_OK;
    }
    // SAFETY: the base VFS's own method, called as SQLite would call it.
    unsafe { base_delete(*base, name, sync_dir) }
}

/// Keep the log at `path` empty in SQLite's eyes; `false` when it should be deleted instead (it is
/// empty already, or it cannot be changed here).
fn keep(path: &Path) -> bool {
    let Ok(file) = OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    else {
        return false;
    };
    let Ok(meta) = file.metadata() else {
        return false;
    };
    let len = meta.len();
    if !meta.is_file() || len == 0 {
        return false;
    }
    // (Read first, so that a log left blank already is not written again.)
    if starts_with_log_header(&file) && file.write_all_at(&[0; HEADER_LEN], 0).is_err() {
        return false;
    }
    // A failure below leaves the log as it is: blank all the same.
    if len > LOG_SIZE {
        let _ = file.set_len(LOG_SIZE);
    } else if len < LOG_SIZE && database_len(path) >= LARGE_DATABASE {
        let _ = fill(file, len);
    }
    true
}

/// The length of the database whose log is at `wal` (0 when it cannot be read).
fn database_len(wal: &Path) -> u64 {
    let bytes = wal.as_os_str().as_bytes();
    let database = Path::new(OsStr::from_bytes(&bytes[..bytes.len() - "-wal".len()]));
    std::fs::metadata(database).map_or(0, |m| m.len())
}

/// Make the log `LOG_SIZE` long with zeros that are written and synced, so that later commits
/// write over blocks the file has.
fn fill(mut file: File, len: u64) -> std::io::Result<()> {
    file.seek(SeekFrom::End(0))?;
    std::io::copy(&mut std::io::repeat(0).take(LOG_SIZE - len), &mut file)?;
    file.sync_data()
}
