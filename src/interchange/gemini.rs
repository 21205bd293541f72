//! Gemini CLI sessions: `~/.gemini/tmp/<project hash>/chats/session-<time>-<id>.jsonl`, a metadata
//! line (`sessionId`, `projectHash`, `startTime`), then message records (`id`, `timestamp`, `type`
//! user / gemini / info / error / warning, `content`, `thoughts`, `toolCalls`, `model`), `$set`
//! updates of the metadata, and `$rewindTo` records. Gemini CLI drops the messages from the one a
//! `$rewindTo` names on when it loads the session; here they stay, as a branch, and the messages
//! after the rewind continue from the message before it. A record whose `id` came before replaces
//! that message (the CLI re-records a message as it grows). An older session saved as one JSON
//! object `{sessionId, messages: [...]}` is read the same way.

use super::digest::Sink;
use super::values::{self, Budget};
use super::walk::{self, Body, Top};
use super::{Conversation, Format, Kinds, Msg, Rendering, compact, iso_to_ms, strings_in};
use crate::model::{Intent, Role};
use serde::de::MapAccess;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::io::BufRead;
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

/// The fields of a record that the conversion reads: what is kept of a whole-JSON session's
/// metadata (the object besides its `messages`), its first record.
const FIELDS: &[&str] = &[
    "$rewindTo",
    "$set",
    "type",
    "sessionId",
    "startTime",
    "thoughts",
    "content",
    "toolCalls",
    "timestamp",
    "id",
    "model",
];

/// A whole-JSON session's object as it is walked: its metadata kept, its `messages` (the last ones
/// given, as a value keeps a key given twice) each handed to `session` as it is parsed, when
/// `session` is there (the second reading); the first reading counts the arrays.
struct Whole<'s> {
    /// How many `messages` keys were met, and whether the last held an array.
    met: usize,
    last_is_array: bool,
    /// The second reading: the session the messages go to, and which `messages` key to read.
    session: Option<(&'s mut Session, usize)>,
}

impl<'de> Body<'de> for Whole<'_> {
    const WHAT: &'static str = "a Gemini CLI session";
    const HEAD: &'static [&'static str] = FIELDS;

    fn special<A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        sink: &Sink,
        budget: &Budget,
    ) -> Result<bool, A::Error> {
        if key != "messages" {
            return Ok(false);
        }
        self.met += 1;
        let mut session = match &mut self.session {
            Some((session, last)) if *last == self.met => Some(&mut **session),
            _ => None,
        };
        self.last_is_array =
            map.next_value_seed(walk::elements(sink, budget, |_, record: Value| {
                if let (Some(session), Value::Object(record)) = (session.as_deref_mut(), record) {
                    session.record(record);
                }
                // What the session keeps is in its messages, counted by the allowance's size.
                0
            }))?;
        Ok(true)
    }
}

/// Read the file's one JSON object (`open` opens it) as a whole-JSON session: `None` when it is not
/// one (JSON lines, or a value it cannot read within the limits a line has: 128 levels, the
/// memory allowance of its size). Its text is never held: a first reading keeps its metadata and
/// finds its `messages`, a second converts them one at a time.
fn read_whole(open: &dyn Fn() -> std::io::Result<Box<dyn BufRead>>, len: u64) -> Option<Session> {
    let budget = Budget::new(values::allowance(len as usize));
    let sink = Sink::new(Default::default());
    let read = |body: &mut Whole| -> Option<Value> {
        let mut de = serde_json::Deserializer::from_reader(open().ok()?);
        let top = walk::walk(&mut de, &sink, &budget, body).ok()?;
        de.end().ok()?;
        match top {
            Top::Object(head) => Some(head),
            _ => None,
        }
    };
    let mut first = Whole {
        met: 0,
        last_is_array: false,
        session: None,
    };
    let head = read(&mut first)?;
    if !first.last_is_array {
        return None;
    }
    let Value::Object(head) = head else {
        return None;
    };
    let mut session = Session::default();
    session.record(head);
    let last = first.met;
    read(&mut Whole {
        met: 0,
        last_is_array: false,
        session: Some((&mut session, last)),
    })?;
    Some(session)
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

/// The session's ID and its conversation. `Err` when no record is a Gemini CLI record. The file
/// (`open` opens its first `len` bytes) is one JSON object read as it streams by, or else its
/// `lines`, one at a time: no file is held whole.
pub fn convert(
    open: &dyn Fn() -> std::io::Result<Box<dyn BufRead>>,
    len: u64,
    lines: impl Iterator<Item = String>,
) -> Result<(Option<String>, Conversation), String> {
    if let Some(session) = read_whole(open, len) {
        return session.finish();
    }
    let mut session = Session::default();
    for line in lines.filter(|l| !l.trim().is_empty()) {
        match super::values::parse_line(&line) {
            Some(Value::Object(record)) => session.record(record),
            _ => session.kinds.skip("unreadable_line"),
        }
    }
    session.finish()
}

/// A session as its records are read.
#[derive(Default)]
struct Session {
    kinds: Kinds,
    conversation: Conversation,
    session: Option<String>,
    recognised: u64,
    total: usize,
    /// Message ID -> its index.
    by_id: HashMap<String, usize>,
    /// The message the next one continues.
    tip: Option<usize>,
}

impl Session {
    fn finish(mut self) -> Result<(Option<String>, Conversation), String> {
        if self.total > 0 && self.recognised == 0 {
            return Err("none of its records is a Gemini CLI session record".into());
        }
        self.conversation.current = self.tip;
        self.conversation.kinds = self.kinds;
        Ok((self.session, self.conversation))
    }

    fn record(&mut self, record: Map<String, Value>) {
        self.total += 1;
        let Session {
            kinds,
            conversation,
            session,
            recognised,
            by_id,
            tip,
            ..
        } = self;
        let s = |key: &str| record.get(key).and_then(Value::as_str);
        if let Some(target) = s("$rewindTo") {
            *recognised += 1;
            kinds.skip("rewind");
            match by_id.get(target) {
                Some(&i) => *tip = conversation.messages[i].parent,
                None => kinds.skip("rewind_to_unknown_message"),
            }
            return;
        }
        if record.contains_key("$set") {
            *recognised += 1;
            kinds.skip("$set");
            return;
        }
        let Some(kind) = s("type") else {
            if let Some(id) = s("sessionId") {
                *recognised += 1;
                session.get_or_insert_with(|| id.to_string());
                let start = s("startTime").and_then(iso_to_ms);
                conversation.create_time_ms = conversation.create_time_ms.or(start);
            } else {
                kinds.skip("untyped");
            }
            return;
        };
        let (role, tag) = match kind {
            "user" => (Role::User, None),
            "gemini" | "model" => (Role::Assistant, None),
            "info" | "error" | "warning" => (Role::System, Some(kind.to_string())),
            other => {
                kinds.skip(other);
                return;
            }
        };
        *recognised += 1;
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
            return;
        }
        let id = s("id").map(str::to_string);
        // A message recorded again (as it grew) is counted once, as first met.
        let again = id.as_ref().is_some_and(|id| by_id.contains_key(id));
        let (text, met) = if again {
            kinds.skip("re-recorded");
            r.finish(&mut Kinds::default())
        } else {
            let finished = r.finish(kinds);
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
            return;
        }
        if conversation.title.is_none() && role == Role::User && intent.is_none() {
            conversation.title = Some(super::claude_code::first_line(&text));
        }
        conversation.messages.push(Msg {
            parent: *tip,
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
        *tip = Some(at);
    }
}
