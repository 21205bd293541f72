//! The typed requests generated from the spec (`generated/requests.rs`), and how they are read from
//! checked arguments. `Request::parse` is the one path from a front-end's arguments to a request:
//! the spec's argument check (`spec::validate`), then the typed fields.

use crate::error::{Error, Result};
use crate::spec::validate::{self, Args};
use crate::spec::{Operation, Origin};
use serde_json::{Map, Value};

include!("../../generated/requests.rs");

impl Request {
    /// Check `args` (under their MCP names) for `op` against the spec and build its typed request.
    /// Both front-ends come through here, so they give the same errors for the same arguments.
    pub fn parse(op: &Operation, args: &Map<String, Value>, origin: Origin) -> Result<Request> {
        Request::from_checked(op, &validate::validate(op, args, origin)?)
    }
}

/// Reads typed fields from checked arguments. The check has already refused a wrong value, so a
/// value of the wrong shape here is a bug, reported as one, never read as a default.
struct Fields<'a> {
    op: &'a Operation,
    args: &'a Map<String, Value>,
}

impl<'a> Fields<'a> {
    fn new(op: &'a Operation, args: &'a Args) -> Fields<'a> {
        Fields {
            op,
            args: args.as_map(),
        }
    }

    fn bug(&self, name: &str, what: &str) -> Error {
        Error::internal(format!(
            "internal error: the argument {name} of {} passed the check but is not {what}",
            self.op.name
        ))
    }

    fn unknown(&self) -> Error {
        Error::internal(format!(
            "internal error: the operation {} has no typed request",
            self.op.name
        ))
    }

    fn get(&self, name: &str) -> Option<&'a Value> {
        self.args.get(name).filter(|v| !v.is_null())
    }

    fn required<T>(&self, name: &str, value: Option<T>) -> Result<T> {
        value.ok_or_else(|| self.bug(name, "given"))
    }

    fn text(&self, name: &str) -> Result<Option<String>> {
        self.get(name)
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| self.bug(name, "a string"))
            })
            .transpose()
    }

    fn uint(&self, name: &str) -> Result<Option<u64>> {
        self.get(name)
            .map(|v| v.as_u64().ok_or_else(|| self.bug(name, "an integer")))
            .transpose()
    }

    fn flag(&self, name: &str) -> Result<bool> {
        match self.get(name) {
            None => Ok(false),
            Some(v) => v.as_bool().ok_or_else(|| self.bug(name, "true or false")),
        }
    }

    /// The number of an ID (`n12`, `tl3`).
    fn id(&self, name: &str) -> Result<Option<u64>> {
        self.get(name)
            .map(|v| {
                v.as_str()
                    .and_then(id_number)
                    .ok_or_else(|| self.bug(name, "an ID"))
            })
            .transpose()
    }

    fn ids(&self, name: &str) -> Result<Vec<u64>> {
        match self.get(name) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .and_then(id_number)
                        .ok_or_else(|| self.bug(name, "a list of IDs"))
                })
                .collect(),
            Some(_) => Err(self.bug(name, "a list of IDs")),
        }
    }

    /// An intent object (`{tag, note}`).
    fn intent(&self, name: &str) -> Result<Option<crate::model::Intent>> {
        let Some(value) = self.get(name) else {
            return Ok(None);
        };
        let object = value
            .as_object()
            .ok_or_else(|| self.bug(name, "an object"))?;
        let tag = object
            .get("tag")
            .and_then(Value::as_str)
            .ok_or_else(|| self.bug(name, "an intent with a tag"))?;
        let note = match object.get("note").filter(|v| !v.is_null()) {
            None => None,
            Some(note) => Some(
                note.as_str()
                    .ok_or_else(|| self.bug(name, "an intent with a text note"))?
                    .to_string(),
            ),
        };
        Ok(Some(crate::model::Intent {
            tag: tag.to_string(),
            note,
        }))
    }
}

/// The number of a checked ID: the digits after its prefix.
fn id_number(id: &str) -> Option<u64> {
    id.trim_start_matches(|c: char| c.is_ascii_alphabetic())
        .parse()
        .ok()
}

/// A message's intent is a value of the spec's `intent` type, checked by the same rules.
impl validate::TaggedNote for crate::model::Intent {
    fn tag(&self) -> &str {
        &self.tag
    }

    fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }
}
