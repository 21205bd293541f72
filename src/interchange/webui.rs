//! Chat-UI exports: Open WebUI (a list of chats, each `chat.history.messages` keyed by ID with
//! `parentId`, `currentId` the message shown) and LibreChat (a conversation with `messages` linked by
//! `parentMessageId`, or a nested `messagesTree` with `children`). Both are trees; each message
//! comes after its parent, the one the UI showed is the head of `main`.

use super::{Conversation, Format, Kinds, Msg, iso_to_ms, seconds_to_ms};
use crate::model::{Intent, Role};
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// One message before ordering: its ID, parent ID, role, text, model, time.
struct Raw {
    id: String,
    parent: Option<String>,
    role: Role,
    original_role: Option<String>,
    text: String,
    model: Option<String>,
    time_ms: Option<u64>,
}

/// A time that is either Unix seconds (or milliseconds, when that large) or ISO 8601 text.
fn time_of(value: Option<&Value>) -> Option<u64> {
    match value? {
        Value::String(s) => iso_to_ms(s),
        n @ Value::Number(_) => {
            let x = n.as_f64()?;
            if x > 1e11 {
                Some(x as u64)
            } else {
                seconds_to_ms(Some(n))
            }
        }
        _ => None,
    }
}

/// The messages in an order where each comes after its parent (by time among siblings); a
/// message whose parent is missing starts from the root; a cycle is broken where it is met.
fn ordered(
    format: Format,
    raws: Vec<Raw>,
    current: Option<&str>,
    kinds: &mut Kinds,
) -> Conversation {
    let index: HashMap<String, usize> = raws
        .iter()
        .enumerate()
        .map(|(i, r)| (r.id.clone(), i))
        .collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); raws.len()];
    let mut roots = Vec::new();
    for (i, r) in raws.iter().enumerate() {
        match r.parent.as_ref().and_then(|p| index.get(p)) {
            Some(&p) if p != i => children[p].push(i),
            _ => roots.push(i),
        }
    }
    let by_time = |list: &mut Vec<usize>| list.sort_by_key(|&i| (raws[i].time_ms, i));
    by_time(&mut roots);
    for list in children.iter_mut() {
        by_time(list);
    }
    let mut conversation = Conversation::default();
    let mut placed: Vec<Option<usize>> = vec![None; raws.len()];
    let mut stack: Vec<(usize, Option<usize>)> = roots.iter().rev().map(|&i| (i, None)).collect();
    while let Some((i, parent)) = stack.pop() {
        if placed[i].is_some() {
            continue;
        }
        let r = &raws[i];
        let at = conversation.messages.len();
        placed[i] = Some(at);
        kinds.role(r.original_role.as_deref().unwrap_or(match r.role {
            Role::User => "user",
            Role::Assistant => "assistant",
            _ => "system",
        }));
        kinds.part("text");
        let mut kept = Map::new();
        kept.insert("import".into(), json!(format.as_str()));
        kept.insert("id".into(), json!(r.id));
        if let Some(model) = &r.model {
            kept.insert("model".into(), json!(model));
        }
        conversation.messages.push(Msg {
            parent,
            role: r.role,
            text: r.text.clone(),
            intent: r
                .original_role
                .clone()
                .map(|tag| Intent { tag, note: None }),
            provenance: Some(Value::Object(kept).to_string()),
            source_id: Some(r.id.clone()),
            time_ms: r.time_ms,
        });
        for &c in children[i].iter().rev() {
            stack.push((c, Some(at)));
        }
    }
    // Messages reachable only through a cycle of parents are left out, counted.
    for _ in placed.iter().filter(|p| p.is_none()) {
        kinds.skip("parent_cycle");
    }
    conversation.current = current.and_then(|c| index.get(c)).and_then(|&i| placed[i]);
    conversation.create_time_ms = conversation.messages.iter().filter_map(|m| m.time_ms).min();
    conversation.update_time_ms = conversation.messages.iter().filter_map(|m| m.time_ms).max();
    conversation
}

/// The role of a message and, when Timeline has no such role, its original name.
fn role_of(role: &str) -> (Role, Option<String>) {
    match role {
        "user" => (Role::User, None),
        "assistant" => (Role::Assistant, None),
        "system" => (Role::System, None),
        other => (Role::User, Some(other.to_string())),
    }
}

/// One Open WebUI chat (`{id, title, chat: {history: {messages, currentId}}}`, or the inner
/// `chat` object itself).
pub fn convert_open_webui(value: &Value) -> Result<Conversation, String> {
    let chat = value.get("chat").unwrap_or(value);
    let Some(history) = chat.get("history") else {
        return Err("it has no chat.history, so it is not an Open WebUI chat".into());
    };
    let Some(messages) = history.get("messages").and_then(Value::as_object) else {
        return Err(
            "its chat.history has no messages object, so it is not an Open WebUI chat".into(),
        );
    };
    let mut kinds = Kinds::default();
    let mut raws = Vec::new();
    for (key, m) in messages {
        let s = |k: &str| m.get(k).and_then(Value::as_str);
        let text = match m.get("content") {
            Some(Value::String(t)) => t.clone(),
            Some(other) => super::strings_in(other),
            None => String::new(),
        };
        if text.trim().is_empty() {
            kinds.skip("empty_message");
            continue;
        }
        let (role, original_role) = role_of(s("role").unwrap_or("user"));
        raws.push(Raw {
            id: s("id").unwrap_or(key).to_string(),
            parent: s("parentId").map(str::to_string),
            role,
            original_role,
            text,
            model: s("model").map(str::to_string),
            time_ms: time_of(m.get("timestamp")),
        });
    }
    let current = history.get("currentId").and_then(Value::as_str);
    let mut conversation = ordered(Format::OpenWebUi, raws, current, &mut kinds);
    conversation.title = value
        .get("title")
        .or_else(|| chat.get("title"))
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_string);
    if let Some(t) = time_of(value.get("created_at")) {
        conversation.create_time_ms = Some(t);
    }
    if let Some(t) = time_of(value.get("updated_at")) {
        conversation.update_time_ms = Some(t);
    }
    conversation.kinds.add(&kinds);
    Ok(conversation)
}

/// One LibreChat conversation: `{conversationId, title, messages: [...]}` (each message linked by
/// `parentMessageId`) or `{..., messagesTree: [...]}` (each with its `children`).
pub fn convert_librechat(value: &Value) -> Result<Conversation, String> {
    let mut flat: Vec<&Value> = Vec::new();
    let mut parents: HashMap<usize, String> = HashMap::new();
    if let Some(Value::Array(messages)) = value.get("messages") {
        flat.extend(messages.iter());
    } else if let Some(Value::Array(tree)) = value.get("messagesTree") {
        // Depth first, with an explicit stack: the nesting may be deep.
        let mut stack: Vec<(&Value, Option<String>)> =
            tree.iter().rev().map(|m| (m, None)).collect();
        while let Some((m, parent)) = stack.pop() {
            if let Some(p) = parent {
                parents.insert(flat.len(), p);
            }
            flat.push(m);
            let id = m
                .get("messageId")
                .and_then(Value::as_str)
                .map(str::to_string);
            if let Some(Value::Array(children)) = m.get("children") {
                for c in children.iter().rev() {
                    stack.push((c, id.clone()));
                }
            }
        }
    } else {
        return Err(
            "it has neither messages nor messagesTree, so it is not a LibreChat conversation"
                .into(),
        );
    }
    let mut kinds = Kinds::default();
    let mut raws = Vec::new();
    for (k, m) in flat.iter().enumerate() {
        let s = |key: &str| m.get(key).and_then(Value::as_str);
        let text = match s("text") {
            Some(t) if !t.trim().is_empty() => t.to_string(),
            _ => super::strings_in(m.get("content").unwrap_or(&Value::Null)),
        };
        if text.trim().is_empty() {
            kinds.skip("empty_message");
            continue;
        }
        let by_user = m.get("isCreatedByUser").and_then(Value::as_bool);
        let (role, original_role) = match by_user {
            Some(true) => (Role::User, None),
            Some(false) => (Role::Assistant, None),
            None => role_of(&s("sender").unwrap_or("user").to_lowercase()),
        };
        let parent = s("parentMessageId")
            .filter(|p| *p != "00000000-0000-0000-0000-000000000000")
            .map(str::to_string)
            .or_else(|| parents.get(&k).cloned());
        raws.push(Raw {
            id: s("messageId").map_or_else(|| format!("#{k}"), str::to_string),
            parent,
            role,
            original_role,
            text,
            model: s("model").map(str::to_string),
            time_ms: time_of(m.get("createdAt")),
        });
    }
    let mut conversation = ordered(Format::LibreChat, raws, None, &mut kinds);
    conversation.title = value
        .get("title")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_string);
    conversation.kinds.add(&kinds);
    Ok(conversation)
}
