//! The atomic replace of a file by a new one beside it (`rename`), under each system's rules.
//!
//! On Unix a rename replaces the target whoever has it open. On Windows it fails (access denied or
//! a sharing violation) while any other process holds the target open, even with every share mode
//! granted: another `tl` or `tl-mcp` that is only reading the first bytes of the database to tell its
//! engine, or checking that it may write it, is enough. Those handles live for microseconds, so the
//! rename is retried with a growing pause for a bounded time; a target that stays held (or a real
//! lack of permission) then fails as before.

use std::io;
use std::path::Path;

/// Replace `to` with `from` atomically (both in the same directory).
pub fn replace(from: &Path, to: &Path) -> io::Result<()> {
    #[cfg(windows)]
    {
        retry_while_held(|| std::fs::rename(from, to))
    }
    #[cfg(not(windows))]
    {
        std::fs::rename(from, to)
    }
}

/// How long a replace waits for other processes to close the target, in total.
#[cfg(windows)]
const PATIENCE: std::time::Duration = std::time::Duration::from_secs(3);

#[cfg(windows)]
fn retry_while_held(mut attempt: impl FnMut() -> io::Result<()>) -> io::Result<()> {
    use std::time::{Duration, Instant};
    const ERROR_ACCESS_DENIED: i32 = 5;
    const ERROR_SHARING_VIOLATION: i32 = 32;
    let start = Instant::now();
    let mut pause = Duration::from_millis(1);
    loop {
        match attempt() {
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(ERROR_ACCESS_DENIED | ERROR_SHARING_VIOLATION)
                ) && start.elapsed() < PATIENCE =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(50));
            }
            other => return other,
        }
    }
}
