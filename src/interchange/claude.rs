//! Claude.ai data export: `conversations.json` is an array of conversations `{uuid, name,
//! created_at, chat_messages: [{uuid, sender, text, content, attachments, files, created_at}]}`. A
//! conversation is taken as linear: its messages in order, each the child of the one before.
//!
//! A conversation is read into its compact form ([`read`]): each chat message is parsed as a value
//! (within the conversation's memory allowance), converted and dropped before the next, so memory
//! holds the converted messages and one message's value, never the conversation's.

use super::digest::Sink;
use super::values::Budget;
use super::walk::{self, Body, Messages, Read, Top};
use super::{
    Conversation, Format, Kinds, Msg, Rendering, anthropic::render_block, intent, iso_to_ms,
    tag_for,
};
use crate::model::Role;
use serde::de::{Deserializer, MapAccess};
use serde_json::{Map, Value};

fn time(value: &Value, key: &str) -> Option<u64> {
    value.get(key).and_then(Value::as_str).and_then(iso_to_ms)
}

/// Read one conversation into its compact form (see the module `digest` for `sink`): its head
/// fields kept as values, each chat message parsed (within `budget`), converted and dropped.
pub fn read<'de, D: Deserializer<'de>>(
    deserializer: D,
    sink: &Sink,
    budget: &Budget,
) -> Result<Read, D::Error> {
    let mut chat = Chat::default();
    let Top::Object(head) = walk::walk(deserializer, sink, budget, &mut chat)? else {
        return Ok(Read {
            source_id: None,
            title: None,
            conversation: Err("it is not a JSON object".into()),
        });
    };
    let chat = chat.0;
    let conversation = match chat.read {
        None if head.get("mapping").is_some() => Err(
            "it has no chat_messages (it looks like a ChatGPT conversation: use --format chatgpt)"
                .into(),
        ),
        None => Err("it has no chat_messages array, so it is not a Claude.ai conversation".into()),
        Some(Err(reason)) => Err(reason),
        Some(Ok(())) => Ok(Conversation {
            title: Format::Claude.title(&head),
            create_time_ms: time(&head, "created_at"),
            update_time_ms: time(&head, "updated_at"),
            messages: chat.messages,
            current: None,
            kinds: chat.kinds,
            skip: None,
        }),
    };
    Ok(Read {
        source_id: Format::Claude.source_id(&head),
        title: Format::Claude.title(&head),
        conversation,
    })
}

/// The conversation object: its head fields kept as values, its chat messages converted one by
/// one as they are parsed.
#[derive(Default)]
struct Chat(Messages);

impl<'de> Body<'de> for Chat {
    const WHAT: &'static str = "a Claude.ai conversation";
    const HEAD: &'static [&'static str] = &["uuid", "name", "created_at", "updated_at"];
    // A ChatGPT conversation given as Claude.ai's.
    const PRESENT: &'static [&'static str] = &["mapping"];

    fn special<A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        sink: &Sink,
        budget: &Budget,
    ) -> Result<bool, A::Error> {
        if key == "chat_messages" {
            self.0.next_value(map, sink, budget, chat_message)?;
        }
        Ok(key == "chat_messages")
    }
}

/// Chat message `i`, the child of `parent`.
fn chat_message(
    i: usize,
    message: &Value,
    parent: Option<usize>,
    kinds: &mut Kinds,
) -> Result<Option<Msg>, String> {
    match message.as_object() {
        None => Err(format!("chat message {i} is not an object")),
        Some(object) => Ok(render(object, parent, kinds)),
    }
}

fn render(message: &Map<String, Value>, parent: Option<usize>, kinds: &mut Kinds) -> Option<Msg> {
    let sender = message
        .get("sender")
        .and_then(Value::as_str)
        .unwrap_or("human");
    let (role, foreign) = match sender {
        "human" | "user" => (Role::User, None),
        "assistant" => (Role::Assistant, None),
        "system" => (Role::System, None),
        other => (Role::User, Some(other)),
    };
    let mut r = Rendering::default();
    let blocks = message
        .get("content")
        .and_then(Value::as_array)
        .filter(|b| !b.is_empty());
    let mut plain = true;
    match blocks {
        Some(blocks) => {
            for block in blocks {
                if block.get("type").and_then(Value::as_str) != Some("text") {
                    plain = false;
                }
                render_block(block, &mut r);
            }
        }
        None => r.text(
            message
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        ),
    }
    let listed = |key: &str| {
        message
            .get(key)
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
    };
    for attachment in listed("attachments").into_iter().flatten() {
        plain = false;
        let s = |k: &str| {
            attachment
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        let size = attachment
            .get("file_size")
            .and_then(Value::as_u64)
            .map(|n| format!(", {n} bytes"))
            .unwrap_or_default();
        let label = format!(
            "[attachment: {} ({}{size})]",
            s("file_name"),
            s("file_type")
        );
        let content = s("extracted_content");
        r.part(
            "attachment",
            if content.is_empty() {
                label
            } else {
                format!("{label}\n{content}")
            },
        );
    }
    for key in ["files", "files_v2"] {
        for file in listed(key).into_iter().flatten() {
            plain = false;
            let name = file
                .get("file_name")
                .and_then(Value::as_str)
                .unwrap_or("file");
            r.part("file", format!("[file: {name}]"));
        }
    }
    if r.is_empty() {
        kinds.skip(if role == Role::System {
            "empty_system"
        } else {
            "empty_message"
        });
        return None;
    }
    kinds.role(sender);
    let (text, met) = r.finish(kinds);
    let (intent, provenance) = (!plain || foreign.is_some())
        .then(|| {
            let mut original = Map::new();
            for key in ["sender", "content", "attachments", "files", "files_v2"] {
                if let Some(v) = message.get(key) {
                    original.insert(key.into(), v.clone());
                }
            }
            intent(
                Format::Claude,
                tag_for(foreign, &met),
                Value::Object(original),
                kinds,
            )
        })
        .unzip();
    Some(Msg {
        parent,
        role,
        text,
        intent,
        provenance,
        source_id: message
            .get("uuid")
            .and_then(Value::as_str)
            .map(str::to_string),
        time_ms: message
            .get("created_at")
            .and_then(Value::as_str)
            .and_then(iso_to_ms),
    })
}
