//! The compact reader: serde visitors that read one ChatGPT conversation's mapping into a [`Tree`]
//! without building its value, streaming its JSON into the digest as they go (the top level is
//! the generic walker's, `walk`).

use super::super::digest::{Sink, Skip, digest_others, members};
use super::super::values::{self, Budget};
use super::super::walk::Body;
use super::Tree;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::fmt;

/// A field of a node as read: absent (or null), the kept value, or of the wrong kind.
pub(super) enum Field<T> {
    Absent,
    Some(T),
    Bad,
}

pub(super) enum NodeRead {
    NotObject,
    Node {
        parent: Field<String>,
        message: Field<Value>,
        listed: (u32, u32),
    },
}

/// The conversation object: its head fields kept as values, its mapping read into the tree.
impl<'de> Body<'de> for Tree {
    const WHAT: &'static str = "a ChatGPT conversation";
    const HEAD: &'static [&'static str] = &[
        "title",
        "id",
        "conversation_id",
        "current_node",
        "create_time",
        "update_time",
    ];
    // A Claude.ai conversation given as ChatGPT's.
    const PRESENT: &'static [&'static str] = &["chat_messages"];

    fn special<A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        sink: &Sink,
        budget: &Budget,
    ) -> Result<bool, A::Error> {
        if key != "mapping" {
            return Ok(false);
        }
        self.mapping = map.next_value_seed(MappingSeed {
            sink,
            budget,
            tree: self,
        })?;
        Ok(true)
    }
}

/// The `mapping` object, node by node into the tree; `false` when it is not an object.
pub(super) struct MappingSeed<'a> {
    pub(super) sink: &'a Sink,
    pub(super) budget: &'a Budget,
    pub(super) tree: &'a mut Tree,
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
        members(sink, &mut map, |map, key| {
            let read = map.next_value_seed(NodeSeed {
                sink,
                budget,
                tree: &mut *self.tree,
            })?;
            self.tree.node::<A::Error>(&key, read, budget)
        })?;
        Ok(true)
    }
}

/// One mapping node: its parent, message and children.
pub(super) struct NodeSeed<'a> {
    pub(super) sink: &'a Sink,
    pub(super) budget: &'a Budget,
    pub(super) tree: &'a mut Tree,
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
        let (mut parent, mut message, mut listed) = (Field::Absent, Field::Absent, (0, 0));
        let mut message_cost = 0;
        members(sink, &mut map, |map, key| {
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
            Ok(())
        })?;
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
pub(super) struct IdSeed<'a> {
    pub(super) sink: &'a Sink,
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
pub(super) struct ChildrenSeed<'a> {
    pub(super) sink: &'a Sink,
    pub(super) budget: &'a Budget,
    pub(super) tree: &'a mut Tree,
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
pub(super) struct ChildSeed<'a> {
    pub(super) sink: &'a Sink,
    pub(super) comma: bool,
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
