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
//!
//! Syncs SQLite would make of a kept log are left out where they make nothing durable that is not
//! already, or order nothing that needs ordering:
//! - **The directory's.** SQLite syncs the directory of a log it opens to create, at the log's
//!   first sync, so that the new name survives a crash. A log is kept blank (its header all
//!   zeros, which only `keep` writes) only when its name is known to be durable: the file object
//!   that closed it last had opened it blank, or had a sync succeed since it opened it to create
//!   it (SQLite's directory sync comes with that sync). Any other log is deleted, as SQLite
//!   would. So a blank log is opened without asking to create it, and SQLite does not sync the
//!   directory again; if it has gone in between, the open asks again.
//! - **A log's sync with nothing written since the last one.** A checkpoint syncs the log before
//!   copying its pages into the database, right after the commit that synced it (the automatic
//!   checkpoint after a commit, the one at close). That sync is left out when the file object
//!   wrote nothing since its last successful sync at least as strong, and no other connection
//!   changed the log since: its header is the one that sync left, and no frame of that header's
//!   generation follows the end of the object's last commit frame (frames are only appended after
//!   the last commit's). Another program's connection that commits without syncing
//!   (`synchronous=NORMAL`) thus still gets its frames synced before they are copied.
//! - **A new header's own sync, when the log was blank and its previous frames hold one commit.**
//!   See `machine::header_sync_unneeded`: no crash can then leave a run of old frames that ends at an older
//!   commit, so the header goes to the file with the commit's frames, under the commit's sync.
//!
//! A log's writes are also gathered in memory and go to the file together, in one `pwrite`, which
//! costs about what one small write does: SQLite writes every frame of a commit in two calls (its
//! header, then its page), and on the benchmark's disk each of those costs more than copying the
//! page does. Nothing is read or published before it is in the file: the gathered bytes are
//! written before any other call on the log (a read, its size, a sync, a truncation, closing), and
//! right after the page of a commit frame, after which writes go straight to the file until the
//! next sync. So the commit is in the file before SQLite makes it visible to readers in its shared
//! index, with or without a sync (Timeline's connections always sync: `synchronous = FULL`). Only
//! where SQLite writes a commit's frames in one run, which it does on a device that needs no padding
//! to its sector size (`SQLITE_IOCAP_POWERSAFE_OVERWRITE`, the Unix VFS's default); elsewhere every
//! write goes straight to the file. A gathered write stays under 128 KiB, the most the Unix VFS
//! writes in one call.
//!
//! The per-file state lives after the base VFS's file object (this VFS's `szOsFile` is larger);
//! what the calls decide is `machine::LogState`, tested on an in-memory log in `tests`.
//!
//! # What it assumes of SQLite
//!
//! Checked against SQLite 3.50.2 (`wal.c`, `os_unix.c`, `pager.c`), the version the
//! `bundled-sqlite` feature builds; `log_choice::VERIFIED_SQLITE` lists the versions checked, and
//! any other gets SQLite's own VFS (`db info` says so). Before adding a version, check each:
//! - SQLite deletes a log (`xDelete` with a name ending in `-wal`) only after its last connection
//!   copied every frame into the database and synced it, holding the database's exclusive lock
//!   (`sqlite3WalClose`), and reads a log whose first 32 bytes are not a log header as empty
//!   (`walIndexRecover`).
//! - `walFrames` writes a new header as one 32-byte write at offset 0, syncs it unless
//!   `synchronous=OFF` (ticket ff5be73dee), then writes each frame as its 24-byte header and its
//!   page at the next offset (`walWriteOneFrame`); a commit frame's header has a non-zero second
//!   field; with `SQLITE_IOCAP_POWERSAFE_OVERWRITE` no padding frame follows, and the commit is
//!   published in the shared index only after its frames are written. New frames are appended
//!   after the last commit's; only a transaction that spilled writes over its own frames
//!   (`iFirst`), and then rewrites frame headers from the first of them to its commit frame's
//!   (`walRewriteChecksums`), which ends inside the commit frame: so where a later frame would
//!   start is tracked as the end of the last commit frame, not of the last write (`machine`).
//! - A checkpoint syncs the log before copying frames into the database (`walCheckpoint`); a
//!   restart (`walRestartHdr`) changes the salts, so a new generation's
//!   header differs from the old one's.
//! - The Unix VFS opens a log without `SQLITE_OPEN_CREATE` when the file exists, syncs the
//!   directory at the first sync of a log it opened with it, and cuts a write to less than 128 KiB.

use super::LOG_SIZE;
use super::open::starts_with_log_header;
use machine::{HEADER_LEN, LogFile, LogState};
use rusqlite::ffi;
use std::ffi::{CStr, OsStr, c_char, c_int};
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::{Mutex, OnceLock};

mod machine;
#[cfg(test)]
mod tests;

/// The VFS's name, as connections ask for it.
pub(super) const VFS_NAME: &str = "timeline-kept-log";
const VFS_NAME_C: &CStr = c"timeline-kept-log";

/// A database at least this large gets a log of `LOG_SIZE` from its first close on (a quarter
/// of its size or less).
const LARGE_DATABASE: u64 = 4 * LOG_SIZE;

/// SQLite's own VFS, which this one passes every call to but `xDelete`'s of a log.
static BASE: OnceLock<Option<Base>> = OnceLock::new();

/// A pointer to a VFS SQLite keeps for the life of the process (its built-in ones are never freed),
/// the methods of the files it opens for logs, and this VFS's methods for them.
struct Base {
    vfs: *mut ffi::sqlite3_vfs,
    /// Where `Slot` starts in a file object this VFS opens: after the base's own.
    state_at: usize,
    /// The base's methods for a log (SQLite's Unix VFS gives every log the same set) and the copy
    /// of them this VFS gives a log instead, set by the first log opened.
    log_methods: OnceLock<(Methods, Methods)>,
}

/// A pointer to a set of file methods that lives as long as the process.
#[derive(Clone, Copy, PartialEq, Eq)]
struct Methods(*const ffi::sqlite3_io_methods);

// SAFETY: SQLite's VFS and method objects are immutable once registered and safe to use from any
// thread; the copies made here are leaked, never changed.
unsafe impl Send for Base {}
unsafe impl Sync for Base {}
unsafe impl Send for Methods {}
unsafe impl Sync for Methods {}

/// What this VFS keeps about an open log, after the base's file object.
#[repr(C)]
struct Slot {
    /// The base's methods, which every call goes to.
    base: *const ffi::sqlite3_io_methods,
    /// The log's name as SQLite gave it (alive until after the file object closes).
    name: *const c_char,
    /// What the calls on the log decide (`machine`).
    log: LogState,
}

/// The logs whose last file object closed with its name known to be durable: only those are kept
/// blank when SQLite deletes them (`keep`), so that a blank log's name is always durable.
static DURABLE_NAMES: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

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
            if base.is_null() || (*base).xDelete.is_none() || (*base).xOpen.is_none() {
                return None;
            }
            let base_size = usize::try_from((*base).szOsFile).ok()?;
            let state_at = base_size.next_multiple_of(std::mem::align_of::<Slot>());
            let size = c_int::try_from(state_at + std::mem::size_of::<Slot>()).ok()?;
            let mut vfs = std::ptr::read(base);
            vfs.zName = VFS_NAME_C.as_ptr();
            vfs.pNext = std::ptr::null_mut();
            vfs.szOsFile = size;
            vfs.xOpen = Some(open);
            vfs.xDelete = Some(delete);
            let vfs = Box::leak(Box::new(vfs));
            (ffi::sqlite3_vfs_register(vfs, 0) == ffi::SQLITE_OK).then_some(Base {
                vfs: base,
                state_at,
                log_methods: OnceLock::new(),
            })
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
    let Some(Some(Base { vfs: base, .. })) = BASE.get() else {
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
    // A log whose name may not be durable is deleted, as SQLite would: kept blank, the next
    // process would not sync its directory.
    let name = path.as_os_str().as_bytes();
    let proven = DURABLE_NAMES.lock().is_ok_and(|mut names| {
        let found = names.iter().position(|n| n == name);
        found.map(|at| names.swap_remove(at)).is_some()
    });
    if !proven {
        return false;
    }
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

/// `xOpen`: the base's, asked to create a blank log's file only if it has gone, and giving a log
/// the methods that leave out a sync with nothing to sync (see the module's comment).
unsafe extern "C" fn open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let Some(Some(base)) = BASE.get() else {
        return ffi::SQLITE_CANTOPEN;
    };
    // SAFETY: the base VFS lives as long as the process; `xOpen` was checked at registration.
    let Some(base_open) = (unsafe { (*base.vfs).xOpen }) else {
        return ffi::SQLITE_CANTOPEN;
    };
    let log = flags & ffi::SQLITE_OPEN_WAL != 0 && !name.is_null();
    // SAFETY: SQLite passes a NUL-terminated name that outlives the call (checked non-null).
    let blank = log
        && flags & ffi::SQLITE_OPEN_CREATE != 0
        && is_blank(Path::new(OsStr::from_bytes(
            unsafe { CStr::from_ptr(name) }.to_bytes(),
        )));
    // SAFETY: the base's own method, called with SQLite's arguments (and its flags without
    // SQLITE_OPEN_CREATE, which the Unix VFS accepts for a file that exists). A failed open leaves
    // the file object closed (`pMethods` null), so it can be opened again.
    let mut rc = ffi::SQLITE_CANTOPEN;
    let mut created = true;
    if blank {
        created = false;
        rc = unsafe {
            base_open(
                base.vfs,
                name,
                file,
                flags & !ffi::SQLITE_OPEN_CREATE,
                out_flags,
            )
        };
    }
    if rc != ffi::SQLITE_OK {
        created = true;
        rc = unsafe { base_open(base.vfs, name, file, flags, out_flags) };
    }
    if rc == ffi::SQLITE_OK && log {
        // SAFETY: `file` was opened by the base and is `state_at + size_of::<Slot>()` bytes
        // (this VFS's `szOsFile`), aligned as SQLite aligns file objects (8 bytes).
        unsafe { watch_syncs(base, file, name, blank && !created) };
    }
    rc
}

/// Whether the file at `path` is a log `keep` left blank: a regular file whose first
/// `HEADER_LEN` bytes are zeros.
fn is_blank(path: &Path) -> bool {
    // (O_NONBLOCK: opening a FIFO put at the log's name to read would wait for a writer.)
    let Ok(file) = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    else {
        return false;
    };
    let mut header = [0xff; HEADER_LEN];
    file.metadata().is_ok_and(|m| m.is_file())
        && file.read_exact_at(&mut header, 0).is_ok()
        && header == [0; HEADER_LEN]
}

/// Give the log `file` (just opened by the base) this VFS's methods, which count its writes.
///
/// # Safety
/// `file` is open and has room for a `Slot` at `base.state_at`.
unsafe fn watch_syncs(
    base: &Base,
    file: *mut ffi::sqlite3_file,
    name: *const c_char,
    opened_blank: bool,
) {
    // SAFETY: (the caller's) `file` is open, so `pMethods` points at the base's methods.
    let own = Methods(unsafe { (*file).pMethods });
    if own.0.is_null() {
        return;
    }
    let (theirs, ours) = *base.log_methods.get_or_init(|| {
        // SAFETY: the base's methods live as long as the process; the copy is leaked.
        let mut copy = unsafe { std::ptr::read(own.0) };
        copy.xClose = Some(close);
        copy.xRead = Some(read);
        copy.xWrite = Some(write);
        copy.xTruncate = Some(truncate);
        copy.xSync = Some(sync);
        copy.xFileSize = Some(file_size);
        copy.xFileControl = Some(file_control);
        (own, Methods(Box::leak(Box::new(copy))))
    });
    // Another set of methods (not seen with SQLite's Unix VFS) is left as it is.
    if own != theirs {
        return;
    }
    // SAFETY: the state is inside the file object (the caller's guarantee), past the base's part,
    // which the base never touches.
    unsafe {
        let gathers = (*theirs.0).xDeviceCharacteristics.map_or(0, |f| f(file))
            & ffi::SQLITE_IOCAP_POWERSAFE_OVERWRITE
            != 0;
        slot(file).write(Slot {
            base: theirs.0,
            name,
            log: LogState::new(gathers, opened_blank),
        });
        (*file).pMethods = ours.0;
    }
}

/// The `Slot` of a log this VFS opened.
///
/// # Safety
/// `file` was opened by `open` as a log (so the slot is there).
unsafe fn slot(file: *mut ffi::sqlite3_file) -> *mut Slot {
    // (A log's methods are given only once `BASE` is set, so the fallback is never taken; it
    // aborts rather than unwinding into SQLite.)
    let Some(Some(base)) = BASE.get() else {
        std::process::abort();
    };
    let at = base.state_at;
    // SAFETY: (the caller's) the slot starts `state_at` bytes into the file object.
    unsafe { file.cast::<u8>().add(at).cast::<Slot>() }
}

/// The base VFS's part of a log's file object and its methods, as `LogState` uses them.
struct BaseFile {
    file: *mut ffi::sqlite3_file,
    methods: *const ffi::sqlite3_io_methods,
}

impl LogFile for BaseFile {
    fn write(&mut self, bytes: &[u8], offset: i64) -> c_int {
        let Ok(amount) = c_int::try_from(bytes.len()) else {
            return ffi::SQLITE_IOERR_WRITE;
        };
        // SAFETY: the base's own method on its own file object (`with_log`), from `bytes`.
        unsafe {
            match (*self.methods).xWrite {
                Some(write) => write(self.file, bytes.as_ptr().cast(), amount, offset),
                None => ffi::SQLITE_IOERR_WRITE,
            }
        }
    }

    fn read(&mut self, buf: &mut [u8], offset: i64) -> c_int {
        let Ok(amount) = c_int::try_from(buf.len()) else {
            return ffi::SQLITE_IOERR_READ;
        };
        // SAFETY: as in `write`, into `buf`.
        unsafe {
            match (*self.methods).xRead {
                Some(read) => read(self.file, buf.as_mut_ptr().cast(), amount, offset),
                None => ffi::SQLITE_IOERR_READ,
            }
        }
    }

    fn sync(&mut self, flags: c_int) -> c_int {
        // SAFETY: as in `write`.
        unsafe {
            match (*self.methods).xSync {
                Some(sync) => sync(self.file, flags),
                None => ffi::SQLITE_IOERR_FSYNC,
            }
        }
    }

    fn truncate(&mut self, size: i64) -> c_int {
        // SAFETY: as in `write`.
        unsafe {
            match (*self.methods).xTruncate {
                Some(truncate) => truncate(self.file, size),
                None => ffi::SQLITE_IOERR_TRUNCATE,
            }
        }
    }
}

/// Run `f` on the state of the log `file` and its base file object.
///
/// # Safety
/// `file` was opened by `open` as a log and is not closed. (The state lies past the base's part of
/// the file object, which the base's methods never touch.)
unsafe fn with_log<R>(
    file: *mut ffi::sqlite3_file,
    f: impl FnOnce(&mut LogState, &mut BaseFile) -> R,
) -> R {
    // SAFETY: (the caller's.)
    let slot = unsafe { &mut *slot(file) };
    let mut base = BaseFile {
        file,
        methods: slot.base,
    };
    f(&mut slot.log, &mut base)
}

/// `xWrite` of a log: gathered with the writes before it that it continues (`LogState::write`).
unsafe extern "C" fn write(
    file: *mut ffi::sqlite3_file,
    data: *const std::ffi::c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    let Ok(len) = usize::try_from(amount) else {
        return ffi::SQLITE_IOERR_WRITE;
    };
    // SAFETY: SQLite calls a log's methods with the file object `open` gave them, and `data` holds
    // `amount` bytes.
    unsafe {
        let bytes = std::slice::from_raw_parts(data.cast::<u8>(), len);
        with_log(file, |log, base| log.write(base, bytes, offset))
    }
}

/// `xRead` of a log: the base's, after writing what was gathered.
unsafe extern "C" fn read(
    file: *mut ffi::sqlite3_file,
    data: *mut std::ffi::c_void,
    amount: c_int,
    offset: ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: as in `write`; `data` has room for `amount` bytes.
    unsafe {
        with_log(file, |log, base| match log.flush(base) {
            ffi::SQLITE_OK => match (*base.methods).xRead {
                Some(read) => read(file, data, amount, offset),
                None => ffi::SQLITE_IOERR_READ,
            },
            rc => rc,
        })
    }
}

/// `xFileSize` of a log: the base's, after writing what was gathered.
unsafe extern "C" fn file_size(
    file: *mut ffi::sqlite3_file,
    size: *mut ffi::sqlite3_int64,
) -> c_int {
    // SAFETY: as in `write`.
    unsafe {
        with_log(file, |log, base| match log.flush(base) {
            ffi::SQLITE_OK => match (*base.methods).xFileSize {
                Some(file_size) => file_size(file, size),
                None => ffi::SQLITE_IOERR_FSTAT,
            },
            rc => rc,
        })
    }
}

/// `xFileControl` of a log: the base's, after writing what was gathered.
unsafe extern "C" fn file_control(
    file: *mut ffi::sqlite3_file,
    op: c_int,
    arg: *mut std::ffi::c_void,
) -> c_int {
    // SAFETY: as in `write`.
    unsafe {
        with_log(file, |log, base| match log.flush(base) {
            ffi::SQLITE_OK => match (*base.methods).xFileControl {
                Some(file_control) => file_control(file, op, arg),
                None => ffi::SQLITE_NOTFOUND,
            },
            rc => rc,
        })
    }
}

/// `xTruncate` of a log: the base's, counted as a write, after writing what was gathered.
unsafe extern "C" fn truncate(file: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    // SAFETY: as in `write`.
    unsafe { with_log(file, |log, base| log.truncate(base, size)) }
}

/// `xSync` of a log: the base's, unless it would make nothing durable (`LogState::sync`).
unsafe extern "C" fn sync(file: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    // SAFETY: as in `write`.
    unsafe { with_log(file, |log, base| log.sync(base, flags)) }
}

/// `xClose` of a log: the base's, after writing what was gathered and noting whether the log's
/// name is known to be durable (for `keep`, which SQLite's delete of the log calls next).
unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: as in `write`; SQLite's name for the log outlives its file object, and the state is
    // dropped once, here, before the base closes its part.
    unsafe {
        let slot = slot(file);
        let (name, durable) = with_log(file, |log, base| {
            // (Never a commit's frames: those are written before SQLite publishes them.)
            let _ = log.flush(base);
            ((*slot).name, log.name_durable)
        });
        if !name.is_null() {
            note_closed(CStr::from_ptr(name).to_bytes(), durable);
        }
        let methods = (*slot).base;
        std::ptr::drop_in_place(std::ptr::addr_of_mut!((*slot).log));
        match (*methods).xClose {
            Some(base_close) => base_close(file),
            None => ffi::SQLITE_OK,
        }
    }
}

/// Note that the last file object of the log `name` closed, its name known to be durable or not.
fn note_closed(name: &[u8], durable: bool) {
    if let Ok(mut names) = DURABLE_NAMES.lock() {
        names.retain(|n| n != name);
        if durable {
            names.push(name.to_vec());
        }
    }
}
