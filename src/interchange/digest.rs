//! A conversation's import digest, streamed while it is parsed.
//!
//! The digest is SHA-256 of the format and of the conversation's JSON as `Value::to_string` writes
//! it (compact, keys in their order). A converter that parses into its own compact form, keeping
//! only what it needs, writes here what it meets as it meets it, in that same form: the parts it
//! keeps through [`Sink`], the rest through [`Skip`], which builds nothing. The bytes are those of
//! the value, except for an object holding one key twice: a value keeps the first key's place with
//! the last key's value, the stream both (such files digest differently than before, see
//! spec/NOTES.md).

use super::Format;
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::fmt;

/// The digest's state before the conversation: the format and a separator.
pub fn start(format: Format) -> Sha256 {
    let mut hasher = Sha256::new();
    hasher.update(format.as_str().as_bytes());
    hasher.update([0]);
    hasher
}

/// The digest being written (shared by the nested parsers of one conversation).
pub struct Sink(RefCell<Sha256>);

impl Sink {
    pub fn new(hasher: Sha256) -> Sink {
        Sink(RefCell::new(hasher))
    }

    pub fn into_inner(self) -> Sha256 {
        self.0.into_inner()
    }

    pub fn bytes(&self, bytes: &[u8]) {
        self.0.borrow_mut().update(bytes);
    }

    /// A string (also an object's key) as JSON, escaped as `Value::to_string` escapes it.
    pub fn str(&self, text: &str) {
        let _ = serde_json::to_writer(&mut Writer::new(self), text);
    }

    /// A whole value, as `Value::to_string` writes it.
    pub fn value(&self, value: &Value) {
        let _ = serde_json::to_writer(&mut Writer::new(self), value);
    }

    fn number<T: serde::Serialize>(&self, number: T) {
        let _ = serde_json::to_writer(&mut Writer::new(self), &number);
    }
}

/// Writes into a [`Sink`] (writing never fails) through a buffer on the stack: serde_json writes a
/// value a quote, a colon and a comma at a time, and one hasher call per piece cost more than the
/// hashing itself in an import of many small messages.
struct Writer<'s> {
    sink: &'s Sink,
    buffer: [u8; 512],
    len: usize,
}

impl<'s> Writer<'s> {
    fn new(sink: &'s Sink) -> Writer<'s> {
        Writer {
            sink,
            buffer: [0; 512],
            len: 0,
        }
    }
}

impl std::io::Write for Writer<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.len + bytes.len() > self.buffer.len() {
            self.flush()?;
        }
        if bytes.len() >= self.buffer.len() {
            self.sink.bytes(bytes);
        } else {
            self.buffer[self.len..self.len + bytes.len()].copy_from_slice(bytes);
            self.len += bytes.len();
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if self.len > 0 {
            self.sink.bytes(&self.buffer[..self.len]);
            self.len = 0;
        }
        Ok(())
    }
}

impl Drop for Writer<'_> {
    fn drop(&mut self) {
        let _ = std::io::Write::flush(self);
    }
}

/// Digests one value and keeps nothing of it (a string is only borrowed while it is digested).
#[derive(Clone, Copy)]
pub struct Skip<'s>(pub &'s Sink);

impl<'de> DeserializeSeed<'de> for Skip<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

/// An object's key, digested and kept.
pub struct Key<'s>(pub &'s Sink);

impl<'de> DeserializeSeed<'de> for Key<'_> {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        let key = String::deserialize(deserializer)?;
        self.0.str(&key);
        Ok(key)
    }
}

impl<'de> Visitor<'de> for Skip<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E: serde::de::Error>(self, v: bool) -> Result<(), E> {
        self.0.bytes(if v { b"true" } else { b"false" });
        Ok(())
    }

    fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<(), E> {
        self.0.number(v);
        Ok(())
    }

    fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<(), E> {
        self.0.number(v);
        Ok(())
    }

    fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<(), E> {
        // As a value holds it: a number that is not finite is null (and so written).
        self.0.number(v);
        Ok(())
    }

    fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<(), E> {
        self.0.str(v);
        Ok(())
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.0.bytes(b"null");
        Ok(())
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        self.deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        self.0.bytes(b"[");
        let mut first = true;
        while seq
            .next_element_seed(Prefixed {
                sink: self.0,
                comma: !first,
            })?
            .is_some()
        {
            first = false;
        }
        self.0.bytes(b"]");
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        members(self.0, &mut map, |map, _| map.next_value_seed(self))
    }
}

/// An object's members read by `member` (given each key, it reads and digests the value), the
/// braces, commas, keys and colons digested as `Value::to_string` writes them.
pub fn members<'de, A: MapAccess<'de>>(
    sink: &Sink,
    map: &mut A,
    mut member: impl FnMut(&mut A, String) -> Result<(), A::Error>,
) -> Result<(), A::Error> {
    sink.bytes(b"{");
    let mut first = true;
    while let Some(key) = map.next_key_seed(PrefixedKey {
        sink,
        comma: !first,
    })? {
        first = false;
        sink.bytes(b":");
        member(map, key)?;
    }
    sink.bytes(b"}");
    Ok(())
}

/// An array's element, after a comma unless it is the first: the comma is written only once the
/// element is there.
struct Prefixed<'s> {
    sink: &'s Sink,
    comma: bool,
}

impl<'de> DeserializeSeed<'de> for Prefixed<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        if self.comma {
            self.sink.bytes(b",");
        }
        Skip(self.sink).deserialize(deserializer)
    }
}

/// An object's key after a comma unless it is the first, digested and kept.
pub struct PrefixedKey<'s> {
    pub sink: &'s Sink,
    pub comma: bool,
}

impl<'de> DeserializeSeed<'de> for PrefixedKey<'_> {
    type Value = String;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<String, D::Error> {
        if self.comma {
            self.sink.bytes(b",");
        }
        Key(self.sink).deserialize(deserializer)
    }
}

/// Visitor methods for the kinds of JSON a seed does not keep: digested, then `$value` (the
/// compact readers' seeds, with `Skip`, `de`, `SeqAccess` and `MapAccess` in scope).
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

pub(crate) use digest_others;

#[cfg(test)]
mod tests {
    use super::*;

    fn streamed(text: &str) -> Vec<u8> {
        let sink = Sink::new(Sha256::new());
        let mut de = serde_json::Deserializer::from_str(text);
        Skip(&sink).deserialize(&mut de).unwrap();
        sink.into_inner().finalize().to_vec()
    }

    #[test]
    fn digests_what_a_value_writes() {
        for text in [
            r#"{"b": [1, -2, 3.5, -0, 1e3, "x\u0001\"/é", null, true, false, {}, []], "a": {"c": {"d": []}}}"#,
            "[]",
            "\"\"",
            "12345678901234567890",
            "[[[]], {\"\": \"\"}]",
        ] {
            let value: Value = serde_json::from_str(text).unwrap();
            let expected = Sha256::digest(value.to_string().as_bytes()).to_vec();
            assert_eq!(streamed(text), expected, "{text}");
        }
    }
}
