//! The kept log's state machine (`machine`) on an in-memory log that records every call, with
//! writes laid out as SQLite 3.50.2's `walFrames` and `walRewriteChecksums` make them; and the
//! blank-log rule (`keep`, `is_blank`) on real files.

use super::machine::{GATHER_LIMIT, HEADER_LEN, LogFile, LogState};
use super::{DURABLE_NAMES, is_blank, keep, note_closed};
use rusqlite::ffi;
use std::ffi::c_int;

const PAGE: usize = 4096;
const FRAME: usize = 24 + PAGE;
const FULL: c_int = ffi::SQLITE_SYNC_FULL;

/// What the base file was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Call {
    Write { at: usize, len: usize },
    Sync,
    Truncate(usize),
}

/// A log in memory: its bytes and the calls that changed them or synced them (reads are not
/// recorded).
#[derive(Default)]
struct Log {
    bytes: Vec<u8>,
    calls: Vec<Call>,
}

impl Log {
    /// A log holding `frames` frames of a generation with `salts` after a header (`blank`: zeros),
    /// the frames marked as commits where `commits` says.
    fn with_generation(blank: bool, salts: [u8; 8], commits: &[bool]) -> Log {
        let mut bytes = if blank {
            vec![0; HEADER_LEN]
        } else {
            header(salts)
        };
        for (i, &commit) in commits.iter().enumerate() {
            bytes.extend(frame_header(i as u32 + 1, commit, salts));
            bytes.extend(vec![i as u8; PAGE]);
        }
        Log {
            bytes,
            calls: Vec::new(),
        }
    }

    /// Another connection writes a frame straight to the file (it has its own file object).
    fn append_foreign_frame(&mut self, at: usize, salts: [u8; 8]) {
        let mut frame = frame_header(9, true, salts);
        frame.extend(vec![9; PAGE]);
        self.put(at, &frame);
    }

    fn put(&mut self, at: usize, bytes: &[u8]) {
        if self.bytes.len() < at + bytes.len() {
            self.bytes.resize(at + bytes.len(), 0);
        }
        self.bytes[at..at + bytes.len()].copy_from_slice(bytes);
    }

    fn syncs(&self) -> usize {
        self.calls.iter().filter(|c| **c == Call::Sync).count()
    }
}

impl LogFile for Log {
    fn write(&mut self, bytes: &[u8], offset: i64) -> c_int {
        let at = offset as usize;
        self.put(at, bytes);
        self.calls.push(Call::Write {
            at,
            len: bytes.len(),
        });
        ffi::SQLITE_OK
    }

    fn read(&mut self, buf: &mut [u8], offset: i64) -> c_int {
        let at = (offset as usize).min(self.bytes.len());
        let have = (self.bytes.len() - at).min(buf.len());
        buf[..have].copy_from_slice(&self.bytes[at..at + have]);
        buf[have..].fill(0);
        if have < buf.len() {
            ffi::SQLITE_IOERR_SHORT_READ
        } else {
            ffi::SQLITE_OK
        }
    }

    fn sync(&mut self, _flags: c_int) -> c_int {
        self.calls.push(Call::Sync);
        ffi::SQLITE_OK
    }

    fn truncate(&mut self, size: i64) -> c_int {
        self.bytes.truncate(size as usize);
        self.calls.push(Call::Truncate(size as usize));
        ffi::SQLITE_OK
    }
}

/// A log header of page size `PAGE` with `salts` (its checksum is not checked here).
fn header(salts: [u8; 8]) -> Vec<u8> {
    let mut h = vec![0; HEADER_LEN];
    h[..4].copy_from_slice(&0x377f_0682u32.to_be_bytes());
    h[4..8].copy_from_slice(&3_007_000u32.to_be_bytes());
    h[8..12].copy_from_slice(&(PAGE as u32).to_be_bytes());
    h[16..24].copy_from_slice(&salts);
    h[24..32].copy_from_slice(&[7; 8]);
    h
}

/// A frame header of page `page`, a commit's when `commit` (the database's size in pages).
fn frame_header(page: u32, commit: bool, salts: [u8; 8]) -> Vec<u8> {
    let mut h = vec![0; 24];
    h[..4].copy_from_slice(&page.to_be_bytes());
    if commit {
        h[4..8].copy_from_slice(&100u32.to_be_bytes());
    }
    h[8..16].copy_from_slice(&salts);
    h[16..24].copy_from_slice(&[5; 8]);
    h
}

/// Where frame `n` (from 1) starts.
fn frame_at(n: usize) -> usize {
    HEADER_LEN + (n - 1) * FRAME
}

/// SQLite's writes of frame `n`: its header, then its page.
fn write_frame(state: &mut LogState, log: &mut Log, n: usize, commit: bool, salts: [u8; 8]) {
    let at = frame_at(n) as i64;
    assert_eq!(
        state.write(log, &frame_header(n as u32, commit, salts), at),
        0
    );
    assert_eq!(state.write(log, &[n as u8; PAGE], at + 24), 0);
}

/// A transaction of `frames` frames starting at frame `first`, the last a commit, then its sync.
fn commit(state: &mut LogState, log: &mut Log, first: usize, frames: usize, salts: [u8; 8]) {
    for n in first..first + frames {
        write_frame(state, log, n, n == first + frames - 1, salts);
    }
    assert_eq!(state.sync(log, FULL), 0);
}

const OLD: [u8; 8] = [1; 8];
const NEW: [u8; 8] = [2; 8];

/// Writes are gathered: a commit's frames go to the file in one write, right after the commit
/// frame's page (before SQLite publishes the commit), and later writes go straight to the file
/// until the next sync.
#[test]
fn a_commits_frames_go_to_the_file_in_one_write() {
    let mut log = Log::with_generation(false, OLD, &[true]);
    let mut state = LogState::new(true, false);
    // A log that is not blank: its new header is synced on its own, as SQLite asks.
    assert_eq!(state.write(&mut log, &header(NEW), 0), 0);
    assert!(log.calls.is_empty(), "the header was not gathered");
    assert_eq!(state.sync(&mut log, FULL), 0);
    assert_eq!(log.calls, [Call::Write { at: 0, len: 32 }, Call::Sync]);
    log.calls.clear();
    write_frame(&mut state, &mut log, 1, false, NEW);
    assert!(log.calls.is_empty(), "the first frame was not gathered");
    write_frame(&mut state, &mut log, 2, true, NEW);
    assert_eq!(
        log.calls,
        [Call::Write {
            at: frame_at(1),
            len: 2 * FRAME
        }]
    );
    // After the commit's frames, before the sync: straight to the file (SQLite's padding, had it
    // any, or the journal size limit's truncation).
    assert_eq!(state.write(&mut log, &[0; 24], frame_at(3) as i64), 0);
    assert_eq!(log.calls.len(), 2);
    assert_eq!(state.sync(&mut log, FULL), 0);
    assert_eq!(log.calls.last(), Some(&Call::Sync));
}

/// Gathered bytes go to the file before any other call on the log, when a write does not continue
/// them, and before they would pass `GATHER_LIMIT`; without gathering every write goes straight.
#[test]
fn gathered_writes_go_out_before_other_calls_and_at_the_limit() {
    let mut log = Log::with_generation(false, OLD, &[true]);
    let mut state = LogState::new(true, false);
    state.write(&mut log, &header(NEW), 0);
    state.sync(&mut log, FULL);
    log.calls.clear();
    // 20 frames of a spill (no commit): out in pieces of at most the limit, in order.
    for n in 1..=20 {
        write_frame(&mut state, &mut log, n, false, NEW);
    }
    let written = |calls: &[Call]| -> Vec<(usize, usize)> {
        calls
            .iter()
            .filter_map(|c| match c {
                Call::Write { at, len } => Some((*at, *len)),
                _ => None,
            })
            .collect()
    };
    let pieces = written(&log.calls);
    assert!(pieces.len() >= 20 * FRAME / GATHER_LIMIT, "{pieces:?}");
    assert!(
        pieces.iter().all(|&(_, len)| len <= GATHER_LIMIT),
        "{pieces:?}"
    );
    assert!(
        pieces.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0),
        "{pieces:?}"
    );
    let sent = pieces.last().map_or(0, |&(at, len)| at + len);
    assert!(sent < frame_at(21), "nothing was left gathered");
    // A write elsewhere (a spilled page written again) sends what is gathered first.
    state.write(&mut log, &[9; PAGE], (frame_at(2) + 24) as i64);
    assert_eq!(
        written(&log.calls[pieces.len()..]),
        [(sent, frame_at(21) - sent)]
    );
    // A truncation sends what is gathered first.
    state.truncate(&mut log, (frame_at(21)) as i64);
    assert_eq!(
        log.calls[pieces.len() + 1..],
        [
            Call::Write {
                at: frame_at(2) + 24,
                len: PAGE
            },
            Call::Truncate(frame_at(21))
        ]
    );
    // Without gathering (a device that needs padding), every write goes straight to the file.
    let mut log = Log::with_generation(false, OLD, &[true]);
    let mut state = LogState::new(false, false);
    state.write(&mut log, &header(NEW), 0);
    state.sync(&mut log, FULL);
    write_frame(&mut state, &mut log, 1, true, NEW);
    assert_eq!(
        log.calls,
        [
            Call::Write { at: 0, len: 32 },
            Call::Sync,
            Call::Write {
                at: frame_at(1),
                len: 24
            },
            Call::Write {
                at: frame_at(1) + 24,
                len: PAGE
            },
        ]
    );
}

/// The header-sync rule: a new header over a blank log whose previous generation holds at most
/// one commit is not synced on its own; it goes to the file with the commit's frames, in one
/// write, under the commit's sync. With two commits in that generation, or a log that is not
/// blank, SQLite's sync of the header happens.
#[test]
fn a_new_header_over_a_blank_log_of_one_commit_is_synced_with_the_commit() {
    for (blank, commits, header_synced) in [
        (true, &[false, false, true][..], false),
        // (No frame to read at all: synced, as SQLite would.)
        (true, &[][..], true),
        (true, &[true, false, true][..], true),
        (false, &[false, true][..], true),
    ] {
        let mut log = Log::with_generation(blank, OLD, commits);
        let mut state = LogState::new(true, blank);
        state.write(&mut log, &header(NEW), 0);
        state.sync(&mut log, FULL);
        commit(&mut state, &mut log, 1, 2, NEW);
        let expected = if header_synced {
            vec![
                Call::Write { at: 0, len: 32 },
                Call::Sync,
                Call::Write {
                    at: frame_at(1),
                    len: 2 * FRAME,
                },
                Call::Sync,
            ]
        } else {
            vec![
                Call::Write {
                    at: 0,
                    len: 32 + 2 * FRAME,
                },
                Call::Sync,
            ]
        };
        assert_eq!(log.calls, expected, "blank {blank}, commits {commits:?}");
    }
}

/// A checkpoint's sync right after the commit's is left out, unless another connection appended
/// frames after this object's last commit since (one that commits without syncing,
/// `synchronous=NORMAL`), or started the log over.
#[test]
fn a_sync_with_nothing_new_is_left_out_unless_another_connection_wrote() {
    let mut log = Log::with_generation(true, OLD, &[true]);
    let mut state = LogState::new(true, true);
    state.write(&mut log, &header(NEW), 0);
    state.sync(&mut log, FULL);
    commit(&mut state, &mut log, 1, 3, NEW);
    assert_eq!(log.syncs(), 1);
    assert_eq!(state.sync(&mut log, FULL), 0);
    assert_eq!(log.syncs(), 1, "a sync with nothing new was made");
    log.append_foreign_frame(frame_at(4), NEW);
    state.sync(&mut log, FULL);
    assert_eq!(log.syncs(), 2, "another connection's frame was not synced");
    // Synced now, and another connection starts the log over: a new header.
    state.sync(&mut log, FULL);
    assert_eq!(
        log.syncs(),
        3,
        "the foreign frame still follows the last commit"
    );
    let mut restarted = header([3; 8]);
    restarted[12] = 1;
    log.put(0, &restarted);
    state.sync(&mut log, FULL);
    assert_eq!(log.syncs(), 4, "a log started over was not synced");
}

/// A transaction that spills pages into the log writes them as frames before its commit; at the
/// commit a spilled page changed since is written again over its frame, and SQLite then rewrites
/// the checksums of every frame header from that one to the commit frame's
/// (`walRewriteChecksums`), so the object's last write ends where the commit frame's page starts.
/// The next-frame check must still look where a frame another connection appends would start:
/// after the commit frame's page. (Before this was found, it looked at the last write's end, read
/// 24 bytes of the commit's page there, and left out the sync of another connection's unsynced
/// frames before the checkpoint copied them into the database.)
#[test]
fn after_a_spilled_transaction_rewrites_checksums_a_later_foreign_frame_is_still_seen() {
    for foreign in [false, true] {
        let mut log = Log::with_generation(false, OLD, &[true]);
        let mut state = LogState::new(true, false);
        state.write(&mut log, &header(NEW), 0);
        state.sync(&mut log, FULL);
        // The spill: frames 1 to 3, no commit, no sync.
        for n in 1..=3 {
            write_frame(&mut state, &mut log, n, false, NEW);
        }
        // The commit: page of frame 2 written again, frame 4 the commit frame.
        state.write(&mut log, &[22; PAGE], (frame_at(2) + 24) as i64);
        write_frame(&mut state, &mut log, 4, true, NEW);
        // walRewriteChecksums: read each frame from frame 2 on, write its header again.
        for n in 2..=4 {
            let mut frame = vec![0; FRAME];
            assert_eq!(log.read(&mut frame, frame_at(n) as i64), 0);
            let header = frame_header(n as u32, n == 4, NEW);
            assert_eq!(state.write(&mut log, &header, frame_at(n) as i64), 0);
        }
        let last = log.calls.last().unwrap().clone();
        assert_eq!(
            last,
            Call::Write {
                at: frame_at(4),
                len: 24
            },
            "the last write ends inside the commit frame"
        );
        assert_eq!(state.sync(&mut log, FULL), 0);
        let syncs = log.syncs();
        if foreign {
            log.append_foreign_frame(frame_at(5), NEW);
        }
        state.sync(&mut log, FULL);
        assert_eq!(
            log.syncs(),
            syncs + usize::from(foreign),
            "another connection wrote: {foreign}"
        );
    }
}

/// Frames a rolled-back transaction spilled end past the last commit; another connection's commit
/// then writes over some of them from the last commit's end on. The check looks there.
#[test]
fn after_a_rolled_back_spill_a_later_foreign_frame_is_still_seen() {
    let mut log = Log::with_generation(false, OLD, &[true]);
    let mut state = LogState::new(true, false);
    state.write(&mut log, &header(NEW), 0);
    state.sync(&mut log, FULL);
    commit(&mut state, &mut log, 1, 2, NEW);
    // A transaction spills frames 3 to 6 and rolls back; the checkpoint at its end syncs.
    for n in 3..=6 {
        write_frame(&mut state, &mut log, n, false, NEW);
    }
    state.sync(&mut log, FULL);
    let syncs = log.syncs();
    // Another connection commits one frame, frame 3, without syncing.
    log.append_foreign_frame(frame_at(3), NEW);
    state.sync(&mut log, FULL);
    assert_eq!(log.syncs(), syncs + 1, "the foreign frame was not synced");
}

/// The blank-log rule: a log is kept blank only when its name is known to be durable (its last
/// file object opened it blank or had a sync succeed), else it is deleted as SQLite would; a blank
/// log is a regular file whose header is zeros.
#[test]
fn a_log_is_kept_blank_only_when_its_name_is_known_to_be_durable() {
    let dir = std::env::temp_dir().join(format!(
        "timeline-kept-log-test-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let wal = dir.join("db-wal");
    let name = wal.as_os_str().as_encoded_bytes().to_vec();
    let mut bytes = header(OLD);
    bytes.extend(vec![1; FRAME]);
    std::fs::write(&wal, &bytes).unwrap();
    assert!(!is_blank(&wal));
    // A log created by a file object that never synced: deleted.
    let mut state = LogState::new(true, false);
    note_closed(&name, state.name_durable);
    assert!(!keep(&wal), "kept a log whose name may not be durable");
    assert_eq!(std::fs::read(&wal).unwrap(), bytes, "changed it");
    // One that synced: kept, its header zeros, the rest as it was.
    let mut log = Log::default();
    state.write(&mut log, &header(NEW), 0);
    state.sync(&mut log, FULL);
    assert!(state.name_durable);
    note_closed(&name, state.name_durable);
    assert!(keep(&wal));
    assert!(is_blank(&wal));
    assert_eq!(
        std::fs::read(&wal).unwrap()[HEADER_LEN..],
        bytes[HEADER_LEN..]
    );
    // Each close notes the name once: a second delete is not proven by the first close.
    assert!(!keep(&wal));
    // A file object that opened it blank knows its name is durable.
    note_closed(&name, LogState::new(true, true).name_durable);
    assert!(keep(&wal));
    // An empty log is deleted.
    std::fs::write(&wal, b"").unwrap();
    note_closed(&name, true);
    assert!(!keep(&wal));
    assert!(!DURABLE_NAMES.lock().unwrap().contains(&name));
    std::fs::remove_dir_all(&dir).unwrap();
}
