//! Private files: mode 0600 on Unix; on Windows an owner-only, protected DACL is applied after creation
//! (see `perms_windows.rs`).

use std::fs::{File, OpenOptions};
use std::path::Path;

/// Open a file only its owner can read and write. `new` demands a fresh file; otherwise an existing
/// file is opened as it is (its permissions are not changed) and a missing one is created private.
pub fn open_private(path: &Path, new: bool) -> std::io::Result<File> {
    match create_private(path) {
        Err(e) if !new && e.kind() == std::io::ErrorKind::AlreadyExists => {
            OpenOptions::new().read(true).write(true).open(path)
        }
        other => other,
    }
}

fn create_private(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let file = options.open(path)?;
    #[cfg(windows)]
    super::perms_windows::restrict_to_owner(path)?;
    Ok(file)
}
