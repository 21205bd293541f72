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
    let root = crate::common::postgres::scratch_dir(&format!(
        "pg-faults-{}",
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

/// A TCP address on 127.0.0.1 that takes no connection and refuses none: a listener with a
/// backlog of 0 whose queue is filled and never accepted, so the kernel drops further SYNs, as a
/// firewall that drops packets does. The listener and the fillers live as long as the result.
fn blackhole() -> (u16, Vec<std::net::TcpStream>, i32) {
    // SAFETY: plain socket calls on a descriptor this function owns; errors are checked.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0);
        assert!(fd >= 0);
        let mut addr: libc::sockaddr_in = std::mem::zeroed();
        addr.sin_family = libc::AF_INET as libc::sa_family_t;
        addr.sin_addr.s_addr = u32::from_ne_bytes([127, 0, 0, 1]);
        let len = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        assert_eq!(libc::bind(fd, (&raw const addr).cast(), len), 0);
        assert_eq!(libc::listen(fd, 0), 0);
        let mut bound: libc::sockaddr_in = std::mem::zeroed();
        let mut bound_len = len;
        assert_eq!(
            libc::getsockname(fd, (&raw mut bound).cast(), &mut bound_len),
            0
        );
        let port = u16::from_be(bound.sin_port);
        let target = std::net::SocketAddr::from(([127, 0, 0, 1], port));
        let mut fillers = Vec::new();
        while fillers.len() < 16 {
            match std::net::TcpStream::connect_timeout(&target, Duration::from_millis(300)) {
                Ok(stream) => fillers.push(stream),
                Err(_) => return (port, fillers, fd),
            }
        }
        panic!("the listen queue of 127.0.0.1:{port} never filled");
    }
}

#[test]
fn pg_faults_an_unreachable_server_fails_within_connect_timeout_naming_the_uri() {
    // No server is needed: nothing answers at these addresses.
    let empty = TempDir::new();
    let closed = pg_server::free_port();
    let (black, _fillers, fd) = blackhole();
    let reached = "check that the server is running and reachable at that address";
    let cases = [
        // A socket directory where no server runs.
        (
            format!("postgresql://ann@/team?host={}", empty.path().display()),
            format!(
                "postgresql://ann@:5432/team?host={}",
                empty.path().display()
            ),
            format!(
                "error connecting to server (No such file or directory (os error 2)); {reached} (Timeline waited at most 10 seconds: connect_timeout)"
            ),
        ),
        // A TCP port nothing listens on.
        (
            format!("postgresql://ann:Secret-pw-1@127.0.0.1:{closed}/team"),
            format!("postgresql://ann@127.0.0.1:{closed}/team"),
            format!(
                "error connecting to server (Connection refused (os error 111)); {reached} (Timeline waited at most 10 seconds: connect_timeout)"
            ),
        ),
        // An address that never answers: only connect_timeout ends the wait (1 counts as 2 s).
        (
            format!("postgresql://ann:Secret-pw-1@127.0.0.1:{black}/team?connect_timeout=1"),
            format!("postgresql://ann@127.0.0.1:{black}/team?connect_timeout=2"),
            format!(
                "error connecting to server (connection timed out); {reached} (Timeline waited at most 2 seconds: connect_timeout)"
            ),
        ),
    ];
    for (uri, shown, why) in cases {
        let started = Instant::now();
        let run = tl(&["--db", &uri, "log", "--timeline", "tl0"]);
        // A guard against waiting for ever, far above the 2 or 10 s allowed.
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{uri}: {:?}",
            started.elapsed()
        );
        run.err(
            3,
            &json!({"error": format!("cannot connect to the PostgreSQL database {shown}: {why}; nothing was read or written")})
                .to_string(),
        );
    }
    // SAFETY: the listener's descriptor, closed once.
    unsafe { libc::close(fd) };
}

/// 16 `tl-mcp` sessions append at once, 4 to each of 4 timelines: every acknowledged append is
/// there afterwards, node IDs are unique and each timeline's branch is one chain of all of them.
#[test]
fn pg_faults_sixteen_writers_over_four_timelines_lose_nothing() {
    let Some(server) = server() else { return };
    let uri = format!("{}&schema=many", server.socket_uri("faults"));
    for i in 0..4 {
        tl(&["--db", &uri, "create"]).ok(&format!(r#"{{"timeline_id":"tl{i}"}}"#));
    }
    const EACH: usize = 10;
    let start = std::sync::Barrier::new(16);
    let acknowledged: Vec<(usize, String, String)> = std::thread::scope(|scope| {
        let writers: Vec<_> = (0..16)
            .map(|w| {
                let (start, uri) = (&start, &uri);
                scope.spawn(move || {
                    let mut session = mcp(uri);
                    start.wait();
                    let timeline = w % 4;
                    let mut done = Vec::new();
                    for k in 0..EACH {
                        let text = format!("writer {w} message {k}");
                        let answer = session.ok("timeline_append", json!({"timeline_id": format!("tl{timeline}"), "role": "user", "text": text}));
                        done.push((timeline, answer["node"].as_str().unwrap().to_string(), text));
                    }
                    session.close();
                    done
                })
            })
            .collect();
        writers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    assert_eq!(acknowledged.len(), 16 * EACH);
    let dir = TempDir::new();
    let snapshot = dir.path().join("copy.json");
    tl(&[
        "--db",
        &uri,
        "db",
        "convert",
        "--to",
        snapshot.to_str().unwrap(),
    ])
    .json();
    let db: Value = serde_json::from_str(&std::fs::read_to_string(&snapshot).unwrap()).unwrap();
    for (t, timeline) in db["timelines"].as_array().unwrap().iter().enumerate() {
        let nodes = timeline["nodes"].as_array().unwrap();
        let ids: std::collections::BTreeSet<&str> =
            nodes.iter().map(|n| n["id"].as_str().unwrap()).collect();
        assert_eq!(
            (nodes.len(), ids.len()),
            (4 * EACH, 4 * EACH),
            "tl{t}: node IDs are unique"
        );
        // Every acknowledged append of this timeline is there, under the ID it was given.
        for (_, id, text) in acknowledged.iter().filter(|(tl, _, _)| *tl == t) {
            let node = nodes
                .iter()
                .find(|n| n["id"] == *id.as_str())
                .unwrap_or_else(|| panic!("tl{t} lost {id}"));
            assert_eq!(node["text"], *text.as_str());
        }
        // Appends took turns: one chain from the head back to the root through every message.
        let parent: std::collections::HashMap<&str, &str> = nodes
            .iter()
            .map(|n| (n["id"].as_str().unwrap(), n["parent"].as_str().unwrap()))
            .collect();
        let head = timeline["branches"][0]["head"].as_str().unwrap();
        assert_eq!(head, format!("n{}", 4 * EACH));
        let (mut at, mut steps) = (head, 0);
        while at != "n0" {
            at = parent[at];
            steps += 1;
        }
        assert_eq!(steps, 4 * EACH, "tl{t}");
    }
    tl(&["--db", &uri, "db", "check"]).json();
}

/// A server that takes the TCP connection and then says nothing (a hung server, a port that is not
/// PostgreSQL's): the login is given up on after connect_timeout and one more second.
#[test]
fn pg_faults_a_server_that_never_answers_the_login_is_given_up_on() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    // Accepts and keeps every connection open without a word, until the test process ends.
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for stream in listener.incoming().flatten() {
            held.push(stream);
        }
    });
    for query in ["connect_timeout=2", "connect_timeout=2&sslmode=disable"] {
        let uri = format!("postgresql://ann:Secret-pw-1@127.0.0.1:{port}/team?{query}");
        let started = Instant::now();
        let run = tl(&["--db", &uri, "timelines"]);
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "{:?}",
            started.elapsed()
        );
        // The redacted form puts sslmode before connect_timeout.
        let shown = match query {
            "connect_timeout=2" => {
                format!("postgresql://ann@127.0.0.1:{port}/team?connect_timeout=2")
            }
            _ => {
                format!("postgresql://ann@127.0.0.1:{port}/team?sslmode=disable&connect_timeout=2")
            }
        };
        run.err(
            3,
            &json!({"error": format!("cannot connect to the PostgreSQL database {shown}: the server took the connection but did not finish TLS and the login within 2 seconds (connect_timeout, and one more second); check that this address is a PostgreSQL server and that it is not overloaded; nothing was read or written")}).to_string(),
        );
    }
}
