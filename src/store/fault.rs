//! Fault injection for the crash tests: `TIMELINE_FAULT_STEP=<step>` makes the process abort at that
//! point of a write, as a power cut or a kill would. Unset in normal use, it costs one env lookup per
//! step of a write.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    TempWritten,
    TempSynced,
    BackupWritten,
    Replaced,
    /// Only as a failure (`fail_at`): the backup's rename after the commit.
    BackupReplaced,
    DirSynced,
}

impl Step {
    pub fn name(self) -> &'static str {
        match self {
            Step::TempWritten => "temp_written",
            Step::TempSynced => "temp_synced",
            Step::BackupWritten => "backup_written",
            Step::Replaced => "replaced",
            Step::BackupReplaced => "backup_replaced",
            Step::DirSynced => "dir_synced",
        }
    }
}

pub fn reached(step: Step) {
    if std::env::var("TIMELINE_FAULT_STEP").is_ok_and(|s| s == step.name()) {
        std::process::abort();
    }
}

/// Fault injection for the disk-full tests: `TIMELINE_FAULT_ERROR=<step>` makes the action that
/// would reach that step fail as a full disk does, so that every failure point of a write is tried.
pub fn fail_at(step: Step) -> std::io::Result<()> {
    if std::env::var("TIMELINE_FAULT_ERROR").is_ok_and(|s| s == step.name()) {
        return Err(std::io::Error::new(
            std::io::ErrorKind::StorageFull,
            "No space left on device (TIMELINE_FAULT_ERROR)",
        ));
    }
    Ok(())
}

/// The power-loss suite's control run (docs/contributing.md, "Power loss"): in a debug build,
/// `TIMELINE_TEST_UNSAFE_SYNCHRONOUS_OFF=1` leaves out the syncs that make a commit durable (SQLite's
/// `synchronous=OFF`, the JSON snapshot's fsync), so that the suite can show it catches lost
/// acknowledged writes. Release builds have no such switch: this is then a constant `false`.
#[cfg(debug_assertions)]
pub fn unsafe_synchronous_off() -> bool {
    std::env::var_os("TIMELINE_TEST_UNSAFE_SYNCHRONOUS_OFF").is_some_and(|v| v == "1")
}

#[cfg(not(debug_assertions))]
pub const fn unsafe_synchronous_off() -> bool {
    false
}
