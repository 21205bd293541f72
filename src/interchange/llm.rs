//! simonw/llm's `logs.db`, opened read-only: each row of `conversations` (and each conversation ID
//! of `responses` without one) is one conversation, its `responses` in time order one exchange
//! each: the system prompt (when it changes), the prompt, the response. A message's source ID is
//! `RESPONSE_ID/system`, `/prompt` or `/response`, which is what lets a later import add only the
//! exchanges logged since (`ops::import`).
//!
//! Newer versions of llm also keep a message store: content-addressed `messages` (each naming its
//! parent), their `parts`, `threads` pointing at their last message, a fork being a thread that
//! points into another's path (`forked_from`), and `turns` (one model call each). A thread and
//! its forks are one conversation, a tree whose source IDs are the messages' hashes.

use super::{Conversation, Format, Kinds, Msg, iso_to_ms};
use crate::model::{Intent, Role};
use rusqlite::{Connection, OpenFlags};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// Where llm keeps `logs.db`: `$LLM_USER_PATH`, else its folder in the user's configuration
/// directory (`io.datasette.llm`).
pub fn default_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("LLM_USER_PATH").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("logs.db"));
    }
    let home = super::claude_code::home()?;
    let config = if cfg!(target_os = "macos") {
        home.join("Library").join("Application Support")
    } else if cfg!(windows) {
        std::env::var_os("APPDATA")
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join("AppData").join("Roaming"))
    } else {
        std::env::var_os("XDG_CONFIG_HOME")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".config"))
    };
    Some(config.join("io.datasette.llm").join("logs.db"))
}

/// One response row, as read.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub id: String,
    pub model: Option<String>,
    pub prompt: Option<String>,
    pub system: Option<String>,
    pub response: Option<String>,
    pub datetime_utc: Option<String>,
}

impl Row {
    /// The row as JSON, for the conversation's digest.
    pub fn to_json(&self) -> Value {
        json!([
            self.id,
            self.model,
            self.prompt,
            self.system,
            self.response,
            self.datetime_utc
        ])
    }
}

/// How long a read waits for a lock another program holds on logs.db (llm writing a response).
pub const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Why logs.db could not be read.
#[derive(Debug)]
pub struct Failure {
    /// Another program kept it locked (`SQLITE_BUSY`, `SQLITE_LOCKED`) for longer than
    /// [`BUSY_TIMEOUT`]: try again later, the file is fine.
    pub busy: bool,
    /// Why it is not an llm logs.db (or what SQLite said).
    pub reason: String,
}

impl From<String> for Failure {
    fn from(reason: String) -> Failure {
        Failure {
            busy: false,
            reason,
        }
    }
}

impl From<rusqlite::Error> for Failure {
    fn from(e: rusqlite::Error) -> Failure {
        use rusqlite::ErrorCode as C;
        Failure {
            busy: matches!(
                e.sqlite_error_code(),
                Some(C::DatabaseBusy | C::DatabaseLocked)
            ),
            reason: e.to_string(),
        }
    }
}

/// The tables the import reads, as llm makes them: plain tables (never views or virtual tables)
/// without generated or hidden columns, so that reading a row evaluates nothing and costs no
/// more than the row's bytes.
const TABLES: [&str; 6] = [
    "conversations",
    "responses",
    "messages",
    "parts",
    "threads",
    "turns",
];

/// The database, opened read-only (nothing of it is ever written), its tables checked to be
/// llm's (see [`TABLES`]).
pub fn open(path: &Path) -> Result<Connection, Failure> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| Failure {
        reason: format!("it cannot be opened as an SQLite database: {e}"),
        ..Failure::from(e)
    })?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    let has_responses: bool = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'responses'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)
        .map_err(|e| Failure {
            reason: format!("it cannot be read as an SQLite database: {e}"),
            ..Failure::from(e)
        })?;
    check_tables(&conn)?;
    if !has_responses && !has_message_store(&conn) {
        return Err("it has no responses table, so it is not an llm logs.db"
            .to_string()
            .into());
    }
    Ok(conn)
}

/// Refuse a file whose tables of [`TABLES`] are not llm's: a view or a virtual table in the place
/// of one, or a generated or hidden column (which a read would compute, at any cost).
fn check_tables(conn: &Connection) -> Result<(), Failure> {
    let mut kind = conn.prepare(
        "SELECT type, sql FROM sqlite_master WHERE lower(name) = ?1 AND type IN ('table', 'view')",
    )?;
    let mut columns = conn.prepare("SELECT name, hidden FROM pragma_table_xinfo(?1)")?;
    for table in TABLES {
        let found: Vec<(String, Option<String>)> = kind
            .query_map([table], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let Some((what, sql)) = found.into_iter().next() else {
            continue;
        };
        let not_llm = |why: String| -> Failure {
            format!("its {table} {why}, which llm never makes, so it is not an llm logs.db (nothing of it was read)").into()
        };
        if what == "view" {
            return Err(not_llm("is a view, not a table,".into()));
        }
        let virtual_table = sql.as_deref().is_some_and(|sql| {
            sql.trim_start()
                .get(..20)
                .is_some_and(|head| head.eq_ignore_ascii_case("CREATE VIRTUAL TABLE"))
        });
        if virtual_table {
            return Err(not_llm("is a virtual table".into()));
        }
        let hidden: Option<String> = columns
            .query_map([table], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))
            })?
            .collect::<Result<Vec<_>, _>>()?
            .into_iter()
            .find(|(_, hidden)| *hidden != 0)
            .map(|(name, _)| name);
        if let Some(column) = hidden {
            return Err(not_llm(format!(
                "table has a generated or hidden column ({column:?})"
            )));
        }
    }
    Ok(())
}

/// What the response rows of a conversation hold, in bytes (the columns the import reads),
/// measured without reading them: SQLite's `octet_length` takes a value's size from its row.
pub fn conversation_bytes(conn: &Connection, conversation: &str) -> Result<u64, Failure> {
    let bytes: Option<i64> = conn
        .prepare_cached(
            "SELECT sum(ifnull(octet_length(id), 0) + ifnull(octet_length(model), 0) + ifnull(octet_length(prompt), 0) + ifnull(octet_length(system), 0) + ifnull(octet_length(response), 0) + ifnull(octet_length(datetime_utc), 0)) FROM responses WHERE conversation_id = ?1",
        )?
        .query_row([conversation], |r| r.get(0))?;
    Ok(bytes.unwrap_or(0).max(0) as u64)
}

/// Why a conversation of `bytes` is skipped: over the limit the other importers keep for one
/// conversation.
pub fn too_large(bytes: u64, what: &str) -> String {
    format!(
        "its {what} {bytes} bytes, over the limit of {} MiB for one conversation",
        super::MAX_CONVERSATION_BYTES >> 20
    )
}

/// Every conversation: (ID, name), by the time of its first response.
pub fn conversations(conn: &Connection) -> Result<Vec<(String, Option<String>)>, Failure> {
    if !has_table(conn, "responses")? {
        return Ok(Vec::new());
    }
    let has_names: bool = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'conversations'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)?;
    // A name longer than a title may be is not read (the first prompt titles the timeline).
    let sql = if has_names {
        "SELECT r.conversation_id, (SELECT CASE WHEN octet_length(name) <= 4096 THEN name END FROM conversations c WHERE c.id = r.conversation_id) FROM responses r WHERE r.conversation_id IS NOT NULL GROUP BY r.conversation_id ORDER BY min(r.datetime_utc), min(r.rowid)"
    } else {
        "SELECT conversation_id, NULL FROM responses WHERE conversation_id IS NOT NULL GROUP BY conversation_id ORDER BY min(datetime_utc), min(rowid)"
    };
    let mut stmt = conn.prepare(sql)?;
    Ok(stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .and_then(|rows| rows.collect())?)
}

/// The responses of one conversation, in time order.
pub fn rows(conn: &Connection, conversation: &str) -> Result<Vec<Row>, Failure> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, model, prompt, system, response, datetime_utc FROM responses WHERE conversation_id = ?1 ORDER BY datetime_utc, rowid",
    )?;
    Ok(stmt
        .query_map([conversation], |r| {
            Ok(Row {
                // Older versions of llm numbered responses; newer ones use text IDs.
                id: match r.get::<_, rusqlite::types::Value>(0)? {
                    rusqlite::types::Value::Text(s) => s,
                    rusqlite::types::Value::Integer(i) => i.to_string(),
                    other => format!("{other:?}"),
                },
                model: r.get(1)?,
                prompt: r.get(2)?,
                system: r.get(3)?,
                response: r.get(4)?,
                datetime_utc: r.get(5)?,
            })
        })
        .and_then(|rows| rows.collect())?)
}

/// `datetime_utc` (`2025-01-15T10:30:00.123456`, UTC without a zone) as Unix milliseconds.
fn time_of(text: &str) -> Option<u64> {
    iso_to_ms(text).or_else(|| iso_to_ms(&format!("{text}Z")))
}

/// One conversation's responses as a linear conversation.
pub fn convert(name: Option<&str>, rows: &[Row]) -> Conversation {
    let mut kinds = Kinds::default();
    let mut conversation = Conversation {
        title: name.filter(|n| !n.trim().is_empty()).map(str::to_string),
        ..Conversation::default()
    };
    let mut system: Option<&str> = None;
    for row in rows {
        let time_ms = row.datetime_utc.as_deref().and_then(time_of);
        if time_ms.is_some() {
            conversation.create_time_ms = conversation.create_time_ms.or(time_ms);
            conversation.update_time_ms = time_ms.max(conversation.update_time_ms);
        }
        let mut parts: Vec<(Role, &str, &str, Option<&str>)> = Vec::new();
        if let Some(s) = row.system.as_deref().filter(|s| !s.trim().is_empty())
            && system != Some(s)
        {
            parts.push((Role::System, "system", s, None));
            system = Some(s);
        }
        match row.prompt.as_deref().filter(|p| !p.trim().is_empty()) {
            Some(prompt) => parts.push((Role::User, "prompt", prompt, None)),
            None => kinds.skip("empty_prompt"),
        }
        match row.response.as_deref().filter(|p| !p.trim().is_empty()) {
            Some(response) => {
                parts.push((Role::Assistant, "response", response, row.model.as_deref()))
            }
            None => kinds.skip("empty_response"),
        }
        for (role, part, text, model) in parts {
            let mut kept = json!({"import": Format::Llm.as_str(), "response_id": row.id});
            if let Some(model) = model {
                kept["model"] = json!(model);
            }
            kinds.role(match role {
                Role::User => "user",
                Role::Assistant => "assistant",
                _ => "system",
            });
            kinds.part("text");
            conversation.messages.push(Msg {
                parent: conversation.messages.len().checked_sub(1),
                role,
                text: text.to_string(),
                intent: None::<Intent>,
                provenance: Some(kept.to_string()),
                source_id: Some(format!("{}/{part}", row.id)),
                time_ms,
            });
        }
    }
    if conversation.title.is_none() {
        conversation.title = conversation
            .messages
            .iter()
            .find(|m| m.role == Role::User)
            .map(|m| super::claude_code::first_line(&m.text));
    }
    conversation.kinds = kinds;
    conversation
}

/// Whether the database has llm's newer message store: content-addressed `messages` (each naming
/// its `parent_hash`), their `parts`, and `threads` pointing at a tip message (a fork is a second
/// thread pointing at a message that is there already).
pub fn has_message_store(conn: &Connection) -> bool {
    let columns = |table: &str| -> Vec<String> {
        conn.prepare("SELECT name FROM pragma_table_info(?1)")
            .and_then(|mut stmt| {
                stmt.query_map([table], |r| r.get::<_, String>(0))
                    .and_then(|rows| rows.collect())
            })
            .unwrap_or_default()
    };
    let has = |table: &str, wanted: &[&str]| {
        let found = columns(table);
        wanted.iter().all(|w| found.iter().any(|c| c == w))
    };
    has("messages", &["hash", "parent_hash", "role"])
        && has("parts", &["message_hash", "position", "type", "text"])
        && has(
            "threads",
            &["id", "name", "tip_message_hash", "forked_from"],
        )
}

/// One thread of the message store.
#[derive(Debug, Clone, PartialEq)]
pub struct Thread {
    pub id: String,
    pub name: Option<String>,
    pub tip: Option<String>,
    pub forked_from: Option<String>,
    pub datetime_utc: Option<String>,
}

/// The threads of the message store grouped by the thread they were forked from, first or
/// last: (the first thread's ID, its threads, that one first), by the time of the first thread.
/// A fork whose `forked_from` leads nowhere (or round in a circle) starts a group of its own.
pub fn thread_groups(conn: &Connection) -> Result<Vec<(String, Vec<Thread>)>, Failure> {
    let mut stmt = conn
        .prepare(
            "SELECT id, CASE WHEN octet_length(name) <= 4096 THEN name END, tip_message_hash, forked_from, datetime_utc FROM threads ORDER BY datetime_utc, rowid",
        )
        .map_err(Failure::from)?;
    let threads: Vec<Thread> = stmt
        .query_map([], |r| {
            Ok(Thread {
                id: r.get(0)?,
                name: r.get(1)?,
                tip: r.get(2)?,
                forked_from: r.get(3)?,
                datetime_utc: r.get(4)?,
            })
        })
        .and_then(|rows| rows.collect())
        .map_err(Failure::from)?;
    let by_id: std::collections::HashMap<&str, &Thread> =
        threads.iter().map(|t| (t.id.as_str(), t)).collect();
    let root_of = |t: &Thread| -> String {
        let mut at = t;
        let mut seen = std::collections::HashSet::new();
        while let Some(parent) = at.forked_from.as_deref().and_then(|p| by_id.get(p)) {
            if !seen.insert(at.id.as_str()) {
                break;
            }
            at = parent;
        }
        at.id.clone()
    };
    let mut groups: Vec<(String, Vec<Thread>)> = Vec::new();
    for thread in &threads {
        let root = root_of(thread);
        match groups.iter_mut().find(|(id, _)| *id == root) {
            Some((_, members)) => members.push(thread.clone()),
            None => groups.push((root, vec![thread.clone()])),
        }
    }
    // The first thread of a group is the one the others came from.
    for (root, members) in &mut groups {
        if let Some(at) = members.iter().position(|t| t.id == *root) {
            let first = members.remove(at);
            members.insert(0, first);
        }
    }
    Ok(groups)
}

fn has_table(conn: &Connection, name: &str) -> Result<bool, Failure> {
    conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?1",
        [name],
        |r| r.get::<_, i64>(0),
    )
    .map(|n| n > 0)
    .map_err(Failure::from)
}

/// A part of a stored message: its type, tool name, literal text and payload (JSON).
pub type Part = (String, Option<String>, Option<String>, Option<String>);

/// A turn as read: the message before what it added, its last message, its model and time.
type Turn = (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// One message of the message store, with its parts and what the turn that added it says.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMessage {
    pub hash: String,
    pub parent: Option<String>,
    pub role: Option<String>,
    /// Its parts, by position.
    pub parts: Vec<Part>,
    pub model: Option<String>,
    pub datetime_utc: Option<String>,
}

impl StoredMessage {
    /// The message as JSON, for the digest of its group.
    pub fn to_json(&self) -> Value {
        json!([
            self.hash,
            self.parent,
            self.role,
            self.parts,
            self.model,
            self.datetime_utc
        ])
    }
}

/// The messages of a group of threads: every message on the path to each thread's tip, each after
/// its parent; a message that names a parent that is missing starts a path. The turns of the
/// threads give the messages they added (from the turn's tip up to its `parent_message_hash`)
/// their model and time. `Ok(Err(bytes))`: their parts hold more than
/// [`super::MAX_CONVERSATION_BYTES`] (at least `bytes`), found before they were read.
pub fn thread_messages(
    conn: &Connection,
    threads: &[Thread],
) -> Result<Result<Vec<StoredMessage>, u64>, Failure> {
    let mut size = conn.prepare_cached(
        "SELECT sum(ifnull(octet_length(type), 0) + ifnull(octet_length(tool_name), 0) + ifnull(octet_length(text), 0) + ifnull(octet_length(payload), 0)) FROM parts WHERE message_hash = ?1",
    )?;
    let mut bytes = 0u64;
    let mut message = conn
        .prepare_cached("SELECT parent_hash, role FROM messages WHERE hash = ?1")
        .map_err(Failure::from)?;
    let mut parts = conn
        .prepare_cached(
            "SELECT type, tool_name, text, payload FROM parts WHERE message_hash = ?1 ORDER BY position",
        )
        .map_err(Failure::from)?;
    let mut out: Vec<StoredMessage> = Vec::new();
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for thread in threads {
        // The path up from the tip, until a message already taken (or missing, or a loop).
        let mut chain = Vec::new();
        let mut at = thread.tip.clone();
        let mut seen = std::collections::HashSet::new();
        while let Some(hash) = at {
            if index.contains_key(&hash) || !seen.insert(hash.clone()) {
                break;
            }
            let row: Option<(Option<String>, Option<String>)> = message
                .query_row([&hash], |r| Ok((r.get(0)?, r.get(1)?)))
                .map(Some)
                .or_else(|e| match e {
                    rusqlite::Error::QueryReturnedNoRows => Ok(None),
                    e => Err(e),
                })
                .map_err(Failure::from)?;
            let Some((parent, role)) = row else {
                break;
            };
            let more: Option<i64> = size.query_row([&hash], |r| r.get(0))?;
            bytes = bytes.saturating_add(more.unwrap_or(0).max(0) as u64 + hash.len() as u64);
            if bytes > super::MAX_CONVERSATION_BYTES {
                return Ok(Err(bytes));
            }
            let found = parts
                .query_map([&hash], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })
                .and_then(|rows| rows.collect())
                .map_err(Failure::from)?;
            at = parent.clone();
            chain.push(StoredMessage {
                hash,
                parent,
                role,
                parts: found,
                model: None,
                datetime_utc: None,
            });
        }
        for m in chain.into_iter().rev() {
            index.insert(m.hash.clone(), out.len());
            out.push(m);
        }
    }
    if has_table(conn, "turns")? {
        let mut turns = conn
            .prepare_cached(
                "SELECT parent_message_hash, tip_message_hash, model, datetime_utc FROM turns WHERE thread_id = ?1 ORDER BY datetime_utc, rowid",
            )
            .map_err(Failure::from)?;
        for thread in threads {
            let rows: Vec<Turn> = turns
                .query_map([&thread.id], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
                })
                .and_then(|rows| rows.collect())
                .map_err(Failure::from)?;
            for (stop, tip, model, time) in rows {
                let mut at = tip;
                let mut steps = 0;
                while let Some(i) = at.as_ref().and_then(|h| index.get(h)).copied() {
                    if at == stop || steps > out.len() {
                        break;
                    }
                    steps += 1;
                    let m = &mut out[i];
                    if m.datetime_utc.is_none() {
                        m.datetime_utc = time.clone();
                        if m.role.as_deref() == Some("assistant") {
                            m.model = model.clone();
                        }
                    }
                    at = m.parent.clone();
                }
            }
        }
    }
    Ok(Ok(out))
}

/// A group of threads as one conversation: its messages as a tree, the first thread's tip as the
/// head of main (the forks' tips are the other branches), titled by the first thread's name.
pub fn convert_threads(threads: &[Thread], messages: &[StoredMessage]) -> Conversation {
    let mut kinds = Kinds::default();
    let first = threads.first();
    let mut conversation = Conversation {
        title: first
            .and_then(|t| t.name.as_deref())
            .filter(|n| !n.trim().is_empty())
            .map(str::to_string),
        create_time_ms: first
            .and_then(|t| t.datetime_utc.as_deref())
            .and_then(time_of),
        ..Conversation::default()
    };
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for m in messages {
        let mut r = super::Rendering::default();
        for (kind, tool, text, payload) in &m.parts {
            let payload: Value = payload
                .as_deref()
                .and_then(|p| serde_json::from_str(p).ok())
                .unwrap_or(Value::Null);
            // A text that borrows fragments keeps its literal segments in the payload.
            let text = text.clone().unwrap_or_else(|| {
                payload
                    .get("text_ref")
                    .and_then(Value::as_array)
                    .map(|segments| {
                        segments
                            .iter()
                            .map(|s| match s.get("literal").and_then(Value::as_str) {
                                Some(literal) => literal.to_string(),
                                None => "[fragment]".to_string(),
                            })
                            .collect::<String>()
                    })
                    .unwrap_or_default()
            });
            let field = |key: &str| payload.get(key).and_then(Value::as_str).unwrap_or("");
            match kind.as_str() {
                "text" => r.text(&text),
                "reasoning" => r.part("thinking", format!("[thinking]\n{text}")),
                "tool_call" => {
                    let id = payload
                        .get("tool_call_id")
                        .and_then(Value::as_str)
                        .map(|id| format!(" {id}"))
                        .unwrap_or_default();
                    let arguments = payload
                        .get("arguments")
                        .map(super::compact)
                        .unwrap_or_default();
                    let name = tool.as_deref().unwrap_or("tool");
                    r.part("tool_call", format!("[tool call{id}: {name}({arguments})]"));
                }
                "tool_result" => {
                    let id = payload
                        .get("tool_call_id")
                        .and_then(Value::as_str)
                        .map(|id| format!(" {id}"))
                        .unwrap_or_default();
                    let output = match payload.get("output") {
                        Some(Value::String(s)) => s.clone(),
                        Some(other) => super::strings_in(other),
                        None => text.clone(),
                    };
                    r.part("tool_result", format!("[tool result{id}]\n{output}"));
                }
                "attachment" => {
                    let what = [field("type"), field("path"), field("url")]
                        .into_iter()
                        .find(|s| !s.is_empty())
                        .unwrap_or("file");
                    r.part("attachment", format!("[attachment: {what}]"));
                }
                other => {
                    let body = if text.is_empty() {
                        super::strings_in(&payload)
                    } else {
                        text.clone()
                    };
                    r.part(other, format!("[{other}]\n{body}").trim_end().to_string());
                }
            }
        }
        let parent = m.parent.as_deref().and_then(|p| index.get(p)).copied();
        if r.is_empty() {
            kinds.skip("empty_message");
            if let Some(p) = parent {
                index.insert(&m.hash, p);
            }
            continue;
        }
        let (text, met) = r.finish(&mut kinds);
        let original = m.role.as_deref().unwrap_or("user");
        let (role, original_role) = match original {
            "user" => (Role::User, None),
            "assistant" => (Role::Assistant, None),
            "system" => (Role::System, None),
            other => (Role::User, Some(other)),
        };
        kinds.role(original);
        let intent = (original_role.is_some() || !met.is_empty()).then(|| Intent {
            tag: super::tag_for(original_role, &met),
            note: None,
        });
        let mut kept = json!({"import": Format::Llm.as_str(), "hash": m.hash});
        if let Some(model) = &m.model {
            kept["model"] = json!(model);
        }
        let time_ms = m.datetime_utc.as_deref().and_then(time_of);
        if time_ms.is_some() {
            conversation.create_time_ms = conversation.create_time_ms.or(time_ms);
            conversation.update_time_ms = time_ms.max(conversation.update_time_ms);
        }
        if conversation.title.is_none() && role == Role::User && intent.is_none() {
            conversation.title = Some(super::claude_code::first_line(&text));
        }
        index.insert(&m.hash, conversation.messages.len());
        conversation.messages.push(Msg {
            parent,
            role,
            text,
            intent,
            provenance: Some(kept.to_string()),
            source_id: Some(m.hash.clone()),
            time_ms,
        });
    }
    conversation.current = first
        .and_then(|t| t.tip.as_deref())
        .and_then(|tip| index.get(tip))
        .copied();
    conversation.kinds = kinds;
    conversation
}
