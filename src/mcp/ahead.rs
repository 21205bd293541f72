//! Standard input read ahead without blocking, so that a `notifications/cancelled` sent while a
//! request runs is seen before that request's answer is written (MCP: a cancelled request gets no
//! response). The server stays synchronous: between steps of a request it takes whatever bytes have
//! already arrived, never waiting for more.

use serde_json::Value;
use std::io::{self, BufRead, Read};

/// The most bytes read ahead of the line being handled: two of the largest messages. Past it
/// nothing more is taken until lines are consumed (a cancel that far behind is not seen).
const MAX_AHEAD: usize = 16 << 20;

/// How much one read asks for.
const CHUNK: usize = 1 << 16;

/// A buffered reader whose buffer can also grow while the server works (`read_ahead`).
pub struct Ahead<R> {
    inner: R,
    buf: Vec<u8>,
    pos: usize,
    /// Whether a read of `inner` would return at once (data or end of input waiting).
    ready: fn() -> bool,
    /// End of input was read ahead: later reads return it.
    ended: bool,
}

impl<R: Read> Ahead<R> {
    /// `ready` says whether `inner` can be read without blocking; `|| false` reads nothing ahead.
    pub fn new(inner: R, ready: fn() -> bool) -> Self {
        Ahead {
            inner,
            buf: Vec::with_capacity(CHUNK),
            pos: 0,
            ready,
            ended: false,
        }
    }

    /// The bytes read and not yet consumed.
    pub fn buffered(&self) -> &[u8] {
        &self.buf[self.pos..]
    }

    /// Take the bytes that have arrived, without waiting for any.
    fn read_ahead(&mut self) {
        while !self.ended && self.buf.len() - self.pos < MAX_AHEAD && (self.ready)() {
            if self.pos > 0 && self.pos == self.buf.len() {
                self.buf.clear();
                self.pos = 0;
            }
            let start = self.buf.len();
            self.buf.resize(start + CHUNK, 0);
            match self.inner.read(&mut self.buf[start..]) {
                Ok(0) => {
                    self.buf.truncate(start);
                    self.ended = true;
                }
                Ok(n) => self.buf.truncate(start + n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => self.buf.truncate(start),
                // The error comes back from the next ordinary read.
                Err(_) => {
                    self.buf.truncate(start);
                    return;
                }
            }
        }
    }

    /// Whether a complete line that has arrived is a `notifications/cancelled` of the request `id`.
    pub fn cancelled(&mut self, id: &Value) -> bool {
        self.read_ahead();
        let pending = &self.buf[self.pos..];
        let complete = pending
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(&pending[..0], |end| &pending[..end]);
        complete.split(|&b| b == b'\n').any(|line| {
            // Only lines that name the method are parsed.
            contains(line, b"notifications/cancelled")
                && serde_json::from_slice::<Value>(line).is_ok_and(|message| {
                    message.get("method").and_then(Value::as_str) == Some("notifications/cancelled")
                        && message.get("id").is_none()
                        && message.pointer("/params/requestId") == Some(id)
                })
        })
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

impl<R: Read> Read for Ahead<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read> BufRead for Ahead<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos == self.buf.len() && !self.ended {
            self.buf.clear();
            self.pos = 0;
            self.buf.resize(CHUNK, 0);
            match self.inner.read(&mut self.buf) {
                Ok(n) => self.buf.truncate(n),
                Err(e) => {
                    self.buf.clear();
                    return Err(e);
                }
            }
        }
        Ok(&self.buf[self.pos..])
    }

    fn consume(&mut self, amount: usize) {
        self.pos = (self.pos + amount).min(self.buf.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn always() -> bool {
        true
    }

    #[test]
    fn sees_a_cancel_that_has_arrived_and_keeps_every_byte() {
        let input = b"{\"id\":1}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":7}}\n{\"id\":2}\n";
        let mut ahead = Ahead::new(&input[..], always);
        let mut first = String::new();
        ahead.read_line(&mut first).unwrap();
        assert!(ahead.cancelled(&json!(7)));
        assert!(!ahead.cancelled(&json!("7")));
        assert!(!ahead.cancelled(&json!(2)));
        let mut rest = String::new();
        ahead.read_to_string(&mut rest).unwrap();
        assert_eq!(first.len() + rest.len(), input.len());
        // A line not complete yet is not read as a cancel.
        let partial = b"{\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":7}}";
        assert!(!Ahead::new(&partial[..], always).cancelled(&json!(7)));
        // Without `ready`, nothing is read ahead.
        assert!(!Ahead::new(&input[..], || false).cancelled(&json!(7)));
    }
}
