//! The integration tests, one binary with a module per area, each running the real `tl` and `tl-mcp`
//! (docs/contributing.md, "The test layout"). One binary links the library once instead of once per
//! file. `layout` fails when a file here is not declared as a module, so none is silently left out.

// First, so that `on_both_engines!` is in scope in every module below.
#[macro_use]
#[path = "../common/mod.rs"]
mod common;

mod archive;
mod budget;
mod capture;
mod claude_code;
mod cli;
mod completion;
mod conformance;
mod export;
mod find;
mod generated;
mod interchange;
mod layout;
mod mcp;
// Linux: the private servers run as nobody through setpriv, and the errors quoted are Linux's.
#[cfg(target_os = "linux")]
mod pg_faults;
#[cfg(target_os = "linux")]
mod pg_pooler;
#[cfg(target_os = "linux")]
mod pg_security;
#[cfg(target_os = "linux")]
mod pg_tls;
mod postgres;
// Linux: the power-cut file system is a FUSE file system (tools/powercut).
#[cfg(target_os = "linux")]
mod power_loss;
mod process;
mod provenance;
mod reads;
mod shell;
mod store;
mod store_crash;
mod store_pages;
mod terminal;
mod untrusted;
