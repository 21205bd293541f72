//! Faults of a PostgreSQL server (issue 25, item 3) and many writers on it (item 6), through the
//! real `tl` and `tl-mcp`. Each test starts a private server (`common::pg_server`): a restart or a
//! killed connection must not disturb the other tests' shared server.

use crate::common::pg_server::{self, Options, Server};
use crate::common::{McpSession, Run, TL, TL_MCP, TempDir};
use serde_json::{Value, json};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// A private server with a database `faults`, or `None` (after the loud line) without the programs.
fn server() -> Option<Server> {
    static N: AtomicUsize = AtomicUsize::new(0);
    if let Err(why) = pg_server::programs() {
        pg_server::missing("FAULT AND CONCURRENCY", &why);
        return None;
    }
    let root = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "pg-faults-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&root);
    let server = Server::start(&root, Options::default()).unwrap();
    server.psql("postgres", "CREATE DATABASE faults");
    Some(server)
}

fn mcp(uri: &str) -> McpSession {
    let mut cmd = Command::new(TL_MCP);
    cmd.arg("--db")
        .arg(uri)
        .env_remove("TIMELINE_DB")
        .env("TIMELINE_NOW", crate::common::CLOCK);
    McpSession::spawn(cmd)
}

fn tl(args: &[&str]) -> Run {
    let mut cmd = Command::new(TL);
    cmd.args(args)
        .env_remove("TIMELINE_DB")
        .env("TIMELINE_NOW", crate::common::CLOCK);
    Run::from(crate::common::output_of(&mut cmd))
}

fn append(text: &str) -> Value {
    json!({"timeline_id": "tl0", "role": "user", "text": text})
}

/// The texts of tl0's messages, oldest first, read with `tl log`.
fn texts(uri: &str) -> Vec<String> {
    let run = tl(&["--db", uri, "log", "--timeline", "tl0"]);
    let mut texts: Vec<String> = run.json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap().to_string())
        .collect();
    texts.reverse();
    texts
}

#[test]
fn pg_faults_a_tl_mcp_session_survives_a_server_restart() {
    let Some(server) = server() else { return };
    let uri = format!("{}&schema=restart", server.socket_uri("faults"));
    let mut session = mcp(&uri);
    assert_eq!(
        session.ok("timeline_create", json!({}))["timeline_id"],
        "tl0"
    );
    session.ok("timeline_append", append("before the restart"));
    server.restart();
    // The session's connection died with the server; the next call opens a new one.
    let after = session.ok("timeline_append", append("after the restart"));
    assert_eq!(after, json!({"node": "n2"}));
    assert_eq!(texts(&uri), ["before the restart", "after the restart"]);
    session.close();
}
