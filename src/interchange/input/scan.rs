//! The array scanner: one conversation's JSON at a time out of an export's array (or a request
//! file's one value), checked or read as it streams by, never held whole.

use super::super::values;
use super::super::{Format, MAX_CONVERSATION_BYTES, digest};
use super::progress::Progress;
use super::{Converted, Element, MAX_DEPTH, Pass, file_name};
use crate::error::{Error, Result};
use std::io::{BufRead, Read};

/// Why an element's JSON text is refused: truncated or not valid JSON, with where it is.
fn not_json(shown: &str, place: &str, e: &serde_json::Error) -> Error {
    let what = if e.is_eof() {
        "is truncated"
    } else {
        "is not valid JSON"
    };
    Error::invalid(format!(
        "invalid argument --input: {shown} {what}{place}: {e}; nothing was imported"
    ))
}

/// One request file (OpenAI, Anthropic): one JSON value of any kind, read as one conversation
/// the way an export's element is (`len` is its size). What cannot be read refuses the file.
pub(super) fn scan_request<R: BufRead>(
    format: Format,
    mut reader: R,
    shown: &str,
    len: u64,
    progress: &mut Progress,
    each: &mut dyn FnMut(Element) -> Result<u64>,
) -> Result<()> {
    let mut s = Scanner {
        offset: 0,
        shown,
        limit: MAX_CONVERSATION_BYTES,
        whole: true,
    };
    s.skip_bom(&mut reader)?;
    if s.peek_token(&mut reader)?.is_none() {
        return Err(Error::invalid(format!(
            "invalid argument --input: {shown} is empty (no JSON); nothing was imported"
        )));
    }
    let read = if progress.pass == Pass::Check {
        s.check_element(&mut reader, 0)?;
        None
    } else {
        Some(s.read_element(format, &mut reader, 0, Some(len))?)
    };
    s.no_data_after(&mut reader)?;
    match read {
        None => Ok(()),
        Some(Err(reason)) => Err(Error::invalid(format!(
            "invalid argument --input: {shown} cannot be imported: {reason}; nothing was imported"
        ))),
        Some(Ok(read)) => {
            let messages = each(Element {
                file: file_name(shown),
                index: 0,
                value: Ok(read),
            })?;
            progress.advance(s.offset, messages);
            progress.file_done(s.offset);
            Ok(())
        }
    }
}

/// The array scanner over one file: checks each element (a [`Pass::Check`]) or reads it into its
/// compact form and hands it to `each`.
pub(super) fn scan<R: BufRead>(
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
        whole: false,
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
        if progress.pass == Pass::Check {
            s.check_element(&mut reader, index)?;
            progress.advance(s.offset, 0);
        } else {
            let value = s.read_element(format, &mut reader, index, None)?;
            let messages = each(Element {
                file: name.clone(),
                index,
                value,
            })?;
            progress.advance(s.offset, messages);
        }
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
    s.no_data_after(&mut reader)?;
    progress.file_done(s.offset);
    Ok(())
}

struct Scanner<'a> {
    /// Bytes consumed so far.
    offset: u64,
    shown: &'a str,
    /// The largest element kept (see [`MAX_CONVERSATION_BYTES`]).
    limit: u64,
    /// The file is one conversation (a request): its errors do not name a conversation's place.
    whole: bool,
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
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
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

    /// Refuse data after the end of the file's JSON.
    fn no_data_after<R: BufRead>(&mut self, reader: &mut R) -> Result<()> {
        match self.peek_token(reader)? {
            None => Ok(()),
            Some(b) => Err(Error::invalid(format!(
                "invalid argument --input: {} has data after the end of its JSON at byte {} ({:?}); nothing was imported",
                self.shown, self.offset, b as char
            ))),
        }
    }

    /// Check one conversation's JSON (the reader is at its first byte) as it streams by, keeping
    /// none of it: its brackets (the scanner), its grammar (serde_json, building nothing) and that
    /// it is UTF-8 text. A conversation over the size limit has only its brackets checked (it is
    /// skipped when it is read). A string that is not Unicode (a lone `\ud800`) is grammatical:
    /// only its conversation is skipped, when it is read.
    fn check_element<R: BufRead>(&mut self, reader: &mut R, index: usize) -> Result<()> {
        let start = self.offset;
        let mut element = ElementReader::new(self, reader, index, None);
        element.utf8 = Some(Utf8::default());
        let grammar = {
            use serde::Deserialize;
            let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(
                1 << 13,
                &mut element,
            ));
            de.disable_recursion_limit();
            serde::de::IgnoredAny::deserialize(&mut de)
                .and_then(|_| de.end())
                .err()
        };
        if let Some(error) = element.error.take() {
            return Err(error);
        }
        // The brackets of the whole element first: what they say is said wherever it is.
        element.drain()?;
        if element.over {
            return Ok(());
        }
        let place = if element.scanner.whole {
            String::new()
        } else {
            format!(" in conversation {index} (starting at byte {start})")
        };
        let shown = element.scanner.shown;
        if let Some((line, column)) = element.utf8.and_then(|u| u.invalid) {
            return Err(Error::invalid(format!(
                "invalid argument --input: {shown} is not valid JSON{place}: invalid unicode code point at line {line} column {column}; nothing was imported"
            )));
        }
        match grammar {
            Some(e) => Err(not_json(shown, &place, &e)),
            None => Ok(()),
        }
    }

    /// Read one conversation straight from the input (the reader is at its first byte), its
    /// text never held whole, into its compact form (see `interchange::read`), within an
    /// allowance of [`values::OVERHEAD_BYTES`] plus the bytes read so far, or, for a request file
    /// of `len` bytes, of [`values::allowance`] of its size. What cannot be read (over the size
    /// limit or the allowance, a string that is not Unicode) is consumed to its end and its reason
    /// returned. The input's grammar was checked by a [`Pass::Check`] before, so the parser's
    /// other errors are not expected here.
    fn read_element<R: BufRead>(
        &mut self,
        format: Format,
        reader: &mut R,
        index: usize,
        len: Option<u64>,
    ) -> Result<std::result::Result<Box<Converted>, String>> {
        let budget = match len {
            Some(len) => values::Budget::new(values::allowance(len as usize)),
            None => values::Budget::new(values::OVERHEAD_BYTES),
        };
        let grows = len.is_none().then_some(&budget);
        let mut element = ElementReader::new(self, reader, index, grows);
        let read = {
            let mut de = serde_json::Deserializer::from_reader(std::io::BufReader::with_capacity(
                1 << 13,
                &mut element,
            ));
            de.disable_recursion_limit();
            let sink = digest::Sink::new(digest::start(format));
            super::super::read(format, &mut de, &sink, &budget)
                .and_then(|read| de.end().map(|()| read))
                .map(|read| {
                    Box::new(Converted {
                        source_id: read.source_id,
                        title: read.title,
                        conversation: read.conversation,
                        hasher: sink.into_inner(),
                    })
                })
        };
        let e = match read {
            Ok(read) => return Ok(Ok(read)),
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
            match len {
                Some(len) => budget.fixed_reason(len as usize),
                None => budget.streamed_reason(),
            }
        } else {
            format!("it holds a string that is not valid Unicode text ({e})")
        }))
    }
}

/// Checks that bytes streamed by are UTF-8 text, and where the first that is not is, as serde_json
/// says it (line and column from 1, counted in bytes).
#[derive(Default)]
struct Utf8 {
    /// The bytes of a character that a chunk ended inside.
    carry: Vec<u8>,
    line: u64,
    /// Bytes since the last newline.
    column: u64,
    invalid: Option<(u64, u64)>,
}

impl Utf8 {
    fn feed(&mut self, chunk: &[u8]) {
        if self.invalid.is_some() {
            return;
        }
        let mut bytes = std::mem::take(&mut self.carry);
        bytes.extend_from_slice(chunk);
        let (valid, bad) = match std::str::from_utf8(&bytes) {
            Ok(_) => (bytes.len(), None),
            Err(e) => (e.valid_up_to(), e.error_len()),
        };
        for &b in &bytes[..valid] {
            if b == b'\n' {
                self.line += 1;
                self.column = 0;
            } else {
                self.column += 1;
            }
        }
        match bad {
            Some(_) => self.invalid = Some((self.line + 1, self.column + 1)),
            // A character that goes on in the next chunk (or a truncated one at the end, which
            // the grammar refuses).
            None => self.carry = bytes[valid..].to_vec(),
        }
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
    /// Grows by the bytes read, when there is one.
    budget: Option<&'r values::Budget>,
    /// Checks the bytes read (the check pass).
    utf8: Option<Utf8>,
    done: bool,
    over: bool,
    error: Option<Error>,
}

impl<'r, 'a, R: BufRead> ElementReader<'r, 'a, R> {
    fn new(
        scanner: &'r mut Scanner<'a>,
        reader: &'r mut R,
        index: usize,
        budget: Option<&'r values::Budget>,
    ) -> Self {
        ElementReader {
            scanner,
            reader,
            walk: Walk::default(),
            index,
            budget,
            utf8: None,
            done: false,
            over: false,
            error: None,
        }
    }

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
        if let Some(utf8) = &mut self.utf8 {
            utf8.feed(&window[..i]);
        }
        self.scanner.advance(self.reader, i);
        self.done = done;
        if let Some(budget) = self.budget {
            budget.grow(i);
        }
        if self.walk.size > self.scanner.limit {
            self.over = true;
            return stop(self, None);
        }
        Ok(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use sha2::Digest;

    /// The digest an import records of `value`, an element of an Open WebUI export.
    fn digest_of(value: Value) -> Vec<u8> {
        let mut expected = digest::start(Format::OpenWebUi);
        expected.update(value.to_string().as_bytes());
        expected.finalize().to_vec()
    }

    /// The elements of `text` as an import reads them (as Open WebUI chats, whatever they are):
    /// checked whole first, then read; the digest of each.
    fn elements(text: &str) -> Result<Vec<std::result::Result<Vec<u8>, String>>> {
        let mut out = Vec::new();
        let mut progress = Progress::new("t");
        progress.enabled = false;
        progress.pass = Pass::Check;
        scan(
            Format::OpenWebUi,
            text.as_bytes(),
            "t.json",
            &mut progress,
            &mut |_| Ok(0),
        )?;
        progress.pass = Pass::Parse;
        scan(
            Format::OpenWebUi,
            text.as_bytes(),
            "t.json",
            &mut progress,
            &mut |e| {
                out.push(e.value.map(|read| read.hasher.finalize().to_vec()));
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
        let values: Vec<Vec<u8>> = values.into_iter().map(|v| v.unwrap()).collect();
        assert_eq!(
            values,
            vec![
                digest_of(serde_json::json!({"a": "]}\""})),
                digest_of(serde_json::json!([1, {}])),
                digest_of(serde_json::json!("x,]")),
                digest_of(serde_json::json!(12)),
                digest_of(Value::Null),
                digest_of(serde_json::json!(true))
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
                Ok(digest_of(serde_json::json!(1)))
            ]
        );
    }

    #[test]
    fn an_oversized_conversation_is_skipped_unparsed() {
        TEST_LIMIT.with(|l| l.set(Some(16)));
        let got =
            elements("[{\"a\": 1}, {\"long\": \"0123456789abcdef\", \"x\": [1, 2]}, {\"b\": 2}]");
        TEST_LIMIT.with(|l| l.set(None));
        let got = got.unwrap();
        assert_eq!(got[0], Ok(digest_of(serde_json::json!({"a": 1}))));
        assert_eq!(
            got[1],
            Err("its JSON is 41 bytes, over the limit of 0 MiB for one conversation".into())
        );
        assert_eq!(got[2], Ok(digest_of(serde_json::json!({"b": 2}))));
        // Still checked: a bracket that does not match in a skipped conversation refuses the file.
        TEST_LIMIT.with(|l| l.set(Some(4)));
        let err = elements("[{\"long\": [1, 2}]").unwrap_err();
        TEST_LIMIT.with(|l| l.set(None));
        assert!(err.message.contains("closes"), "{}", err.message);
    }

    /// A conversation of any export or request format read into its compact form digests as its
    /// value did (what earlier imports recorded), fields the conversion skips included, and
    /// converts as its value does.
    #[test]
    fn a_compact_conversation_digests_as_its_value() {
        let chatgpt = r#"[{"title": "t\u00e9", "extra": {"a": [1, 2.5, -3, null, true, "\n"]}, "id": "c1",
            "mapping": {"r": {"id": "r", "message": null, "parent": null, "children": ["m", 7]},
            "m": {"parent": "r", "children": [], "message": {"id": "m", "author": {"role": "user"},
            "content": {"content_type": "text", "parts": ["hi"]}, "metadata": {"x": 1e3}}}},
            "current_node": "m", "create_time": 1700000000.5}]"#;
        let claude = r#"[{"name": "t\u00e9", "extra": {"a": [1, 2.5, -3, null, true, "\n"]},
            "uuid": "c1", "created_at": "2026-01-05T11:00:00Z", "chat_messages": [
            {"uuid": "m", "sender": "human", "text": "hi", "content": [], "x": 1e3},
            {"uuid": "n", "sender": "assistant", "text": "", "content": [{"type": "text", "text": "yo"}]}]}]"#;
        let openai = r#"[{"model": "m", "messages": [{"role": "system", "content": "be\u00e9"},
            {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image_url",
            "image_url": {"url": "data:image/png;base64,AAAA"}}]}, {"role": "tool", "content": "r",
            "tool_call_id": "t1"}], "tools": [{"x": [1, 2.5, null]}]}]"#;
        let anthropic = r#"[{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "n", "input": {"a": 1}}]},
            {"role": "user", "content": []}], "model": "m", "system": [{"type": "text", "text": "sys"}]}]"#;
        let webui = r#"[{"id": "c1", "title": "t\u00e9", "chat": {"title": "inner", "history":
            {"currentId": "b", "messages": {"a": {"id": "a", "role": "user", "content": "hi",
            "timestamp": 1700000000}, "e": {"role": "user", "content": " "}, "b": {"id": "b",
            "parentId": "a", "role": "assistant", "content": [{"text": "yo"}], "model": "m"}}}},
            "created_at": 1700000000, "x": [1e3]}]"#;
        let librechat = r#"[{"conversationId": "c1", "title": "t\u00e9", "messagesTree": [
            {"children": [{"messageId": "b", "text": "yo", "isCreatedByUser": false,
            "children": []}, {"text": "", "children": [{"text": "deep", "sender": "User"}]}],
            "messageId": "a", "text": "hi", "isCreatedByUser": true, "x": {"y": [null]}}, 7]}]"#;
        for (format, text, messages) in [
            (Format::ChatGpt, chatgpt, 1),
            (Format::Claude, claude, 2),
            (Format::OpenAi, openai, 3),
            (Format::Anthropic, anthropic, 3),
            (Format::OpenWebUi, webui, 2),
            (Format::LibreChat, librechat, 3),
        ] {
            let mut got = Vec::new();
            let mut progress = Progress::new("t");
            progress.enabled = false;
            scan(format, text.as_bytes(), "t.json", &mut progress, &mut |e| {
                got.push(e.value);
                Ok(0)
            })
            .unwrap();
            let Some(Ok(read)) = got.pop() else {
                panic!("not read into its compact form")
            };
            let read = *read;
            let value: Value = serde_json::from_str::<Vec<Value>>(text).unwrap().remove(0);
            let mut expected = digest::start(format);
            expected.update(value.to_string().as_bytes());
            assert_eq!(read.hasher.finalize(), expected.finalize());
            assert_eq!(read.conversation, format.convert(&value));
            if matches!(format, Format::OpenAi | Format::Anthropic) {
                assert_eq!((read.source_id, read.title), (None, None));
            } else {
                assert_eq!(
                    (read.source_id, read.title),
                    (Some("c1".into()), Some("té".into()))
                );
            }
            assert_eq!(
                read.conversation.unwrap().messages.len(),
                messages,
                "{format:?}"
            );
        }
    }
}
