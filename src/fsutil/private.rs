//! Private files: mode 0600 on Unix; on Windows an owner-only, protected DACL is applied after creation
//! (see `private_windows.rs`).

use std::fs::{File, OpenOptions};
use std::path::Path;

/// Open a file only its owner can read and write. `new` demands a fresh file; otherwise an existing
/// file is opened as it is (its permissions are not changed) and a missing one is created private.
pub fn open_private(path: &Path, new: bool) -> std::io::Result<File> {
    match create_private(path) {
        Err(e) if !new && e.kind() == std::io::ErrorKind::AlreadyExists => {
            no_follow(OpenOptions::new().read(true).write(true)).open(path)
        }
        other => other,
    }
}

/// Open an existing file of Timeline's own (a lock file) for reading only.
pub fn open_own_read_only(path: &Path) -> std::io::Result<File> {
    no_follow(OpenOptions::new().read(true)).open(path)
}

/// Files Timeline makes for itself are never opened through a link: one planted after the check
/// that refuses links would otherwise be followed.
fn no_follow(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options
}

fn create_private(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    no_follow(options.read(true).write(true).create_new(true));
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options.open(path)?;
    #[cfg(windows)]
    super::private_windows::restrict_to_owner(path)?;
    Ok(file)
}

/// Make an existing file that someone else created for us (SQLite's `-wal` and `-shm`) owner-only.
/// On Unix SQLite gives them the database's mode already.
#[cfg(windows)]
pub fn restrict_existing(path: &Path) -> std::io::Result<()> {
    super::private_windows::restrict_to_owner(path)
}
