//! `tl-mcp`, the MCP server on standard input and output.

// The unwinder linked in rather than loaded from `libgcc_s.so.1`, as in `tl` (see `src/bin/tl.rs`).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[link(name = "gcc_eh", kind = "static")]
unsafe extern "C" {}

fn main() -> std::process::ExitCode {
    timeline::mcp::main()
}
