//! One conversation as the reader thread leaves it for the writer, and its digest.

use super::Target;
use crate::interchange::{self, Conversation, Format, input};
use crate::model::{node_id, timeline_id};
use serde_json::Value;
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
        let value = match element.value {
            Err(reason) => Err(reason),
            Ok(input::Body::Value(value)) => Ok(value),
            // Converted and digested as it was parsed.
            Ok(input::Body::Read(read)) => {
                return Prepared {
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
                };
            }
        };
        let (source_id, title, content, value) = match value {
            Err(reason) => (None, None, Content::Unread(reason), Value::Null),
            Ok(value) => {
                let content = match format.convert(&value) {
                    Ok(conversation) => Content::Ready(conversation),
                    Err(reason) => Content::Mismatch(reason),
                };
                (
                    format.source_id(&value),
                    format.title(&value),
                    content,
                    value,
                )
            }
        };
        let mut hasher = interchange::digest::start(format);
        // Streamed into the digest: the same bytes as `value.to_string()` without a copy of the
        // conversation's whole text.
        let _ = serde_json::to_writer(DigestWriter(&mut hasher), &value);
        Prepared {
            file: element.file,
            index: element.index,
            source_id,
            title,
            hasher,
            content,
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

/// Writes into a digest (writing never fails).
pub(super) struct DigestWriter<'a>(&'a mut Sha256);

impl std::io::Write for DigestWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
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
