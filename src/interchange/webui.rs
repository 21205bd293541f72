//! Chat-UI exports: Open WebUI (a list of chats, each `chat.history.messages` keyed by ID with
//! `parentId`, `currentId` the message shown) and LibreChat (a conversation with `messages` linked by
//! `parentMessageId`, or a nested `messagesTree` with `children`). Both are trees; each message
//! comes after its parent, the one the UI showed is the head of `main`.

use super::digest::{Sink, Skip, digest_others, members};
use super::values::{self, Budget};
use super::walk::{self, Body, Read, Top, Walker};
use super::{Conversation, Format, Kinds, Msg, iso_to_ms, seconds_to_ms};
use crate::model::{Intent, Role};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::fmt;

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
/// message whose parent is missing starts from the root. A cycle of parents (no message of it has
/// a first message above it, so it cannot be placed) makes the conversation skipped, its reason
/// naming the cycle (`Conversation::skip`).
fn ordered(
    format: Format,
    mut raws: Vec<Raw>,
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
        let r = &mut raws[i];
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
            text: std::mem::take(&mut r.text),
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
    // A message not placed is in a cycle of parents or below one.
    if let Some(start) = placed.iter().position(Option::is_none) {
        return Conversation {
            skip: Some(cycle(format, &raws, &index, start)),
            ..Conversation::default()
        };
    }
    conversation.current = current.and_then(|c| index.get(c)).and_then(|&i| placed[i]);
    conversation.create_time_ms = conversation.messages.iter().filter_map(|m| m.time_ms).min();
    conversation.update_time_ms = conversation.messages.iter().filter_map(|m| m.time_ms).max();
    conversation
}

/// Why a conversation whose message `start` is in or below a cycle of parents is skipped: the
/// cycle, each message followed by its parent, back to the first (at most 8 shown).
fn cycle(format: Format, raws: &[Raw], index: &HashMap<String, usize>, start: usize) -> String {
    let parent = |i: usize| raws[i].parent.as_ref().and_then(|p| index.get(p)).copied();
    // Walk up from `start` until a message comes again: that one is on the cycle.
    let mut seen = vec![false; raws.len()];
    let mut at = start;
    while !seen[at] {
        seen[at] = true;
        match parent(at) {
            Some(p) => at = p,
            None => break,
        }
    }
    let mut members = vec![at];
    let mut next = parent(at);
    while let Some(p) = next.filter(|&p| p != at) {
        members.push(p);
        next = parent(p);
    }
    let shown = members.len().min(8);
    let mut names: Vec<String> = members[..shown]
        .iter()
        .map(|&i| format!("{:?}", raws[i].id))
        .collect();
    if members.len() > shown {
        names.push(format!("… ({} messages in all)", members.len()));
    }
    names.push(format!("{:?}", raws[at].id));
    let field = match format {
        Format::LibreChat => "parentMessageId",
        _ => "parentId",
    };
    format!(
        "its messages' {field} links form a cycle ({}, each followed by its parent), so no message of it has a first message above it; fix the {field} of one of them (or export the chat again) and import again",
        names.join(" → ")
    )
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

/// What a kept [`Raw`] takes: its strings' blocks, and its place with growth slack.
fn raw_cost(raw: &Raw) -> usize {
    let text = |s: &Option<String>| s.as_ref().map_or(0, |s| values::string_cost(s.len()));
    2 * std::mem::size_of::<Option<Raw>>()
        + values::string_cost(raw.id.len())
        + values::string_cost(raw.text.len())
        + text(&raw.parent)
        + text(&raw.original_role)
        + text(&raw.model)
}

/// One Open WebUI message (`key` in `history.messages`); `None` when it has no text.
fn open_webui_message(key: &str, m: &Value) -> Option<Raw> {
    let s = |k: &str| m.get(k).and_then(Value::as_str);
    let text = match m.get("content") {
        Some(Value::String(t)) => t.clone(),
        Some(other) => super::strings_in(other),
        None => String::new(),
    };
    if text.trim().is_empty() {
        return None;
    }
    let (role, original_role) = role_of(s("role").unwrap_or("user"));
    Some(Raw {
        id: s("id").unwrap_or(key).to_string(),
        parent: s("parentId").map(str::to_string),
        role,
        original_role,
        text,
        model: s("model").map(str::to_string),
        time_ms: time_of(m.get("timestamp")),
    })
}

/// An Open WebUI `history` as it is read: its `messages` (by key, as a value keeps a key given
/// twice: the first one's place, the last one's message; `None` for one without text) and its
/// head (`currentId`).
#[derive(Default)]
struct History {
    messages: Option<Vec<Option<Raw>>>,
    keys: HashMap<String, usize>,
    head: Option<Value>,
}

impl<'de> Body<'de> for History {
    const WHAT: &'static str = "an Open WebUI chat history";
    const HEAD: &'static [&'static str] = &["currentId"];

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
        let (mut slots, mut keys) = (Vec::new(), HashMap::new());
        let object =
            map.next_value_seed(walk::members_of(sink, budget, |key: String, m: Value| {
                let raw = open_webui_message(&key, &m);
                let cost = raw.as_ref().map_or(0, raw_cost) + values::string_cost(key.len()) + 64;
                match keys.get(&key) {
                    Some(&at) => slots[at] = raw,
                    None => {
                        keys.insert(key, slots.len());
                        slots.push(raw);
                    }
                }
                cost
            }))?;
        self.messages = object.then_some(slots);
        self.keys = keys;
        Ok(true)
    }
}

/// The `history` of an Open WebUI chat, walked; `None` in `history` when it is not an object.
fn read_history<'de, A: MapAccess<'de>>(
    history: &mut Option<History>,
    map: &mut A,
    sink: &Sink,
    budget: &Budget,
) -> Result<(), A::Error> {
    let mut read = History::default();
    let top = map.next_value_seed(Walker {
        sink,
        budget,
        body: &mut read,
    })?;
    if let Top::Object(head) = top {
        read.head = Some(head);
    }
    *history = Some(read);
    Ok(())
}

/// An Open WebUI chat object (`chat`, or the top level when it has none): its `history` and its
/// head (`title`).
#[derive(Default)]
struct Chat {
    /// A `history` key was met (its value may be anything).
    history: Option<History>,
}

impl<'de> Body<'de> for Chat {
    const WHAT: &'static str = "an Open WebUI chat";
    const HEAD: &'static [&'static str] = &["title"];

    fn special<A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        sink: &Sink,
        budget: &Budget,
    ) -> Result<bool, A::Error> {
        if key == "history" {
            read_history(&mut self.history, map, sink, budget)?;
        }
        Ok(key == "history")
    }
}

/// An Open WebUI export's element: `{id, title, chat: {history: ...}}`, or the inner `chat` itself.
#[derive(Default)]
struct OpenWebUi {
    /// Its own history (the inner `chat` given alone).
    own: Chat,
    /// Its `chat`, when it has one: what the chat is read from then, and its head.
    chat: Option<(Chat, Option<Value>)>,
}

impl<'de> Body<'de> for OpenWebUi {
    const WHAT: &'static str = "an Open WebUI chat";
    const HEAD: &'static [&'static str] = &["id", "title", "created_at", "updated_at"];

    fn special<A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        sink: &Sink,
        budget: &Budget,
    ) -> Result<bool, A::Error> {
        match key {
            "history" => read_history(&mut self.own.history, map, sink, budget)?,
            "chat" => {
                let mut chat = Chat::default();
                let top = map.next_value_seed(Walker {
                    sink,
                    budget,
                    body: &mut chat,
                })?;
                let head = match top {
                    Top::Object(head) => Some(head),
                    _ => None,
                };
                self.chat = Some((chat, head));
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// Read one Open WebUI chat, each message parsed (within `budget`), converted and dropped before
/// the next (see the module `walk`).
pub fn read_open_webui<'de, D: Deserializer<'de>>(
    deserializer: D,
    sink: &Sink,
    budget: &Budget,
) -> Result<Read, D::Error> {
    let mut body = OpenWebUi::default();
    let top = walk::walk(deserializer, sink, budget, &mut body)?;
    let head = match top {
        Top::Object(head) => head,
        _ => Value::Null,
    };
    let read = |conversation| Read {
        source_id: Format::OpenWebUi.source_id(&head),
        title: Format::OpenWebUi.title(&head),
        conversation,
    };
    let (chat, chat_head) = match body.chat {
        Some((chat, chat_head)) => (chat, chat_head.unwrap_or(Value::Null)),
        None => (body.own, head.clone()),
    };
    let Some(history) = chat.history else {
        return Ok(read(Err(
            "it has no chat.history, so it is not an Open WebUI chat".into(),
        )));
    };
    let Some(slots) = history.messages else {
        return Ok(read(Err(
            "its chat.history has no messages object, so it is not an Open WebUI chat".into(),
        )));
    };
    let mut kinds = Kinds::default();
    let mut raws = Vec::with_capacity(slots.len());
    for slot in slots {
        match slot {
            Some(raw) => raws.push(raw),
            None => kinds.skip("empty_message"),
        }
    }
    let current = history
        .head
        .as_ref()
        .and_then(|h| h.get("currentId"))
        .and_then(Value::as_str);
    let mut conversation = ordered(Format::OpenWebUi, raws, current, &mut kinds);
    conversation.title = head
        .get("title")
        .or_else(|| chat_head.get("title"))
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty())
        .map(str::to_string);
    if let Some(t) = time_of(head.get("created_at")) {
        conversation.create_time_ms = Some(t);
    }
    if let Some(t) = time_of(head.get("updated_at")) {
        conversation.update_time_ms = Some(t);
    }
    conversation.kinds.add(&kinds);
    Ok(read(Ok(conversation)))
}

/// LibreChat message number `k` (in the order met), whose parent in a `messagesTree` is the
/// message with the ID `tree_parent`; `None` when it has no text.
fn librechat_message(k: usize, m: &Value, tree_parent: Option<String>) -> Option<Raw> {
    let s = |key: &str| m.get(key).and_then(Value::as_str);
    let text = match s("text") {
        Some(t) if !t.trim().is_empty() => t.to_string(),
        _ => super::strings_in(m.get("content").unwrap_or(&Value::Null)),
    };
    if text.trim().is_empty() {
        return None;
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
        .or(tree_parent);
    Some(Raw {
        id: s("messageId").map_or_else(|| format!("#{k}"), str::to_string),
        parent,
        role,
        original_role,
        text,
        model: s("model").map(str::to_string),
        time_ms: time_of(m.get("createdAt")),
    })
}

/// The fields of a LibreChat message that its conversion reads (the rest of a `messagesTree`
/// message, its `children` aside, is digested and dropped).
const LIBRECHAT_FIELDS: &[&str] = &[
    "text",
    "content",
    "isCreatedByUser",
    "sender",
    "parentMessageId",
    "messageId",
    "model",
    "createdAt",
];

/// A LibreChat conversation as it is read: its `messages` (linked by `parentMessageId`) and its
/// `messagesTree` (nested in `children`), as raw messages in the order met (`None`: no text).
#[derive(Default)]
struct LibreChat {
    messages: Option<Vec<Option<Raw>>>,
    tree: Option<Tree>,
}

impl<'de> Body<'de> for LibreChat {
    const WHAT: &'static str = "a LibreChat conversation";
    const HEAD: &'static [&'static str] = &["conversationId", "title"];

    fn special<A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        sink: &Sink,
        budget: &Budget,
    ) -> Result<bool, A::Error> {
        match key {
            "messages" => {
                let mut slots = Vec::new();
                let array = map.next_value_seed(walk::elements(sink, budget, |k, m: Value| {
                    let raw = librechat_message(k, &m, None);
                    let cost = raw.as_ref().map_or(0, raw_cost) + 8;
                    slots.push(raw);
                    cost
                }))?;
                self.messages = array.then_some(slots);
            }
            "messagesTree" => {
                let mut tree = Tree::default();
                let array = map.next_value_seed(TreeSeed {
                    sink,
                    budget,
                    tree: &mut tree,
                    parent: None,
                })?;
                self.tree = array.then_some(tree);
            }
            _ => return Ok(false),
        }
        Ok(true)
    }
}

/// A `messagesTree` in the order its messages are met (depth first, each before its children).
#[derive(Default)]
struct Tree {
    slots: Vec<Slot>,
}

/// One message of a `messagesTree`: its raw form (`None`: no text, or not read yet: a message is
/// converted at its end, after its children), the slot of the message it is a child of, and its
/// `messageId` (its children's parent).
struct Slot {
    raw: Option<Raw>,
    parent: Option<usize>,
    id: Option<String>,
}

/// An array of `messagesTree` messages, the children of the message in slot `parent`; `false`
/// when it is not an array (digested and dropped). It recurses once per level of nesting, whose
/// depth the scanner bounds (`input::MAX_DEPTH`).
struct TreeSeed<'a> {
    sink: &'a Sink,
    budget: &'a Budget,
    tree: &'a mut Tree,
    parent: Option<usize>,
}

impl<'de> DeserializeSeed<'de> for TreeSeed<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TreeSeed<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a messagesTree")
    }

    digest_others!(scalars => false);
    digest_others!(map => false);

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        self.sink.bytes(b"[");
        let mut first = true;
        while seq
            .next_element_seed(TreeMessageSeed {
                sink: self.sink,
                budget: self.budget,
                tree: &mut *self.tree,
                parent: self.parent,
                comma: !first,
            })?
            .is_some()
        {
            first = false;
        }
        self.sink.bytes(b"]");
        Ok(true)
    }
}

/// One message of a `messagesTree`, after a comma unless it is the first: its fields kept as
/// values, its `children` walked, then converted.
struct TreeMessageSeed<'a> {
    sink: &'a Sink,
    budget: &'a Budget,
    tree: &'a mut Tree,
    parent: Option<usize>,
    comma: bool,
}

impl<'de> DeserializeSeed<'de> for TreeMessageSeed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        if self.comma {
            self.sink.bytes(b",");
        }
        // Its slot first: the messages are in the order they are met.
        self.tree.slots.push(Slot {
            raw: None,
            parent: self.parent,
            id: None,
        });
        self.budget.charge(2 * std::mem::size_of::<Slot>())?;
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TreeMessageSeed<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a LibreChat message")
    }

    // A message that is not an object has no text.
    digest_others!(scalars => ());
    digest_others!(seq => ());

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let (sink, budget) = (self.sink, self.budget);
        let k = self.tree.slots.len() - 1;
        let mut kept = Map::new();
        let before = budget.used();
        members(sink, &mut map, |map, key| {
            if key == "children" {
                map.next_value_seed(TreeSeed {
                    sink,
                    budget,
                    tree: &mut *self.tree,
                    parent: Some(k),
                })?;
            } else if LIBRECHAT_FIELDS.contains(&key.as_str()) {
                kept.insert(key, walk::value(map, sink, budget)?);
            } else {
                map.next_value_seed(Skip(sink))?;
            }
            Ok(())
        })?;
        let cost = budget.used() - before;
        let m = Value::Object(kept);
        let slot = &mut self.tree.slots[k];
        slot.id = m
            .get("messageId")
            .and_then(Value::as_str)
            .map(str::to_string);
        // Its parent in the tree is named once the tree is read (see `LibreChat::flat`).
        slot.raw = librechat_message(k, &m, None);
        let kept = slot.raw.as_ref().map_or(0, raw_cost)
            + slot
                .id
                .as_ref()
                .map_or(0, |id| values::string_cost(id.len()));
        drop(m);
        budget.refund(cost);
        budget.charge(kept)
    }
}

impl LibreChat {
    /// The messages the conversation is made of (`messages` before `messagesTree`), with what
    /// was left out counted.
    fn flat(self, kinds: &mut Kinds) -> Option<Vec<Raw>> {
        let raws: Vec<Option<Raw>> = match (self.messages, self.tree) {
            (Some(messages), _) => messages,
            (None, Some(tree)) => {
                let ids: Vec<Option<String>> = tree
                    .slots
                    .iter()
                    .map(|s| s.parent.and_then(|p| tree.slots[p].id.clone()))
                    .collect();
                tree.slots
                    .into_iter()
                    .zip(ids)
                    .map(|(slot, tree_parent)| {
                        slot.raw.map(|mut raw| {
                            raw.parent = raw.parent.or(tree_parent);
                            raw
                        })
                    })
                    .collect()
            }
            (None, None) => return None,
        };
        let mut out = Vec::with_capacity(raws.len());
        for raw in raws {
            match raw {
                Some(raw) => out.push(raw),
                None => kinds.skip("empty_message"),
            }
        }
        Some(out)
    }
}

/// Read one LibreChat conversation, each message parsed (within `budget`), converted and dropped
/// before the next (see the module `walk`).
pub fn read_librechat<'de, D: Deserializer<'de>>(
    deserializer: D,
    sink: &Sink,
    budget: &Budget,
) -> Result<Read, D::Error> {
    let mut body = LibreChat::default();
    let head = match walk::walk(deserializer, sink, budget, &mut body)? {
        Top::Object(head) => head,
        _ => Value::Null,
    };
    let mut kinds = Kinds::default();
    let conversation = match body.flat(&mut kinds) {
        None => Err(
            "it has neither messages nor messagesTree, so it is not a LibreChat conversation"
                .into(),
        ),
        Some(raws) => {
            let mut conversation = ordered(Format::LibreChat, raws, None, &mut kinds);
            conversation.title = head
                .get("title")
                .and_then(Value::as_str)
                .filter(|t| !t.is_empty())
                .map(str::to_string);
            conversation.kinds.add(&kinds);
            Ok(conversation)
        }
    };
    Ok(Read {
        source_id: Format::LibreChat.source_id(&head),
        title: Format::LibreChat.title(&head),
        conversation,
    })
}
