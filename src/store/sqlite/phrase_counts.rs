//! `tl_phrase_counts(search_index)`: an FTS5 auxiliary function that gives, for the row a search is
//! on, how often each phrase of the query occurs in it, with the index's totals (messages and
//! terms). The search then scores every match with `crate::search::Scorer`, as the other engines do.
//!
//! Why not FTS5's own `bm25()`: it reads each match's length with a statement of its own and
//! merges the positions of every phrase into one sorted list per row, which cost about 0.6 µs per
//! match before any phrase was counted (a word in every one of 100k messages: 3 ms to match, 65 ms
//! to score); and it counts each phrase's messages in a second pass over its postings. Here a row
//! costs one walk over each phrase's positions, and the length comes from the search's own join of
//! FTS5's size table (`search_index_docsize`, one varint: the index has one column). When every
//! phrase is common, the search matches any phrase and counts each phrase's messages from these
//! rows, in the same pass (`SqlTx::search`).
//!
//! This is the engine's only code that reaches SQLite below rusqlite (which has no binding for FTS5's
//! extension interface): registering the function, and the function itself, which reads FTS5's
//! answers through the interface FTS5 hands it and touches no other memory.

use rusqlite::{Connection, ffi};
use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};

/// Its name in SQL.
pub(super) const NAME: &str = "tl_phrase_counts";
/// The same, for SQLite's C interface (a unit test keeps the two equal).
const NAME_C: &CStr = c"tl_phrase_counts";

/// The most phrases the function counts in one row (a query holds at most
/// `crate::search::MAX_QUERY_TERMS`; more is refused with an error, never cut).
const MAX_PHRASES: usize = 64;

unsafe extern "C" {
    // Declared here rather than taken from rusqlite's bindings: the prebuilt bindings used when
    // SQLite is not compiled in (the cross-target lint) predate it (SQLite 3.20).
    fn sqlite3_bind_pointer(
        stmt: *mut ffi::sqlite3_stmt,
        index: c_int,
        pointer: *mut c_void,
        type_name: *const c_char,
        destroy: Option<unsafe extern "C" fn(*mut c_void)>,
    ) -> c_int;
}

/// Register the function on `conn`, through FTS5's extension interface (the pointer SQL's `fts5(?)`
/// hands back, as FTS5's documentation describes).
pub(super) fn register(conn: &Connection) -> rusqlite::Result<()> {
    let failed = |code: c_int, what: &str| {
        rusqlite::Error::SqliteFailure(
            ffi::Error::new(code),
            Some(format!("cannot register {NAME}: {what}")),
        )
    };
    // SAFETY: the handle is only used within this call, while `conn` is borrowed.
    let db = unsafe { conn.handle() };
    let mut api: *mut ffi::fts5_api = std::ptr::null_mut();
    let mut stmt: *mut ffi::sqlite3_stmt = std::ptr::null_mut();
    // SAFETY: a valid connection and a NUL-terminated statement; `stmt` is finalized below on every
    // path. The pointer bound is `api`'s address, which FTS5 writes once during the step.
    let (prepared, stepped) = unsafe {
        let prepared = ffi::sqlite3_prepare_v2(
            db,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &mut stmt,
            std::ptr::null_mut(),
        );
        let mut stepped = prepared;
        if prepared == ffi::SQLITE_OK {
            stepped = sqlite3_bind_pointer(
                stmt,
                1,
                (&raw mut api).cast(),
                c"fts5_api_ptr".as_ptr(),
                None,
            );
            if stepped == ffi::SQLITE_OK {
                stepped = ffi::sqlite3_step(stmt);
            }
        }
        ffi::sqlite3_finalize(stmt);
        (prepared, stepped)
    };
    if prepared != ffi::SQLITE_OK {
        return Err(failed(prepared, "this SQLite has no FTS5"));
    }
    if stepped != ffi::SQLITE_ROW || api.is_null() {
        return Err(failed(stepped, "FTS5 did not hand over its interface"));
    }
    // SAFETY: `api` points to FTS5's interface, which lives as long as the connection; its fields
    // are read through the raw pointer, which is also what FTS5 is handed back.
    let (version, create) = unsafe { ((*api).iVersion, (*api).xCreateFunction) };
    if version < 2 {
        return Err(failed(ffi::SQLITE_ERROR, "FTS5's interface is too old"));
    }
    let create = create.ok_or_else(|| failed(ffi::SQLITE_ERROR, "FTS5 cannot add functions"))?;
    // SAFETY: the name is NUL-terminated and copied by FTS5; no user data to free.
    let rc = unsafe {
        create(
            api,
            NAME_C.as_ptr(),
            std::ptr::null_mut(),
            Some(phrase_counts),
            None,
        )
    };
    if rc != ffi::SQLITE_OK {
        return Err(failed(rc, "FTS5 refused it"));
    }
    Ok(())
}

/// Whether `e` is SQLite's answer to a statement that calls the function on a connection it is not
/// registered on yet (before the connection's first search).
pub(super) fn is_missing(e: &rusqlite::Error) -> bool {
    // SQLite's message, which rusqlite shows alone or (as the bundled build reports it) followed
    // by " in <the statement> at offset N".
    let wanted = format!("no such function: {NAME}");
    let text = e.to_string();
    text == wanted || text.starts_with(&format!("{wanted} in "))
}

/// The counts of the current row as a blob: the index's messages and terms (two little-endian
/// u64), then each phrase's occurrences in this row (one little-endian u32 per phrase).
unsafe extern "C" fn phrase_counts(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _argc: c_int,
    _argv: *mut *mut ffi::sqlite3_value,
) {
    let mut out = [0u8; 16 + 4 * MAX_PHRASES];
    // SAFETY: FTS5 calls this with its interface and the context of the current row.
    let written = unsafe { count(&*api, fts, &mut out) };
    // SAFETY: `ctx` is the function's result context; the bytes are copied (SQLITE_TRANSIENT).
    unsafe {
        match written {
            Ok(len) => ffi::sqlite3_result_blob(
                ctx,
                out.as_ptr().cast(),
                len as c_int,
                ffi::SQLITE_TRANSIENT(),
            ),
            Err(code) => ffi::sqlite3_result_error_code(ctx, code),
        }
    }
}

/// Fill `out` (see `phrase_counts`) and return how many bytes were written, or SQLite's error code.
///
/// # Safety
/// `api` and `fts` are what FTS5 passed to the function for the current row.
unsafe fn count(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    out: &mut [u8; 16 + 4 * MAX_PHRASES],
) -> Result<usize, c_int> {
    let (Some(phrase_count), Some(first), Some(next)) =
        (api.xPhraseCount, api.xPhraseFirst, api.xPhraseNext)
    else {
        return Err(ffi::SQLITE_MISUSE);
    };
    // SAFETY: as for every call below.
    let (rows, tokens) = unsafe { totals(api, fts)? };
    out[..8].copy_from_slice(&rows.to_le_bytes());
    out[8..16].copy_from_slice(&tokens.to_le_bytes());
    // SAFETY (every call below): FTS5's own functions on its own context, with out-pointers to
    // locals.
    let phrases = usize::try_from(unsafe { phrase_count(fts) }).unwrap_or(0);
    if phrases > MAX_PHRASES {
        return Err(ffi::SQLITE_TOOBIG);
    }
    for phrase in 0..phrases {
        let mut iter = ffi::Fts5PhraseIter {
            a: std::ptr::null(),
            b: std::ptr::null(),
        };
        let (mut column, mut offset) = (0, 0);
        let rc = unsafe { first(fts, phrase as c_int, &mut iter, &mut column, &mut offset) };
        if rc != ffi::SQLITE_OK {
            return Err(rc);
        }
        let mut found = 0u32;
        while column >= 0 {
            found = found.saturating_add(1);
            unsafe { next(fts, &mut iter, &mut column, &mut offset) };
        }
        let at = 16 + 4 * phrase;
        out[at..at + 4].copy_from_slice(&found.to_le_bytes());
    }
    Ok(16 + 4 * phrases)
}

/// The index's messages and terms, read on a query's first row and kept with the query (FTS5 reads
/// them from its record again on every call of `xRowCount` and `xColumnTotalSize`).
///
/// # Safety
/// `api` and `fts` are what FTS5 passed to the function for the current row.
unsafe fn totals(
    api: &ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
) -> Result<(i64, i64), c_int> {
    let (Some(row_count), Some(total_size), Some(get), Some(set)) = (
        api.xRowCount,
        api.xColumnTotalSize,
        api.xGetAuxdata,
        api.xSetAuxdata,
    ) else {
        return Err(ffi::SQLITE_MISUSE);
    };
    // SAFETY: the only auxiliary data this function sets is a boxed (i64, i64), freed by FTS5
    // through `free_totals` when the query ends.
    let kept = unsafe { get(fts, 0) }.cast::<(i64, i64)>();
    if !kept.is_null() {
        return Ok(unsafe { *kept });
    }
    let (mut rows, mut tokens) = (0i64, 0i64);
    // SAFETY: FTS5's own functions on its own context, with out-pointers to locals.
    let rc = unsafe { row_count(fts, &mut rows) };
    if rc != ffi::SQLITE_OK {
        return Err(rc);
    }
    let rc = unsafe { total_size(fts, -1, &mut tokens) };
    if rc != ffi::SQLITE_OK {
        return Err(rc);
    }
    let boxed = Box::into_raw(Box::new((rows, tokens)));
    // SAFETY: FTS5 owns the box from here and frees it with `free_totals` (also when it fails).
    let rc = unsafe { set(fts, boxed.cast(), Some(free_totals)) };
    if rc != ffi::SQLITE_OK {
        return Err(rc);
    }
    Ok((rows, tokens))
}

unsafe extern "C" fn free_totals(kept: *mut c_void) {
    // SAFETY: `kept` is the box `totals` gave FTS5.
    drop(unsafe { Box::from_raw(kept.cast::<(i64, i64)>()) });
}

/// What `tl_phrase_counts` gave for one row.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Counts<'a> {
    /// Messages in the index.
    pub rows: u64,
    /// Terms in the index.
    pub tokens: u64,
    /// Occurrences of each phrase in this row, 4 bytes each.
    freq: &'a [u8],
}

impl<'a> Counts<'a> {
    /// Read the blob back (`None` when it is not one of `phrases` phrases).
    pub fn read(blob: &'a [u8], phrases: usize) -> Option<Counts<'a>> {
        if blob.len() != 16 + 4 * phrases {
            return None;
        }
        let (rows, rest) = blob.split_first_chunk::<8>()?;
        let (tokens, freq) = rest.split_first_chunk::<8>()?;
        Some(Counts {
            rows: u64::from_le_bytes(*rows),
            tokens: u64::from_le_bytes(*tokens),
            freq,
        })
    }

    /// Occurrences of each phrase in this row.
    pub fn freq(&self) -> impl Iterator<Item = usize> + 'a {
        self.freq
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_agree() {
        assert_eq!(NAME_C.to_str(), Ok(NAME));
    }

    /// The function counts each phrase's occurrences in a row, as FTS5's own `bm25()` counts them;
    /// a statement that calls it before it is registered fails as `is_missing` expects.
    #[test]
    fn counts_match_what_fts5_reports() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE VIRTUAL TABLE t USING fts5(x)")
            .unwrap();
        let missing = conn
            .prepare("SELECT tl_phrase_counts(t) FROM t WHERE t MATCH 'a'")
            .unwrap_err();
        assert!(is_missing(&missing), "{missing:?}");
        let other = conn
            .prepare("SELECT tl_phrase_counts(t) FROM nothing")
            .unwrap_err();
        assert!(!is_missing(&other), "{other:?}");
        conn.execute_batch("DROP TABLE t").unwrap();
        register(&conn).unwrap();
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(x, content = '', tokenize = 'ascii');
             INSERT INTO t (rowid, x) VALUES (1, 'a b a c'), (2, 'b c d'), (3, 'a a a b');",
        )
        .unwrap();
        let mut stmt = conn
            .prepare(
                "SELECT t.rowid, tl_phrase_counts(t), s.sz FROM t JOIN t_docsize s ON s.id = t.rowid \
                 WHERE t MATCH 'a OR \"b c\" OR c*' ORDER BY t.rowid",
            )
            .unwrap();
        // Each row as "rowid: messages terms [occurrences of each phrase] length".
        let rows: Vec<String> = stmt
            .query_map([], |r| {
                let blob = r.get::<_, Vec<u8>>(1)?;
                let counts = Counts::read(&blob, 3).unwrap();
                let freq: Vec<usize> = counts.freq().collect();
                let length = super::super::check::varint(&r.get::<_, Vec<u8>>(2)?).unwrap();
                Ok(format!(
                    "{}: {} {} {freq:?} {length}",
                    r.get::<_, i64>(0)?,
                    counts.rows,
                    counts.tokens
                ))
            })
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(
            rows,
            [
                "1: 3 11 [2, 0, 1] 4",
                "2: 3 11 [0, 1, 1] 3",
                "3: 3 11 [3, 0, 0] 4"
            ]
        );
    }
}
