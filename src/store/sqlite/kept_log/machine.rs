//! What the kept log does with one open log's calls, apart from SQLite's C interface: which writes
//! are gathered and when they go to the file, which syncs are left out, and where this file
//! object's last commit ends. `kept_log`'s methods hand each call to `LogState` with the base
//! VFS's file as a `LogFile`; the tests (`super::tests`) hand it an in-memory file.

use rusqlite::ffi;
use std::ffi::c_int;

/// The length of a log's header (SQLite's file format, "WAL file format").
pub(super) const HEADER_LEN: usize = 32;

/// The length of a frame's header; its page follows it.
const FRAME_HEADER_LEN: i64 = 24;

/// The most bytes of a log's writes gathered before they go to the file (a large transaction's
/// frames go out in pieces this large). SQLite's Unix VFS cuts a write to less than 128 KiB (a
/// larger one fails as if the disk were full), and a frame of its largest page is just over 64 KiB.
pub(super) const GATHER_LIMIT: usize = 64 << 10;

/// The most frame headers `header_sync_unneeded` reads: a generation of a few commits of a few
/// pages each is read whole; a longer one gets its header synced.
const SCANNED_FRAMES: i64 = 64;

/// The base VFS's file object of a log, as `LogState` uses it (SQLite's result codes).
pub(super) trait LogFile {
    /// `xWrite`.
    fn write(&mut self, bytes: &[u8], offset: i64) -> c_int;
    /// `xRead` (a short read fills the rest with zeros and gives `SQLITE_IOERR_SHORT_READ`).
    fn read(&mut self, buf: &mut [u8], offset: i64) -> c_int;
    /// `xSync`.
    fn sync(&mut self, flags: c_int) -> c_int;
    /// `xTruncate`.
    fn truncate(&mut self, size: i64) -> c_int;
}

/// What the kept log keeps about an open log.
pub(super) struct LogState {
    /// Written to (or cut) through this file object since its last sync that succeeded, or since it
    /// was opened (its first sync is never left out: `synced` is 0 until then).
    written: bool,
    /// The strength of that sync (`SQLITE_SYNC_NORMAL` or `SQLITE_SYNC_FULL`), 0 before one.
    synced: c_int,
    /// Where the last commit frame this file object wrote in the log's current generation ends (0:
    /// none since its header): a frame another connection appended after it starts there. Not where
    /// its last write ended: a transaction that spilled pages into the log ends by rewriting the
    /// checksums of frame headers up to its commit frame's, the last of which ends where that
    /// frame's page starts; and frames a rolled-back transaction spilled end past the last commit.
    commit_end: i64,
    /// The log's header as it was after that sync (another connection starting the log over
    /// writes a new one).
    header: [u8; HEADER_LEN],
    /// Whether the log's name is known to be durable: it was blank when opened (see `keep`), or a
    /// sync succeeded since it was opened to be created (SQLite then synced its directory).
    pub(super) name_durable: bool,
    /// Whether writes are gathered: SQLite writes a commit's frames in one run only on a device
    /// that does not need them padded to its sector size (`SQLITE_IOCAP_POWERSAFE_OVERWRITE`, the
    /// Unix VFS's default); otherwise every write goes straight to the file.
    gathers: bool,
    /// Writes not yet in the file: contiguous bytes that start at `gathered_at`.
    gathered: Vec<u8>,
    gathered_at: i64,
    /// Where the last write, a commit frame's header, was written: a write right after it is the
    /// frame's page, the last of the commit.
    commit_header_at: Option<i64>,
    /// A commit's frames are in the file: writes go straight there until the next sync.
    committed: bool,
    /// The last write was a new header over a blank log whose previous generation holds at most
    /// one commit: SQLite's sync of it is left out (see `header_sync_unneeded`).
    header_sync_skippable: bool,
}

impl LogState {
    /// The state of a log just opened: `gathers` as above, `opened_blank` when it was a blank log
    /// opened without creating it.
    pub(super) fn new(gathers: bool, opened_blank: bool) -> LogState {
        LogState {
            written: false,
            synced: 0,
            commit_end: 0,
            header: [0xff; HEADER_LEN],
            name_durable: opened_blank,
            gathers,
            gathered: Vec::new(),
            gathered_at: 0,
            commit_header_at: None,
            committed: false,
            header_sync_skippable: false,
        }
    }

    /// `xWrite`: counted, and gathered with the writes before it that it continues.
    pub(super) fn write(&mut self, file: &mut impl LogFile, bytes: &[u8], offset: i64) -> c_int {
        let Ok(len) = i64::try_from(bytes.len()) else {
            return ffi::SQLITE_IOERR_WRITE;
        };
        let first_since_sync = !self.written;
        self.written = true;
        self.header_sync_skippable = false;
        if offset == 0 {
            // A new header: a new generation, with no commit in it yet.
            self.commit_end = 0;
        }
        let commits = self.commit_header_at.take() == Some(offset - FRAME_HEADER_LEN);
        if commits {
            self.commit_end = offset + len;
        }
        if is_commit_frame_header(offset, bytes) {
            self.commit_header_at = Some(offset);
        }
        if offset == 0 && bytes.len() == HEADER_LEN && first_since_sync {
            let rc = self.flush(file);
            if rc != ffi::SQLITE_OK {
                return rc;
            }
            self.header_sync_skippable = header_sync_unneeded(file, bytes);
        }
        let continues = usize::try_from(offset - self.gathered_at) == Ok(self.gathered.len());
        if !self.gathered.is_empty()
            && (!continues || self.gathered.len() + bytes.len() > GATHER_LIMIT)
        {
            let rc = self.flush(file);
            if rc != ffi::SQLITE_OK {
                return rc;
            }
        }
        if !self.gathers || self.committed || bytes.len() > GATHER_LIMIT {
            return file.write(bytes, offset);
        }
        if self.gathered.is_empty() {
            self.gathered_at = offset;
        }
        self.gathered.extend_from_slice(bytes);
        if commits {
            // The commit is in the file before SQLite publishes it to readers.
            self.committed = true;
            return self.flush(file);
        }
        ffi::SQLITE_OK
    }

    /// Write the gathered bytes to the file (SQLite's result code); they are dropped either way.
    /// Called before any other call on the log (a read, its size, a file control, closing).
    pub(super) fn flush(&mut self, file: &mut impl LogFile) -> c_int {
        if self.gathered.is_empty() {
            return ffi::SQLITE_OK;
        }
        let rc = file.write(&self.gathered, self.gathered_at);
        self.gathered.clear();
        rc
    }

    /// `xTruncate`: counted as a write, after writing what was gathered.
    pub(super) fn truncate(&mut self, file: &mut impl LogFile, size: i64) -> c_int {
        self.written = true;
        self.header_sync_skippable = false;
        if self.commit_end > size {
            self.commit_end = 0;
        }
        let rc = self.flush(file);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        file.truncate(size)
    }

    /// `xSync`: the base's, unless nothing was written to the log since a sync at least as strong
    /// succeeded: not through this file object, and not by another connection (the header is the
    /// one that sync left, and no frame of its generation follows this object's last commit); or
    /// unless it is the sync of a new header `header_sync_unneeded` found needs none.
    pub(super) fn sync(&mut self, file: &mut impl LogFile, flags: c_int) -> c_int {
        let strength = flags & 0x0f;
        // The new header stays gathered, to go to the file with the commit's frames.
        if self.header_sync_skippable {
            self.header_sync_skippable = false;
            return ffi::SQLITE_OK;
        }
        let rc = self.flush(file);
        self.committed = false;
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        if !self.written && self.synced >= strength && self.unchanged_since_sync(file) {
            return ffi::SQLITE_OK;
        }
        let rc = file.sync(flags);
        if rc == ffi::SQLITE_OK {
            self.written = false;
            self.synced = strength;
            self.name_durable = true;
            let mut header = [0xff; HEADER_LEN];
            if file.read(&mut header, 0) != ffi::SQLITE_OK {
                // Unknown: the next sync is not left out.
                header = [0xff; HEADER_LEN];
            }
            self.header = header;
        }
        rc
    }

    /// Whether the log is as the last successful sync left it, as far as another connection could
    /// have changed it: the same header, and no frame of that header's generation after this
    /// object's last commit (frames are only ever appended after the last commit's).
    fn unchanged_since_sync(&self, file: &mut impl LogFile) -> bool {
        // A file object that wrote no commit in this generation does not know where it ends.
        if self.commit_end <= HEADER_LEN as i64 {
            return false;
        }
        let mut header = [0; HEADER_LEN];
        if file.read(&mut header, 0) != ffi::SQLITE_OK || header != self.header {
            return false;
        }
        let mut frame = [0; FRAME_HEADER_LEN as usize];
        match file.read(&mut frame, self.commit_end) {
            // A frame header whose salts are this header's is a frame of this generation (a short
            // read, where the log ends, fills the rest with zeros, never a log's salts).
            ffi::SQLITE_OK | ffi::SQLITE_IOERR_SHORT_READ => frame[8..16] != header[16..24],
            _ => false,
        }
    }
}

/// Whether SQLite's sync of a new log header (`header`, written at offset 0 as the first write
/// since the last sync) can be left out: the log was blank (its header all zeros, which `keep`
/// writes only after every frame is in the database, synced) and the generation of frames it
/// held has at most one commit frame.
///
/// SQLite syncs a new header before writing frames after it so that a crash can never leave the
/// old header with a valid run of old frames that stops at an older commit than the last: that
/// run would be read as the log and bring back older pages over the database. Here the log's
/// header on the disk is either the zeros (no frame is valid under them), or the new header
/// (whose random salts no old frame has), or, when the zeros were never written back, the
/// previous generation's header, under which the valid frames are the previous generation's up
/// to the first one overwritten. With one commit frame in that generation, such a run either
/// holds it, and so every page of that generation's one commit, pages that are in the database
/// already, or holds no commit and is ignored. The commit's own sync then makes the header and
/// the frames durable together. (A transaction that spills pages into the log before its commit
/// overwrites more old frames earlier; the same holds of what is left.)
///
/// The previous frames are read at the new header's page size: a log is kept blank only by
/// Timeline's connections, which never take the database out of WAL mode (the only way to change
/// its page size), and another program that does deletes the log.
fn header_sync_unneeded(file: &mut impl LogFile, header: &[u8]) -> bool {
    let mut old = [0xff; HEADER_LEN];
    if file.read(&mut old, 0) != ffi::SQLITE_OK || old != [0; HEADER_LEN] {
        return false;
    }
    // The page size is the header's third field (1 stands for 65536).
    let page = match u32::from_be_bytes([header[8], header[9], header[10], header[11]]) {
        1 => 65536,
        size @ 512..=32768 if size.is_power_of_two() => i64::from(size),
        _ => return false,
    };
    let mut salts = None;
    let mut commits = 0;
    for frame in 0..SCANNED_FRAMES {
        let mut frame_header = [0; FRAME_HEADER_LEN as usize];
        let at = HEADER_LEN as i64 + frame * (page + FRAME_HEADER_LEN);
        match file.read(&mut frame_header, at) {
            // (A short read, where the log ends, fills the rest with zeros: no frame's salts
            // follow the first frame's.)
            ffi::SQLITE_OK | ffi::SQLITE_IOERR_SHORT_READ => {}
            _ => return false,
        }
        let frame_salts: [u8; 8] = frame_header[8..16].try_into().unwrap_or_default();
        if *salts.get_or_insert(frame_salts) != frame_salts {
            return true;
        }
        if frame_header[4..8] != [0; 4] {
            commits += 1;
            if commits > 1 {
                return false;
            }
        }
    }
    false
}

/// Whether a write is a frame's header whose frame ends a commit (SQLite's file format: a frame
/// header is 24 bytes, after the log's header; a commit's frame gives the database's size in pages
/// in its second field, which is 0 in every other frame).
fn is_commit_frame_header(offset: i64, bytes: &[u8]) -> bool {
    offset >= HEADER_LEN as i64 && bytes.len() == FRAME_HEADER_LEN as usize && bytes[4..8] != [0; 4]
}
