//! simonw/llm's `logs.db`, opened read-only: each row of `conversations` (and each conversation ID
//! of `responses` without one) is one conversation, its `responses` in time order one exchange
//! each: the system prompt (when it changes), the prompt, the response. A message's source ID is
//! `RESPONSE_ID/system`, `/prompt` or `/response`, which is what lets a later import add only the
//! exchanges logged since (`ops::import`).

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

/// The database, opened read-only (nothing of it is ever written).
pub fn open(path: &Path) -> Result<Connection, String> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| format!("it cannot be opened as an SQLite database: {e}"))?;
    let has_responses: bool = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'responses'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)
        .map_err(|e| format!("it cannot be read as an SQLite database: {e}"))?;
    if !has_responses {
        return Err("it has no responses table, so it is not an llm logs.db".into());
    }
    Ok(conn)
}

/// Every conversation: (ID, name), by the time of its first response.
pub fn conversations(conn: &Connection) -> Result<Vec<(String, Option<String>)>, String> {
    let has_names: bool = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'conversations'",
            [],
            |r| r.get::<_, i64>(0),
        )
        .map(|n| n > 0)
        .map_err(|e| e.to_string())?;
    let sql = if has_names {
        "SELECT r.conversation_id, (SELECT name FROM conversations c WHERE c.id = r.conversation_id) FROM responses r WHERE r.conversation_id IS NOT NULL GROUP BY r.conversation_id ORDER BY min(r.datetime_utc), min(r.rowid)"
    } else {
        "SELECT conversation_id, NULL FROM responses WHERE conversation_id IS NOT NULL GROUP BY conversation_id ORDER BY min(datetime_utc), min(rowid)"
    };
    let mut stmt = conn.prepare(sql).map_err(|e| e.to_string())?;
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .and_then(|rows| rows.collect())
        .map_err(|e| e.to_string())
}

/// The responses of one conversation, in time order.
pub fn rows(conn: &Connection, conversation: &str) -> Result<Vec<Row>, String> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, model, prompt, system, response, datetime_utc FROM responses WHERE conversation_id = ?1 ORDER BY datetime_utc, rowid",
        )
        .map_err(|e| e.to_string())?;
    stmt.query_map([conversation], |r| {
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
    .and_then(|rows| rows.collect())
    .map_err(|e| e.to_string())
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
