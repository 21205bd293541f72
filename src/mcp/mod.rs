//! The `tl-mcp` front-end: a synchronous, line-delimited JSON-RPC 2.0 server on stdio.

use std::process::ExitCode;

pub fn main() -> ExitCode {
    eprintln!("tl-mcp: the MCP server is not implemented yet in this build");
    ExitCode::from(1)
}
