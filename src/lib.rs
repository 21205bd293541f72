//! Timeline: a local-first store of LLM conversations as a tree of messages with named branches.
//!
//! One library behind two thin binaries: `tl` (the CLI, [`cli`]) and `tl-mcp` (the MCP server,
//! [`mcp`]). A request flows front-end → [`spec::validate`] → [`service`] → [`ops`] inside a
//! [`store`] transaction.
//!
//! # Use as a library
//!
//! The library takes the same path as both binaries: open a database with [`store::Store::open`]
//! (a path ending in `.json` gives a JSON snapshot, anything else SQLite; the file is created by the
//! first change), then hand [`service::execute`] one [`service::Request`] per operation. A request
//! names an operation of the spec ([`spec::spec`]`().operation(name)`) and carries its arguments as
//! a JSON object under their MCP names, exactly as an MCP client sends them; `execute` validates
//! them against the spec ([`spec::validate`]), turns them into the typed [`ops::Request`], runs the
//! operation in a transaction and returns its JSON result ([`service::Output`]). Errors are
//! [`error::Error`]s whose [`error::ErrorKind`] comes from the spec's error table. The operations,
//! their arguments and results are listed in `generated/cli-reference.md` (by their `tl` names)
//! and in `spec/timeline.json`.
//!
//! This example creates a timeline, appends three messages, forks a branch from the first one, and
//! fits the main branch into a budget of 60 tokens, all in-process:
//!
//! ```
//! use serde_json::{Value, json};
//! use timeline::service::{self, Output, Request};
//! use timeline::spec::{spec, validate::Origin};
//! use timeline::store::Store;
//!
//! // Run operation `op` with `args` (an object under the MCP parameter names) and return its JSON.
//! fn call(store: &mut Store, op: &str, args: Value) -> timeline::error::Result<Value> {
//!     let Value::Object(args) = args else { unreachable!("arguments are an object") };
//!     let request = Request {
//!         op: spec().operation(op).expect("an operation of the spec"),
//!         args,
//!         idempotency_key: None,
//!         origin: Origin::Mcp,
//!     };
//!     match service::execute(store, request)? {
//!         Output::Json(value) => Ok(value),
//!         Output::Text(text) => Ok(Value::String(text)),
//!     }
//! }
//!
//! # fn main() -> timeline::error::Result<()> {
//! let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
//! let path = std::env::temp_dir().join(format!("timeline-doc-{}-{nanos}.db", std::process::id()));
//! let mut store = Store::open(path.clone())?;
//!
//! // A new timeline starts with one branch, "main", at the root n0.
//! let created = call(&mut store, "create", json!({"title": "Trip planning"}))?;
//! let tl = created["timeline_id"].clone(); // "tl0"
//!
//! // Messages go on the current branch; each answer names the new node.
//! let question = call(&mut store, "append", json!({
//!     "timeline_id": tl, "role": "user", "text": "Where should we go in May?", "tokens": 20,
//! }))?;
//! call(&mut store, "append", json!({
//!     "timeline_id": tl, "role": "assistant", "text": "Lisbon or Porto.", "tokens": 30,
//! }))?;
//! let last = call(&mut store, "append", json!({
//!     "timeline_id": tl, "role": "user", "text": "Porto, then. Trains?", "tokens": 25,
//! }))?;
//! assert_eq!(last["node"], "n3");
//!
//! // A branch from the first question explores another answer; main is left as it was.
//! let fork = call(&mut store, "fork", json!({
//!     "timeline_id": tl, "node": question["node"], "name": "by-car",
//! }))?;
//! assert_eq!(fork["branch"], "by-car");
//!
//! // Fit the path root → n3 (75 tokens) into 60: the target n3 stays verbatim, and n1..n2, which
//! // do not fit, become one placeholder node of 32 tokens (a dry run would write nothing).
//! let layout = call(&mut store, "context_budget", json!({
//!     "timeline_id": tl, "node": last["node"], "max_tokens": 60,
//! }))?;
//! assert!(layout["total_tokens"].as_u64().unwrap() <= 60);
//! let messages = layout["messages"].as_array().unwrap();
//! assert_eq!(messages.last().unwrap()["node"], "n3");
//! assert_eq!(layout["summaries_created"].as_array().unwrap().len(), 1);
//!
//! drop(store);
//! std::fs::remove_file(&path).ok();
//! # Ok(())
//! # }
//! ```
//!
//! The same operations exist as typed values generated from the spec: [`ops::Request`] groups them
//! by where they run ([`ops::TxRequest`] inside one transaction, [`ops::DatabaseRequest`] on the
//! database as a whole, export, [`ops::LocalRequest`] in `tl` itself), with one argument struct per
//! operation; [`service::check`] parses one, and [`ops::run_in_memory`] runs an operation inside a
//! transaction on an in-memory [`model::Database`] without any file (the property tests use it).

#![warn(missing_docs)]

pub mod budget;
pub mod cli;
#[doc(hidden)]
pub mod codegen;
pub mod error;
pub(crate) mod export;
mod fsutil;
pub(crate) mod interchange;
#[cfg(test)]
mod layering;
pub mod mcp;
pub mod model;
pub mod ops;
pub(crate) mod search;
pub mod service;
pub mod spec;
pub mod store;
pub(crate) mod terminal;
pub(crate) mod time;
