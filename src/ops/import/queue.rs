//! The bounded queue of converted conversations between the reader thread and the writer.

use super::prepared::Prepared;
use crate::error::{Error, Result};
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};

/// Converted conversations waiting to be written hold about this many bytes at most (one bigger
/// conversation is let in alone): what bounds an import's memory besides the conversation being
/// read.
pub(super) const QUEUE_BYTES: usize = 16 << 20;

/// The conversations between the reader thread and the writer, bounded by [`QUEUE_BYTES`].
#[derive(Default)]
pub(super) struct Queue {
    pub(super) state: Mutex<QueueState>,
    pub(super) changed: Condvar,
}

#[derive(Default)]
pub(super) struct QueueState {
    pub(super) items: VecDeque<Prepared>,
    pub(super) bytes: usize,
    /// The reader is done: how its reading ended.
    pub(super) done: Option<Result<()>>,
    /// The writer failed: the reader stops.
    pub(super) stop: bool,
}

/// Ends the queue when the reader thread stops without ending it (a panic), so that the writer
/// does not wait for ever; the panic itself is reported when the thread is joined.
pub(super) struct EndOnPanic<'q>(pub(super) &'q Queue);

impl Drop for EndOnPanic<'_> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        if state.done.is_none() {
            state.done = Some(Err(stopped()));
        }
        drop(state);
        self.0.changed.notify_all();
    }
}

/// The reader's error when the writer has stopped (never shown: the writer's error is).
pub(super) fn stopped() -> Error {
    Error::database("the import stopped")
}

impl Queue {
    pub(super) fn lock(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Add a conversation, waiting while the queue is full.
    pub(super) fn push(&self, item: Prepared) -> Result<()> {
        let size = item.bytes();
        let mut state = self.lock();
        while !state.stop && !state.items.is_empty() && state.bytes + size > QUEUE_BYTES {
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        if state.stop {
            return Err(stopped());
        }
        state.bytes += size;
        state.items.push_back(item);
        self.changed.notify_all();
        Ok(())
    }

    /// The next conversation; when `wait`, waits for one unless the reader is done.
    pub(super) fn pop(&self, wait: bool) -> Option<Prepared> {
        let mut state = self.lock();
        loop {
            if let Some(item) = state.items.pop_front() {
                state.bytes -= item.bytes();
                self.changed.notify_all();
                return Some(item);
            }
            if !wait || state.done.is_some() {
                return None;
            }
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    pub(super) fn finish(&self, result: Result<()>) {
        self.lock().done = Some(result);
        self.changed.notify_all();
    }

    pub(super) fn stop(&self) {
        self.lock().stop = true;
        self.changed.notify_all();
    }
}
