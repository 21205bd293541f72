//! Claude.ai data export: `conversations.json` is an array of conversations `{uuid, name,
//! created_at, chat_messages: [{uuid, sender, text, content, attachments, files, created_at}]}`. A
//! conversation is taken as linear: its messages in order, each the child of the one before.
//!
//! A conversation is read into its compact form ([`read`]): each chat message is parsed as a value
//! (within the conversation's memory allowance), converted and dropped before the next, so memory
//! holds the converted messages and one message's value, never the conversation's.

use super::chatgpt::Read;
use super::digest::{PrefixedKey, Sink, Skip, digest_others};
use super::values::{self, Budget};
use super::{
    Conversation, Format, Kinds, Msg, Rendering, anthropic::render_block, intent, iso_to_ms,
    tag_for,
};
use crate::model::Role;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

fn time(value: &Value, key: &str) -> Option<u64> {
    value.get(key).and_then(Value::as_str).and_then(iso_to_ms)
}

/// Convert one conversation of a Claude.ai export (its `chat_messages`); an error says why it is not one.
pub fn convert(value: &Value) -> Result<Conversation, String> {
    let sink = Sink::new(Default::default());
    let budget = Budget::new(usize::MAX);
    read(value, &sink, &budget)
        .map_err(|e| format!("it cannot be read: {e}"))?
        .conversation
}

/// Read one conversation into its compact form (see the module `digest` for `sink`): its head
/// fields kept as values, each chat message parsed (within `budget`), converted and dropped.
pub fn read<'de, D: Deserializer<'de>>(
    deserializer: D,
    sink: &Sink,
    budget: &Budget,
) -> Result<Read, D::Error> {
    let mut chat = Chat::default();
    let top = deserializer.deserialize_any(TopSeed {
        sink,
        budget,
        chat: &mut chat,
    })?;
    let Some(head) = top else {
        return Ok(Read {
            source_id: None,
            title: None,
            conversation: Err("it is not a JSON object".into()),
        });
    };
    let head = Value::Object(head);
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
        }),
    };
    Ok(Read {
        source_id: Format::Claude.source_id(&head),
        title: Format::Claude.title(&head),
        conversation,
    })
}

/// The converted messages of the `chat_messages` array as it is read.
#[derive(Default)]
struct Chat {
    /// `None`: no `chat_messages` array (yet); `Err`: why it is not a Claude.ai conversation.
    read: Option<Result<(), String>>,
    messages: Vec<Msg>,
    kinds: Kinds,
}

/// The conversation object: its head fields kept as values, its chat messages converted; `None`
/// when it is not an object.
struct TopSeed<'a> {
    sink: &'a Sink,
    budget: &'a Budget,
    chat: &'a mut Chat,
}

impl<'de> DeserializeSeed<'de> for TopSeed<'_> {
    type Value = Option<Map<String, Value>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TopSeed<'_> {
    type Value = Option<Map<String, Value>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a Claude.ai conversation")
    }

    digest_others!(scalars => None);
    digest_others!(seq => None);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (sink, budget) = (self.sink, self.budget);
        sink.bytes(b"{");
        let mut head = Map::new();
        let mut first = true;
        while let Some(key) = map.next_key_seed(PrefixedKey {
            sink,
            comma: !first,
        })? {
            first = false;
            sink.bytes(b":");
            match key.as_str() {
                // As a value keeps a key given twice: the last one's messages.
                "chat_messages" => {
                    *self.chat = Chat::default();
                    map.next_value_seed(MessagesSeed {
                        sink,
                        budget,
                        chat: &mut *self.chat,
                    })?;
                }
                "uuid" | "name" | "created_at" | "updated_at" => {
                    let value = map.next_value_seed(values::Seed(budget))?;
                    sink.value(&value);
                    head.insert(key, value);
                }
                // Only its presence is read (a ChatGPT conversation given as Claude.ai's).
                "mapping" => {
                    map.next_value_seed(Skip(sink))?;
                    head.insert(key, Value::Null);
                }
                _ => map.next_value_seed(Skip(sink))?,
            }
        }
        sink.bytes(b"}");
        Ok(Some(head))
    }
}

/// The `chat_messages` array, message by message: each converted as soon as it is parsed.
struct MessagesSeed<'a> {
    sink: &'a Sink,
    budget: &'a Budget,
    chat: &'a mut Chat,
}

impl<'de> DeserializeSeed<'de> for MessagesSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MessagesSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an array of chat messages")
    }

    digest_others!(scalars => ());
    digest_others!(map => ());

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let (sink, budget, chat) = (self.sink, self.budget, self.chat);
        sink.bytes(b"[");
        chat.read = Some(Ok(()));
        let mut i = 0;
        loop {
            let before = budget.used();
            let Some(message) = seq.next_element_seed(values::Seed(budget))? else {
                break;
            };
            let cost = budget.used() - before;
            if i > 0 {
                sink.bytes(b",");
            }
            sink.value(&message);
            if chat.read == Some(Ok(())) {
                match message.as_object() {
                    None => chat.read = Some(Err(format!("chat message {i} is not an object"))),
                    Some(object) => {
                        let parent = chat.messages.len().checked_sub(1);
                        if let Some(msg) = render(object, parent, &mut chat.kinds) {
                            budget.charge::<A::Error>(values::message_cost(&msg))?;
                            chat.messages.push(msg);
                        }
                    }
                }
            }
            // The message's value is dropped here: what it took is free again.
            drop(message);
            budget.refund(cost);
            i += 1;
        }
        sink.bytes(b"]");
        Ok(())
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
