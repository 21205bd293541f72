//! Conversations in other tools' formats: ChatGPT and Claude.ai data exports, OpenAI Chat
//! Completions messages and Anthropic Messages request bodies in; a context out as OpenAI messages,
//! an Anthropic body or a Markdown transcript.
//!
//! Everything here is pure: JSON values in, [`Conversation`]s (a tree of messages in insertion order)
//! or JSON/text out. Reading files (streamed, with limits) is `input`; writing the conversations
//! into a database is the `import` operation (`ops::import`); gathering a context for export is
//! `export`. The exact field mappings are documented in docs/interchange.md.
//!
//! What Timeline has no place for is kept in a documented form rather than dropped: a message whose
//! role is not one of Timeline's (tool, developer, function) or that holds more than plain text
//! (tool calls and results, images, files, thinking, ...) gets the text rendering of every part as
//! its text (`[image: ...]`, `[tool call ...]`), and an intent whose tag names the original role or
//! kind, and a provenance that holds the original message as JSON (`{"import": FORMAT, "message":
//! ...}`), from which exports rebuild it. Provenance is a node field only importers write; an intent
//! note, which anyone may write, is never read by an export.

pub(crate) mod anthropic;
mod chatgpt;
mod claude;
pub(crate) mod claude_code;
pub(crate) mod codex;
pub(crate) mod digest;
pub(crate) mod gemini;
pub(crate) mod input;
pub(crate) mod llm;
pub(crate) mod markdown;
pub(crate) mod openai;
mod values;
mod walk;

pub(crate) use walk::Read;
mod webui;

use crate::model::{Intent, Role};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// The largest JSON text of one conversation (or one whole openai/anthropic file) that is parsed. A
/// bigger conversation is skipped with a reason; a bigger openai/anthropic file is refused.
pub const MAX_CONVERSATION_BYTES: u64 = 128 << 20;

/// The intent tag of the second and later nodes of a message split because its text was over the
/// text limit (`max_text_bytes`). Exports join such nodes to the message before them.
pub const CONTINUED_TAG: &str = "continued";

/// An import format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A ChatGPT data export (`conversations.json`).
    ChatGpt,
    /// A Claude.ai data export.
    Claude,
    /// An OpenAI Chat Completions `messages` array (or request body).
    OpenAi,
    /// An Anthropic Messages request body.
    Anthropic,
    /// Claude Code session transcripts (JSONL, one file per session), kept up to date.
    ClaudeCode,
    /// Codex CLI rollout files (JSONL, one file per session), kept up to date.
    Codex,
    /// Gemini CLI sessions (JSONL, one file per session), kept up to date.
    GeminiCli,
    /// simonw/llm's `logs.db`, read-only, kept up to date.
    Llm,
    /// An Open WebUI chat export (a JSON array of chats).
    OpenWebUi,
    /// A LibreChat conversation export.
    LibreChat,
}

impl Format {
    /// The format named `s` on the command line (`chatgpt`, `claude`, `openai`, `anthropic`); `None` otherwise.
    pub fn parse(s: &str) -> Option<Format> {
        Some(match s {
            "chatgpt" => Format::ChatGpt,
            "claude" => Format::Claude,
            "openai" => Format::OpenAi,
            "anthropic" => Format::Anthropic,
            "claude-code" => Format::ClaudeCode,
            "codex" => Format::Codex,
            "gemini-cli" => Format::GeminiCli,
            "llm" => Format::Llm,
            "open-webui" => Format::OpenWebUi,
            "librechat" => Format::LibreChat,
            _ => return None,
        })
    }

    /// The format's name on the command line and in results.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::ChatGpt => "chatgpt",
            Format::Claude => "claude",
            Format::OpenAi => "openai",
            Format::Anthropic => "anthropic",
            Format::ClaudeCode => "claude-code",
            Format::Codex => "codex",
            Format::GeminiCli => "gemini-cli",
            Format::Llm => "llm",
            Format::OpenWebUi => "open-webui",
            Format::LibreChat => "librechat",
        }
    }

    /// A data export holding many conversations (a JSON array), as opposed to one API request.
    pub fn is_export(self) -> bool {
        matches!(
            self,
            Format::ChatGpt | Format::Claude | Format::OpenWebUi | Format::LibreChat
        )
    }

    /// A tool's own session files (JSONL, one session a file), read from its default folder when no
    /// input is given, and imported again into the same timeline as they grow.
    pub fn is_session(self) -> bool {
        matches!(
            self,
            Format::ClaudeCode | Format::Codex | Format::GeminiCli | Format::Llm
        )
    }

    /// Imported again, a conversation that changed adds its new messages to its timeline (by
    /// their IDs in the source) instead of becoming a new one: the session formats, and the chat
    /// UIs' exports, whose messages have IDs and which grow as their conversations do.
    pub fn keeps_up_to_date(self) -> bool {
        self.is_session() || matches!(self, Format::OpenWebUi | Format::LibreChat)
    }

    /// How messages name the format ("is not ...").
    pub fn label(self) -> &'static str {
        match self {
            Format::ChatGpt => "a ChatGPT export",
            Format::Claude => "a Claude.ai export",
            Format::OpenAi => "OpenAI Chat Completions messages",
            Format::Anthropic => "an Anthropic Messages request body",
            Format::ClaudeCode => "a Claude Code session transcript",
            Format::Codex => "a Codex CLI rollout",
            Format::GeminiCli => "a Gemini CLI session",
            Format::Llm => "an llm logs.db",
            Format::OpenWebUi => "an Open WebUI chat export",
            Format::LibreChat => "a LibreChat export",
        }
    }

    /// The conversation's ID in its source, if the format has one.
    pub fn source_id(self, value: &Value) -> Option<String> {
        let field = |name: &str| value.get(name).and_then(Value::as_str).map(str::to_string);
        match self {
            Format::ChatGpt => field("id").or_else(|| field("conversation_id")),
            Format::Claude => field("uuid"),
            Format::OpenWebUi => field("id"),
            Format::LibreChat => field("conversationId"),
            Format::OpenAi
            | Format::Anthropic
            | Format::ClaudeCode
            | Format::Codex
            | Format::GeminiCli
            | Format::Llm => None,
        }
    }

    /// The conversation's title in its source, read without converting it (for skip reports).
    pub fn title(self, value: &Value) -> Option<String> {
        let name = match self {
            Format::ChatGpt => "title",
            Format::Claude => "name",
            Format::OpenWebUi | Format::LibreChat => "title",
            Format::OpenAi
            | Format::Anthropic
            | Format::ClaudeCode
            | Format::Codex
            | Format::GeminiCli
            | Format::Llm => return None,
        };
        value
            .get(name)
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_string)
    }

    /// Convert one conversation of this format from its value (as [`read`] reads it from its
    /// text).
    #[cfg(test)]
    pub fn convert(self, value: &Value) -> Result<Conversation, String> {
        let sink = digest::Sink::new(Default::default());
        let budget = values::Budget::new(usize::MAX);
        read(self, value, &sink, &budget)
            .map_err(|e| format!("it cannot be read: {e}"))?
            .conversation
    }
}

/// Read one conversation (one element of an export, or a whole request file) of `format` into
/// its compact form as it is parsed, digesting its JSON into `sink`, within `budget` (see the
/// module `walk`). The session formats are read line by line, never this way.
pub(crate) fn read<'de, D: serde::Deserializer<'de>>(
    format: Format,
    deserializer: D,
    sink: &digest::Sink,
    budget: &values::Budget,
) -> Result<Read, D::Error> {
    match format {
        Format::ChatGpt => chatgpt::read(deserializer, sink, budget),
        Format::Claude => claude::read(deserializer, sink, budget),
        Format::OpenAi => openai::read(deserializer, sink, budget),
        Format::Anthropic => anthropic::read(deserializer, sink, budget),
        Format::OpenWebUi => webui::read_open_webui(deserializer, sink, budget),
        Format::LibreChat => webui::read_librechat(deserializer, sink, budget),
        Format::ClaudeCode | Format::Codex | Format::GeminiCli | Format::Llm => {
            serde::de::IgnoredAny::deserialize(deserializer)?;
            Ok(Read {
                source_id: None,
                title: None,
                conversation: Err("a session file is JSON lines, not one JSON value".into()),
            })
        }
    }
}

/// One conversation ready to be written: messages in insertion order, each after its parent.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Conversation {
    /// The conversation's title in its source.
    pub title: Option<String>,
    /// Creation time in its source, Unix milliseconds.
    pub create_time_ms: Option<u64>,
    /// Time of the last change in its source, Unix milliseconds.
    pub update_time_ms: Option<u64>,
    /// The messages, each after its parent.
    pub messages: Vec<Msg>,
    /// The message the source showed last (ChatGPT `current_node`): the head of `main`. `None`: the
    /// last message.
    pub current: Option<usize>,
    /// What the conversion met, counted by kind.
    pub kinds: Kinds,
    /// Why it is skipped although it is of the format (its messages' parents form a cycle, it is
    /// over the size limit), with this reason in the report; `None`: it is written.
    pub skip: Option<String>,
}

/// One message of a [`Conversation`].
#[derive(Debug, Clone, PartialEq)]
pub struct Msg {
    /// An earlier message of the same conversation; `None` for the first one(s).
    pub parent: Option<usize>,
    /// The Timeline role it becomes. [`Role::Summary`]: not a message but a summary (a session's
    /// compaction) of the path from its first message down to `parent`; no message names it as
    /// its parent, and it is written as `summarize` writes one.
    pub role: Role,
    /// The text it becomes.
    pub text: String,
    /// The intent it becomes (its tag names the original role or kind).
    pub intent: Option<Intent>,
    /// The node's provenance: the original message as JSON (see [`crate::model::Node::provenance`]).
    pub provenance: Option<String>,
    /// The message's ID in its source.
    pub source_id: Option<String>,
    /// Creation time in its source, Unix milliseconds.
    pub time_ms: Option<u64>,
}

/// What an import met, counted by kind: original roles, parts of messages (text, image, tool_call,
/// ...) and what was left out (hidden roots, empty messages).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Kinds {
    /// Original roles met, by name.
    pub roles: BTreeMap<String, u64>,
    /// Message parts met, by kind (text, image, tool_call, ...).
    pub parts: BTreeMap<String, u64>,
    /// What was left out, by reason.
    pub skipped: BTreeMap<String, u64>,
}

impl Kinds {
    /// Count one message of original role `role`.
    pub fn role(&mut self, role: &str) {
        *self.roles.entry(role.to_string()).or_default() += 1;
    }

    /// Count one message part of kind `kind`.
    pub fn part(&mut self, kind: &str) {
        *self.parts.entry(kind.to_string()).or_default() += 1;
    }

    /// Count one thing left out, for reason `what`.
    pub fn skip(&mut self, what: &str) {
        *self.skipped.entry(what.to_string()).or_default() += 1;
    }

    /// Add the counts of `other` to these.
    pub fn add(&mut self, other: &Kinds) {
        for (mine, theirs) in [
            (&mut self.roles, &other.roles),
            (&mut self.parts, &other.parts),
            (&mut self.skipped, &other.skipped),
        ] {
            for (k, v) in theirs {
                *mine.entry(k.clone()).or_default() += v;
            }
        }
    }
}

/// The text rendering of one message's parts, and the kinds it met, in order.
#[derive(Debug, Default)]
pub(crate) struct Rendering {
    pieces: Vec<String>,
    /// Non-text kinds, in the order met.
    kinds: Vec<String>,
    texts: u64,
}

impl Rendering {
    /// A text part (empty ones are dropped: they carry nothing).
    pub fn text(&mut self, text: &str) {
        if !text.is_empty() {
            self.pieces.push(text.to_string());
            self.texts += 1;
        }
    }

    /// A part of another kind with its rendering.
    pub fn part(&mut self, kind: &str, rendering: String) {
        self.pieces.push(rendering);
        self.kinds.push(kind.to_string());
    }

    /// Only a kind (no rendering of its own, e.g. a tool result whose text was added as text).
    pub fn kind(&mut self, kind: &str) {
        self.kinds.push(kind.to_string());
    }

    /// Nothing but whitespace so far.
    pub fn is_empty(&self) -> bool {
        self.pieces.iter().all(|p| p.trim().is_empty())
    }

    /// Put a label line before everything rendered so far.
    pub fn prefix(&mut self, label: String) {
        self.pieces.insert(0, label);
    }

    /// The pieces joined by blank lines, counted into `kinds`.
    pub fn finish(self, kinds: &mut Kinds) -> (String, Vec<String>) {
        for _ in 0..self.texts {
            kinds.part("text");
        }
        for kind in &self.kinds {
            kinds.part(kind);
        }
        (self.pieces.join("\n\n"), self.kinds)
    }
}

/// The intent tag of a message that is not plain text in one of Timeline's roles: the original role
/// when Timeline has no such role, else a tool call or result, else the first other kind met, else
/// `original` (fields Timeline has no place for, kept in the note).
/// A name from the source that is not a tag `append` accepts (empty, or over the tag size limit) is
/// passed over, so `original` is the tag when nothing else fits.
pub(crate) fn tag_for(original_role: Option<&str>, kinds: &[String]) -> String {
    let fits = |tag: &str| {
        crate::spec::validate::intent_problem(&Intent {
            tag: tag.to_string(),
            note: None,
        })
        .is_none()
    };
    if let Some(role) = original_role.filter(|r| fits(r)) {
        return role.to_string();
    }
    for preferred in ["tool_call", "tool_result"] {
        if kinds.iter().any(|k| k == preferred) {
            return preferred.to_string();
        }
    }
    kinds
        .iter()
        .find(|k| fits(k))
        .cloned()
        .unwrap_or_else(|| "original".to_string())
}

/// What is kept on a message that is not plain: an intent tagged `tag`, and the original as the
/// node's provenance `{"import": FORMAT, "message": ORIGINAL}`. An original over the text limit is
/// not kept (its size is, as `original_bytes`), and counted as skipped `original_form`.
pub(crate) fn intent(
    format: Format,
    tag: String,
    original: Value,
    kinds: &mut Kinds,
) -> (Intent, String) {
    intent_with(format, "message", tag, original, kinds)
}

pub(crate) fn intent_with(
    format: Format,
    key: &str,
    tag: String,
    original: Value,
    kinds: &mut Kinds,
) -> (Intent, String) {
    let mut note = Map::new();
    note.insert("import".into(), json!(format.as_str()));
    note.insert(key.into(), original);
    let mut text = Value::Object(note).to_string();
    let limit = crate::spec::spec().constants.max_text_bytes;
    if text.len() > limit {
        kinds.skip("original_form");
        text = json!({ "import": format.as_str(), "original_bytes": text.len() }).to_string();
    }
    (Intent { tag, note: None }, text)
}

/// A message of an API request (OpenAI, Anthropic: no source ID, no time), the child of `parent`;
/// `kept`, when it is not plain: its intent tag and the original message, kept (see [`intent`]).
pub(crate) fn request_message(
    format: Format,
    parent: Option<usize>,
    role: Role,
    text: String,
    kept: Option<(String, &Value)>,
    kinds: &mut Kinds,
) -> Msg {
    let (intent, provenance) = kept
        .map(|(tag, original)| intent(format, tag, original.clone(), kinds))
        .unzip();
    Msg {
        parent,
        role,
        text,
        intent,
        provenance,
        source_id: None,
        time_ms: None,
    }
}

/// The intent and provenance of part `part` (2 or more) of `parts` of a message split at import.
pub fn continued(format: Format, part: usize, parts: usize) -> (Intent, String) {
    (
        Intent {
            tag: CONTINUED_TAG.to_string(),
            note: None,
        },
        json!({ "import": format.as_str(), "part": part, "of": parts }).to_string(),
    )
}

/// The original message kept in an imported node's provenance, when it came from `format`.
pub fn original(provenance: Option<&str>, format: Format) -> Option<Value> {
    original_field(provenance, format, "message")
}

/// Field `key` of an imported node's provenance, when it came from `format`.
pub fn original_field(provenance: Option<&str>, format: Format, key: &str) -> Option<Value> {
    let mut value: Value = serde_json::from_str(provenance?).ok()?;
    if value.get("import").and_then(Value::as_str) != Some(format.as_str()) {
        return None;
    }
    value.as_object_mut()?.remove(key)
}

/// Unix seconds (a JSON number, possibly fractional) as milliseconds.
pub(crate) fn seconds_to_ms(value: Option<&Value>) -> Option<u64> {
    let secs = value?.as_f64()?;
    (0.0..1e15)
        .contains(&secs)
        .then(|| (secs * 1000.0).round() as u64)
}

/// An RFC 3339 / ISO 8601 time such as `2024-01-15T10:30:00.000Z` or `2024-01-15T10:30:00+02:00` as
/// Unix milliseconds; `None` when it is not one (or before 1970).
pub(crate) fn iso_to_ms(text: &str) -> Option<u64> {
    let b = text.as_bytes();
    let num = |range: std::ops::Range<usize>| -> Option<i64> {
        let s = text.get(range)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    if b[13] != b':' || b[16] != b':' {
        return None;
    }
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    if second > 60 {
        return None;
    }
    let mut at = 19;
    let mut millis = 0i64;
    if b.get(at) == Some(&b'.') {
        at += 1;
        let start = at;
        while at < b.len() && b[at].is_ascii_digit() {
            at += 1;
        }
        let digits = &text[start..at];
        if digits.is_empty() {
            return None;
        }
        let first3: String = digits.chars().chain("000".chars()).take(3).collect();
        millis = first3.parse().ok()?;
    }
    let offset_minutes = match b.get(at) {
        Some(b'Z' | b'z') if at + 1 == b.len() => 0,
        Some(sign @ (b'+' | b'-')) if at + 6 == b.len() && b[at + 3] == b':' => {
            let minutes = num(at + 1..at + 3)? * 60 + num(at + 4..at + 6)?;
            if *sign == b'+' { minutes } else { -minutes }
        }
        None => 0,
        _ => return None,
    };
    // Days from the civil date (proleptic Gregorian), after Howard Hinnant's algorithm.
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    let ms = seconds.checked_mul(1000)?.checked_add(millis)?;
    u64::try_from(ms).ok()
}

/// Message `i` of an API request's `messages` as an object, with its `role`; an error says which
/// message is not one.
pub(crate) fn message_with_role(
    i: usize,
    message: &Value,
) -> Result<(&Map<String, Value>, &str), String> {
    let Some(object) = message.as_object() else {
        return Err(format!("message {i} is not an object"));
    };
    let Some(role) = object.get("role").and_then(Value::as_str) else {
        return Err(format!("message {i} has no role"));
    };
    Ok((object, role))
}

/// Every string inside `value` except its `content_type`, joined by newlines: what an unknown part
/// says.
pub(crate) fn strings_in(value: &Value) -> String {
    fn walk(value: &Value, key: Option<&str>, out: &mut Vec<String>) {
        match value {
            Value::String(s) if key != Some("content_type") && !s.is_empty() => out.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|v| walk(v, None, out)),
            Value::Object(map) => map.iter().for_each(|(k, v)| walk(v, Some(k), out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(value, None, &mut out);
    out.join("\n")
}

/// A JSON value as compact text, for renderings of structured parts (tool inputs).
pub(crate) fn compact(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The size of base64 data as "N bytes" of decoded data (approximately, from its length).
pub(crate) fn base64_size(data: &str) -> String {
    let len = data.trim_end_matches('=').len();
    format!("{} bytes", len * 3 / 4)
}

/// A data URL (`data:image/png;base64,...`) shown without its data.
pub(crate) fn describe_url(url: &str) -> String {
    match url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(','))
    {
        Some((meta, data)) => format!("data:{meta} ({})", base64_size(data)),
        None => url.to_string(),
    }
}

/// The text of an API content value: a string, or the `text` of its text blocks/parts joined by
/// blank lines (other parts are left out).
pub(crate) fn plain_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter(|p| p.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n\n"),
        _ => String::new(),
    }
}

/// One message of a context being exported: a message, a real summary, or a placeholder (stored, or
/// computed by an export with a budget and not stored).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// `None` for a placeholder that a budget would create but the export did not store.
    pub node: Option<u64>,
    /// Role of the entry.
    pub role: Role,
    /// Its text.
    pub text: String,
    /// Its token count.
    pub tokens: u64,
    /// Its intent, when it has one (shown in Markdown; exports never rebuild anything from it).
    pub intent: Option<Intent>,
    /// Its provenance, when an import wrote one: what exports rebuild the original from.
    pub provenance: Option<String>,
    /// Whether it is a message, a summary or a placeholder.
    pub kind: EntryKind,
}

/// What an exported entry stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A message, kept verbatim.
    Message,
    /// A real summary of the messages `from..=to`.
    Summary {
        /// First node of the range.
        from: u64,
        /// Last node of the range.
        to: u64,
    },
    /// A placeholder for the messages `from..=to`.
    Placeholder {
        /// First node of the range.
        from: u64,
        /// Last node of the range.
        to: u64,
    },
}

impl Entry {
    /// A later part of a message (split at import, or a later line of a Claude Code API
    /// response): its provenance's `part` says so, whatever its intent tag. What goes between the
    /// message before and this continuation's text: nothing for a part of
    /// a text split at the limit (its provenance says `of` how many), a blank line for a later
    /// line of a Claude Code API response (a content block of its own, as the importer renders
    /// blocks). `None`: not a continuation.
    fn continuation(&self) -> Option<&'static str> {
        if self.kind != EntryKind::Message {
            return None;
        }
        let p = serde_json::from_str::<Value>(self.provenance.as_deref()?).ok()?;
        p.get("part").filter(|k| k.is_u64())?;
        Some(if p.get("of").is_some() { "" } else { "\n\n" })
    }

    /// The text a model reads for a summary or placeholder: a real summary says what it stands for;
    /// a placeholder's text says so already.
    pub fn summary_text(&self) -> String {
        match self.kind {
            EntryKind::Summary { from, to } => format!(
                "[summary of {}..{}] {}",
                crate::model::node_id(from),
                crate::model::node_id(to),
                self.text
            ),
            _ => self.text.clone(),
        }
    }
}

/// Entries grouped per message: each entry with the texts of the continuation entries after it
/// joined to its own.
pub fn joined(entries: &[Entry]) -> Vec<(&Entry, String)> {
    let mut out: Vec<(&Entry, String)> = Vec::with_capacity(entries.len());
    for entry in entries {
        match out.last_mut() {
            Some((_, text)) if let Some(between) = entry.continuation() => {
                text.push_str(between);
                text.push_str(&entry.text);
            }
            _ => out.push((entry, entry.text.clone())),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_times() {
        assert_eq!(iso_to_ms("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            iso_to_ms("2024-01-15T10:30:00.000Z"),
            Some(1_705_314_600_000)
        );
        assert_eq!(
            iso_to_ms("2024-01-15T10:30:00.123456Z"),
            Some(1_705_314_600_123)
        );
        assert_eq!(
            iso_to_ms("2024-01-15T12:30:00+02:00"),
            Some(1_705_314_600_000)
        );
        assert_eq!(iso_to_ms("2024-02-29T00:00:00Z"), Some(1_709_164_800_000));
        for bad in [
            "",
            "2024-01-15",
            "2024-13-01T00:00:00Z",
            "2024-01-15T10:30:00X",
            "1969-12-31T23:59:59Z",
            "2024-01-15T10:30:00.Z",
            "２０２４-01-15T10:30:00Z",
        ] {
            assert_eq!(iso_to_ms(bad), None, "{bad}");
        }
    }

    #[test]
    fn seconds() {
        assert_eq!(
            seconds_to_ms(Some(&json!(1_699_564_800.123_456))),
            Some(1_699_564_800_123)
        );
        assert_eq!(seconds_to_ms(Some(&json!(-1))), None);
        assert_eq!(seconds_to_ms(Some(&json!("1"))), None);
        assert_eq!(seconds_to_ms(None), None);
    }

    #[test]
    fn data_urls_are_described() {
        assert_eq!(
            describe_url("data:image/png;base64,AAAA"),
            "data:image/png;base64 (3 bytes)"
        );
        assert_eq!(describe_url("https://x/y.png"), "https://x/y.png");
    }
}
