//! Reading import files with bounded memory.
//!
//! A data export (ChatGPT, Claude.ai) is a JSON array of conversations that can be gigabytes long. It
//! is never held whole: a scanner walks the array byte by byte (tracking strings and brackets only)
//! and hands over one conversation at a time, parsed straight from the input as the scanner walks
//! it (within a memory allowance, see `values`; ChatGPT's into a compact form, see `chatgpt::read`),
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

use super::values::{self, Refused};
use super::{Format, MAX_CONVERSATION_BYTES, chatgpt, digest};
use crate::error::{Error, Result};
use serde_json::Value;
use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind as IoKind, Read};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

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
    pub value: std::result::Result<Body, String>,
}

/// What was read of one conversation.
pub enum Body {
    /// Its JSON as a value (the formats converted from values).
    Value(Value),
    /// Read and converted as it was parsed (ChatGPT exports: see `chatgpt::read`).
    Read(Box<Converted>),
}

/// A conversation converted while it was parsed, with what the import needs of its JSON.
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
    /// Check the whole input's JSON without building any value (each element's value is `null`):
    /// the first pass of an import, which refuses a broken file before anything is written.
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
        // One request: parsed whole, within the size limit.
        let mut bytes = Vec::new();
        file.take(MAX_CONVERSATION_BYTES + 1)
            .read_to_end(&mut bytes)
            .map_err(|e| {
                Error::invalid(format!(
                    "invalid argument --input: cannot read {shown}: {e}"
                ))
            })?;
        if bytes.len() as u64 > MAX_CONVERSATION_BYTES {
            return Err(Error::invalid(format!(
                "invalid argument --input: {shown} is over {} MiB, the limit for one conversation; nothing was imported",
                MAX_CONVERSATION_BYTES >> 20
            )));
        }
        let value = parse(&bytes, &shown, None)?;
        each(Element {
            file: file_name(&shown),
            index: 0,
            value: Ok(Body::Value(value)),
        })?;
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

fn read_zip(
    format: Format,
    file: File,
    shown: &str,
    limits: Limits,
    progress: &mut Progress,
    each: &mut dyn FnMut(Element) -> Result<u64>,
) -> Result<()> {
    let bad = |e: zip::result::ZipError| {
        Error::invalid(format!(
            "invalid argument --input: {shown} cannot be read as a zip archive ({e}); nothing was imported"
        ))
    };
    let mut archive = zip::ZipArchive::new(file).map_err(bad)?;
    let mut entries: Vec<(String, usize, u64)> = Vec::new();
    // Where each entry's local header starts and how much compressed data follows it.
    let mut spans: Vec<(u64, u64, String)> = Vec::new();
    for i in 0..archive.len() {
        let entry = archive.by_index_raw(i).map_err(bad)?;
        let name = entry.name().map_err(bad)?.into_owned();
        spans.push((entry.header_start(), entry.compressed_size(), name.clone()));
        let base = name.rsplit('/').next().unwrap_or_default();
        if !entry.is_dir() && !name.starts_with("__MACOSX/") && is_conversations_file(base) {
            entries.push((name, i, entry.size()));
        }
    }
    entries.sort();
    refuse_overlaps(&mut spans, shown)?;
    if entries.is_empty() {
        return Err(Error::invalid(format!(
            "invalid argument --input: the zip archive {shown} holds no conversations.json (nor conversations-000.json, ...); is it a ChatGPT or Claude.ai data export?"
        )));
    }
    progress.total = entries.iter().map(|e| e.2).sum();
    let mut total = 0u64;
    for (name, i, _) in entries {
        let entry = archive.by_index(i).map_err(bad)?;
        let label = format!("{shown}:{name}");
        let capped = Capped {
            ratio_limit: entry
                .compressed_size()
                .max(1)
                .saturating_mul(limits.zip_ratio),
            inner: entry,
            read: 0,
            total: &mut total,
            limits,
        };
        scan(
            format,
            BufReader::with_capacity(1 << 16, capped),
            &label,
            progress,
            each,
        )?;
    }
    Ok(())
}

/// Refuse entries whose data overlap: a zip bomb points many entries at one compressed stream. Each
/// entry's data follows its local header (30 bytes and more) before the next entry starts.
fn refuse_overlaps(spans: &mut [(u64, u64, String)], shown: &str) -> Result<()> {
    spans.sort();
    for pair in spans.windows(2) {
        let ((start, size, first), (next, _, second)) = (&pair[0], &pair[1]);
        if start.saturating_add(30).saturating_add(*size) > *next {
            return Err(Error::invalid(format!(
                "invalid argument --input: {shown} is not a well-formed zip archive: its entries {first:?} and {second:?} overlap (they share compressed data, as zip bombs do); nothing was imported"
            )));
        }
    }
    Ok(())
}

/// A zip entry read within [`Limits`]: reading fails once the entry decompresses to more than its
/// ratio allows, or the archive's conversations files to more than their total.
struct Capped<'a, R> {
    inner: R,
    read: u64,
    ratio_limit: u64,
    total: &'a mut u64,
    limits: Limits,
}

impl<R: Read> Read for Capped<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        *self.total += n as u64;
        if self.read > self.ratio_limit {
            return Err(std::io::Error::other(format!(
                "an entry decompresses to more than {} times its compressed size, as zip bombs do; if the archive is genuine, raise the limit with --max-zip-ratio",
                self.limits.zip_ratio
            )));
        }
        if *self.total > self.limits.unzipped_bytes {
            return Err(std::io::Error::other(format!(
                "its conversations files decompress to more than {} MiB in all; if the archive is genuine, raise the limit with --max-unzipped-mib",
                self.limits.unzipped_bytes >> 20
            )));
        }
        Ok(n)
    }
}

/// Whether `bytes` is JSON by its grammar, whatever its strings hold: serde_json refuses an escape
/// such as a lone `\ud800` when it builds a string, not when it only checks the syntax.
fn is_json_syntax(bytes: &[u8]) -> bool {
    // Bytes that are not UTF-8 are a file in another encoding: refused whole, not skipped.
    std::str::from_utf8(bytes).is_ok() && syntax_error(bytes).is_none()
}

/// The grammar error of JSON text, found without building anything.
fn syntax_error(bytes: &[u8]) -> Option<serde_json::Error> {
    use serde::Deserialize;
    let mut de = serde_json::Deserializer::from_slice(bytes);
    de.disable_recursion_limit();
    serde::de::IgnoredAny::deserialize(&mut de)
        .and_then(|_| de.end())
        .err()
}

/// The deepest nesting of brackets in JSON text (outside strings).
fn depth_of(bytes: &[u8]) -> usize {
    let (mut depth, mut deepest, mut in_string, mut escaped) = (0usize, 0usize, false, false);
    for &b in bytes {
        if in_string {
            match b {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

/// Parse one conversation's (or one file's) JSON text.
fn parse(bytes: &[u8], shown: &str, at: Option<(usize, u64)>) -> Result<Value> {
    if depth_of(bytes) > MAX_DEPTH {
        return Err(Error::invalid(format!(
            "invalid argument --input: {shown} nests more than {MAX_DEPTH} levels deep; nothing was imported"
        )));
    }
    let place = match at {
        Some((index, offset)) => {
            format!(" in conversation {index} (starting at byte {offset})")
        }
        None => String::new(),
    };
    let e = match values::parse(bytes) {
        Ok(value) => return Ok(value),
        Err(Refused::Json(e)) => e,
        // Building stopped before the end: the grammar decides what is said.
        Err(Refused::TooLarge(reason)) => match syntax_error(bytes) {
            Some(e) => e,
            None => {
                return Err(Error::invalid(format!(
                    "invalid argument --input: {shown} cannot be imported{place}: {reason}; nothing was imported"
                )));
            }
        },
    };
    let what = if e.is_eof() {
        "is truncated"
    } else {
        "is not valid JSON"
    };
    Err(Error::invalid(format!(
        "invalid argument --input: {shown} {what}{place}: {e}; nothing was imported"
    )))
}

/// The array scanner over one file: hands each element's JSON text to `parse`, then to `each`.
fn scan<R: BufRead>(
    format: Format,
    mut reader: R,
    shown: &str,
    progress: &mut Progress,
    each: &mut dyn FnMut(Element) -> Result<u64>,
) -> Result<()> {
    let name = file_name(shown);
    let mut s = Scanner {
        offset: 0,
        shown,
        limit: MAX_CONVERSATION_BYTES,
    };
    #[cfg(test)]
    if let Some(limit) = TEST_LIMIT.with(std::cell::Cell::get) {
        s.limit = limit;
    }
    let invalid = |what: String| {
        Error::invalid(format!(
            "invalid argument --input: {shown} {what}; nothing was imported"
        ))
    };
    s.skip_bom(&mut reader)?;
    let single = match s.peek_token(&mut reader)? {
        None => return Err(invalid("is empty (no JSON)".into())),
        Some(b'[') => {
            s.advance(&mut reader, 1);
            false
        }
        // One conversation on its own (a file holding one exported conversation).
        Some(b'{') => true,
        Some(b) => {
            return Err(invalid(format!(
                "is not a JSON array of conversations (it starts with {:?})",
                b as char
            )));
        }
    };
    let mut index = 0usize;
    let mut buf: Vec<u8> = Vec::new();
    loop {
        if !single {
            match s.peek_token(&mut reader)? {
                None => return Err(invalid("is truncated: it ends before the closing ]".into())),
                Some(b']') if index == 0 => {
                    s.advance(&mut reader, 1);
                    break;
                }
                Some(b']') => {
                    return Err(invalid(format!(
                        "is not valid JSON: a comma before the closing ] at byte {}",
                        s.offset
                    )));
                }
                _ => {}
            }
        }
        let start = s.offset;
        let value = if progress.pass == Pass::Check {
            buf.clear();
            let size = s.element(&mut reader, &mut buf, index)?;
            if size <= s.limit && !is_json_syntax(&buf) {
                parse(&buf, shown, Some((index, start)))?;
            }
            // A large text's memory is given back before the next conversation.
            if buf.capacity() > 1 << 20 {
                buf = Vec::new();
            }
            Ok(Body::Value(Value::Null))
        } else {
            s.read_element(format, &mut reader, index)?
        };
        let messages = each(Element {
            file: name.clone(),
            index,
            value,
        })?;
        progress.advance(s.offset, messages);
        index += 1;
        if single {
            break;
        }
        match s.peek_token(&mut reader)? {
            Some(b',') => s.advance(&mut reader, 1),
            Some(b']') => {
                s.advance(&mut reader, 1);
                break;
            }
            None => return Err(invalid("is truncated: it ends before the closing ]".into())),
            Some(b) => {
                return Err(invalid(format!(
                    "is not valid JSON: expected , or ] after conversation {} at byte {}, found {:?}",
                    index - 1,
                    s.offset,
                    b as char
                )));
            }
        }
    }
    if let Some(b) = s.peek_token(&mut reader)? {
        return Err(invalid(format!(
            "has data after the end of its JSON at byte {} ({:?})",
            s.offset, b as char
        )));
    }
    progress.file_done(s.offset);
    Ok(())
}

struct Scanner<'a> {
    /// Bytes consumed so far.
    offset: u64,
    shown: &'a str,
    /// The largest element kept (see [`MAX_CONVERSATION_BYTES`]).
    limit: u64,
}

#[cfg(test)]
thread_local! {
    /// A smaller conversation limit for unit tests.
    static TEST_LIMIT: std::cell::Cell<Option<u64>> = const { std::cell::Cell::new(None) };
}

fn io_error(shown: &str, e: std::io::Error) -> Error {
    Error::invalid(format!(
        "invalid argument --input: cannot read {shown}: {e}; nothing was imported"
    ))
}

impl Scanner<'_> {
    fn advance<R: BufRead>(&mut self, reader: &mut R, n: usize) {
        reader.consume(n);
        self.offset += n as u64;
    }

    fn fill<'r, R: BufRead>(&self, reader: &'r mut R) -> Result<&'r [u8]> {
        loop {
            match reader.fill_buf() {
                Ok(_) => break,
                Err(e) if e.kind() == IoKind::Interrupted => {}
                Err(e) => return Err(io_error(self.shown, e)),
            }
        }
        // Buffered now: this call returns the same bytes without reading.
        reader.fill_buf().map_err(|e| io_error(self.shown, e))
    }

    fn skip_bom<R: BufRead>(&mut self, reader: &mut R) -> Result<()> {
        let chunk = self.fill(reader)?;
        if chunk.starts_with(b"\xef\xbb\xbf") {
            self.advance(reader, 3);
        }
        Ok(())
    }

    /// The next byte that is not JSON whitespace (not consumed), or `None` at the end.
    fn peek_token<R: BufRead>(&mut self, reader: &mut R) -> Result<Option<u8>> {
        loop {
            let chunk = self.fill(reader)?;
            if chunk.is_empty() {
                return Ok(None);
            }
            match chunk
                .iter()
                .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            {
                Some(i) => {
                    let b = chunk[i];
                    self.advance(reader, i);
                    return Ok(Some(b));
                }
                None => {
                    let n = chunk.len();
                    self.advance(reader, n);
                }
            }
        }
    }

    /// Consume one JSON value (the reader is at its first byte), copying it into `buf` while it is
    /// within the conversation limit; returns its length in bytes.
    fn element<R: BufRead>(
        &mut self,
        reader: &mut R,
        buf: &mut Vec<u8>,
        index: usize,
    ) -> Result<u64> {
        let mut walk = Walk::default();
        loop {
            let offset = self.offset;
            let chunk = self.fill(reader)?;
            let (i, done) = walk.step(chunk, offset, index, self.shown)?;
            if walk.size <= self.limit {
                // By a quarter: doubling would let a conversation's text take twice its size.
                if buf.capacity() - buf.len() < i {
                    buf.reserve_exact(i.max(buf.len() / 4));
                }
                buf.extend_from_slice(&chunk[..i]);
            } else if !buf.is_empty() {
                *buf = Vec::new();
            }
            self.advance(reader, i);
            if done {
                return Ok(walk.size);
            }
        }
    }

    /// Parse one conversation of an export straight from the input (the reader is at its first
    /// byte), its text never held whole: into its compact form (ChatGPT, see `chatgpt::read`) or a
    /// value, within an allowance of [`values::OVERHEAD_BYTES`] plus the bytes read so far. What
    /// cannot be read (over the size limit or the allowance, a string that is not Unicode) is
    /// consumed to its end and its reason returned. The input's grammar was checked by a
    /// [`Pass::Check`] before, so the parser's other errors are not expected here.
    fn read_element<R: BufRead>(
        &mut self,
        format: Format,
        reader: &mut R,
        index: usize,
    ) -> Result<std::result::Result<Body, String>> {
        let budget = values::Budget::new(values::OVERHEAD_BYTES);
        let mut element = ElementReader {
            scanner: self,
            reader,
            walk: Walk::default(),
            index,
            budget: &budget,
            done: false,
            over: false,
            error: None,
        };
        let read = {
            let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(
                1 << 13,
                &mut element,
            ));
            de.disable_recursion_limit();
            let read = if format == Format::ChatGpt {
                let sink = digest::Sink::new(digest::start(format));
                chatgpt::read(&mut de, &sink, &budget).map(|read| {
                    Body::Read(Box::new(Converted {
                        source_id: read.source_id,
                        title: read.title,
                        conversation: read.conversation,
                        hasher: sink.into_inner(),
                    }))
                })
            } else {
                use serde::de::DeserializeSeed;
                values::Seed(&budget).deserialize(&mut de).map(Body::Value)
            };
            read.and_then(|body| de.end().map(|()| body))
        };
        let e = match read {
            Ok(body) => return Ok(Ok(body)),
            Err(e) => e,
        };
        if let Some(error) = element.error.take() {
            return Err(error);
        }
        let size = element.drain()?;
        Ok(Err(if element.over {
            format!(
                "its JSON is {size} bytes, over the limit of {} MiB for one conversation",
                element.scanner.limit >> 20
            )
        } else if budget.is_exhausted() {
            budget.streamed_reason()
        } else {
            format!("it holds a string that is not valid Unicode text ({e})")
        }))
    }
}

/// Where the scanner is inside one element: its open brackets, whether in a string, its size.
#[derive(Default)]
struct Walk {
    stack: Vec<u8>,
    in_string: bool,
    escaped: bool,
    started: bool,
    /// Bytes of the element so far.
    size: u64,
}

impl Walk {
    /// How many bytes of `chunk` (read at `offset`) belong to the element, and whether it ends
    /// there; an error refuses the file (brackets that do not match, too deep, truncated).
    fn step(
        &mut self,
        chunk: &[u8],
        offset: u64,
        index: usize,
        shown: &str,
    ) -> Result<(usize, bool)> {
        let invalid = |what: String| {
            Error::invalid(format!(
                "invalid argument --input: {shown} {what}; nothing was imported"
            ))
        };
        if chunk.is_empty() {
            return Err(invalid(format!(
                "is truncated: it ends inside conversation {index}"
            )));
        }
        let mut i = 0;
        let mut done = false;
        while i < chunk.len() {
            let b = chunk[i];
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                } else if b == b'\\' {
                    self.escaped = true;
                } else if b == b'"' {
                    self.in_string = false;
                    if self.stack.is_empty() {
                        i += 1;
                        done = true;
                        break;
                    }
                }
                i += 1;
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => {
                    if self.stack.len() >= MAX_DEPTH {
                        return Err(invalid(format!(
                            "nests more than {MAX_DEPTH} levels deep (conversation {index}, byte {})",
                            offset + i as u64
                        )));
                    }
                    self.stack.push(b);
                }
                b'}' | b']' => {
                    let Some(open) = self.stack.pop() else {
                        // The end of a scalar at the top level: the delimiter is not part of it.
                        done = true;
                        break;
                    };
                    if (open == b'{') != (b == b'}') {
                        return Err(invalid(format!(
                            "is not valid JSON: {:?} closes {:?} at byte {}",
                            b as char,
                            open as char,
                            offset + i as u64
                        )));
                    }
                    if self.stack.is_empty() {
                        i += 1;
                        done = true;
                        break;
                    }
                }
                b',' | b' ' | b'\t' | b'\n' | b'\r' if self.stack.is_empty() && self.started => {
                    done = true;
                    break;
                }
                _ => {}
            }
            self.started = true;
            i += 1;
        }
        self.size += i as u64;
        Ok((i, done))
    }
}

/// One element's bytes as the scanner walks them: reading ends where the element ends. A problem
/// the scanner finds (kept in `error`) or the size limit (`over`) stops the reading with an error.
struct ElementReader<'r, 'a, R> {
    scanner: &'r mut Scanner<'a>,
    reader: &'r mut R,
    walk: Walk,
    index: usize,
    /// Grows by the bytes read.
    budget: &'r values::Budget,
    done: bool,
    over: bool,
    error: Option<Error>,
}

impl<R: BufRead> ElementReader<'_, '_, R> {
    /// Consume the rest of the element (still checking its brackets); its size in bytes.
    fn drain(&mut self) -> Result<u64> {
        while !self.done {
            let offset = self.scanner.offset;
            let chunk = self.scanner.fill(self.reader)?;
            let (i, done) = self
                .walk
                .step(chunk, offset, self.index, self.scanner.shown)?;
            self.scanner.advance(self.reader, i);
            self.done = done;
        }
        Ok(self.walk.size)
    }
}

impl<R: BufRead> Read for ElementReader<'_, '_, R> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.done || out.is_empty() || self.error.is_some() || self.over {
            return Ok(0);
        }
        let stop = |this: &mut Self, error: Option<Error>| {
            this.error = error;
            Err(std::io::Error::other("the scanner stopped the element"))
        };
        let offset = self.scanner.offset;
        let chunk = match self.scanner.fill(self.reader) {
            Ok(chunk) => chunk,
            Err(e) => return stop(self, Some(e)),
        };
        let window = &chunk[..chunk.len().min(out.len())];
        let (i, done) = match self
            .walk
            .step(window, offset, self.index, self.scanner.shown)
        {
            Ok(step) => step,
            Err(e) => return stop(self, Some(e)),
        };
        out[..i].copy_from_slice(&window[..i]);
        self.scanner.advance(self.reader, i);
        self.done = done;
        self.budget.grow(i);
        if self.walk.size > self.scanner.limit {
            self.over = true;
            return stop(self, None);
        }
        Ok(i)
    }
}

/// A progress line on standard error, only when it is a terminal: how far through the input, how
/// many conversations and messages so far. Redrawn at most ten times a second, erased at the end.
struct Progress {
    enabled: bool,
    label: String,
    /// Total bytes of the input (of the decompressed files, for a zip).
    total: u64,
    /// Bytes of the files already finished.
    before: u64,
    conversations: u64,
    messages: u64,
    last: Option<Instant>,
    /// Which pass reads the input (a check only needs no values).
    pass: Pass,
}

impl Progress {
    fn new(label: &str) -> Progress {
        use std::io::IsTerminal;
        Progress {
            enabled: std::io::stderr().is_terminal(),
            label: label.to_string(),
            total: 0,
            before: 0,
            conversations: 0,
            messages: 0,
            last: None,
            pass: Pass::Parse,
        }
    }

    fn advance(&mut self, offset: u64, messages: u64) {
        self.conversations += 1;
        self.messages += messages;
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        if self
            .last
            .is_some_and(|t| now.duration_since(t) < Duration::from_millis(100))
        {
            return;
        }
        self.last = Some(now);
        self.draw(self.before + offset);
    }

    fn file_done(&mut self, size: u64) {
        self.before += size;
    }

    fn draw(&self, at: u64) {
        use std::io::Write;
        let percent = (at.min(self.total) * 100)
            .checked_div(self.total)
            .unwrap_or(100);
        let label = crate::terminal::escape_line(&self.label);
        let _ = write!(
            std::io::stderr().lock(),
            "\r\x1b[2Kimporting {label}: {percent}% · {} conversations · {} messages",
            self.conversations,
            self.messages
        );
    }

    fn finish(&mut self) {
        if self.enabled && self.last.is_some() {
            use std::io::Write;
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The elements of `text` as an import reads them: checked whole first, then parsed.
    fn elements(text: &str) -> Result<Vec<std::result::Result<Value, String>>> {
        let mut out = Vec::new();
        let mut progress = Progress::new("t");
        progress.enabled = false;
        progress.pass = Pass::Check;
        scan(
            Format::Claude,
            text.as_bytes(),
            "t.json",
            &mut progress,
            &mut |_| Ok(0),
        )?;
        progress.pass = Pass::Parse;
        scan(
            Format::Claude,
            text.as_bytes(),
            "t.json",
            &mut progress,
            &mut |e| {
                out.push(e.value.map(|body| match body {
                    Body::Value(value) => value,
                    Body::Read(_) => panic!("a claude conversation read as ChatGPT's"),
                }));
                Ok(0)
            },
        )?;
        Ok(out)
    }

    #[test]
    fn scans_arrays_of_any_values() {
        let got = elements(" \u{feff}").unwrap_err();
        assert!(
            got.message.contains("is not a JSON array"),
            "{}",
            got.message
        );
        assert_eq!(elements("[]").unwrap().len(), 0);
        let values =
            elements("\u{feff}[ {\"a\": \"]}\\\"\"} , [1,{}], \"x,]\", 12 ,null,true]\n").unwrap();
        let values: Vec<Value> = values.into_iter().map(|v| v.unwrap()).collect();
        assert_eq!(
            values,
            vec![
                serde_json::json!({"a": "]}\""}),
                serde_json::json!([1, {}]),
                serde_json::json!("x,]"),
                serde_json::json!(12),
                Value::Null,
                serde_json::json!(true)
            ]
        );
        assert_eq!(elements("{\"one\": 1}").unwrap().len(), 1);
    }

    #[test]
    fn refuses_what_is_not_json() {
        for (text, expected) in [
            ("", "is empty"),
            ("[{\"a\":1}", "is truncated"),
            ("[{\"a\":1", "is truncated"),
            ("[{\"a\":1},]", "a comma before the closing ]"),
            ("[{\"a\":1] ]", "closes"),
            ("[{\"a\":1} {}]", "expected , or ]"),
            ("[{\"a\":1}] x", "has data after"),
            ("[{\"a\":tru}]", "is not valid JSON in conversation 0"),
            ("42", "is not a JSON array"),
        ] {
            let err = elements(text).unwrap_err();
            assert!(err.message.contains(expected), "{text}: {}", err.message);
        }
        let deep = format!(
            "[{}{}]",
            "[".repeat(MAX_DEPTH + 1),
            "]".repeat(MAX_DEPTH + 1)
        );
        assert!(elements(&deep).unwrap_err().message.contains("levels deep"));
        // Grammatical JSON with a string serde_json does not build: only that element is skipped.
        let got = elements("[{\"a\":\"\\ud800\"}, 1]").unwrap();
        assert_eq!(
            got,
            vec![
                Err("it holds a string that is not valid Unicode text (unexpected end of hex escape at line 1 column 13)".into()),
                Ok(serde_json::json!(1))
            ]
        );
        assert_eq!(depth_of(b"[{\"a\": \"[[[\"}, [[]]]"), 3);
    }

    #[test]
    fn an_oversized_conversation_is_skipped_unparsed() {
        TEST_LIMIT.with(|l| l.set(Some(16)));
        let got =
            elements("[{\"a\": 1}, {\"long\": \"0123456789abcdef\", \"x\": [1, 2]}, {\"b\": 2}]");
        TEST_LIMIT.with(|l| l.set(None));
        let got = got.unwrap();
        assert_eq!(got[0], Ok(serde_json::json!({"a": 1})));
        assert_eq!(
            got[1],
            Err("its JSON is 41 bytes, over the limit of 0 MiB for one conversation".into())
        );
        assert_eq!(got[2], Ok(serde_json::json!({"b": 2})));
        // Still checked: a bracket that does not match in a skipped conversation refuses the file.
        TEST_LIMIT.with(|l| l.set(Some(4)));
        let err = elements("[{\"long\": [1, 2}]").unwrap_err();
        TEST_LIMIT.with(|l| l.set(None));
        assert!(err.message.contains("closes"), "{}", err.message);
    }

    /// A ChatGPT conversation read into its compact form digests as its value did (what earlier
    /// imports recorded), fields the conversion skips included.
    #[test]
    fn a_compact_chatgpt_conversation_digests_as_its_value() {
        use sha2::Digest;
        let text = r#"[{"title": "t\u00e9", "extra": {"a": [1, 2.5, -3, null, true, "\n"]}, "id": "c1",
            "mapping": {"r": {"id": "r", "message": null, "parent": null, "children": ["m", 7]},
            "m": {"parent": "r", "children": [], "message": {"id": "m", "author": {"role": "user"},
            "content": {"content_type": "text", "parts": ["hi"]}, "metadata": {"x": 1e3}}}},
            "current_node": "m", "create_time": 1700000000.5}]"#;
        let mut got = Vec::new();
        let mut progress = Progress::new("t");
        progress.enabled = false;
        scan(
            Format::ChatGpt,
            text.as_bytes(),
            "t.json",
            &mut progress,
            &mut |e| {
                got.push(e.value);
                Ok(0)
            },
        )
        .unwrap();
        let Some(Ok(Body::Read(read))) = got.pop() else {
            panic!("not read into its compact form")
        };
        let read = *read;
        let value: Value = serde_json::from_str::<Vec<Value>>(text).unwrap().remove(0);
        let mut expected = digest::start(Format::ChatGpt);
        expected.update(value.to_string().as_bytes());
        assert_eq!(read.hasher.finalize(), expected.finalize());
        assert_eq!(read.conversation, Format::ChatGpt.convert(&value));
        assert_eq!(
            (read.source_id, read.title),
            (Some("c1".into()), Some("té".into()))
        );
        assert_eq!(read.conversation.unwrap().messages.len(), 1);
    }

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
