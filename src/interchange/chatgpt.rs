//! ChatGPT data export: `conversations.json` is an array of conversations, each a tree in `mapping`
//! (node ID → `{id, message, parent, children}`), with `current_node` the leaf the app showed.
//!
//! Messages are taken in order of creation (`message.create_time`; a message without one right
//! after its parent), always after their parent, so node IDs grow as the conversation did. Nodes
//! without a message (the hidden root) and messages with no text are left out; their children hang
//! from the nearest message above them.

use super::digest::{PrefixedKey, Sink, Skip};
use super::values::{self, Budget};
use super::{
    Conversation, Format, Kinds, Msg, Rendering, intent, seconds_to_ms, strings_in, tag_for,
};
use crate::model::Role;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value, json};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::fmt;

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

/// One conversation of a ChatGPT export read into its compact form: what [`Format::source_id`],
/// [`Format::title`] and [`convert`] would take from its value, without the value.
pub struct Read {
    pub source_id: Option<String>,
    pub title: Option<String>,
    pub conversation: Result<Conversation, String>,
}

/// Convert one conversation of a ChatGPT export (its `mapping` tree); an error says why it is not one.
pub fn convert(value: &Value) -> Result<Conversation, String> {
    let sink = Sink::new(Default::default());
    let budget = Budget::new(usize::MAX);
    read(value, &sink, &budget)
        .map_err(|e| format!("it cannot be read: {e}"))?
        .conversation
}

/// Read one conversation into its compact form (see the module `digest` for `sink`): mapping
/// nodes are numbers, their IDs kept once; each message is parsed as a value (within `budget`),
/// converted and dropped before the next, so the conversation's memory is its converted messages
/// plus a few dozen bytes a node. Only the fields the conversion reads are kept.
pub fn read<'de, D: Deserializer<'de>>(
    deserializer: D,
    sink: &Sink,
    budget: &Budget,
) -> Result<Read, D::Error> {
    let mut tree = Tree::default();
    let top = deserializer.deserialize_any(TopSeed {
        sink,
        budget,
        tree: &mut tree,
    })?;
    let Some(head) = top else {
        return Ok(Read {
            source_id: None,
            title: None,
            conversation: Err("it is not a JSON object".into()),
        });
    };
    let head = Value::Object(head);
    let source_id = Format::ChatGpt.source_id(&head);
    let title = Format::ChatGpt.title(&head);
    let conversation = if !tree.mapping {
        Err(not_chatgpt(&head))
    } else if let Some(reason) = tree.error.take() {
        Err(reason)
    } else {
        tree.assemble(&head)
    };
    Ok(Read {
        source_id,
        title,
        conversation,
    })
}

/// No node: an interned ID that no mapping key has.
const NONE: u32 = u32::MAX;

/// The mapping as numbers: every ID met (keys, parents, children) interned once.
#[derive(Default)]
struct Tree {
    ids: HashMap<Box<str>, u32>,
    /// Interned ID → node index, or [`NONE`].
    slot: Vec<u32>,
    nodes: Vec<Node>,
    /// The `children` lists of all nodes, one after another.
    listed: Vec<u32>,
    /// The converted messages; a node has the index of its own.
    rendered: Vec<Option<Msg>>,
    kinds: Kinds,
    /// A `mapping` object was met.
    mapping: bool,
    /// Why it is not a ChatGPT conversation (the first problem met in a node).
    error: Option<String>,
}

/// A node in 20 bytes: a mapping of 200,000 tiny nodes is a few megabytes.
struct Node {
    /// Its key's interned ID.
    key: u32,
    /// Its parent's interned ID (a node or not), or [`NONE`].
    parent: u32,
    /// Where the interned IDs its `children` lists are in [`Tree::listed`], and how many.
    listed: (u32, u32),
    /// Its converted message in [`Tree::rendered`]; [`NONE`] when it has none, [`NO_TEXT`] when its
    /// message has no text.
    message: u32,
}

/// A node's message that has no text (left out when it was converted).
const NO_TEXT: u32 = u32::MAX - 1;

impl Tree {
    fn intern<E: de::Error>(&mut self, id: &str, budget: &Budget) -> Result<u32, E> {
        if let Some(&n) = self.ids.get(id) {
            return Ok(n);
        }
        // The key's block, its map entry and slot, with growth slack.
        budget.charge::<E>(values::string_cost(id.len()) + 64)?;
        let n = self.slot.len() as u32;
        self.ids.insert(id.into(), n);
        self.slot.push(NONE);
        Ok(n)
    }

    /// The node of `key` was read: checked and its message converted now.
    fn node<E: de::Error>(&mut self, key: &str, read: NodeRead, budget: &Budget) -> Result<(), E> {
        if self.error.is_some() {
            return Ok(());
        }
        let problem = match &read {
            NodeRead::NotObject => Some("is not an object"),
            NodeRead::Node {
                parent: Field::Bad, ..
            } => Some("has a parent that is not a string"),
            NodeRead::Node {
                message: Field::Bad,
                ..
            } => Some("has a message that is not an object"),
            NodeRead::Node { .. } => None,
        };
        if let Some(problem) = problem {
            self.error = Some(format!("mapping node {key:?} {problem}"));
            return Ok(());
        }
        let NodeRead::Node {
            parent,
            message,
            listed,
        } = read
        else {
            return Ok(());
        };
        let id = self.intern::<E>(key, budget)?;
        if self.slot[id as usize] != NONE {
            self.error = Some(format!("its mapping holds the node {key:?} twice"));
            return Ok(());
        }
        self.slot[id as usize] = self.nodes.len() as u32;
        let parent = match parent {
            Field::Some(p) => self.intern::<E>(&p, budget)?,
            _ => NONE,
        };
        let message = match message {
            Field::Some(Value::Object(m)) => match render(&m, key, &mut self.kinds) {
                Some(msg) => {
                    // Its strings' blocks, and its place with growth slack.
                    budget.charge::<E>(
                        2 * std::mem::size_of::<Option<Msg>>()
                            + values::string_cost(msg.text.len())
                            + msg
                                .provenance
                                .as_ref()
                                .map_or(0, |p| values::string_cost(p.len()))
                            + msg
                                .source_id
                                .as_ref()
                                .map_or(0, |p| values::string_cost(p.len()))
                            + msg
                                .intent
                                .as_ref()
                                .map_or(0, |i| values::string_cost(i.tag.len())),
                    )?;
                    self.rendered.push(Some(msg));
                    self.rendered.len() as u32 - 1
                }
                None => NO_TEXT,
            },
            _ => NONE,
        };
        // Its place with growth slack.
        budget.charge::<E>(2 * std::mem::size_of::<Node>())?;
        self.nodes.push(Node {
            key: id,
            parent,
            listed,
            message,
        });
        Ok(())
    }

    /// The conversation: messages in creation order, each after its parent.
    fn assemble(mut self, head: &Value) -> Result<Conversation, String> {
        let n = self.nodes.len();
        let parent_of: Vec<Option<usize>> = self
            .nodes
            .iter()
            .map(|node| {
                // A parent that is not in the mapping: the node starts a tree of its own.
                Some(node.parent)
                    .filter(|&p| p != NONE)
                    .map(|p| self.slot[p as usize])
                    .filter(|&s| s != NONE)
                    .map(|s| s as usize)
            })
            .collect();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, p) in parent_of.iter().enumerate() {
            if let Some(p) = *p {
                children[p].push(i);
            }
        }
        // Siblings in the order their parent lists them (`children`), unlisted ones after.
        for (node, kids) in self.nodes.iter().zip(children.iter_mut()) {
            if kids.len() > 1 {
                let (start, len) = (node.listed.0 as usize, node.listed.1 as usize);
                let listed: HashMap<u32, usize> = self.listed[start..start + len]
                    .iter()
                    .enumerate()
                    .map(|(i, &k)| (k, i))
                    .collect();
                let keys = &self.nodes;
                kids.sort_by_key(|&c| (listed.get(&keys[c].key).copied().unwrap_or(usize::MAX), c));
            }
        }
        let mut kinds = std::mem::take(&mut self.kinds);
        for (node, parent) in self.nodes.iter().zip(&parent_of) {
            if node.message == NONE {
                kinds.skip(if parent.is_none() {
                    "hidden_root"
                } else {
                    "empty_message"
                });
            }
        }
        let mut rendered = std::mem::take(&mut self.rendered);
        let message_of = |i: usize| {
            Some(self.nodes[i].message)
                .filter(|&m| m < NO_TEXT)
                .map(|m| m as usize)
        };
        // Insertion order: the earliest ready message first (by creation time, inherited from the
        // parent when missing; ties in tree order), so that every message comes after its parent.
        let mut time_key = vec![0u64; n];
        let mut order = vec![0usize; n];
        let mut seen = 0;
        let mut stack: Vec<usize> = (0..n).filter(|&i| parent_of[i].is_none()).rev().collect();
        while let Some(i) = stack.pop() {
            order[i] = seen;
            seen += 1;
            let inherited = parent_of[i].map(|p| time_key[p]).unwrap_or(0);
            time_key[i] = message_of(i)
                .and_then(|m| rendered[m].as_ref())
                .and_then(|m| m.time_ms)
                .unwrap_or(inherited);
            stack.extend(children[i].iter().rev());
        }
        if seen < n {
            return Err("its mapping has a cycle (a node is its own ancestor)".into());
        }
        let mut heap: BinaryHeap<Reverse<(u64, usize, usize)>> = (0..n)
            .filter(|&i| parent_of[i].is_none())
            .map(|i| Reverse((time_key[i], order[i], i)))
            .collect();
        // The nearest kept message at or above each node, as an index into `messages`.
        let mut kept_at: Vec<Option<usize>> = vec![None; n];
        let mut messages = Vec::new();
        while let Some(Reverse((_, _, i))) = heap.pop() {
            let above = parent_of[i].and_then(|p| kept_at[p]);
            kept_at[i] = match message_of(i).and_then(|m| rendered[m].take()) {
                Some(mut msg) => {
                    msg.parent = above;
                    messages.push(msg);
                    Some(messages.len() - 1)
                }
                None => above,
            };
            for &c in &children[i] {
                heap.push(Reverse((time_key[c], order[c], c)));
            }
        }
        let current = head
            .get("current_node")
            .and_then(Value::as_str)
            .and_then(|k| self.ids.get(k))
            .map(|&id| self.slot[id as usize])
            .filter(|&s| s != NONE)
            .and_then(|s| kept_at[s as usize]);
        Ok(Conversation {
            title: Format::ChatGpt.title(head),
            create_time_ms: seconds_to_ms(head.get("create_time")),
            update_time_ms: seconds_to_ms(head.get("update_time")),
            messages,
            current,
            kinds,
        })
    }
}

/// A field of a node as read: absent (or null), the kept value, or of the wrong kind.
enum Field<T> {
    Absent,
    Some(T),
    Bad,
}

enum NodeRead {
    NotObject,
    Node {
        parent: Field<String>,
        message: Field<Value>,
        listed: (u32, u32),
    },
}

/// Visitor methods for the kinds of JSON a seed does not keep: digested, then `$value`.
macro_rules! digest_others {
    (scalars => $value:expr) => {
        fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
            Skip(self.sink).visit_bool::<E>(v)?;
            Ok($value)
        }
        fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
            Skip(self.sink).visit_i64::<E>(v)?;
            Ok($value)
        }
        fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
            Skip(self.sink).visit_u64::<E>(v)?;
            Ok($value)
        }
        fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
            Skip(self.sink).visit_f64::<E>(v)?;
            Ok($value)
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Skip(self.sink).visit_str::<E>(v)?;
            Ok($value)
        }
        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Skip(self.sink).visit_unit::<E>()?;
            Ok($value)
        }
    };
    (seq => $value:expr) => {
        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
            Skip(self.sink).visit_seq(seq)?;
            Ok($value)
        }
    };
    (map => $value:expr) => {
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            Skip(self.sink).visit_map(map)?;
            Ok($value)
        }
    };
}

/// The conversation object: its head fields kept as values, its mapping read into the tree;
/// `None` when it is not an object.
struct TopSeed<'a> {
    sink: &'a Sink,
    budget: &'a Budget,
    tree: &'a mut Tree,
}

impl<'de> DeserializeSeed<'de> for TopSeed<'_> {
    type Value = Option<Map<String, Value>>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for TopSeed<'_> {
    type Value = Option<Map<String, Value>>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a ChatGPT conversation")
    }

    digest_others!(scalars => None);
    digest_others!(seq => None);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (sink, budget) = (self.sink, self.budget);
        sink.bytes(b"{");
        let mut head = Map::new();
        let mut first = true;
        while let Some(key) = map.next_key_seed(PrefixedKey {
            sink,
            comma: !first,
        })? {
            first = false;
            sink.bytes(b":");
            match key.as_str() {
                "mapping" => {
                    let is_object = map.next_value_seed(MappingSeed {
                        sink,
                        budget,
                        tree: &mut *self.tree,
                    })?;
                    self.tree.mapping = is_object;
                }
                "title" | "id" | "conversation_id" | "current_node" | "create_time"
                | "update_time" => {
                    let value = map.next_value_seed(values::Seed(budget))?;
                    sink.value(&value);
                    head.insert(key, value);
                }
                // Only its presence is read (a Claude.ai conversation given as ChatGPT's).
                "chat_messages" => {
                    map.next_value_seed(Skip(sink))?;
                    head.insert(key, Value::Null);
                }
                _ => map.next_value_seed(Skip(sink))?,
            }
        }
        sink.bytes(b"}");
        Ok(Some(head))
    }
}

/// The `mapping` object, node by node into the tree; `false` when it is not an object.
struct MappingSeed<'a> {
    sink: &'a Sink,
    budget: &'a Budget,
    tree: &'a mut Tree,
}

impl<'de> DeserializeSeed<'de> for MappingSeed<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for MappingSeed<'_> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a mapping of nodes")
    }

    digest_others!(scalars => false);
    digest_others!(seq => false);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
        let (sink, budget) = (self.sink, self.budget);
        sink.bytes(b"{");
        let mut first = true;
        while let Some(key) = map.next_key_seed(PrefixedKey {
            sink,
            comma: !first,
        })? {
            first = false;
            sink.bytes(b":");
            let read = map.next_value_seed(NodeSeed {
                sink,
                budget,
                tree: &mut *self.tree,
            })?;
            self.tree.node::<A::Error>(&key, read, budget)?;
        }
        sink.bytes(b"}");
        Ok(true)
    }
}

/// One mapping node: its parent, message and children.
struct NodeSeed<'a> {
    sink: &'a Sink,
    budget: &'a Budget,
    tree: &'a mut Tree,
}

impl<'de> DeserializeSeed<'de> for NodeSeed<'_> {
    type Value = NodeRead;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<NodeRead, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NodeSeed<'_> {
    type Value = NodeRead;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a mapping node")
    }

    digest_others!(scalars => NodeRead::NotObject);
    digest_others!(seq => NodeRead::NotObject);

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<NodeRead, A::Error> {
        let (sink, budget) = (self.sink, self.budget);
        sink.bytes(b"{");
        let (mut parent, mut message, mut listed) = (Field::Absent, Field::Absent, (0, 0));
        let mut message_cost = 0;
        let mut first = true;
        while let Some(key) = map.next_key_seed(PrefixedKey {
            sink,
            comma: !first,
        })? {
            first = false;
            sink.bytes(b":");
            match key.as_str() {
                "parent" => parent = map.next_value_seed(IdSeed { sink })?,
                "message" => {
                    budget.refund(message_cost);
                    let before = budget.used();
                    let value = map.next_value_seed(values::Seed(budget))?;
                    message_cost = budget.used() - before;
                    sink.value(&value);
                    message = match value {
                        Value::Null => Field::Absent,
                        Value::Object(_) => Field::Some(value),
                        _ => Field::Bad,
                    };
                }
                "children" => {
                    listed = map.next_value_seed(ChildrenSeed {
                        sink,
                        budget,
                        tree: &mut *self.tree,
                    })?
                }
                _ => map.next_value_seed(Skip(sink))?,
            }
        }
        sink.bytes(b"}");
        // The message is converted (and dropped) by the tree as soon as this returns.
        budget.refund(message_cost);
        Ok(NodeRead::Node {
            parent,
            message,
            listed,
        })
    }
}

/// A node ID (a parent, a child): the string, or `Bad` when it is something else.
struct IdSeed<'a> {
    sink: &'a Sink,
}

impl<'de> DeserializeSeed<'de> for IdSeed<'_> {
    type Value = Field<String>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for IdSeed<'_> {
    type Value = Field<String>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a node ID")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Skip(self.sink).visit_bool::<E>(v)?;
        Ok(Field::Bad)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Skip(self.sink).visit_i64::<E>(v)?;
        Ok(Field::Bad)
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Skip(self.sink).visit_u64::<E>(v)?;
        Ok(Field::Bad)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Skip(self.sink).visit_f64::<E>(v)?;
        Ok(Field::Bad)
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        self.sink.str(v);
        Ok(Field::Some(v.to_owned()))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Skip(self.sink).visit_unit::<E>()?;
        Ok(Field::Absent)
    }
    digest_others!(seq => Field::Bad);
    digest_others!(map => Field::Bad);
}

/// A node's `children`: the IDs it lists (what is not a string left out), interned, added to
/// [`Tree::listed`]; where they are there.
struct ChildrenSeed<'a> {
    sink: &'a Sink,
    budget: &'a Budget,
    tree: &'a mut Tree,
}

impl<'de> DeserializeSeed<'de> for ChildrenSeed<'_> {
    type Value = (u32, u32);

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(u32, u32), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ChildrenSeed<'_> {
    type Value = (u32, u32);

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of node IDs")
    }

    digest_others!(scalars => (0, 0));
    digest_others!(map => (0, 0));

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(u32, u32), A::Error> {
        let sink = self.sink;
        sink.bytes(b"[");
        let start = self.tree.listed.len();
        let mut first = true;
        while let Some(child) = seq.next_element_seed(ChildSeed {
            sink,
            comma: !first,
        })? {
            first = false;
            if let Field::Some(id) = child {
                let id = self.tree.intern::<A::Error>(&id, self.budget)?;
                // With growth slack.
                self.budget.charge::<A::Error>(8)?;
                self.tree.listed.push(id);
            }
        }
        sink.bytes(b"]");
        Ok((start as u32, (self.tree.listed.len() - start) as u32))
    }
}

/// One element of `children`, after a comma unless it is the first.
struct ChildSeed<'a> {
    sink: &'a Sink,
    comma: bool,
}

impl<'de> DeserializeSeed<'de> for ChildSeed<'_> {
    type Value = Field<String>;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        if self.comma {
            self.sink.bytes(b",");
        }
        IdSeed { sink: self.sink }.deserialize(d)
    }
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
