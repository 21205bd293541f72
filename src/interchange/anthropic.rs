//! Anthropic Messages API: a request body `{system, messages}` in, one timeline (or one branch); a
//! context out as `{system, messages}` with consecutive messages of one role merged, as the API
//! requires. Content blocks (text, image, document, tool_use, tool_result, thinking, ...) are also
//! what Claude.ai exports hold, so `render_block` serves both.

use super::digest::Sink;
use super::values::Budget;
use super::walk::{self, Body, Messages, Read, Top};
use super::{
    Conversation, Entry, EntryKind, Format, Kinds, Msg, Rendering, base64_size, compact,
    intent_with, joined, message_with_role, original, original_field, plain_text, request_message,
    strings_in, tag_for,
};
use crate::model::{Intent, Role};
use serde::de::{Deserializer, MapAccess, SeqAccess};
use serde_json::{Map, Value, json};

/// The rendering of one content block, with its kind.
pub(crate) fn render_block(block: &Value, r: &mut Rendering) {
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("block");
    let s = |key: &str| {
        block
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    match kind {
        "text" => r.text(s("text").unwrap_or_default()),
        "image" => r.part("image", format!("[image: {}]", source(block.get("source")))),
        "document" => {
            let title = s("title").map(|t| format!("{t}, ")).unwrap_or_default();
            let source = block.get("source");
            let text = source
                .filter(|src| src.get("type").and_then(Value::as_str) == Some("text"))
                .and_then(|src| src.get("data").and_then(Value::as_str))
                .map(str::to_string)
                .or_else(|| {
                    source
                        .and_then(|src| src.get("content"))
                        .map(|c| plain_text(Some(c)))
                        .filter(|t| !t.is_empty())
                });
            let label = format!("[document: {title}{}]", self::source(source));
            r.part(
                "document",
                match text {
                    Some(text) => format!("{label}\n{text}"),
                    None => label,
                },
            );
        }
        "tool_use" | "server_tool_use" | "mcp_tool_use" => {
            let id = s("id").map(|id| format!(" {id}")).unwrap_or_default();
            let name = s("name").unwrap_or("tool");
            let input = block.get("input").map(compact).unwrap_or_default();
            r.part("tool_call", format!("[tool call{id}: {name}({input})]"));
        }
        "tool_result" | "mcp_tool_result" => {
            let id = s("tool_use_id")
                .or_else(|| s("name"))
                .map(|id| format!(" {id}"))
                .unwrap_or_default();
            let error = if block.get("is_error").and_then(Value::as_bool) == Some(true) {
                " (error)"
            } else {
                ""
            };
            let content = block.get("content");
            let mut text = plain_text(content);
            if let Some(Value::Array(parts)) = content {
                for part in parts {
                    if part.get("type").and_then(Value::as_str) == Some("image") {
                        text.push_str(&format!("\n[image: {}]", source(part.get("source"))));
                    }
                }
            }
            let label = format!("[tool result{id}{error}]");
            r.part(
                "tool_result",
                if text.is_empty() {
                    label
                } else {
                    format!("{label}\n{}", text.trim_start_matches('\n'))
                },
            );
        }
        "thinking" => r.part(
            "thinking",
            format!("[thinking]\n{}", s("thinking").unwrap_or_default()),
        ),
        "redacted_thinking" => r.part("thinking", "[redacted thinking]".into()),
        other => {
            let text = strings_in(block);
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

/// Where an image or document comes from, without its data.
fn source(source: Option<&Value>) -> String {
    let Some(source) = source else {
        return "no source".into();
    };
    let s = |key: &str| source.get(key).and_then(Value::as_str).unwrap_or_default();
    match s("type") {
        "base64" => format!("{}, base64 ({})", s("media_type"), base64_size(s("data"))),
        "url" => s("url").to_string(),
        "file" => format!("file {}", s("file_id")),
        "text" => s("media_type").to_string(),
        "content" => "content blocks".to_string(),
        other => other.to_string(),
    }
}

/// Whether `content` is plain for Timeline: a string (a list of blocks is kept as it was).
fn is_plain(message: &Map<String, Value>) -> bool {
    message.get("content").is_some_and(Value::is_string)
        && message.keys().all(|k| k == "role" || k == "content")
}

/// A request body as it is read: its `system` kept as a value, its `messages` converted one by
/// one as they are parsed (other fields, such as `model` and `tools`, are not messages and are
/// not imported); or a bare array of messages.
#[derive(Default)]
struct Request {
    system: Option<Value>,
    messages: Messages,
}

impl<'de> Body<'de> for Request {
    const WHAT: &'static str = "an Anthropic Messages request body";
    const HEAD: &'static [&'static str] = &[];

    fn special<A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        sink: &Sink,
        budget: &Budget,
    ) -> Result<bool, A::Error> {
        match key {
            "messages" => {
                self.messages.next_value(map, sink, budget, message)?;
            }
            "system" => self.system = Some(walk::value(map, sink, budget)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn array<A: SeqAccess<'de>>(
        &mut self,
        seq: A,
        sink: &Sink,
        budget: &Budget,
    ) -> Result<bool, A::Error> {
        self.messages.seq(seq, sink, budget, message)
    }
}

/// Read a request body into its conversation, each message parsed (within `budget`), converted
/// and dropped before the next (see the module `walk`).
pub fn read<'de, D: Deserializer<'de>>(
    deserializer: D,
    sink: &Sink,
    budget: &Budget,
) -> Result<Read, D::Error> {
    let mut request = Request::default();
    let top = walk::walk(deserializer, sink, budget, &mut request)?;
    let conversation = match (top, request.messages.read) {
        (Top::Other, _) => {
            Err("it is neither an object with messages nor an array of messages".into())
        }
        (_, None) => {
            Err("it has no messages array, so it is not an Anthropic Messages request body".into())
        }
        (_, Some(read)) => {
            let mut kinds = request.messages.kinds;
            system(request.system.as_ref(), &mut kinds).and_then(|system| {
                read?;
                let mut messages = request.messages.messages;
                // The system prompt comes first, whatever the order of the body's fields.
                if let Some(system) = system {
                    for m in &mut messages {
                        m.parent = Some(m.parent.map_or(0, |p| p + 1));
                    }
                    messages.insert(0, system);
                }
                Ok(Conversation {
                    messages,
                    kinds,
                    ..Conversation::default()
                })
            })
        }
    };
    Ok(Read {
        source_id: None,
        title: None,
        conversation,
    })
}

/// The message of a request's `system`, if it has one to show.
fn system(system: Option<&Value>, kinds: &mut Kinds) -> Result<Option<Msg>, String> {
    let msg = |text, kept: Option<(Intent, String)>| {
        let (intent, provenance) = kept.unzip();
        Some(Msg {
            parent: None,
            role: Role::System,
            text,
            intent,
            provenance,
            source_id: None,
            time_ms: None,
        })
    };
    Ok(match system {
        None | Some(Value::Null) => None,
        // An empty system prompt is left out, as the other importers leave out empty messages.
        Some(Value::String(text)) if text.trim().is_empty() => {
            kinds.skip("empty_system");
            None
        }
        Some(Value::String(text)) => {
            kinds.role("system");
            kinds.part("text");
            msg(text.clone(), None)
        }
        Some(blocks @ Value::Array(items)) => {
            let mut r = Rendering::default();
            for block in items {
                render_block(block, &mut r);
            }
            if r.is_empty() {
                kinds.skip("empty_system");
                None
            } else {
                let (text, met) = r.finish(kinds);
                kinds.role("system");
                let tag = tag_for(None, &met);
                let kept = intent_with(Format::Anthropic, "system", tag, blocks.clone(), kinds);
                msg(text, Some(kept))
            }
        }
        Some(_) => return Err("its system is neither a string nor an array of blocks".into()),
    })
}

/// Convert message `i` of a request, the child of `parent`; `None` when it has nothing to show.
fn message(
    i: usize,
    message: &Value,
    parent: Option<usize>,
    kinds: &mut Kinds,
) -> Result<Option<Msg>, String> {
    let (object, original_role) = message_with_role(i, message)?;
    let (role, foreign) = match original_role {
        "user" => (Role::User, None),
        "assistant" => (Role::Assistant, None),
        "system" => (Role::System, None),
        other => (Role::User, Some(other)),
    };
    let mut r = Rendering::default();
    match object.get("content") {
        Some(Value::String(text)) => r.text(text),
        Some(Value::Array(blocks)) => blocks.iter().for_each(|b| render_block(b, &mut r)),
        None | Some(Value::Null) => {}
        Some(_) => {
            return Err(format!(
                "message {i} has content that is neither a string nor an array of blocks"
            ));
        }
    }
    // A message with nothing to show (`content: []`, `""`) is left out, as the other importers
    // leave it out; the next message hangs from the one before it.
    if r.is_empty() {
        kinds.skip(if role == Role::System {
            "empty_system"
        } else {
            "empty_message"
        });
        return Ok(None);
    }
    kinds.role(original_role);
    let (text, met) = r.finish(kinds);
    let kept = (!is_plain(object) || foreign.is_some()).then(|| (tag_for(foreign, &met), message));
    Ok(Some(request_message(
        Format::Anthropic,
        parent,
        role,
        text,
        kept,
        kinds,
    )))
}

/// A context as a Messages request body: `{"system": ..., "messages": [...]}` (`system` only when
/// there is system text). System messages go to `system`; summaries and placeholders become user
/// text; consecutive messages of one role are merged into one with a list of content blocks.
pub fn render(entries: &[Entry]) -> Value {
    let mut system: Vec<Value> = Vec::new();
    let mut messages: Vec<(String, Value)> = Vec::new();
    for (entry, text) in joined(entries) {
        if let Some(original_system) =
            original_field(entry.provenance.as_deref(), Format::Anthropic, "system")
        {
            system.push(original_system);
            continue;
        }
        if let Some(message) = original(entry.provenance.as_deref(), Format::Anthropic) {
            let role = message
                .get("role")
                .and_then(Value::as_str)
                .unwrap_or("user");
            let content = message.get("content").cloned().unwrap_or(json!(""));
            if role == "system" {
                system.push(content);
            } else {
                merge(&mut messages, role, content);
            }
            continue;
        }
        if let Some(message) = original(entry.provenance.as_deref(), Format::OpenAi) {
            match from_openai(&message) {
                Converted::System(text) => system.push(json!(text)),
                Converted::Messages(list) => {
                    for (role, content) in list {
                        merge(&mut messages, role, content);
                    }
                }
            }
            continue;
        }
        match (entry.kind, entry.role) {
            (EntryKind::Message, Role::System) => system.push(json!(text)),
            (EntryKind::Message, Role::Assistant) => merge(&mut messages, "assistant", json!(text)),
            (EntryKind::Message, _) => merge(&mut messages, "user", json!(text)),
            _ => merge(&mut messages, "user", json!(entry.summary_text())),
        }
    }
    let mut body = Map::new();
    match system.len() {
        0 => {}
        1 => {
            body.insert("system".into(), system.remove(0));
        }
        _ if system.iter().all(Value::is_string) => {
            let texts: Vec<&str> = system.iter().filter_map(Value::as_str).collect();
            body.insert("system".into(), json!(texts.join("\n\n")));
        }
        _ => {
            let blocks: Vec<Value> = system.into_iter().flat_map(blocks_of).collect();
            body.insert("system".into(), Value::Array(blocks));
        }
    }
    let messages: Vec<Value> = messages
        .into_iter()
        .map(|(role, content)| json!({ "role": role, "content": content }))
        .collect();
    body.insert("messages".into(), Value::Array(messages));
    Value::Object(body)
}

/// Content as a list of blocks (a string becomes one text block).
fn blocks_of(content: Value) -> Vec<Value> {
    match content {
        Value::Array(blocks) => blocks,
        Value::String(text) => vec![json!({ "type": "text", "text": text })],
        other => vec![json!({ "type": "text", "text": compact(&other) })],
    }
}

/// Add a message, merging it into the previous one when that has the same role.
fn merge(messages: &mut Vec<(String, Value)>, role: &str, content: Value) {
    match messages.last_mut() {
        Some((last_role, last)) if last_role == role => {
            let mut blocks = blocks_of(std::mem::take(last));
            blocks.extend(blocks_of(content));
            *last = Value::Array(blocks);
        }
        _ => messages.push((role.to_string(), content)),
    }
}

enum Converted {
    System(String),
    Messages(Vec<(&'static str, Value)>),
}

/// An OpenAI Chat Completions message as Anthropic content: system and developer text go to
/// `system`; tool calls become `tool_use` blocks (arguments parsed as JSON; text that is not JSON is
/// kept as `{"arguments": TEXT}`); a tool message becomes a user `tool_result` block; image URLs
/// become image blocks (a data URL as base64); other parts their text rendering.
fn from_openai(message: &Value) -> Converted {
    let role = message
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("user");
    let content = message.get("content");
    match role {
        "system" | "developer" => Converted::System(plain_text(content)),
        "tool" => {
            let id = message.get("tool_call_id").cloned().unwrap_or(json!(""));
            let block =
                json!({ "type": "tool_result", "tool_use_id": id, "content": plain_text(content) });
            Converted::Messages(vec![("user", json!([block]))])
        }
        "assistant" => {
            let mut blocks = content_blocks(content);
            if let Some(refusal) = message.get("refusal").and_then(Value::as_str) {
                blocks.push(json!({ "type": "text", "text": refusal }));
            }
            for call in message
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let function = call.get("function").or_else(|| call.get("custom"));
                let name = function
                    .and_then(|f| f.get("name"))
                    .cloned()
                    .unwrap_or(json!("tool"));
                let arguments = function
                    .and_then(|f| f.get("arguments").or_else(|| f.get("input")))
                    .and_then(Value::as_str)
                    .unwrap_or("{}");
                let input = serde_json::from_str::<Value>(arguments)
                    .ok()
                    .filter(Value::is_object)
                    .unwrap_or_else(|| json!({ "arguments": arguments }));
                let id = call.get("id").cloned().unwrap_or(json!(""));
                blocks.push(json!({ "type": "tool_use", "id": id, "name": name, "input": input }));
            }
            if let Some(call) = message.get("function_call") {
                blocks.push(json!({ "type": "text", "text": format!("[function call: {}({})]", call.get("name").and_then(Value::as_str).unwrap_or_default(), call.get("arguments").and_then(Value::as_str).unwrap_or_default()) }));
            }
            Converted::Messages(vec![("assistant", simplify(blocks))])
        }
        "function" => {
            let name = message
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("function");
            Converted::Messages(vec![(
                "user",
                json!(format!("[function result {name}]\n{}", plain_text(content))),
            )])
        }
        _ => Converted::Messages(vec![("user", simplify(content_blocks(content)))]),
    }
}

/// Blocks of one text only become that text, as the API's short form.
fn simplify(blocks: Vec<Value>) -> Value {
    match blocks.as_slice() {
        [only]
            if only.get("type").and_then(Value::as_str) == Some("text")
                && only.as_object().is_some_and(|o| o.len() == 2) =>
        {
            only.get("text").cloned().unwrap_or(json!(""))
        }
        [] => json!(""),
        _ => Value::Array(blocks),
    }
}

/// OpenAI content (a string or parts) as Anthropic blocks.
fn content_blocks(content: Option<&Value>) -> Vec<Value> {
    match content {
        Some(Value::String(text)) if !text.is_empty() => vec![json!({ "type": "text", "text": text })],
        Some(Value::Array(parts)) => parts
            .iter()
            .map(|part| {
                let kind = part.get("type").and_then(Value::as_str).unwrap_or_default();
                match kind {
                    "text" => json!({ "type": "text", "text": part.get("text").cloned().unwrap_or(json!("")) }),
                    "refusal" => json!({ "type": "text", "text": part.get("refusal").cloned().unwrap_or(json!("")) }),
                    "image_url" => {
                        let url = part
                            .get("image_url")
                            .and_then(|i| i.get("url"))
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        match url.strip_prefix("data:").and_then(|rest| rest.split_once(";base64,")) {
                            Some((media_type, data)) => json!({ "type": "image", "source": { "type": "base64", "media_type": media_type, "data": data } }),
                            None => json!({ "type": "image", "source": { "type": "url", "url": url } }),
                        }
                    }
                    _ => {
                        let mut r = Rendering::default();
                        super::openai::render_part(part, &mut r);
                        let (text, _) = r.finish(&mut Kinds::default());
                        json!({ "type": "text", "text": text })
                    }
                }
            })
            .collect(),
        _ => Vec::new(),
    }
}
