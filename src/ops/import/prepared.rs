//! One conversation as the reader thread leaves it for the writer, and its digest.

use super::Target;
use crate::interchange::{self, Conversation, Format, input};
use crate::model::{node_id, timeline_id};
use sha2::{Digest, Sha256};

/// One conversation of the input as the reader thread left it: converted (or why not), with what
/// the writer needs of its JSON.
pub(super) struct Prepared {
    pub(super) file: String,
    pub(super) index: usize,
    pub(super) source_id: Option<String>,
    pub(super) title: Option<String>,
    /// The digest's state after the format and the conversation's JSON (see [`digest`]).
    pub(super) hasher: Sha256,
    pub(super) content: Content,
    /// A Codex fork: the session it came from.
    pub(super) forked_from: Option<String>,
}

pub(super) enum Content {
    /// Not parsed (too large, not Unicode): the reason.
    Unread(String),
    /// Not of the named format: the reason.
    Mismatch(String),
    /// A session file whose digest an earlier import recorded: not parsed.
    Unchanged(crate::model::KnownImport),
    Ready(Conversation),
}

impl Prepared {
    pub(super) fn new(format: Format, element: input::Element) -> Prepared {
        // Converted and digested as it was parsed; not parsed: digested as `null`.
        let read = match element.value {
            Ok(read) => *read,
            Err(reason) => {
                let mut hasher = interchange::digest::start(format);
                hasher.update(b"null");
                return Prepared {
                    file: element.file,
                    index: element.index,
                    source_id: None,
                    title: None,
                    hasher,
                    content: Content::Unread(reason),
                    forked_from: None,
                };
            }
        };
        Prepared {
            file: element.file,
            index: element.index,
            source_id: read.source_id,
            title: read.title,
            hasher: read.hasher,
            content: match read.conversation {
                Ok(conversation) => Content::Ready(conversation),
                Err(reason) => Content::Mismatch(reason),
            },
            // Only session files (Codex) fork, and they are not read this way.
            forked_from: None,
        }
    }

    /// About how many bytes it holds.
    pub(super) fn bytes(&self) -> usize {
        match &self.content {
            Content::Ready(c) => c
                .messages
                .iter()
                .map(|m| {
                    256 + m.text.len()
                        + m.intent
                            .as_ref()
                            .map_or(0, |i| i.tag.len() + i.note.as_ref().map_or(0, String::len))
                })
                .sum(),
            Content::Unread(r) | Content::Mismatch(r) => 256 + r.len(),
            Content::Unchanged(k) => 256 + k.source_key.len(),
        }
    }
}

/// SHA-256 (hex) of the format, the conversation's JSON (both in `hasher` already) and the place
/// it is attached to.
pub(super) fn digest(mut hasher: Sha256, target: Option<&Target>) -> String {
    if let Some(target) = target {
        hasher.update([0]);
        hasher.update(
            format!(
                "{}/{}",
                timeline_id(target.timeline.id),
                node_id(target.node.id)
            )
            .as_bytes(),
        );
    }
    super::super::hex(&hasher.finalize())
}
