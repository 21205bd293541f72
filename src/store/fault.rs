//! Fault injection for the crash tests: `TIMELINE_FAULT_STEP=<step>` makes the process abort at that
//! point of a write, as a power cut or a kill would. Unset in normal use, it costs one env lookup per
//! step of a write.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    TempWritten,
    TempSynced,
    BackupWritten,
    Replaced,
    DirSynced,
}

impl Step {
    pub fn name(self) -> &'static str {
        match self {
            Step::TempWritten => "temp_written",
            Step::TempSynced => "temp_synced",
            Step::BackupWritten => "backup_written",
            Step::Replaced => "replaced",
            Step::DirSynced => "dir_synced",
        }
    }
}

pub fn reached(step: Step) {
    if std::env::var("TIMELINE_FAULT_STEP").is_ok_and(|s| s == step.name()) {
        std::process::abort();
    }
}
