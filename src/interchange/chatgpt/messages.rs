//! One ChatGPT message (its `content` parts, author, metadata) as a Timeline message.

use super::super::{Format, Kinds, Msg, Rendering, intent, seconds_to_ms, strings_in, tag_for};
use crate::model::Role;
use serde_json::{Map, Value, json};

pub(super) fn str_of<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// One ChatGPT message as a Timeline message, or `None` when it has no text (counted as skipped).
pub(super) fn render(message: &Map<String, Value>, key: &str, kinds: &mut Kinds) -> Option<Msg> {
    // Borrowed, not cloned: the content holds the text, and only an intent needs a copy.
    let author = message.get("author").unwrap_or(&Value::Null);
    let original_role = author.get("role").and_then(Value::as_str).unwrap_or("user");
    let (role, foreign_role) = match original_role {
        "user" => (Role::User, None),
        "assistant" => (Role::Assistant, None),
        "system" => (Role::System, None),
        // Tool output is input to the model, as in Anthropic's API: a user message, tagged.
        other => (Role::User, Some(other)),
    };
    let content = message.get("content").unwrap_or(&Value::Null);
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
            let mut texts: Vec<&str> = Vec::new();
            for part in parts.into_iter().flatten() {
                match part {
                    Value::String(s) => texts.push(s),
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
            let language = str_of(content, "language").filter(|l| *l != "unknown");
            let text = str_of(content, "text").unwrap_or_default();
            r.part(
                "code",
                format!("```{}\n{text}\n```", language.unwrap_or_default()),
            );
        }
        "execution_output" => labelled(
            &mut r,
            "execution_output",
            "[execution output]",
            str_of(content, "text"),
        ),
        "tether_browsing_display" => {
            let text = str_of(content, "summary").or_else(|| str_of(content, "result"));
            labelled(&mut r, "browsing", "[browsing]", text)
        }
        "tether_quote" => {
            let source = [str_of(content, "title"), str_of(content, "url")]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(" ");
            labelled(
                &mut r,
                "quote",
                &format!("[quote: {source}]"),
                str_of(content, "text"),
            )
        }
        "system_error" => {
            let name = str_of(content, "name").unwrap_or("error");
            labelled(
                &mut r,
                "error",
                &format!("[error: {name}]"),
                str_of(content, "text"),
            )
        }
        "user_editable_context" => {
            let text = [
                str_of(content, "user_profile"),
                str_of(content, "user_instructions"),
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
            str_of(content, "model_set_context"),
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
            str_of(content, "content"),
        ),
        other => {
            // A content type this build does not know: its name and every string it holds.
            let text = strings_in(content);
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
pub(super) fn labelled(r: &mut Rendering, kind: &str, label: &str, text: Option<&str>) {
    match text {
        Some(text) => r.part(kind, format!("{label}\n{text}")),
        None => r.part(kind, label.to_string()),
    }
}

/// A non-string part of `parts` (images, audio, transcriptions).
pub(super) fn part_object(part: &Value, r: &mut Rendering) {
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
