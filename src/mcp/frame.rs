//! Line framing for the stdio transport: one message per line, with a hard size cap.
//!
//! A line longer than the cap is never held in memory whole: the reader keeps at most `limit + 1`
//! bytes of it, then skips the rest chunk by chunk up to the next newline, and reports it as
//! oversize so the server can answer with an error and go on with the next line.

use std::io::{self, BufRead, ErrorKind};

/// What the next line of input was.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// One line without its terminator (`\n`, or `\r\n`).
    Line(Vec<u8>),
    /// A line longer than the limit; `bytes` is its full length (terminator excluded), already skipped.
    Oversize {
        /// Its full length in bytes.
        bytes: u64,
    },
    /// End of input.
    Eof,
}

/// Reads newline-delimited MCP messages from `R`, skipping (and reporting) lines over the size limit.
pub struct FrameReader<R> {
    inner: R,
    limit: usize,
}

impl<R: BufRead> FrameReader<R> {
    /// `limit` is the largest accepted message in bytes, not counting the line terminator.
    pub fn new(inner: R, limit: usize) -> Self {
        FrameReader { inner, limit }
    }

    /// The reader lines come from.
    pub fn inner(&self) -> &R {
        &self.inner
    }

    /// The reader lines come from, to read ahead in it.
    pub fn inner_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// Read the next line. A last line without a newline before end of input still counts as a line.
    pub fn next_frame(&mut self) -> io::Result<Frame> {
        let mut line = Vec::new();
        let mut oversize = false;
        let mut started = false;
        let mut total: u64 = 0;
        let mut last = None;
        loop {
            let buf = match self.inner.fill_buf() {
                Ok(buf) => buf,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            if buf.is_empty() {
                if !started {
                    return Ok(Frame::Eof);
                }
                break;
            }
            started = true;
            let newline = buf.iter().position(|&b| b == b'\n');
            let chunk = &buf[..newline.unwrap_or(buf.len())];
            total = total.saturating_add(chunk.len() as u64);
            last = chunk.last().copied().or(last);
            if !oversize {
                // Keep one byte more than the limit so that a trailing `\r` can still be dropped.
                if line.len() + chunk.len() > self.limit.saturating_add(1) {
                    oversize = true;
                    line = Vec::new();
                } else {
                    line.extend_from_slice(chunk);
                }
            }
            let used = chunk.len() + usize::from(newline.is_some());
            self.inner.consume(used);
            if newline.is_some() {
                break;
            }
        }
        if last == Some(b'\r') {
            line.pop();
            total = total.saturating_sub(1);
        }
        if oversize || line.len() > self.limit {
            return Ok(Frame::Oversize { bytes: total });
        }
        Ok(Frame::Line(line))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::BufReader;

    fn frames(input: &[u8], limit: usize, capacity: usize) -> Vec<Frame> {
        let mut reader = FrameReader::new(BufReader::with_capacity(capacity, input), limit);
        let mut out = Vec::new();
        loop {
            let frame = reader.next_frame().unwrap();
            if frame == Frame::Eof {
                return out;
            }
            out.push(frame);
        }
    }

    #[test]
    fn splits_lines_and_drops_cr() {
        for capacity in [1, 2, 3, 64] {
            assert_eq!(
                frames(b"ab\r\n\ncd\nef", 10, capacity),
                vec![
                    Frame::Line(b"ab".to_vec()),
                    Frame::Line(Vec::new()),
                    Frame::Line(b"cd".to_vec()),
                    Frame::Line(b"ef".to_vec()),
                ]
            );
        }
    }

    #[test]
    fn caps_lines_and_continues() {
        for capacity in [1, 2, 4, 64] {
            assert_eq!(
                frames(b"1234\n12345\n1234\r\n12345\r\nxyz", 4, capacity),
                vec![
                    Frame::Line(b"1234".to_vec()),
                    Frame::Oversize { bytes: 5 },
                    Frame::Line(b"1234".to_vec()),
                    Frame::Oversize { bytes: 5 },
                    Frame::Line(b"xyz".to_vec()),
                ]
            );
        }
        assert_eq!(
            frames(b"123456789012345", 4, 3),
            vec![Frame::Oversize { bytes: 15 }]
        );
    }

    #[test]
    fn empty_input_is_eof() {
        assert_eq!(frames(b"", 4, 8), Vec::<Frame>::new());
    }
}
