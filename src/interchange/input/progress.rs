//! The progress line of an import on a terminal.

use super::Pass;
use std::time::{Duration, Instant};

/// A progress line on standard error, only when it is a terminal: how far through the input, how
/// many conversations and messages so far. Redrawn at most ten times a second, erased at the end.
pub(super) struct Progress {
    pub(super) enabled: bool,
    label: String,
    /// Total bytes of the input (of the decompressed files, for a zip).
    pub(super) total: u64,
    /// Bytes of the files already finished.
    before: u64,
    conversations: u64,
    messages: u64,
    last: Option<Instant>,
    /// Which pass reads the input (a check only needs no values).
    pub(super) pass: Pass,
}

impl Progress {
    pub(super) fn new(label: &str) -> Progress {
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

    pub(super) fn advance(&mut self, offset: u64, messages: u64) {
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

    pub(super) fn file_done(&mut self, size: u64) {
        self.before += size;
    }

    pub(super) fn draw(&self, at: u64) {
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

    pub(super) fn finish(&mut self) {
        if self.enabled && self.last.is_some() {
            use std::io::Write;
            let _ = write!(std::io::stderr().lock(), "\r\x1b[2K");
        }
    }
}
