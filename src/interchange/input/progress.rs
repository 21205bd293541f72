//! The progress bar of an export's import on a terminal (indicatif, as for session files).

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
    /// Made on the first draw, once the total is known.
    bar: Option<indicatif::ProgressBar>,
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
            bar: None,
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

    pub(super) fn draw(&mut self, at: u64) {
        let total = self.total;
        let label = &self.label;
        let bar = self.bar.get_or_insert_with(|| {
            // indicatif draws only when standard error is a terminal.
            let bar = indicatif::ProgressBar::new(total.max(1));
            if let Ok(style) = indicatif::ProgressStyle::with_template(
                "importing {prefix}: {bar:30} {percent}% · {msg} · {elapsed}",
            ) {
                bar.set_style(style);
            }
            bar.set_prefix(crate::terminal::escape_line(label).into_owned());
            bar
        });
        bar.set_message(format!(
            "{} conversations · {} messages",
            self.conversations, self.messages
        ));
        bar.set_position(at.min(total));
    }

    pub(super) fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    /// Also when the import stops on an error.
    fn drop(&mut self) {
        self.finish();
    }
}
