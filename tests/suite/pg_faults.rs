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

/// The URI as Timeline shows it (without a password, in its own order), from `db info`.
fn shown(uri: &str) -> String {
    tl(&["--db", uri, "db", "info"]).json()["path"]
        .as_str()
        .unwrap()
        .to_string()
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

/// Waits (at most 60 s) until a backend of a Timeline program waits as `wait` says (a
/// `pg_stat_activity` condition), then ends it with `pg_terminate_backend`, as an administrator or a
/// failing network would.
fn terminate_when(server: &Server, wait: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let ended = server.psql(
            "postgres",
            &format!(
                "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'timeline' AND {wait}"
            ),
        );
        if ended.trim() != "0" {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "no Timeline backend came to wait for {wait}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn pg_faults_a_connection_dropped_before_the_commit_wrote_nothing() {
    let Some(server) = server() else { return };
    let uri = format!("{}&schema=dropped", server.socket_uri("faults"));
    let mut session = mcp(&uri);
    session.ok("timeline_create", json!({}));
    // Another client holds tl0's row, so the append waits on its lock; its connection is ended
    // there, before anything of the change was committed.
    let mut holder = Command::new(server.psql_program())
        .args(server.psql_args("faults"))
        .arg("-c")
        .arg("BEGIN; SELECT 1 FROM dropped.timelines WHERE id = 0 FOR UPDATE; SELECT pg_sleep(120)")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    while server
        .psql(
            "postgres",
            "SELECT count(*) FROM pg_stat_activity WHERE wait_event = 'PgSleep'",
        )
        .trim()
        == "0"
    {
        assert!(Instant::now() < deadline, "the lock holder did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let answer = std::thread::scope(|scope| {
        scope.spawn(|| terminate_when(&server, "wait_event_type = 'Lock'"));
        session.call(
            "timeline_append",
            json!({"timeline_id": "tl0", "role": "user", "text": "lost", "idempotency_key": "k1"}),
        )
    });
    // Its backend would hold the lock until pg_sleep ends, whether psql is there or not.
    server.psql(
        "postgres",
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE wait_event = 'PgSleep'",
    );
    let _ = holder.wait();
    // The server's last word arrives before the end of the connection, or the end alone.
    let error = answer.unwrap_err()["error"].as_str().unwrap().to_string();
    let (start, end) = (
        format!("cannot use the database {}: ", shown(&uri)),
        "; the connection to the server broke (it restarted or the network failed); nothing of this transaction was written, and the next call connects again",
    );
    let middle = error.strip_prefix(&start).and_then(|e| e.strip_suffix(end));
    assert!(
        matches!(
            middle,
            Some("terminating connection due to administrator command" | "connection closed")
        ),
        "{error}"
    );
    assert_eq!(texts(&uri), Vec::<String>::new());
    // The same call again runs (the key was not used up) and writes once.
    let again =
        json!({"timeline_id": "tl0", "role": "user", "text": "lost", "idempotency_key": "k1"});
    assert_eq!(session.ok("timeline_append", again), json!({"node": "n1"}));
    assert_eq!(texts(&uri), ["lost"]);
    session.close();
}

#[test]
fn pg_faults_a_connection_dropped_during_the_commit_is_an_unknown_outcome_safe_to_retry() {
    let Some(server) = server() else { return };
    let uri = format!("{}&schema=unknown", server.socket_uri("faults"));
    let mut session = mcp(&uri);
    session.ok("timeline_create", json!({}));
    // A synchronous standby that never comes: the commit is written on the server, then waits for
    // the standby's acknowledgement, and the connection is ended during that wait, so the client
    // never learns that it committed.
    server.psql(
        "postgres",
        "ALTER SYSTEM SET synchronous_standby_names = 'nobody'",
    );
    server.psql("postgres", "SELECT pg_reload_conf()");
    let call =
        json!({"timeline_id": "tl0", "role": "user", "text": "kept", "idempotency_key": "k2"});
    let answer = std::thread::scope(|scope| {
        scope.spawn(|| terminate_when(&server, "wait_event = 'SyncRep'"));
        session.call("timeline_append", call.clone())
    });
    server.psql("postgres", "ALTER SYSTEM RESET synchronous_standby_names");
    server.psql("postgres", "SELECT pg_reload_conf()");
    assert_eq!(
        answer,
        Err(json!({"error": format!(
            "the connection to {} broke while the change was being committed, so whether it was written is unknown; run it again with the same idempotency key, which is safe",
            shown(&uri)
        )}))
    );
    // It was written; the retry with the same key returns the first result and writes nothing.
    assert_eq!(session.ok("timeline_append", call), json!({"node": "n1"}));
    assert_eq!(texts(&uri), ["kept"]);
    session.close();
}
