//! Gemini CLI sessions: `~/.gemini/tmp/<project hash>/chats/session-<time>-<id>.jsonl`, a metadata
//! line (`sessionId`, `projectHash`, `startTime`), then message records (`id`, `timestamp`, `type`
//! user / gemini / info / error / warning, `content`, `thoughts`, `toolCalls`, `model`), `$set`
//! updates of the metadata, and `$rewindTo` records. Gemini CLI drops the messages from the one a
//! `$rewindTo` names on when it loads the session; here they stay, as a branch, and the messages
//! after the rewind continue from the message before it. A record whose `id` came before replaces
//! that message (the CLI re-records a message as it grows). An older session saved as one JSON
//! object `{sessionId, messages: [...]}` is read the same way.

use super::{Conversation, Format, Kinds, Msg, Rendering, compact, iso_to_ms, strings_in};
use crate::model::{Intent, Role};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Where Gemini CLI keeps its sessions: `~/.gemini/tmp` (one folder per project, `chats/` in it).
pub fn default_dir() -> Option<PathBuf> {
    super::claude_code::home().map(|h| h.join(".gemini").join("tmp"))
}

/// Whether a file found in a folder is a session: `session-*.jsonl` or `session-*.json` in a
/// `chats` folder.
pub fn is_session_file(path: &Path) -> bool {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.starts_with("session-")
        && (name.ends_with(".jsonl") || name.ends_with(".json"))
        && path
            .parent()
            .and_then(Path::file_name)
            .is_some_and(|n| n == "chats")
}

/// The records of the file: its lines, or the messages of a whole-JSON session (after its
/// metadata as the first record).
fn records(text: &str, kinds: &mut Kinds) -> Vec<Map<String, Value>> {
    if let Some(Value::Object(mut whole)) = super::values::parse_line(text)
        && let Some(Value::Array(messages)) = whole.remove("messages")
    {
        let mut out = vec![whole];
        out.extend(messages.into_iter().filter_map(|m| match m {
            Value::Object(m) => Some(m),
            _ => None,
        }));
        return out;
    }
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match super::values::parse_line(line) {
            Some(Value::Object(record)) => out.push(record),
            _ => kinds.skip("unreadable_line"),
        }
    }
    out
}

/// The text of a `content` value: a string, or parts with `text` (others by their strings).
fn content_text(content: Option<&Value>, r: &mut Rendering) {
    match content {
        Some(Value::String(text)) => r.text(text),
        Some(Value::Array(parts)) => {
            for part in parts {
                match part.get("text").and_then(Value::as_str) {
                    Some(text) if part.get("thought") != Some(&json!(true)) => r.text(text),
                    Some(text) => r.part("thinking", format!("[thinking]\n{text}")),
                    None => {
                        let kind = part
                            .as_object()
                            .and_then(|o| o.keys().next().cloned())
                            .unwrap_or_else(|| "part".into());
                        r.part(&kind, format!("[{kind}]\n{}", strings_in(part)));
                    }
                }
            }
        }
        _ => {}
    }
}

/// What a tool call's `result` says: the `response.output` (else the response) of its
/// `functionResponse` parts, else every string in it.
fn result_text(result: &Value) -> String {
    let responses: Vec<String> = result
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|part| part.get("functionResponse")?.get("response"))
        .map(|response| match response.get("output") {
            Some(Value::String(output)) => output.clone(),
            _ => compact(response),
        })
        .collect();
    if responses.is_empty() {
        strings_in(result)
    } else {
        responses.join("\n")
    }
}

/// The session's ID and its conversation. `Err` when no record is a Gemini CLI record.
pub fn convert(text: &str) -> Result<(Option<String>, Conversation), String> {
    let mut kinds = Kinds::default();
    let mut conversation = Conversation::default();
    let mut session = None;
    let mut recognised = 0u64;
    let records = records(text, &mut kinds);
    let total = records.len();
    // Message ID -> its index; the message the next one continues.
    let mut by_id: HashMap<String, usize> = HashMap::new();
    let mut tip: Option<usize> = None;
    for record in records {
        let s = |key: &str| record.get(key).and_then(Value::as_str);
        if let Some(target) = s("$rewindTo") {
            recognised += 1;
            kinds.skip("rewind");
            match by_id.get(target) {
                Some(&i) => tip = conversation.messages[i].parent,
                None => kinds.skip("rewind_to_unknown_message"),
            }
            continue;
        }
        if record.contains_key("$set") {
            recognised += 1;
            kinds.skip("$set");
            continue;
        }
        let Some(kind) = s("type") else {
            if let Some(id) = s("sessionId") {
                recognised += 1;
                session.get_or_insert_with(|| id.to_string());
                let start = s("startTime").and_then(iso_to_ms);
                conversation.create_time_ms = conversation.create_time_ms.or(start);
            } else {
                kinds.skip("untyped");
            }
            continue;
        };
        let (role, tag) = match kind {
            "user" => (Role::User, None),
            "gemini" | "model" => (Role::Assistant, None),
            "info" | "error" | "warning" => (Role::System, Some(kind.to_string())),
            other => {
                kinds.skip(other);
                continue;
            }
        };
        recognised += 1;
        let mut r = Rendering::default();
        for thought in record
            .get("thoughts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let subject = thought.get("subject").and_then(Value::as_str).unwrap_or("");
            let description = thought
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("");
            r.part(
                "thinking",
                format!("[thinking] {subject}\n{description}")
                    .trim()
                    .to_string(),
            );
        }
        content_text(record.get("content"), &mut r);
        for call in record
            .get("toolCalls")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let g = |key: &str| call.get(key).and_then(Value::as_str);
            let id = g("id").map(|id| format!(" {id}")).unwrap_or_default();
            let args = call.get("args").map(compact).unwrap_or_default();
            r.part(
                "tool_call",
                format!("[tool call{id}: {}({args})]", g("name").unwrap_or("tool")),
            );
            if let Some(result) = call.get("result").filter(|v| !v.is_null()) {
                let status = g("status").map(|s| format!(" ({s})")).unwrap_or_default();
                r.part(
                    "tool_result",
                    format!("[tool result{id}{status}]\n{}", result_text(result)),
                );
            }
        }
        let time_ms = s("timestamp").and_then(iso_to_ms);
        if time_ms.is_some() {
            conversation.create_time_ms = conversation.create_time_ms.or(time_ms);
            conversation.update_time_ms = time_ms.max(conversation.update_time_ms);
        }
        if r.is_empty() {
            kinds.skip("empty_message");
            continue;
        }
        let id = s("id").map(str::to_string);
        // A message recorded again (as it grew) is counted once, as first met.
        let again = id.as_ref().is_some_and(|id| by_id.contains_key(id));
        let (text, met) = if again {
            kinds.skip("re-recorded");
            r.finish(&mut Kinds::default())
        } else {
            let finished = r.finish(&mut kinds);
            kinds.role(kind);
            finished
        };
        let intent = tag
            .or_else(|| (!met.is_empty()).then(|| super::tag_for(None, &met)))
            .map(|tag| Intent { tag, note: None });
        let mut kept = Map::new();
        kept.insert("import".into(), json!(Format::GeminiCli.as_str()));
        if let Some(id) = &id {
            kept.insert("id".into(), json!(id));
        }
        if let Some(model) = s("model") {
            kept.insert("model".into(), json!(model));
        }
        let provenance = Some(Value::Object(kept).to_string());
        // A message recorded again replaces its earlier version in place.
        if let Some(&i) = id.as_ref().and_then(|id| by_id.get(id)) {
            let m = &mut conversation.messages[i];
            (m.text, m.intent, m.provenance) = (text, intent, provenance);
            continue;
        }
        if conversation.title.is_none() && role == Role::User && intent.is_none() {
            conversation.title = Some(super::claude_code::first_line(&text));
        }
        conversation.messages.push(Msg {
            parent: tip,
            role,
            text,
            intent,
            provenance,
            source_id: id.clone(),
            time_ms,
        });
        let at = conversation.messages.len() - 1;
        if let Some(id) = id {
            by_id.insert(id, at);
        }
        tip = Some(at);
    }
    if total > 0 && recognised == 0 {
        return Err("none of its records is a Gemini CLI session record".into());
    }
    conversation.current = tip;
    conversation.kinds = kinds;
    Ok((session, conversation))
}
