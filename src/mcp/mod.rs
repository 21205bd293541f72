//! The `tl-mcp` front-end: a synchronous, line-delimited JSON-RPC 2.0 server on stdio.
//!
//! One message per line on standard input, one answer per line on standard output, logs on standard
//! error. Tool calls go through `service::execute`, exactly like the CLI's commands, so both
//! front-ends share validation, idempotency and the store's locks. See docs/mcp.md.

mod ahead;
mod frame;
mod idle;
mod rpc;
pub mod session;

use crate::service;
use crate::spec::spec;
use ahead::Ahead;
use frame::{Frame, FrameReader};
use rpc::RpcError;
use serde_json::Value;
use session::{Session, log};
use std::ffi::OsString;
use std::io::{self, BufRead, Write};
use std::process::ExitCode;

/// What the command line asked for.
#[derive(Debug, PartialEq)]
pub enum Command {
    /// Serve MCP on stdin/stdout.
    Serve {
        /// The database path from `--db`, when given.
        db: Option<OsString>,
    },
    /// `--help`: print the usage.
    Help,
    /// `--version`: print the version.
    Version,
}

/// Parse the arguments after the program name.
pub fn parse_args(args: impl IntoIterator<Item = OsString>) -> Result<Command, String> {
    let mut args = args.into_iter();
    let mut db = None;
    while let Some(arg) = args.next() {
        let text = arg.to_string_lossy();
        match text.as_ref() {
            "-h" | "--help" => return Ok(Command::Help),
            "-V" | "--version" => return Ok(Command::Version),
            "--db" => match args.next() {
                Some(path) if !path.is_empty() => db = Some(path),
                _ => return Err("--db needs a value: the path of the database file".into()),
            },
            _ => match arg.to_str().and_then(|s| s.strip_prefix("--db=")) {
                Some("") => return Err("--db needs a value: the path of the database file".into()),
                Some(path) => db = Some(OsString::from(path)),
                None => {
                    return Err(format!(
                        "unknown argument {}",
                        crate::store::hide_uris(&text, [text.as_ref()])
                    ));
                }
            },
        }
    }
    Ok(Command::Serve { db })
}

/// The text of `tl-mcp --help`: usage, the database flag and the tools.
pub fn help() -> String {
    let c = &spec().constants;
    let tools: Vec<&str> = spec()
        .operations
        .iter()
        .filter_map(|op| op.mcp.as_deref())
        .collect();
    format!(
        "tl-mcp {version}: the Timeline MCP server (Model Context Protocol over standard input/output).

An MCP client (an AI assistant or IDE) starts this program and talks to it: one JSON-RPC 2.0 message
per line on standard input, one answer per line on standard output, logs on standard error. It opens
no network port and stops when its input ends.

Usage: tl-mcp [--db PATH]

Options:
  --db PATH      The database file (a new file ending in .json is a JSON snapshot, any other a
                 SQLite database), or a PostgreSQL database as a postgresql:// URI. Default: the TIMELINE_DB environment variable when it is set
                 and not empty, else ~/.timeline.json if it exists, else timeline/timeline.db in
                 your data directory. The folder of --db or TIMELINE_DB must exist.
  -h, --help     Print this help and exit.
  -V, --version  Print the version and exit.

Protocol versions: {versions} (batches only with {batches}: up to {items} messages,
an answer of up to {answer} bytes).
Messages are limited to {limit} bytes per line.
Tools ({count}): {tools}.
The same database can be used with the tl command line at the same time.
",
        version = env!("CARGO_PKG_VERSION"),
        versions = c.mcp_protocol_versions.join(", "),
        batches = c.mcp_batch_protocol_versions.join(", "),
        items = c.mcp_batch_max_items,
        answer = c.mcp_batch_answer_limit_bytes,
        limit = c.mcp_frame_limit_bytes,
        count = tools.len(),
        tools = tools.join(", "),
    )
}

/// The `tl-mcp` program: parse the arguments, then serve MCP over stdin/stdout until end of input.
pub fn main() -> ExitCode {
    let db = match parse_args(std::env::args_os().skip(1)) {
        Ok(Command::Help) => return print_text(&help()),
        Ok(Command::Version) => {
            return print_text(&format!("tl-mcp {}\n", env!("CARGO_PKG_VERSION")));
        }
        Ok(Command::Serve { db }) => db,
        Err(problem) => {
            log(&problem);
            let _ = writeln!(
                io::stderr().lock(),
                "Usage: tl-mcp [--db PATH]; run tl-mcp --help for more."
            );
            return ExitCode::from(2);
        }
    };
    // The default database's directory is created by the first change, not by starting the server.
    let db = service::db_path_for_reading(db);
    match &db {
        // A connection URI without its password: MCP clients keep this line in their logs.
        Ok(path) => log(&format!(
            "version {} serving {} on standard input/output",
            env!("CARGO_PKG_VERSION"),
            crate::store::shown(&path.to_string_lossy())
        )),
        Err(e) => log(&format!(
            "warning: {}; every tool call will fail until this is fixed",
            e.message
        )),
    }
    let mut session = Session::new(db);
    let input = Ahead::new(io::stdin(), idle::stdin_ready);
    // Quiet: nothing read ahead waits in the buffer, and nothing arrives for a moment.
    let quiet = |input: &Ahead<io::Stdin>| input.buffered().is_empty() && idle::stdin_quiet();
    match serve_with(input, io::stdout().lock(), &mut session, quiet) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            log(&format!("stopping: {e}"));
            ExitCode::from(1)
        }
    }
}

fn print_text(text: &str) -> ExitCode {
    let mut out = io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
    ExitCode::SUCCESS
}

/// Serve until end of input. Every answer is one line, flushed at once.
pub fn serve(input: impl BufRead, output: impl Write, session: &mut Session) -> io::Result<()> {
    serve_with(Ahead::new(input, || false), output, session, |_| false)
}

/// `serve`, doing the session's own work (`Session::idle_work`) after an answer whenever `quiet`
/// says the client sends nothing.
fn serve_with<R: io::Read>(
    input: Ahead<R>,
    mut output: impl Write,
    session: &mut Session,
    mut quiet: impl FnMut(&Ahead<R>) -> bool,
) -> io::Result<()> {
    let limit = spec().constants.mcp_frame_limit_bytes;
    let mut reader = FrameReader::new(input, limit);
    loop {
        let answer = match reader.next_frame()? {
            Frame::Eof => return Ok(()),
            Frame::Line(bytes) => {
                let input = reader.inner_mut();
                session.handle_line_cancellable(&bytes, &mut |id| input.cancelled(id))
            }
            Frame::Oversize { bytes } => {
                let error = RpcError::invalid_request(format!(
                    "the message is {bytes} bytes long, over the limit of {limit} bytes ({} MiB) per line; it was discarded",
                    limit >> 20
                ));
                log(&error.message);
                let answer = rpc::failure(Value::Null, &error);
                Some(crate::terminal::escape_json(&answer.to_string()).into_owned())
            }
        };
        if let Some(line) = answer {
            output.write_all(line.as_bytes())?;
            output.write_all(b"\n")?;
            output.flush()?;
        }
        if session.has_idle_work() && quiet(reader.inner()) {
            session.idle_work();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Result<Command, String> {
        parse_args(list.iter().map(OsString::from))
    }

    #[test]
    fn arguments() {
        assert_eq!(args(&[]), Ok(Command::Serve { db: None }));
        assert_eq!(
            args(&["--db", "x.json"]),
            Ok(Command::Serve {
                db: Some("x.json".into())
            })
        );
        assert_eq!(
            args(&["--db=y.json"]),
            Ok(Command::Serve {
                db: Some("y.json".into())
            })
        );
        assert_eq!(args(&["--version"]), Ok(Command::Version));
        assert_eq!(args(&["-h"]), Ok(Command::Help));
        assert!(args(&["--db"]).is_err());
        assert!(args(&["--bogus"]).is_err());
    }
}
