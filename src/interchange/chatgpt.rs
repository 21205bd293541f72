//! ChatGPT data export: `conversations.json` is an array of conversations, each a tree in `mapping`
//! (node ID → `{id, message, parent, children}`), with `current_node` the leaf the app showed.
//!
//! Messages are taken in order of creation (`message.create_time`; a message without one right
//! after its parent), always after their parent, so node IDs grow as the conversation did. Nodes
//! without a message (the hidden root) and messages with no text are left out; their children hang
//! from the nearest message above them.
//!
//! `reader` reads a conversation into the compact [`Tree`] with serde visitors; `messages` turns one
//! message into a Timeline message.

mod messages;
mod reader;

use super::digest::Sink;
use super::values::{self, Budget};
use super::walk::{self, Read, Top};
use super::{Conversation, Format, Kinds, Msg, seconds_to_ms};
use messages::render;
use reader::{Field, NodeRead};
use serde::de::{self, Deserializer};
use serde_json::Value;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

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
    let Top::Object(head) = walk::walk(deserializer, sink, budget, &mut tree)? else {
        return Ok(Read {
            source_id: None,
            title: None,
            conversation: Err("it is not a JSON object".into()),
        });
    };
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

/// A converted message as the tree keeps it until the conversation is assembled: its strings
/// boxed to their length and nothing else, under half of a [`Msg`] with its strings' slack, so
/// that a long conversation (100,000 messages) fits its memory allowance.
struct Kept {
    role: crate::model::Role,
    text: Box<str>,
    tag: Option<Box<str>>,
    note: Option<Box<str>>,
    provenance: Option<Box<str>>,
    source_id: Option<Box<str>>,
    time_ms: Option<u64>,
}

impl Kept {
    fn new(msg: Msg) -> Kept {
        let (tag, note) = match msg.intent {
            Some(i) => (
                Some(i.tag.into_boxed_str()),
                i.note.map(String::into_boxed_str),
            ),
            None => (None, None),
        };
        Kept {
            role: msg.role,
            text: msg.text.into_boxed_str(),
            tag,
            note,
            provenance: msg.provenance.map(String::into_boxed_str),
            source_id: msg.source_id.map(String::into_boxed_str),
            time_ms: msg.time_ms,
        }
    }

    /// What it takes: its place in the tree's vector, with growth slack, and its strings' blocks.
    fn cost(&self) -> usize {
        let boxed = |s: &Option<Box<str>>| s.as_ref().map_or(0, |s| values::string_cost(s.len()));
        2 * std::mem::size_of::<Option<Kept>>()
            + values::string_cost(self.text.len())
            + boxed(&self.tag)
            + boxed(&self.note)
            + boxed(&self.provenance)
            + boxed(&self.source_id)
    }

    fn into_msg(self, parent: Option<usize>) -> Msg {
        Msg {
            parent,
            role: self.role,
            text: self.text.into_string(),
            intent: self.tag.map(|tag| crate::model::Intent {
                tag: tag.into_string(),
                note: self.note.map(str::into_string),
            }),
            provenance: self.provenance.map(str::into_string),
            source_id: self.source_id.map(str::into_string),
            time_ms: self.time_ms,
        }
    }
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
    /// The converted messages, in their compact form; a node has the index of its own.
    rendered: Vec<Option<Kept>>,
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
                    let kept = Kept::new(msg);
                    budget.charge::<E>(kept.cost())?;
                    self.rendered.push(Some(kept));
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
        // Sized once: a vector grown by doubling may hold twice its messages' room.
        let mut messages = Vec::with_capacity(rendered.len());
        while let Some(Reverse((_, _, i))) = heap.pop() {
            let above = parent_of[i].and_then(|p| kept_at[p]);
            kept_at[i] = match message_of(i).and_then(|m| rendered[m].take()) {
                Some(kept) => {
                    messages.push(kept.into_msg(above));
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
            skip: None,
        })
    }
}
