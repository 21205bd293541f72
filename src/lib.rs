//! Timeline: a local-first store of LLM conversations as a tree of messages with named branches.
//!
//! One library behind two thin binaries: `tl` (the CLI, `cli`) and `tl-mcp` (the MCP server, `mcp`).
//! A request flows front-end → `spec::validate` → `service` → `ops` inside a `store` transaction.

#![warn(missing_docs)]

pub mod budget;
pub mod cli;
pub mod error;
pub mod export;
pub mod interchange;
pub mod mcp;
pub mod model;
pub mod ops;
pub mod service;
pub mod spec;
pub mod store;
pub mod terminal;
