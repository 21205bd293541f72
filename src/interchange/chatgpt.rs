//! ChatGPT data export: `conversations.json` is an array of conversations, each a tree in `mapping`
//! (node ID → `{id, message, parent, children}`), with `current_node` the leaf the app showed.
//!
//! Messages are taken in order of creation (`message.create_time`; a message without one right
//! after its parent), always after their parent, so node IDs grow as the conversation did. Nodes
//! without a message (the hidden root) and messages with no text are left out; their children hang
//! from the nearest message above them.

use super::{
    Conversation, Format, Kinds, Msg, Rendering, intent, seconds_to_ms, strings_in, tag_for,
};
use crate::model::Role;
use serde_json::{Map, Value, json};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

/// What a conversation that is not a ChatGPT one is missing, with a hint when it looks like a Claude
/// conversation.
fn not_chatgpt(value: &Value) -> String {
    if value.get("chat_messages").is_some() {
        "it has no mapping (it looks like a Claude.ai conversation: use --format claude)".into()
    } else if value.is_object() {
        "it has no mapping object, so it is not a ChatGPT conversation".into()
    } else {
        "it is not a JSON object".into()
    }
}

struct Node<'a> {
    key: &'a str,
    parent: Option<usize>,
    message: Option<&'a Map<String, Value>>,
    children: Vec<usize>,
}

/// Convert one conversation of a ChatGPT export (its `mapping` tree); an error says why it is not one.
pub fn convert(value: &Value) -> Result<Conversation, String> {
    let Some(mapping) = value.get("mapping").and_then(Value::as_object) else {
        return Err(not_chatgpt(value));
    };
    let index: HashMap<&str, usize> = mapping
        .keys()
        .enumerate()
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    let mut nodes: Vec<Node> = Vec::with_capacity(mapping.len());
    for (key, node) in mapping {
        let Some(node) = node.as_object() else {
            return Err(format!("mapping node {key:?} is not an object"));
        };
        let parent = match node.get("parent") {
            None | Some(Value::Null) => None,
            // A parent that is not in the mapping: the node starts a tree of its own.
            Some(Value::String(p)) => index.get(p.as_str()).copied(),
            Some(_) => {
                return Err(format!(
                    "mapping node {key:?} has a parent that is not a string"
                ));
            }
        };
        let message = match node.get("message") {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(m),
            Some(_) => {
                return Err(format!(
                    "mapping node {key:?} has a message that is not an object"
                ));
            }
        };
        nodes.push(Node {
            key,
            parent,
            message,
            children: Vec::new(),
        });
    }
    for i in 0..nodes.len() {
        if let Some(p) = nodes[i].parent {
            nodes[p].children.push(i);
        }
    }
    // Siblings in the order their parent lists them (`children`), unlisted ones after.
    let keys: Vec<&str> = mapping.keys().map(String::as_str).collect();
    for node in nodes.iter_mut() {
        if node.children.len() > 1 {
            let listed: HashMap<&str, usize> = mapping[node.key]
                .get("children")
                .and_then(Value::as_array)
                .map(|c| {
                    c.iter()
                        .filter_map(Value::as_str)
                        .enumerate()
                        .map(|(i, k)| (k, i))
                        .collect()
                })
                .unwrap_or_default();
            node.children
                .sort_by_key(|&c| (listed.get(keys[c]).copied().unwrap_or(usize::MAX), c));
        }
    }
    let mut kinds = Kinds::default();
    // Render every message; `None` leaves the node out.
    let mut rendered: Vec<Option<Msg>> = Vec::with_capacity(nodes.len());
    for node in &nodes {
        rendered.push(match node.message {
            None => {
                kinds.skip(if node.parent.is_none() {
                    "hidden_root"
                } else {
                    "empty_message"
                });
                None
            }
            Some(message) => render(message, node.key, &mut kinds),
        });
    }
    // Insertion order: the earliest ready message first (by creation time, inherited from the parent
    // when missing; ties in tree order), so that every message comes after its parent.
    let mut time_key = vec![0u64; nodes.len()];
    let mut order = vec![0usize; nodes.len()];
    let mut seen = 0;
    let mut stack: Vec<usize> = (0..nodes.len())
        .filter(|&i| nodes[i].parent.is_none())
        .rev()
        .collect();
    while let Some(i) = stack.pop() {
        order[i] = seen;
        seen += 1;
        let inherited = nodes[i].parent.map(|p| time_key[p]).unwrap_or(0);
        time_key[i] = rendered[i]
            .as_ref()
            .and_then(|m| m.time_ms)
            .unwrap_or(inherited);
        stack.extend(nodes[i].children.iter().rev());
    }
    if seen < nodes.len() {
        return Err("its mapping has a cycle (a node is its own ancestor)".into());
    }
    let mut heap: BinaryHeap<Reverse<(u64, usize, usize)>> = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| n.parent.is_none())
        .map(|(i, _)| Reverse((time_key[i], order[i], i)))
        .collect();
    // The nearest kept message at or above each node, as an index into `messages`.
    let mut kept_at: Vec<Option<usize>> = vec![None; nodes.len()];
    let mut messages = Vec::new();
    while let Some(Reverse((_, _, i))) = heap.pop() {
        let above = nodes[i].parent.and_then(|p| kept_at[p]);
        kept_at[i] = match rendered[i].take() {
            Some(mut msg) => {
                msg.parent = above;
                messages.push(msg);
                Some(messages.len() - 1)
            }
            None => above,
        };
        for &c in &nodes[i].children {
            heap.push(Reverse((time_key[c], order[c], c)));
        }
    }
    let current = value
        .get("current_node")
        .and_then(Value::as_str)
        .and_then(|k| index.get(k))
        .and_then(|&i| kept_at[i]);
    Ok(Conversation {
        title: Format::ChatGpt.title(value),
        create_time_ms: seconds_to_ms(value.get("create_time")),
        update_time_ms: seconds_to_ms(value.get("update_time")),
        messages,
        current,
        kinds,
    })
}

fn str_of<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// One ChatGPT message as a Timeline message, or `None` when it has no text (counted as skipped).
fn render(message: &Map<String, Value>, key: &str, kinds: &mut Kinds) -> Option<Msg> {
    let author = message.get("author").cloned().unwrap_or(Value::Null);
    let original_role = author.get("role").and_then(Value::as_str).unwrap_or("user");
    let (role, foreign_role) = match original_role {
        "user" => (Role::User, None),
        "assistant" => (Role::Assistant, None),
        "system" => (Role::System, None),
        // Tool output is input to the model, as in Anthropic's API: a user message, tagged.
        other => (Role::User, Some(other)),
    };
    let content = message.get("content").cloned().unwrap_or(Value::Null);
    let content_type = content
        .get("content_type")
        .and_then(Value::as_str)
        .unwrap_or("text");
    let recipient = message
        .get("recipient")
        .and_then(Value::as_str)
        .filter(|r| *r != "all");
    let mut r = Rendering::default();
    let mut plain = content_type == "text";
    match content_type {
        "text" | "multimodal_text" => {
            let parts = content.get("parts").and_then(Value::as_array);
            let mut texts: Vec<String> = Vec::new();
            for part in parts.into_iter().flatten() {
                match part {
                    Value::String(s) => texts.push(s.clone()),
                    Value::Null => {}
                    other => {
                        plain = false;
                        if !texts.is_empty() {
                            r.text(&texts.join("\n"));
                            texts.clear();
                        }
                        part_object(other, &mut r);
                    }
                }
            }
            r.text(&texts.join("\n"));
        }
        "code" => {
            let language = str_of(&content, "language").filter(|l| *l != "unknown");
            let text = str_of(&content, "text").unwrap_or_default();
            r.part(
                "code",
                format!("```{}\n{text}\n```", language.unwrap_or_default()),
            );
        }
        "execution_output" => labelled(
            &mut r,
            "execution_output",
            "[execution output]",
            str_of(&content, "text"),
        ),
        "tether_browsing_display" => {
            let text = str_of(&content, "summary").or_else(|| str_of(&content, "result"));
            labelled(&mut r, "browsing", "[browsing]", text)
        }
        "tether_quote" => {
            let source = [str_of(&content, "title"), str_of(&content, "url")]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ");
            labelled(
                &mut r,
                "quote",
                &format!("[quote: {source}]"),
                str_of(&content, "text"),
            )
        }
        "system_error" => {
            let name = str_of(&content, "name").unwrap_or("error");
            labelled(
                &mut r,
                "error",
                &format!("[error: {name}]"),
                str_of(&content, "text"),
            )
        }
        "user_editable_context" => {
            let text = [
                str_of(&content, "user_profile"),
                str_of(&content, "user_instructions"),
            ]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join("\n\n");
            labelled(
                &mut r,
                "custom_instructions",
                "[custom instructions]",
                Some(&text).filter(|t| !t.is_empty()).map(String::as_str),
            )
        }
        "model_editable_context" => labelled(
            &mut r,
            "memory",
            "[memory]",
            str_of(&content, "model_set_context"),
        ),
        "thoughts" => {
            let thoughts: Vec<String> = content
                .get("thoughts")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|t| {
                    [str_of(t, "summary"), str_of(t, "content")]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join("\n")
                })
                .filter(|t| !t.is_empty())
                .collect();
            let text = thoughts.join("\n\n");
            labelled(
                &mut r,
                "thinking",
                "[thinking]",
                Some(text.as_str()).filter(|t| !t.is_empty()),
            )
        }
        "reasoning_recap" => labelled(
            &mut r,
            "reasoning",
            "[reasoning]",
            str_of(&content, "content"),
        ),
        other => {
            // A content type this build does not know: its name and every string it holds.
            let text = strings_in(&content);
            labelled(
                &mut r,
                other,
                &format!("[{other}]"),
                Some(text.as_str()).filter(|t| !t.is_empty()),
            )
        }
    }
    // Custom instructions of older exports: an empty system message with the texts in metadata.
    let context = message
        .get("metadata")
        .and_then(|m| m.get("user_context_message_data"))
        .filter(|c| c.is_object());
    if let Some(context) = context {
        let text = [
            str_of(context, "about_user_message"),
            str_of(context, "about_model_message"),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n\n");
        if !text.is_empty() {
            plain = false;
            r.part(
                "custom_instructions",
                format!("[custom instructions]\n{text}"),
            );
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
    if let Some(to) = recipient {
        // An assistant message to a tool (code for python, a browser command): a tool call.
        plain = false;
        r.kind("tool_call");
        r.prefix(format!("[tool call to {to}]"));
    }
    if let Some(role) = foreign_role {
        let name = author.get("name").and_then(Value::as_str);
        let label = match name {
            Some(name) => format!("[{role} {name}]"),
            None => format!("[{role}]"),
        };
        r.prefix(label);
    }
    let (text, met) = r.finish(kinds);
    kinds.role(original_role);
    let (intent, provenance) = (!plain || foreign_role.is_some())
        .then(|| {
            let mut original = Map::new();
            original.insert("author".into(), author.clone());
            if let Some(to) = recipient {
                original.insert("recipient".into(), json!(to));
            }
            original.insert("content".into(), content.clone());
            if let Some(context) = context {
                original.insert(
                    "metadata".into(),
                    json!({ "user_context_message_data": context }),
                );
            }
            intent(
                Format::ChatGpt,
                tag_for(foreign_role, &met),
                Value::Object(original),
                kinds,
            )
        })
        .unzip();
    Some(Msg {
        parent: None,
        role,
        text,
        intent,
        provenance,
        source_id: Some(
            message
                .get("id")
                .and_then(Value::as_str)
                .unwrap_or(key)
                .to_string(),
        ),
        time_ms: seconds_to_ms(message.get("create_time")),
    })
}

/// A part with a label line, then its text when there is one.
fn labelled(r: &mut Rendering, kind: &str, label: &str, text: Option<&str>) {
    match text {
        Some(text) => r.part(kind, format!("{label}\n{text}")),
        None => r.part(kind, label.to_string()),
    }
}

/// A non-string part of `parts` (images, audio, transcriptions).
fn part_object(part: &Value, r: &mut Rendering) {
    let kind = part
        .get("content_type")
        .and_then(Value::as_str)
        .unwrap_or("object");
    match kind {
        "image_asset_pointer" => {
            let pointer = str_of(part, "asset_pointer").unwrap_or("image");
            let size = match (
                part.get("width").and_then(Value::as_u64),
                part.get("height").and_then(Value::as_u64),
            ) {
                (Some(w), Some(h)) => format!(", {w}x{h}"),
                _ => String::new(),
            };
            r.part("image", format!("[image: {pointer}{size}]"));
        }
        "audio_transcription" => {
            let text = str_of(part, "text").unwrap_or_default();
            r.part("audio_transcription", text.to_string());
        }
        "audio_asset_pointer" | "real_time_user_audio_video_asset_pointer" => {
            let pointer = str_of(part, "asset_pointer")
                .or_else(|| {
                    part.get("audio_asset_pointer")
                        .and_then(|a| str_of(a, "asset_pointer"))
                })
                .unwrap_or("audio");
            r.part("audio", format!("[audio: {pointer}]"));
        }
        other => {
            let text = strings_in(part);
            let rendering = if text.is_empty() {
                format!("[{other}]")
            } else {
                format!("[{other}]\n{text}")
            };
            r.part(other, rendering);
        }
    }
}
