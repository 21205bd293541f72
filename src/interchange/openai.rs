//! OpenAI Chat Completions: a `messages` array (or an object holding one, such as a whole request)
//! in, one timeline (or one branch); a context out as a `messages` array.
//!
//! A message that is exactly `{role, content}` with a string content and one of the roles system,
//! user or assistant is stored as it is. Any other message (roles developer, tool, function; content
//! parts; tool calls; a name) is stored with the text rendering of its parts and the original message
//! in its intent note, and exported as that original, so an import followed by an export gives the
//! same messages.

use super::digest::Sink;
use super::values::Budget;
use super::walk::{self, Body, Messages, Read, Top};
use super::{
    Conversation, Entry, EntryKind, Format, Kinds, Msg, Rendering, compact, describe_url, joined,
    message_with_role, original, plain_text, request_message, tag_for,
};
use crate::model::Role;
use serde::de::{Deserializer, MapAccess, SeqAccess};
use serde_json::{Map, Value, json};

/// The rendering of one content part.
pub(crate) fn render_part(part: &Value, r: &mut Rendering) {
    let kind = part.get("type").and_then(Value::as_str).unwrap_or("part");
    let field = |outer: &str, inner: &str| {
        part.get(outer)
            .and_then(|o| o.get(inner))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    match kind {
        "text" => r.text(part.get("text").and_then(Value::as_str).unwrap_or_default()),
        "image_url" => r.part(
            "image",
            format!("[image: {}]", describe_url(&field("image_url", "url"))),
        ),
        "input_audio" => {
            let data = field("input_audio", "data");
            r.part(
                "audio",
                format!(
                    "[audio: {}, base64 ({})]",
                    field("input_audio", "format"),
                    super::base64_size(&data)
                ),
            );
        }
        "file" => {
            let name = [field("file", "filename"), field("file", "file_id")]
                .into_iter()
                .find(|s| !s.is_empty())
                .unwrap_or_else(|| "file".into());
            r.part("file", format!("[file: {name}]"));
        }
        "refusal" => r.part(
            "refusal",
            format!(
                "[refusal] {}",
                part.get("refusal")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
            ),
        ),
        other => {
            let text = super::strings_in(part);
            r.part(
                other,
                if text.is_empty() {
                    format!("[{other}]")
                } else {
                    format!("[{other}]\n{text}")
                },
            );
        }
    }
}

/// The messages of an OpenAI input as they are read: the array itself, or the `messages` of an
/// object (any other field, such as `model` or `tools`, is digested and dropped).
#[derive(Default)]
struct Input(Messages);

impl<'de> Body<'de> for Input {
    const WHAT: &'static str = "OpenAI Chat Completions messages";
    const HEAD: &'static [&'static str] = &[];

    fn special<A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        sink: &Sink,
        budget: &Budget,
    ) -> Result<bool, A::Error> {
        if key == "messages" {
            self.0.next_value(map, sink, budget, message)?;
        }
        Ok(key == "messages")
    }

    fn array<A: SeqAccess<'de>>(
        &mut self,
        seq: A,
        sink: &Sink,
        budget: &Budget,
    ) -> Result<bool, A::Error> {
        self.0.seq(seq, sink, budget, message)
    }
}

/// Read OpenAI Chat Completions messages into their conversation, each message parsed (within
/// `budget`), converted and dropped before the next (see the module `walk`).
pub fn read<'de, D: Deserializer<'de>>(
    deserializer: D,
    sink: &Sink,
    budget: &Budget,
) -> Result<Read, D::Error> {
    let mut input = Input::default();
    let top = walk::walk(deserializer, sink, budget, &mut input)?;
    let messages = input.0;
    let conversation = match (top, messages.read) {
        (Top::Other, _) => {
            Err("it is neither an array of messages nor an object with messages".into())
        }
        (_, None) => Err(
            "it is an object without a messages array, so it is not OpenAI Chat Completions input"
                .into(),
        ),
        (_, Some(Err(reason))) => Err(reason),
        (_, Some(Ok(()))) => Ok(Conversation {
            messages: messages.messages,
            kinds: messages.kinds,
            ..Conversation::default()
        }),
    };
    Ok(Read {
        source_id: None,
        title: None,
        conversation,
    })
}

/// Convert message `i` of a Chat Completions input, the child of `parent`.
fn message(
    i: usize,
    message: &Value,
    parent: Option<usize>,
    kinds: &mut Kinds,
) -> Result<Option<Msg>, String> {
    let (object, original_role) = message_with_role(i, message)?;
    let (role, foreign) = match original_role {
        "system" => (Role::System, None),
        "user" => (Role::User, None),
        "assistant" => (Role::Assistant, None),
        // Instructions, like system messages.
        "developer" => (Role::System, Some("developer")),
        // Tool and function results are input to the model, as in Anthropic's API.
        other => (Role::User, Some(other)),
    };
    let mut r = Rendering::default();
    match object.get("content") {
        Some(Value::String(text)) => r.text(text),
        Some(Value::Array(parts)) => parts.iter().for_each(|p| render_part(p, &mut r)),
        None | Some(Value::Null) => {}
        Some(_) => {
            return Err(format!(
                "message {i} has content that is neither a string nor an array of parts"
            ));
        }
    }
    if let Some(refusal) = object.get("refusal").and_then(Value::as_str) {
        r.part("refusal", format!("[refusal] {refusal}"));
    }
    for call in object
        .get("tool_calls")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let id = call.get("id").and_then(Value::as_str).unwrap_or_default();
        let function = call.get("function").or_else(|| call.get("custom"));
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("tool");
        let arguments = function
            .and_then(|f| f.get("arguments").or_else(|| f.get("input")))
            .map(compact)
            .unwrap_or_default();
        r.part(
            "tool_call",
            format!("[tool call {id}: {name}({arguments})]"),
        );
    }
    if let Some(call) = object.get("function_call") {
        let s = |k: &str| call.get(k).map(compact).unwrap_or_default();
        r.part(
            "tool_call",
            format!("[function call: {}({})]", s("name"), s("arguments")),
        );
    }
    if let Some(audio) = object.get("audio").filter(|a| !a.is_null()) {
        let id = audio.get("id").and_then(Value::as_str).unwrap_or_default();
        r.part("audio", format!("[audio {id}]"));
    }
    match original_role {
        "tool" => {
            let id = object
                .get("tool_call_id")
                .and_then(Value::as_str)
                .unwrap_or_default();
            r.prefix(format!("[tool result {id}]"));
            r.kind("tool_result");
        }
        "function" => {
            let name = object
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            r.prefix(format!("[function result {name}]"));
            r.kind("tool_result");
        }
        _ => {}
    }
    kinds.role(original_role);
    let (text, met) = r.finish(kinds);
    let plain = foreign.is_none()
        && object.get("content").is_some_and(Value::is_string)
        && object.keys().all(|k| k == "role" || k == "content");
    let kept = (!plain).then(|| (tag_for(foreign, &met), message));
    Ok(Some(request_message(
        Format::OpenAi,
        parent,
        role,
        text,
        kept,
        kinds,
    )))
}

/// A context as Chat Completions messages. Messages imported from OpenAI come back as they were;
/// messages imported from Anthropic are converted (tool_use → tool_calls, tool_result → tool
/// messages, images → image_url parts); everything else is `{role, content}` with the text, and a
/// summary or placeholder is a system message with its text.
pub fn render(entries: &[Entry]) -> Vec<Value> {
    let mut out = Vec::with_capacity(entries.len());
    for (entry, text) in joined(entries) {
        if let Some(message) = original(entry.provenance.as_deref(), Format::OpenAi) {
            out.push(message);
            continue;
        }
        if let Some(message) = original(entry.provenance.as_deref(), Format::Anthropic) {
            out.extend(from_anthropic(&message));
            continue;
        }
        if let Some(system) =
            super::original_field(entry.provenance.as_deref(), Format::Anthropic, "system")
        {
            out.push(json!({ "role": "system", "content": plain_text(Some(&system)) }));
            continue;
        }
        let (role, content) = match (entry.kind, entry.role) {
            (EntryKind::Message, Role::Assistant) => ("assistant", text),
            (EntryKind::Message, Role::System) => ("system", text),
            (EntryKind::Message, _) => ("user", text),
            _ => ("system", entry.summary_text()),
        };
        out.push(json!({ "role": role, "content": content }));
    }
    out
}

/// An Anthropic message as Chat Completions messages: an assistant message with its text and
/// `tool_calls`; a user message's `tool_result` blocks as `tool` messages first, then the rest.
/// Thinking blocks have no place in Chat Completions and are left out.
fn from_anthropic(message: &Value) -> Vec<Value> {
    let role = message
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("user");
    let content = message.get("content");
    let blocks: Vec<Value> = match content {
        Some(Value::Array(blocks)) => blocks.clone(),
        Some(Value::String(text)) => return vec![json!({ "role": role, "content": text })],
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    let mut parts: Vec<Value> = Vec::new();
    let mut calls: Vec<Value> = Vec::new();
    for block in &blocks {
        let kind = block
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match kind {
            "text" => parts.push(json!({ "type": "text", "text": block.get("text").cloned().unwrap_or(json!("")) })),
            "thinking" | "redacted_thinking" => {}
            "tool_use" => calls.push(json!({
                "id": block.get("id").cloned().unwrap_or(json!("")),
                "type": "function",
                "function": {
                    "name": block.get("name").cloned().unwrap_or(json!("tool")),
                    "arguments": block.get("input").map(Value::to_string).unwrap_or_else(|| "{}".into()),
                },
            })),
            "tool_result" => {
                let mut r = Rendering::default();
                let text = plain_text(block.get("content"));
                r.text(&text);
                out.push(json!({
                    "role": "tool",
                    "tool_call_id": block.get("tool_use_id").cloned().unwrap_or(json!("")),
                    "content": text,
                }));
            }
            "image" => {
                let source = block.get("source");
                let s = |k: &str| {
                    source
                        .and_then(|s| s.get(k))
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                };
                let url = match s("type") {
                    "base64" => format!("data:{};base64,{}", s("media_type"), s("data")),
                    _ => s("url").to_string(),
                };
                parts.push(json!({ "type": "image_url", "image_url": { "url": url } }));
            }
            _ => {
                let mut r = Rendering::default();
                super::anthropic::render_block(block, &mut r);
                let (text, _) = r.finish(&mut Kinds::default());
                parts.push(json!({ "type": "text", "text": text }));
            }
        }
    }
    let all_text = parts
        .iter()
        .all(|p| p.get("type").and_then(Value::as_str) == Some("text"));
    let content = if all_text {
        let texts: Vec<&str> = parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect();
        (!texts.is_empty()).then(|| json!(texts.join("\n\n")))
    } else {
        Some(Value::Array(parts))
    };
    if role == "assistant" {
        let mut message = Map::new();
        message.insert("role".into(), json!("assistant"));
        message.insert("content".into(), content.unwrap_or(Value::Null));
        if !calls.is_empty() {
            message.insert("tool_calls".into(), Value::Array(calls));
        }
        out.push(Value::Object(message));
    } else if let Some(content) = content {
        out.push(json!({ "role": role, "content": content }));
    }
    out
}
