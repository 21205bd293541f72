//! Reading import files with bounded memory.
//!
//! A data export (ChatGPT, Claude.ai) is a JSON array of conversations that can be gigabytes long. It
//! is never held whole: a scanner walks the array byte by byte (tracking strings and brackets only)
//! and hands over one conversation at a time, parsed straight from the input as the scanner walks
//! it (within a memory allowance, see `values`; ChatGPT's and Claude.ai's into a compact form,
//! see `chatgpt::read`, `claude::read`),
//! so memory holds one conversation, never its whole text. The check pass holds one conversation's
//! text at a time, to report a grammar error where serde_json finds it. A conversation over
//! [`MAX_CONVERSATION_BYTES`] is skipped without being stored (the scanner still checks its
//! brackets), one of too many values to parse within the allowance is skipped too; nesting deeper
//! than [`MAX_DEPTH`] refuses the file. The input can be the JSON file, the export's folder (every `conversations.json` /
//! `conversations-NNN.json` in it) or the `.zip` as downloaded (the same files inside it, read
//! through the zip crate's streaming decompression).
//!
//! Any syntax error, truncation, or top level that is not an array (or a single conversation object)
//! refuses the whole file: the import reads an export once with [`Pass::Check`] before it writes
//! anything. A conversation that is JSON but holds a string that is not Unicode (a lone surrogate
//! escape) is skipped with its reason. Only regular files are read (a FIFO would never end).

mod archive;
mod progress;
mod scan;

use super::{Format, MAX_CONVERSATION_BYTES};
use crate::error::{Error, Result};
use archive::read_zip;
use progress::Progress;
use scan::{scan, scan_request};
use std::fs::File;
use std::io::{BufReader, ErrorKind as IoKind, Read};
use std::path::{Path, PathBuf};

/// Brackets nested deeper than this refuse the file. The bound is ours: serde_json's recursion limit
/// (128) is lifted, and everything that walks a conversation's JSON recursively (parsing,
/// converting, hashing, dropping) fits this depth on the stack the import runs on.
pub const MAX_DEPTH: usize = 10_000;

/// One conversation of an input: where it is, and its JSON (or why it was not parsed).
pub struct Element {
    /// The file it came from (inside the zip, or in the folder): its name.
    pub file: String,
    /// Its position in that file's array, from 0.
    pub index: usize,
    /// What was read of it, or the reason it was skipped unparsed (too large).
    pub value: std::result::Result<Box<Converted>, String>,
}

/// A conversation converted while it was parsed (see `interchange::read`), with what the import
/// needs of its JSON.
pub struct Converted {
    pub source_id: Option<String>,
    pub title: Option<String>,
    pub conversation: std::result::Result<super::Conversation, String>,
    /// The digest's state after the format and the conversation's JSON (see `digest`).
    pub hasher: sha2::Sha256,
}

/// What a reading of the input does with each conversation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pass {
    /// Check the whole input's JSON without building anything or keeping its text (nothing is
    /// handed over): the first pass of an import, which refuses a broken file before anything is
    /// written.
    Check,
    /// Parse each conversation and show progress on a terminal.
    Parse,
}

/// What a `.zip` may decompress to: in all, and per entry as a multiple of its compressed size.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Bytes that the conversations files of a zip may decompress to, in all.
    pub unzipped_bytes: u64,
    /// How many times its compressed size an entry may decompress to.
    pub zip_ratio: u64,
    /// No progress line, even on a terminal (`import --quiet`).
    pub quiet: bool,
}

impl Limits {
    /// The default limits (16 GiB; 100 times), or those the import was given in MiB and times.
    pub fn new(unzipped_mib: Option<u64>, zip_ratio: Option<u64>) -> Limits {
        Limits {
            unzipped_bytes: unzipped_mib.unwrap_or(16 << 10).saturating_mul(1 << 20),
            zip_ratio: zip_ratio.unwrap_or(100),
            quiet: false,
        }
    }
}

/// Call `each` for every conversation of the input at `path`, in file order; `each` returns how
/// many messages it imported (for the progress line). Errors of `each` stop the reading.
pub fn read(
    format: Format,
    path: &Path,
    pass: Pass,
    limits: Limits,
    each: &mut dyn FnMut(Element) -> Result<u64>,
) -> Result<()> {
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        IoKind::NotFound => {
            Error::invalid(format!("invalid argument --input: {shown} does not exist"))
        }
        _ => Error::invalid(format!(
            "invalid argument --input: cannot read {shown}: {e}"
        )),
    })?;
    let mut progress = Progress::new(&shown);
    progress.enabled &= pass == Pass::Parse && !limits.quiet;
    progress.pass = pass;
    if meta.is_dir() {
        if !format.is_export() {
            return Err(Error::invalid(format!(
                "invalid argument --input: {shown} is a folder; --format {} reads one JSON file",
                format.as_str()
            )));
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .map_err(|e| {
                Error::invalid(format!(
                    "invalid argument --input: cannot list {shown}: {e}"
                ))
            })?
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(is_conversations_file)
            })
            .collect();
        files.sort();
        for file in &files {
            refuse_special(file)?;
        }
        if files.is_empty() {
            return Err(Error::invalid(format!(
                "invalid argument --input: the folder {shown} holds no conversations.json (nor conversations-000.json, ...); pass the export's folder, its .zip or the file itself"
            )));
        }
        progress.total = files
            .iter()
            .filter_map(|f| std::fs::metadata(f).ok())
            .map(|m| m.len())
            .sum();
        for file in &files {
            let name = file.display().to_string();
            let reader = File::open(file).map_err(|e| {
                Error::invalid(format!("invalid argument --input: cannot open {name}: {e}"))
            })?;
            scan(
                format,
                BufReader::with_capacity(1 << 16, reader),
                &name,
                &mut progress,
                each,
            )?;
        }
        progress.finish();
        return Ok(());
    }
    refuse_special(path)?;
    let mut file = File::open(path).map_err(|e| {
        Error::invalid(format!(
            "invalid argument --input: cannot open {shown}: {e}"
        ))
    })?;
    let mut magic = [0u8; 4];
    let got = read_up_to(&mut file, &mut magic).map_err(|e| {
        Error::invalid(format!(
            "invalid argument --input: cannot read {shown}: {e}"
        ))
    })?;
    let file = File::open(path).map_err(|e| {
        Error::invalid(format!(
            "invalid argument --input: cannot open {shown}: {e}"
        ))
    })?;
    if got == 4 && (&magic == b"PK\x03\x04" || &magic == b"PK\x05\x06") {
        if !format.is_export() {
            return Err(Error::invalid(format!(
                "invalid argument --input: {shown} is a zip archive; --format {} reads one JSON file",
                format.as_str()
            )));
        }
        read_zip(format, file, &shown, limits, &mut progress, each)?;
        progress.finish();
        return Ok(());
    }
    progress.total = meta.len();
    if format.is_export() {
        scan(
            format,
            BufReader::with_capacity(1 << 16, file),
            &shown,
            &mut progress,
            each,
        )?;
    } else {
        // One request: within the size limit, checked whole first (nothing is held), then read
        // as one conversation.
        if meta.len() > MAX_CONVERSATION_BYTES {
            return Err(Error::invalid(format!(
                "invalid argument --input: {shown} is over {} MiB, the limit for one conversation; nothing was imported",
                MAX_CONVERSATION_BYTES >> 20
            )));
        }
        let passes: &[Pass] = match pass {
            Pass::Check => &[Pass::Check],
            Pass::Parse => &[Pass::Check, Pass::Parse],
        };
        let mut file = Some(file);
        for &pass in passes {
            let reader = match file.take() {
                Some(file) => file,
                None => File::open(path).map_err(|e| {
                    Error::invalid(format!(
                        "invalid argument --input: cannot open {shown}: {e}"
                    ))
                })?,
            };
            progress.pass = pass;
            // The size it had when it was checked: it is read no further.
            let reader = BufReader::with_capacity(1 << 16, reader.take(meta.len()));
            scan_request(format, reader, &shown, meta.len(), &mut progress, each)?;
        }
    }
    progress.finish();
    Ok(())
}

/// Refuse an input that is not a regular file (a FIFO, a device, a socket): opening or reading one
/// could wait forever or never end. Checked before the file is opened; a link is followed.
fn refuse_special(path: &Path) -> Result<()> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| {
        Error::invalid(format!(
            "invalid argument --input: cannot read {shown}: {e}"
        ))
    })?;
    if meta.is_file() {
        return Ok(());
    }
    let what = if meta.is_dir() {
        "a folder"
    } else {
        "not a regular file (a pipe, a device or a socket)"
    };
    Err(Error::invalid(format!(
        "invalid argument --input: {shown} is {what}; an import reads regular files only, so copy the data into a file and import that; nothing was imported"
    )))
}

fn read_up_to(file: &mut File, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == IoKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// The last component of a path as shown in reports.
fn file_name(shown: &str) -> String {
    Path::new(shown)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| shown.to_string())
}

/// `conversations.json` or `conversations-<digits>.json`.
pub fn is_conversations_file(name: &str) -> bool {
    if name == "conversations.json" {
        return true;
    }
    name.strip_prefix("conversations-")
        .and_then(|rest| rest.strip_suffix(".json"))
        .is_some_and(|digits| !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversation_files() {
        for ok in [
            "conversations.json",
            "conversations-000.json",
            "conversations-12.json",
        ] {
            assert!(is_conversations_file(ok));
        }
        for no in [
            "conversations-.json",
            "conversations-a.json",
            "chat.html",
            "conversations.json.bak",
        ] {
            assert!(!is_conversations_file(no));
        }
    }
}
