//! Private files: mode 0600 on Unix; on Windows an owner-only, protected DACL is applied after creation
//! (see `windows.rs`).

use std::fs::{File, OpenOptions};
use std::path::Path;

/// Open (and create if needed) a file only its owner can read and write. `new` demands a fresh file.
pub fn open_private(path: &Path, new: bool) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true).write(true);
    if new {
        options.create_new(true);
    } else {
        options.create(true).truncate(false);
    }
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
