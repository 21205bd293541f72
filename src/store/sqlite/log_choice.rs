//! Which write-ahead log a SQLite database's writers use: the kept log (`kept_log`, Unix) or
//! SQLite's own VFS unchanged ("plain"), and why. `db info` reports it.
//!
//! The kept log's VFS depends on how SQLite writes, syncs and deletes a log, none of which is part
//! of SQLite's interface (see `kept_log`'s list of assumptions). So it is used only with the SQLite
//! versions those assumptions were checked against, `VERIFIED_SQLITE`, and can be switched off.

use crate::error::{Error, Result};
use std::ffi::OsStr;

/// The switch: `off` makes every connection use SQLite's own VFS, `on` (or unset) the kept log
/// where it can be used (docs/storage.md).
pub const SWITCH: &str = "TIMELINE_SQLITE_KEPT_LOG";

/// The SQLite versions (`sqlite3_libversion_number`) whose log code (`wal.c`, `os_unix.c`, the
/// pager's spill) `kept_log`'s assumptions were read against: 3.50.2, the one the `bundled-sqlite`
/// feature builds (libsqlite3-sys 0.35). Before adding one, read its code against every
/// assumption listed in `kept_log` and run the crash, power-loss and pages suites with it.
pub const VERIFIED_SQLITE: &[i32] = &[3_050_002];

/// The log a SQLite database's writers use in this process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SqliteLog {
    /// The kept log.
    Kept,
    /// SQLite's own VFS: `TIMELINE_SQLITE_KEPT_LOG=off`.
    SwitchedOff,
    /// SQLite's own VFS: the SQLite linked in is not one the kept log was verified against.
    UnverifiedSqlite,
    /// SQLite's own VFS: the kept log does not exist here (Windows) or SQLite refused to register it.
    Unavailable,
}

impl SqliteLog {
    /// Its name in `db info` (`sqlite_log`).
    pub fn as_str(self) -> &'static str {
        match self {
            SqliteLog::Kept => "kept",
            SqliteLog::SwitchedOff => "plain_switched_off",
            SqliteLog::UnverifiedSqlite => "plain_unverified_sqlite_version",
            SqliteLog::Unavailable => "plain_unavailable",
        }
    }
}

/// The log for a switch's value (`None`: unset), the SQLite version linked in, and whether the
/// kept log's VFS can be had on this platform (asked only when everything else allows it).
fn decide(
    switch: Option<&OsStr>,
    version: i32,
    available: impl FnOnce() -> bool,
) -> Result<SqliteLog> {
    match switch.map(|v| v.to_str()) {
        None | Some(Some("on")) => {}
        Some(Some("off")) => return Ok(SqliteLog::SwitchedOff),
        Some(value) => {
            let shown = value.map_or_else(
                || "not UTF-8".to_string(),
                |v| format!("{:?}", crate::spec::validate::shorten(v)),
            );
            return Err(Error::invalid(format!(
                "the environment variable {SWITCH} is {shown}; it takes on (the default: the kept write-ahead log, docs/storage.md) or off (SQLite's own). Set it to one of those or unset it; nothing was changed"
            )));
        }
    }
    if !VERIFIED_SQLITE.contains(&version) {
        return Ok(SqliteLog::UnverifiedSqlite);
    }
    Ok(if available() {
        SqliteLog::Kept
    } else {
        SqliteLog::Unavailable
    })
}

/// The log this process's writers use (an invalid `TIMELINE_SQLITE_KEPT_LOG` is an error).
pub fn current() -> Result<SqliteLog> {
    decide(
        std::env::var_os(SWITCH).as_deref(),
        sqlite_version_number(),
        registered,
    )
}

/// Whether connections that write open through the kept log's VFS (Unix only: elsewhere there is
/// no kept log to open through).
#[cfg(unix)]
pub(super) fn kept() -> bool {
    current() == Ok(SqliteLog::Kept)
}

#[cfg(unix)]
fn registered() -> bool {
    super::kept_log::registered()
}

#[cfg(not(unix))]
fn registered() -> bool {
    false
}

/// `sqlite3_libversion_number`; in debug builds `TIMELINE_TEST_SQLITE_VERSION` stands in for it,
/// so that the tests can show what an unverified SQLite gets.
fn sqlite_version_number() -> i32 {
    #[cfg(debug_assertions)]
    if let Some(version) = std::env::var("TIMELINE_TEST_SQLITE_VERSION")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return version;
    }
    rusqlite::version_number()
}

/// The SQLite version linked in, as `db info` shows it ("3.50.2").
pub fn sqlite_version() -> &'static str {
    rusqlite::version()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_kept_log_needs_the_switch_on_a_verified_sqlite_and_the_vfs() {
        let verified = VERIFIED_SQLITE[0];
        let on = Some(OsStr::new("on"));
        let off = Some(OsStr::new("off"));
        assert_eq!(decide(None, verified, || true), Ok(SqliteLog::Kept));
        assert_eq!(decide(on, verified, || true), Ok(SqliteLog::Kept));
        assert_eq!(decide(off, verified, || true), Ok(SqliteLog::SwitchedOff));
        assert_eq!(
            decide(on, 3_050_001, || true),
            Ok(SqliteLog::UnverifiedSqlite)
        );
        assert_eq!(
            decide(None, 3_051_000, || true),
            Ok(SqliteLog::UnverifiedSqlite)
        );
        assert_eq!(decide(None, verified, || false), Ok(SqliteLog::Unavailable));
        // Switched off, nothing else is asked.
        assert_eq!(
            decide(off, 1, || panic!("asked")),
            Ok(SqliteLog::SwitchedOff)
        );
        let wrong = decide(Some(OsStr::new("OFF")), verified, || true).unwrap_err();
        assert_eq!(
            wrong.message,
            "the environment variable TIMELINE_SQLITE_KEPT_LOG is \"OFF\"; it takes on (the default: the kept write-ahead log, docs/storage.md) or off (SQLite's own). Set it to one of those or unset it; nothing was changed"
        );
        assert!(decide(Some(OsStr::new("")), verified, || true).is_err());
    }
}
