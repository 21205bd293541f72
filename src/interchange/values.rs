//! One conversation's JSON text as a `serde_json::Value`, within a memory allowance.
//!
//! A value costs far more memory than its text: each `0,` (2 bytes) becomes a 72-byte value in an
//! array that may hold twice that while it grows, and each object member a key string and an entry
//! of an ordered map. A conversation of millions of tiny values (or of a mapping of 200,000 nodes)
//! would take gigabytes. The values are built here with their memory counted as they are made, and
//! building stops once they would take more than [`allowance`] bytes (or, for text parsed as it is
//! read, [`OVERHEAD_BYTES`] plus the bytes read so far): the conversation is then skipped with a
//! reason. The [`Budget`] also counts the compact form ChatGPT's and Claude.ai's readers keep
//! (`chatgpt::read`, `claude::read`).

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use std::cell::Cell;
use std::fmt;

/// What one conversation's values may take beyond the size of its JSON text.
pub const OVERHEAD_BYTES: usize = 32 << 20;

/// The memory the values of JSON text of `len` bytes may take.
pub fn allowance(len: usize) -> usize {
    OVERHEAD_BYTES.saturating_add(len)
}

// What each piece costs at most, counted so that the real use (allocator rounding, growth slack
// of vectors and maps included) stays below the count.

/// A string's heap block: its bytes and the allocator's header and rounding.
pub fn string_cost(len: usize) -> usize {
    if len == 0 { 0 } else { 32 + len }
}
/// What a converted message a compact reader keeps takes: its strings' blocks, and its place with
/// growth slack.
pub fn message_cost(msg: &super::Msg) -> usize {
    2 * std::mem::size_of::<Option<super::Msg>>()
        + string_cost(msg.text.len())
        + msg.provenance.as_ref().map_or(0, |p| string_cost(p.len()))
        + msg.source_id.as_ref().map_or(0, |p| string_cost(p.len()))
        + msg.intent.as_ref().map_or(0, |i| string_cost(i.tag.len()))
}

/// One array element: a `Value` (72 bytes with ordered maps), twice over while the vector grows by
/// doubling.
const ELEMENT_COST: usize = 2 * std::mem::size_of::<Value>();
/// One object member besides its key's string: an ordered map's entry (hash, key and value) twice
/// over while it grows, and its hash index slot with the same slack.
const MEMBER_COST: usize =
    2 * (std::mem::size_of::<(u64, String, Value)>() + std::mem::size_of::<usize>() + 1);
/// What an array's or object's first element adds: the smallest allocations a vector (4 values)
/// and an ordered map (4 entries and a table of 8 slots) make, with the allocator's headers.
const FIRST_ELEMENT_COST: usize = 4 * std::mem::size_of::<Value>() + 16;
const FIRST_MEMBER_COST: usize = 4 * std::mem::size_of::<(u64, String, Value)>() + 8 * 9 + 48;

/// One line of a session file (or a session's whole JSON) as a value, within the same
/// [`allowance`], and with serde_json's limit of 128 levels kept (a line's depth was not bounded
/// before): `None` when it is not JSON or would take more memory than that.
pub fn parse_line(text: &str) -> Option<Value> {
    let budget = Budget::new(allowance(text.len()));
    let mut de = serde_json::Deserializer::from_str(text);
    let value = Seed(&budget).deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(value)
}

/// What the values (or a converter's compact form) of one conversation may still take.
pub struct Budget {
    allowed: Cell<usize>,
    left: Cell<usize>,
    /// What was charged and not refunded.
    used: Cell<usize>,
    exhausted: Cell<bool>,
}

impl Budget {
    pub fn new(allowed: usize) -> Budget {
        Budget {
            allowed: Cell::new(allowed),
            left: Cell::new(allowed),
            used: Cell::new(0),
            exhausted: Cell::new(false),
        }
    }

    /// `bytes` more of the JSON were read: the allowance of text parsed as it is read, whose size
    /// is known only at its end, grows with it.
    pub fn grow(&self, bytes: usize) {
        self.allowed.set(self.allowed.get().saturating_add(bytes));
        self.left.set(self.left.get().saturating_add(bytes));
    }

    /// What was charged and not refunded so far.
    pub fn used(&self) -> usize {
        self.used.get()
    }

    /// Give back what was charged for something dropped.
    pub fn refund(&self, bytes: usize) {
        self.used.set(self.used.get().saturating_sub(bytes));
        self.left.set(
            self.left
                .get()
                .saturating_add(bytes)
                .min(self.allowed.get()),
        );
    }

    pub fn is_exhausted(&self) -> bool {
        self.exhausted.get()
    }

    /// Why JSON text of `len` bytes, given an allowance for its size, went over it.
    pub fn fixed_reason(&self, len: usize) -> String {
        format!(
            "its JSON holds too many values to convert within {} MiB of memory (the limit for {len} bytes of JSON); split the conversation or leave out what it repeats",
            self.allowed.get() >> 20
        )
    }

    /// Why a conversation parsed as it was read went over its growing allowance (where it did
    /// depends on the order of its values, so the reason names the rule, not a number).
    pub fn streamed_reason(&self) -> String {
        format!(
            "its JSON holds too many values to convert within {} MiB of memory plus the size of its JSON; split the conversation or leave out what it repeats",
            OVERHEAD_BYTES >> 20
        )
    }

    pub fn charge<E: serde::de::Error>(&self, bytes: usize) -> Result<(), E> {
        match self.left.get().checked_sub(bytes) {
            Some(left) => {
                self.used.set(self.used.get() + bytes);
                self.left.set(left);
                Ok(())
            }
            None => {
                self.exhausted.set(true);
                Err(E::custom(
                    "the conversation's values are over their memory allowance",
                ))
            }
        }
    }
}

/// Builds one value, as `serde_json::Value`'s own deserializer does, counting what it allocates.
#[derive(Clone, Copy)]
pub struct Seed<'b>(pub &'b Budget);

impl<'de> DeserializeSeed<'de> for Seed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Value, E> {
        self.0.charge(string_cost(v.len()))?;
        Ok(Value::String(v.to_owned()))
    }

    fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Value, E> {
        self.0.charge(string_cost(v.len()))?;
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(self)? {
            let first = if items.is_empty() {
                FIRST_ELEMENT_COST
            } else {
                0
            };
            self.0.charge(first + ELEMENT_COST)?;
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let first = if members.is_empty() {
                FIRST_MEMBER_COST
            } else {
                0
            };
            self.0
                .charge(first + MEMBER_COST + string_cost(key.len()))?;
            let value = map.next_value_seed(self)?;
            members.insert(key, value);
        }
        Ok(Value::Object(members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Why building stopped.
    enum Refused {
        /// The values would take more than their allowance: the reason a conversation is skipped.
        TooLarge(String),
        /// The text is not JSON (or holds a string serde_json does not build).
        Json,
    }

    /// The value of JSON text `bytes`, nested as deep as the scanner allowed (serde_json's own limit of
    /// 128 levels is lifted: the input's depth was bounded before), within [`allowance`].
    fn parse(bytes: &[u8]) -> Result<Value, Refused> {
        let allowed = allowance(bytes.len());
        let budget = Budget::new(allowed);
        let mut de = serde_json::Deserializer::from_slice(bytes);
        de.disable_recursion_limit();
        let built = Seed(&budget).deserialize(&mut de).and_then(|value| {
            de.end()?;
            Ok(value)
        });
        match built {
            Ok(value) => Ok(value),
            Err(_) if budget.is_exhausted() => {
                Err(Refused::TooLarge(budget.fixed_reason(bytes.len())))
            }
            Err(_) => Err(Refused::Json),
        }
    }

    #[test]
    fn builds_what_serde_json_builds() {
        let text = r#"{"a": [1, -2, 3.5, "x", null, true, {"b": {}}], "": "", "a": "again"}"#;
        let expected: Value = serde_json::from_str(text).unwrap();
        assert!(matches!(parse(text.as_bytes()), Ok(v) if v == expected));
        assert!(matches!(parse(b"[1,]"), Err(Refused::Json)));
        assert!(matches!(parse(b"[1] 2"), Err(Refused::Json)));
    }

    #[test]
    fn stops_at_the_allowance() {
        // A million elements cost over 100 MiB, more than 32 MiB plus their 2 MB of text.
        let text = format!("[{}]", ["0"; 1_000_000].join(","));
        match parse(text.as_bytes()) {
            Err(Refused::TooLarge(reason)) => assert_eq!(
                reason,
                "its JSON holds too many values to convert within 33 MiB of memory (the limit for 2000001 bytes of JSON); split the conversation or leave out what it repeats"
            ),
            _ => panic!("a million values were built"),
        }
        let text = format!("[{}]", ["0"; 100_000].join(","));
        assert!(parse(text.as_bytes()).is_ok());
    }
}
