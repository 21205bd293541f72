//! Codex CLI rollout files: one JSONL file per session under
//! `~/.codex/sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl` (or `$CODEX_HOME/sessions`), each line
//! `{timestamp, type, payload}`. A rollout is linear and only ever appended to; a message's source
//! ID is a digest of the roles and texts of the path up to it, which is what lets a later import
//! of the grown file add only the new messages, and a fork (`forked_from_id`), which starts with
//! a copy of the history it came from, share those messages with it (`ops::import`).
//!
//! - `session_meta` gives the session's ID; `turn_context` the model of the answers after it.
//! - `response_item` lines are the messages: `message` (user, assistant, developer, system; text
//!   parts), `reasoning`, `function_call` / `custom_tool_call` / `local_shell_call` and their
//!   outputs, `web_search_call`.
//! - `compacted` (the replacement of the history by a summary) is a summary ([`Role::Summary`])
//!   of the path before it, tagged `compacted`: its `message`, else the text of its
//!   `replacement_history`.
//! - `event_msg` lines repeat what the response items hold for the UI and are left out; they and
//!   lines of unknown types are counted in `kinds.skipped` by type.

use super::{Conversation, Format, Kinds, Msg, Rendering, compact, iso_to_ms, strings_in};
use crate::model::{Intent, Role};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};

/// Where Codex keeps its sessions: `$CODEX_HOME/sessions`, else `~/.codex/sessions`.
pub fn default_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CODEX_HOME").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("sessions"));
    }
    super::claude_code::home().map(|h| h.join(".codex").join("sessions"))
}

/// Whether a file found in a folder is a rollout: `rollout-*.jsonl`.
pub fn is_session_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(".jsonl"))
}

/// The text of a `message` item's content parts, each counted.
fn message_text(content: Option<&Value>, r: &mut Rendering) {
    match content {
        Some(Value::String(text)) => r.text(text),
        Some(Value::Array(parts)) => {
            for part in parts {
                let kind = part.get("type").and_then(Value::as_str).unwrap_or("part");
                match kind {
                    "input_text" | "output_text" | "text" => {
                        r.text(part.get("text").and_then(Value::as_str).unwrap_or_default());
                    }
                    "input_image" => {
                        let url = part.get("image_url").and_then(Value::as_str).unwrap_or("");
                        r.part("image", format!("[image: {}]", super::describe_url(url)));
                    }
                    other => {
                        let text = strings_in(part);
                        r.part(other, format!("[{other}]\n{text}").trim_end().to_string());
                    }
                }
            }
        }
        _ => {}
    }
}

/// What a rollout's `session_meta` says of it.
#[derive(Debug, Default)]
pub struct Meta {
    /// `payload.id`.
    pub id: Option<String>,
    /// `payload.forked_from_id`: the session it is a fork of.
    pub forked_from: Option<String>,
}

/// The source ID of the message after `previous` (the one before it, or "" for the first): a
/// digest of the chain of roles and texts up to it. A fork copies the history of the session it
/// came from, so the copied messages get the IDs they have there, and the fork's own messages
/// the IDs of a new path (see `ops::import::sessions`).
fn chain_id(previous: &str, role: Role, text: &str) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(previous.as_bytes());
    hasher.update([0]);
    hasher.update(role.as_str().as_bytes());
    hasher.update([0]);
    hasher.update(text.as_bytes());
    let digest = hasher.finalize();
    let mut head = [0u8; 8];
    head.copy_from_slice(&digest[..8]);
    format!("{:016x}", u64::from_be_bytes(head))
}

/// The session's `session_meta` and its conversation, from the session file's lines (read one at
/// a time, so that the file is never held whole). `Err` when no line is a rollout line at all.
pub fn convert(lines: impl Iterator<Item = String>) -> Result<(Meta, Conversation), String> {
    let mut kinds = Kinds::default();
    let mut conversation = Conversation::default();
    let mut session = Meta::default();
    let mut model: Option<String> = None;
    let mut recognised = 0u64;
    let mut lines_read = 0u64;
    let mut last: Option<usize> = None;
    for (number, line) in lines.enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        lines_read += 1;
        let Some(Value::Object(line)) = super::values::parse_line(&line) else {
            kinds.skip("unreadable_line");
            continue;
        };
        let kind = line
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("untyped");
        let payload = line.get("payload").cloned().unwrap_or(Value::Null);
        let p = |key: &str| payload.get(key).and_then(Value::as_str);
        let time_ms = line
            .get("timestamp")
            .and_then(Value::as_str)
            .and_then(iso_to_ms);
        if time_ms.is_some() {
            conversation.create_time_ms = conversation.create_time_ms.or(time_ms);
            conversation.update_time_ms = time_ms.max(conversation.update_time_ms);
        }
        let mut r = Rendering::default();
        let (role, original_role, tag): (Role, Option<&str>, Option<String>) = match kind {
            "session_meta" => {
                recognised += 1;
                // A fork copies the session_meta of the session it came from after its own.
                if session.id.is_none() {
                    session.id = p("id").map(str::to_string);
                    session.forked_from = p("forked_from_id").map(str::to_string);
                }
                continue;
            }
            "turn_context" => {
                recognised += 1;
                if let Some(m) = p("model") {
                    model = Some(m.to_string());
                }
                continue;
            }
            "event_msg" => {
                recognised += 1;
                kinds.skip(&format!("event_msg:{}", p("type").unwrap_or("untyped")));
                continue;
            }
            "compacted" => {
                recognised += 1;
                // Its summary; a newer Codex leaves `message` empty and puts the history that
                // replaces the old one in `replacement_history` (its messages' text).
                let mut summary = p("message").unwrap_or_default().to_string();
                if summary.trim().is_empty() {
                    let mut h = Rendering::default();
                    for item in payload
                        .get("replacement_history")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter(|i| i.get("type").and_then(Value::as_str) == Some("message"))
                    {
                        message_text(item.get("content"), &mut h);
                    }
                    summary = h.finish(&mut Kinds::default()).0;
                }
                r.part("compacted", summary);
                (Role::Summary, None, Some("compacted".into()))
            }
            "response_item" => {
                recognised += 1;
                let item = p("type").unwrap_or("untyped");
                match item {
                    "message" => {
                        message_text(payload.get("content"), &mut r);
                        match p("role").unwrap_or("user") {
                            "user" => (Role::User, None, None),
                            "assistant" => (Role::Assistant, None, None),
                            "system" => (Role::System, None, None),
                            "developer" => (Role::System, Some("developer"), None),
                            _ => (Role::User, Some("other_role"), None),
                        }
                    }
                    "reasoning" => {
                        let summary: Vec<String> = payload
                            .get("summary")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .filter_map(|s| s.get("text").and_then(Value::as_str))
                            .map(str::to_string)
                            .collect();
                        r.part("thinking", format!("[thinking]\n{}", summary.join("\n\n")));
                        (Role::Assistant, None, None)
                    }
                    "function_call" | "custom_tool_call" | "local_shell_call" => {
                        let name = p("name").unwrap_or(item);
                        let id = p("call_id").map(|id| format!(" {id}")).unwrap_or_default();
                        let input = payload
                            .get("arguments")
                            .or_else(|| payload.get("input"))
                            .or_else(|| payload.get("action"))
                            .map(compact)
                            .unwrap_or_default();
                        r.part("tool_call", format!("[tool call{id}: {name}({input})]"));
                        (Role::Assistant, None, None)
                    }
                    "function_call_output" | "custom_tool_call_output" => {
                        let id = p("call_id").map(|id| format!(" {id}")).unwrap_or_default();
                        let output = match payload.get("output") {
                            Some(Value::String(s)) => s.clone(),
                            Some(other) => strings_in(other),
                            None => String::new(),
                        };
                        r.part("tool_result", format!("[tool result{id}]\n{output}"));
                        (Role::User, None, None)
                    }
                    "web_search_call" => {
                        let query = payload
                            .get("action")
                            .and_then(|a| a.get("query"))
                            .and_then(Value::as_str)
                            .unwrap_or_default();
                        r.part("tool_call", format!("[web search: {query}]"));
                        (Role::Assistant, None, None)
                    }
                    other => {
                        kinds.skip(&format!("response_item:{other}"));
                        continue;
                    }
                }
            }
            other => {
                kinds.skip(other);
                continue;
            }
        };
        if r.is_empty() {
            kinds.skip("empty_message");
            continue;
        }
        let (text, met) = r.finish(&mut kinds);
        // A compaction has no role.
        if role != Role::Summary {
            kinds.role(original_role.unwrap_or(match role {
                Role::User => "user",
                Role::Assistant => "assistant",
                _ => "system",
            }));
        }
        let intent = tag
            .or_else(|| {
                (original_role.is_some() || !met.is_empty())
                    .then(|| super::tag_for(original_role, &met))
            })
            .map(|tag| Intent { tag, note: None });
        let mut kept = Map::new();
        kept.insert("import".into(), json!(Format::Codex.as_str()));
        kept.insert("line".into(), json!(number + 1));
        if conversation.messages.is_empty()
            && let Some(from) = &session.forked_from
        {
            kept.insert("forked_from".into(), json!(from));
        }
        if role == Role::Assistant
            && let Some(m) = &model
        {
            kept.insert("model".into(), json!(m));
        }
        if conversation.title.is_none()
            && role == Role::User
            && intent.is_none()
            && !text.trim_start().starts_with('<')
        {
            conversation.title = Some(super::claude_code::first_line(&text));
        }
        let previous = last
            .and_then(|i| conversation.messages[i].source_id.as_deref())
            .unwrap_or("");
        let source_id = chain_id(previous, role, &text);
        conversation.messages.push(Msg {
            parent: last,
            role,
            text,
            intent,
            provenance: Some(Value::Object(kept).to_string()),
            source_id: Some(source_id),
            time_ms,
        });
        // A summary is no one's parent: the next message follows the one it came after.
        if role != Role::Summary {
            last = Some(conversation.messages.len() - 1);
        }
    }
    if lines_read > 0 && recognised == 0 {
        return Err(
            "none of its lines is a Codex rollout line (session_meta, response_item, event_msg, ...)"
                .into(),
        );
    }
    conversation.kinds = kinds;
    Ok((session, conversation))
}
