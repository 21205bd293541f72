//! Claude.ai data export: `conversations.json` is an array of conversations `{uuid, name,
//! created_at, chat_messages: [{uuid, sender, text, content, attachments, files, created_at}]}`. A
//! conversation is taken as linear: its messages in order, each the child of the one before.

use super::{
    Conversation, Format, Kinds, Msg, Rendering, anthropic::render_block, intent, iso_to_ms,
    tag_for,
};
use crate::model::Role;
use serde_json::{Map, Value};

fn time(value: &Value, key: &str) -> Option<u64> {
    value.get(key).and_then(Value::as_str).and_then(iso_to_ms)
}

/// Convert one conversation of a Claude.ai export (its `chat_messages`); an error says why it is not one.
pub fn convert(value: &Value) -> Result<Conversation, String> {
    let Some(chat) = value.get("chat_messages").and_then(Value::as_array) else {
        return Err(if value.get("mapping").is_some() {
            "it has no chat_messages (it looks like a ChatGPT conversation: use --format chatgpt)"
                .into()
        } else if value.is_object() {
            "it has no chat_messages array, so it is not a Claude.ai conversation".into()
        } else {
            "it is not a JSON object".into()
        });
    };
    let mut kinds = Kinds::default();
    let mut messages: Vec<Msg> = Vec::new();
    for (i, message) in chat.iter().enumerate() {
        let Some(object) = message.as_object() else {
            return Err(format!("chat message {i} is not an object"));
        };
        if let Some(msg) = render(object, messages.len().checked_sub(1), &mut kinds) {
            messages.push(msg);
        }
    }
    Ok(Conversation {
        title: Format::Claude.title(value),
        create_time_ms: time(value, "created_at"),
        update_time_ms: time(value, "updated_at"),
        messages,
        current: None,
        kinds,
    })
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
