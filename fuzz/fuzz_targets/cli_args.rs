//! Arbitrary command lines → `timeline::cli::run`: it returns a result or an error, never panics.
//!
//! Input: up to 32 commands separated by 0x01 bytes, run in order on one fresh database; each command is
//! the arguments after `tl --db <temporary file>`, separated by NUL bytes (invalid UTF-8 kept as it is
//! on Unix). Standard input is a fixed text. Arguments that would point the run at another file (`--db`,
//! `--output`) are dropped so the fuzzer only ever writes inside its own directory.

#![no_main]

use libfuzzer_sys::fuzz_target;
use std::ffi::OsString;
use std::path::PathBuf;
use std::sync::OnceLock;

fn dir() -> &'static PathBuf {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = std::env::temp_dir().join(format!("timeline-fuzz-cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temporary directory");
        dir
    })
}

#[cfg(unix)]
fn os(bytes: &[u8]) -> OsString {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(bytes).to_os_string()
}

#[cfg(not(unix))]
fn os(bytes: &[u8]) -> OsString {
    OsString::from(String::from_utf8_lossy(bytes).into_owned())
}

fuzz_target!(|data: &[u8]| {
    let dir = dir();
    let db = dir.join("db.json");
    for name in ["db.json", "db.json.bak"] {
        let _ = std::fs::remove_file(dir.join(name));
    }
    for command in data.split(|&b| b == 1).take(32) {
        let mut argv = vec![
            OsString::from("tl"),
            OsString::from("--db"),
            db.clone().into_os_string(),
        ];
        for arg in command.split(|&b| b == 0) {
            if arg.starts_with(b"--db") || arg.starts_with(b"--o") {
                continue;
            }
            argv.push(os(arg));
        }
        let mut stdin: &[u8] = b"text from standard input";
        let _ = timeline::cli::run(argv, &mut stdin);
    }
});
