//! Operations: the only code that changes a `Database`.
//!
//! Each operation takes validated arguments and returns its JSON result. An operation that fails may
//! leave the in-memory database half-changed; the store never writes it, so nothing reaches disk.

mod archive;
mod budget;
mod read;
mod summarize;
mod tree;

use crate::error::{Error, Result};
use crate::model::{Database, Intent};
use crate::spec::validate::Args;
/// The budget planner's input as the budget operation gathers it (used by the benchmark harness too).
pub use budget::planner_input;
use serde_json::Value;

/// What an operation needs besides the database: the clock.
#[derive(Debug, Clone, Copy)]
pub struct Ctx {
    /// Unix seconds.
    pub now: u64,
}

pub fn run(db: &mut Database, op: &str, args: &Args, ctx: &Ctx) -> Result<Value> {
    match op {
        "create" => tree::create(db),
        "append" => tree::append(db, args),
        "fork" => tree::fork(db, args),
        "switch" => tree::switch(db, args),
        "drop_branch" => tree::drop_branch(db, args),
        "pin" => tree::pin(db, args),
        "unpin" => tree::unpin(db, args),
        "context" => read::context(db, args),
        "branches" => read::branches(db, args),
        "node" => read::node(db, args),
        "summarize" => summarize::summarize(db, args, ctx),
        "context_budget" => budget::budget(db, args, ctx),
        "archive_check" => archive::check(db, args),
        "archive_branch" => archive::archive(db, args, ctx),
        other => Err(Error::invalid(format!("unknown operation {other}"))),
    }
}

/// The timeline named by the arguments, or the one with the smallest ID.
pub fn timeline_of(db: &Database, args: &Args) -> Result<u64> {
    match args.id("timeline_id") {
        Some(id) => db.timeline(id).map(|t| t.id),
        None => db.default_timeline(),
    }
}

fn intent_of(args: &Args) -> Option<Intent> {
    let object = args.object("intent")?;
    Some(Intent {
        tag: object.get("tag")?.as_str()?.to_string(),
        note: object
            .get("note")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// A message as `context` and `budget` print it: `intent_tag` only when the node has an intent.
fn message_json(
    node_id: u64,
    role: &str,
    text: &str,
    tokens: u64,
    intent: Option<&Intent>,
) -> Value {
    let mut message = serde_json::json!({
        "node": crate::model::node_id(node_id),
        "role": role,
        "text": text,
        "tokens": tokens,
    });
    if let Some(intent) = intent {
        message["intent_tag"] = Value::String(intent.tag.clone());
    }
    message
}

fn output_cap(count: usize) -> Result<()> {
    let cap = crate::spec::spec().constants.max_output_messages;
    if count > cap {
        return Err(Error::new(
            crate::error::ErrorKind::LimitExceeded,
            format!(
                "the result would have {count} messages, over the limit of {cap}; use budget with a smaller target or summarise older history"
            ),
        ));
    }
    Ok(())
}
