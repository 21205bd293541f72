//! The array scanner: one conversation's JSON at a time out of an export's array, and the parsing
//! of one conversation's (or one request file's) JSON text.

use super::super::values::{self, Refused};
use super::super::{Format, MAX_CONVERSATION_BYTES, chatgpt, claude, digest};
use super::progress::Progress;
use super::{Body, Converted, Element, MAX_DEPTH, Pass, file_name};
use crate::error::{Error, Result};
use serde_json::Value;
use std::io::{BufRead, Read};

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
pub(super) fn parse(bytes: &[u8], shown: &str, at: Option<(usize, u64)>) -> Result<Value> {
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
    /// byte), its text never held whole: into its compact form (ChatGPT, Claude.ai: see
    /// `chatgpt::read`, `claude::read`) or a
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
            let sink = digest::Sink::new(digest::start(format));
            let compact = |read: chatgpt::Read, sink: digest::Sink| {
                Body::Read(Box::new(Converted {
                    source_id: read.source_id,
                    title: read.title,
                    conversation: read.conversation,
                    hasher: sink.into_inner(),
                }))
            };
            let read = match format {
                Format::ChatGpt => {
                    chatgpt::read(&mut de, &sink, &budget).map(|read| compact(read, sink))
                }
                Format::Claude => {
                    claude::read(&mut de, &sink, &budget).map(|read| compact(read, sink))
                }
                _ => {
                    use serde::de::DeserializeSeed;
                    values::Seed(&budget).deserialize(&mut de).map(Body::Value)
                }
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
                out.push(e.value.map(|body| match body {
                    Body::Value(value) => value,
                    Body::Read(_) => panic!("an Open WebUI conversation read into a compact form"),
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

    /// A ChatGPT or Claude.ai conversation read into its compact form digests as its value did
    /// (what earlier imports recorded), fields the conversion skips included.
    #[test]
    fn a_compact_conversation_digests_as_its_value() {
        use sha2::Digest;
        let chatgpt = r#"[{"title": "t\u00e9", "extra": {"a": [1, 2.5, -3, null, true, "\n"]}, "id": "c1",
            "mapping": {"r": {"id": "r", "message": null, "parent": null, "children": ["m", 7]},
            "m": {"parent": "r", "children": [], "message": {"id": "m", "author": {"role": "user"},
            "content": {"content_type": "text", "parts": ["hi"]}, "metadata": {"x": 1e3}}}},
            "current_node": "m", "create_time": 1700000000.5}]"#;
        let claude = r#"[{"name": "t\u00e9", "extra": {"a": [1, 2.5, -3, null, true, "\n"]},
            "uuid": "c1", "created_at": "2026-01-05T11:00:00Z", "chat_messages": [
            {"uuid": "m", "sender": "human", "text": "hi", "content": [], "x": 1e3},
            {"uuid": "n", "sender": "assistant", "text": "", "content": [{"type": "text", "text": "yo"}]}]}]"#;
        for (format, text, messages) in [(Format::ChatGpt, chatgpt, 1), (Format::Claude, claude, 2)]
        {
            let mut got = Vec::new();
            let mut progress = Progress::new("t");
            progress.enabled = false;
            scan(format, text.as_bytes(), "t.json", &mut progress, &mut |e| {
                got.push(e.value);
                Ok(0)
            })
            .unwrap();
            let Some(Ok(Body::Read(read))) = got.pop() else {
                panic!("not read into its compact form")
            };
            let read = *read;
            let value: Value = serde_json::from_str::<Vec<Value>>(text).unwrap().remove(0);
            let mut expected = digest::start(format);
            expected.update(value.to_string().as_bytes());
            assert_eq!(read.hasher.finalize(), expected.finalize());
            assert_eq!(read.conversation, format.convert(&value));
            assert_eq!(
                (read.source_id, read.title),
                (Some("c1".into()), Some("té".into()))
            );
            assert_eq!(read.conversation.unwrap().messages.len(), messages);
        }
    }
}
