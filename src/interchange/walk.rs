//! One conversation's JSON walked without building its value: the walker of its top-level object,
//! which every export and request format reads with, and the seeds of the lists of messages in it.
//!
//! The top-level object keeps its head fields (IDs, titles, times) as values, hands the format's own
//! keys (`mapping`, `chat_messages`, `messages`, ...) to the format's seeds and digests and drops
//! the rest (see the module `digest`). A list of messages is parsed one message at a time: each as
//! a value within the conversation's budget, handed over, and dropped before the next, so memory
//! holds what the format keeps of the messages read and one message's value, never the
//! conversation's. Each format's reader is only the part that differs: a [`Body`].

use super::digest::{Sink, Skip, digest_others, members};
use super::values::{self, Budget};
use super::{Conversation, Kinds, Msg};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::fmt;

/// One conversation read into its compact form: what [`super::Format::source_id`],
/// [`super::Format::title`] and [`super::Format::convert`] would take from its value, without the
/// value.
pub struct Read {
    pub source_id: Option<String>,
    pub title: Option<String>,
    pub conversation: Result<Conversation, String>,
}

/// What one format's reader does with its top-level object.
pub(super) trait Body<'de> {
    /// What the input should be, for serde's messages.
    const WHAT: &'static str;
    /// Keys whose values are kept in the head, as values (small fields: IDs, titles, times).
    const HEAD: &'static [&'static str];
    /// Keys of which only the presence is kept (as `null`): another format's own key, for a hint.
    const PRESENT: &'static [&'static str] = &[];

    /// Read the value of `key` with the format's seed (`map.next_value_seed`) when it is one of the
    /// format's own keys, digesting it; `false` when it is not one (the walker digests and drops
    /// it).
    fn special<A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        sink: &Sink,
        budget: &Budget,
    ) -> Result<bool, A::Error>;

    /// A top level that is an array, digested: the request formats take it as the messages
    /// themselves; `false` for the others (it is digested and dropped).
    fn array<A: SeqAccess<'de>>(
        &mut self,
        seq: A,
        sink: &Sink,
        _budget: &Budget,
    ) -> Result<bool, A::Error> {
        Skip(sink).visit_seq(seq)?;
        Ok(false)
    }
}

/// What the top level was.
pub(super) enum Top {
    /// An object: its head fields.
    Object(Value),
    /// An array its format read.
    Array,
    /// Anything else (digested and dropped).
    Other,
}

/// Walk one conversation's top level with `body`.
pub(super) fn walk<'de, D: Deserializer<'de>, B: Body<'de>>(
    deserializer: D,
    sink: &Sink,
    budget: &Budget,
    body: &mut B,
) -> Result<Top, D::Error> {
    deserializer.deserialize_any(Walker { sink, budget, body })
}

/// The walker as a seed, for an object nested in another (Open WebUI's `chat`).
pub(super) struct Walker<'a, B> {
    pub(super) sink: &'a Sink,
    pub(super) budget: &'a Budget,
    pub(super) body: &'a mut B,
}

impl<'de, B: Body<'de>> DeserializeSeed<'de> for Walker<'_, B> {
    type Value = Top;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Top, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, B: Body<'de>> Visitor<'de> for Walker<'_, B> {
    type Value = Top;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str(B::WHAT)
    }

    digest_others!(scalars => Top::Other);

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Top, A::Error> {
        Ok(if self.body.array(seq, self.sink, self.budget)? {
            Top::Array
        } else {
            Top::Other
        })
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top, A::Error> {
        let (sink, budget) = (self.sink, self.budget);
        let mut head = Map::new();
        members(sink, &mut map, |map, key| {
            if self.body.special(&key, map, sink, budget)? {
                return Ok(());
            }
            if B::HEAD.contains(&key.as_str()) {
                head.insert(key, value(map, sink, budget)?);
            } else {
                map.next_value_seed(Skip(sink))?;
                if B::PRESENT.contains(&key.as_str()) {
                    head.insert(key, Value::Null);
                }
            }
            Ok(())
        })?;
        Ok(Top::Object(Value::Object(head)))
    }
}

/// An array of messages (or, `keyed`, an object of messages keyed by their IDs, as Open WebUI's
/// `history.messages`): each message parsed as a value (within the budget) and digested, handed
/// to `each` with its index (and key), and dropped before the next; `each` returns what it keeps
/// of it, in bytes, which is charged. `false` when it is not an array (an object).
pub(super) struct Each<'a, F> {
    sink: &'a Sink,
    budget: &'a Budget,
    keyed: bool,
    each: F,
}

/// The messages of an array, each handed to `each` with its index.
pub(super) fn elements<'a>(
    sink: &'a Sink,
    budget: &'a Budget,
    mut each: impl FnMut(usize, Value) -> usize,
) -> Each<'a, impl FnMut(usize, String, Value) -> usize> {
    Each {
        sink,
        budget,
        keyed: false,
        each: move |i, _, message| each(i, message),
    }
}

/// The messages of an object, each handed to `each` with its key.
pub(super) fn members_of<'a>(
    sink: &'a Sink,
    budget: &'a Budget,
    mut each: impl FnMut(String, Value) -> usize,
) -> Each<'a, impl FnMut(usize, String, Value) -> usize> {
    Each {
        sink,
        budget,
        keyed: true,
        each: move |_, key, message| each(key, message),
    }
}

impl<F: FnMut(usize, String, Value) -> usize> Each<'_, F> {
    /// Parse one message, hand it over and drop it.
    fn next<E: de::Error>(
        &mut self,
        i: usize,
        key: String,
        parse: impl FnOnce(values::Seed) -> Result<Option<Value>, E>,
    ) -> Result<bool, E> {
        let before = self.budget.used();
        let Some(message) = parse(values::Seed(self.budget))? else {
            return Ok(false);
        };
        let cost = self.budget.used() - before;
        if i > 0 && !self.keyed {
            self.sink.bytes(b",");
        }
        self.sink.value(&message);
        let kept = (self.each)(i, key, message);
        // The message's value was dropped by `each`: what it took is free again.
        self.budget.refund(cost);
        self.budget.charge::<E>(kept)?;
        Ok(true)
    }
}

impl<'de, F: FnMut(usize, String, Value) -> usize> DeserializeSeed<'de> for Each<'_, F> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, F: FnMut(usize, String, Value) -> usize> Visitor<'de> for Each<'_, F> {
    type Value = bool;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("messages")
    }

    digest_others!(scalars => false);

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<bool, A::Error> {
        if self.keyed {
            Skip(self.sink).visit_seq(seq)?;
            return Ok(false);
        }
        self.sink.bytes(b"[");
        let mut i = 0;
        while self.next(i, String::new(), |seed| seq.next_element_seed(seed))? {
            i += 1;
        }
        self.sink.bytes(b"]");
        Ok(true)
    }

    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<bool, A::Error> {
        if !self.keyed {
            Skip(self.sink).visit_map(map)?;
            return Ok(false);
        }
        let sink = self.sink;
        let mut i = 0;
        members(sink, &mut map, |map, key| {
            self.next(i, key, |seed| map.next_value_seed(seed).map(Some))?;
            i += 1;
            Ok(())
        })?;
        Ok(true)
    }
}

/// Converts message `i` of a list, the child of `parent` (the message before it that was kept):
/// `Ok(None)` when it is left out (counted in the kinds), `Err` when the list is not of the format.
pub(super) type Convert =
    fn(usize, &Value, Option<usize>, &mut Kinds) -> Result<Option<Msg>, String>;

/// A list of messages, each the child of the one before, as it is read (Claude.ai's
/// `chat_messages`, a request's `messages`).
#[derive(Default)]
pub(super) struct Messages {
    /// `None`: no array of messages (yet); `Err`: why it is not one of the format.
    pub(super) read: Option<Result<(), String>>,
    pub(super) messages: Vec<Msg>,
    pub(super) kinds: Kinds,
}

impl Messages {
    /// Read an array of messages, each converted with `convert` as soon as it is parsed; after the
    /// first message that is not of the format, the rest are only digested.
    pub(super) fn elements<'de, D: Deserializer<'de>>(
        &mut self,
        d: D,
        sink: &Sink,
        budget: &Budget,
        convert: Convert,
    ) -> Result<bool, D::Error> {
        // As a value keeps a key given twice: the last one's messages.
        *self = Messages::default();
        let mut read: Result<(), String> = Ok(());
        let (messages, kinds) = (&mut self.messages, &mut self.kinds);
        let array = elements(sink, budget, |i, value: Value| {
            if read.is_err() {
                return 0;
            }
            match convert(i, &value, messages.len().checked_sub(1), kinds) {
                Ok(Some(msg)) => {
                    let cost = values::message_cost(&msg);
                    messages.push(msg);
                    cost
                }
                Ok(None) => 0,
                Err(reason) => {
                    read = Err(reason);
                    0
                }
            }
        })
        .deserialize(d)?;
        if array {
            self.read = Some(read);
        }
        Ok(array)
    }

    /// The value of `key` read as the array of messages.
    pub(super) fn next_value<'de, A: MapAccess<'de>>(
        &mut self,
        map: &mut A,
        sink: &Sink,
        budget: &Budget,
        convert: Convert,
    ) -> Result<bool, A::Error> {
        map.next_value_seed(MessagesSeed {
            messages: self,
            sink,
            budget,
            convert,
        })
    }

    /// A top-level array read as the array of messages.
    pub(super) fn seq<'de, A: SeqAccess<'de>>(
        &mut self,
        seq: A,
        sink: &Sink,
        budget: &Budget,
        convert: Convert,
    ) -> Result<bool, A::Error> {
        self.elements(
            serde::de::value::SeqAccessDeserializer::new(seq),
            sink,
            budget,
            convert,
        )
    }
}

struct MessagesSeed<'a> {
    messages: &'a mut Messages,
    sink: &'a Sink,
    budget: &'a Budget,
    convert: Convert,
}

impl<'de> DeserializeSeed<'de> for MessagesSeed<'_> {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        self.messages
            .elements(d, self.sink, self.budget, self.convert)
    }
}

/// One value kept whole (a head field nested in a format's own object, Anthropic's `system`):
/// parsed within the budget and digested.
pub(super) fn value<'de, A: MapAccess<'de>>(
    map: &mut A,
    sink: &Sink,
    budget: &Budget,
) -> Result<Value, A::Error> {
    let value = map.next_value_seed(values::Seed(budget))?;
    sink.value(&value);
    Ok(value)
}
