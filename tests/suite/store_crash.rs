//! S1/S2 under SIGKILL: `tl append` processes are killed at random moments of their life. After every
//! kill the database loads, every append whose success was printed is present with its text, and
//! the backup decodes. Reproduce a failure with the seed it prints: TIMELINE_CRASH_SEED=<seed>.
//! Every SQLite case runs twice: with the kept log, and with SQLite's own VFS
//! (`TIMELINE_SQLITE_KEPT_LOG=off`, the `_plain_log` cases).

use crate::common;

use common::{Db, Engine, McpSession, TL, use_engine};
use serde_json::Value;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// xorshift64*: small, deterministic from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn seed() -> u64 {
    crate::common::seed_from("TIMELINE_CRASH_SEED")
}

fn append_command(db: &Db, text: &str) -> Command {
    let mut cmd = db.command(TL);
    cmd.arg("--db")
        .arg(&db.path)
        .args(["append", "--role", "user", "--text", text, "--tokens", "1"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd
}

/// The write-ahead log a SQLite case runs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Log {
    /// The kept log (`store::sqlite::kept_log`), the default.
    Kept,
    /// SQLite's own VFS: `TIMELINE_SQLITE_KEPT_LOG=off`.
    Plain,
}

impl Log {
    /// A new database of this thread's engine whose processes use this log (checked on SQLite
    /// with `db info`).
    fn db(self) -> Db {
        let mut db = Db::new();
        if self == Log::Plain {
            db.env("TIMELINE_SQLITE_KEPT_LOG", "off");
        }
        if db.engine() == Engine::Sqlite {
            let expected = match self {
                Log::Kept => common::SQLITE_LOG,
                Log::Plain => "plain_switched_off",
            };
            assert_eq!(db.tl(&["db", "info"]).json()["sqlite_log"], expected);
        }
        db
    }

    /// The files a clean close leaves of the SQLite database `name` in `dir`: the kept log is
    /// kept blank beside it, SQLite's own is deleted.
    fn closed_sqlite(self, dir: &std::path::Path, name: &str) -> Vec<String> {
        match self {
            Log::Kept => common::closed_sqlite(dir, name),
            Log::Plain => vec![name.to_string()],
        }
    }
}

#[cfg(unix)]
fn killed_by_signal(status: &std::process::ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal() == Some(9)
}

#[cfg(not(unix))]
fn killed_by_signal(status: &std::process::ExitStatus) -> bool {
    !status.success()
}

#[test]
fn s2_sigkill_at_random_moments_never_loses_a_reported_append_json() {
    sigkill_at_random_moments(Engine::Json, Log::Kept, 100);
}

#[test]
fn s2_sigkill_at_random_moments_never_loses_a_reported_append_sqlite() {
    sigkill_at_random_moments(Engine::Sqlite, Log::Kept, 60);
}

#[test]
fn s2_sigkill_at_random_moments_never_loses_a_reported_append_sqlite_plain_log() {
    sigkill_at_random_moments(Engine::Sqlite, Log::Plain, 60);
}

/// On a server a killed client cannot leave a file half written; what is tested is that its
/// transaction either committed whole or left nothing (fewer kills: each append connects anew).
#[test]
fn s2_sigkill_at_random_moments_never_loses_a_reported_append_on_postgres() {
    sigkill_at_random_moments(Engine::Postgres, Log::Kept, 30);
}

fn sigkill_at_random_moments(engine: Engine, log: Log, kills_wanted: usize) {
    if engine == Engine::Postgres && common::postgres::server().is_none() {
        return;
    }
    use_engine(engine);
    let kills_max_attempts = kills_wanted * 8;
    let seed = seed();
    let mut rng = Rng(seed);
    let context =
        |extra: &str| format!("seed {seed} (rerun with TIMELINE_CRASH_SEED={seed}){extra}");

    let db = log.db();
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    // A few large messages make every write long enough for kills to land inside it.
    let bulk = "x".repeat(64 * 1024);
    // On standard input: a Windows command line holds at most 32767 characters.
    for i in 1..=6 {
        db.tl_stdin(
            &["append", "--role", "user", "--text", "-", "--tokens", "1"],
            format!("{bulk}{i}").as_bytes(),
        )
        .ok(&format!(r#"{{"node":"n{i}"}}"#));
    }

    // How long an undisturbed append takes here; kills are spread over 0..1.5 of that.
    let mut samples: Vec<Duration> = (0..3)
        .map(|i| {
            let start = Instant::now();
            let out = common::output_of(&mut append_command(&db, &format!("calibration {i}")));
            assert!(out.status.success(), "{}", context(""));
            start.elapsed()
        })
        .collect();
    samples.sort();
    let calibrated_us = (samples[1].as_micros() as u64 * 3 / 2).max(1000);
    // The moments follow how long appends take now (under Wine, process starts vary a lot): a
    // kill that came after the append ended shortens the span, one that landed widens it again up
    // to the calibrated span, so most kills land and they still spread over the whole append.
    let mut span_us = calibrated_us;

    let mut confirmed: Vec<(String, String)> = (1..=6)
        .map(|i| (format!("n{i}"), format!("{bulk}{i}")))
        .chain((0..3).map(|i| (format!("n{}", 7 + i), format!("calibration {i}"))))
        .collect();
    let mut kills = 0;
    let mut attempts = 0;
    // Kills that left a temporary file (inside a write) or a committed but unreported append.
    let mut mid_write = 0;
    let mut committed_unreported = 0;
    let mut seen_temps = std::collections::BTreeSet::new();
    while kills < kills_wanted {
        attempts += 1;
        assert!(
            attempts <= kills_max_attempts,
            "only {kills} kills landed in {kills_max_attempts} attempts; {}",
            context("")
        );
        let text = format!("attempt {attempts}");
        let delay = Duration::from_micros(rng.below(span_us));
        let mut child = common::spawn(&mut append_command(&db, &text));
        std::thread::sleep(delay);
        let _ = child.kill();
        let status = child.wait().unwrap();
        let mut stdout = String::new();
        child
            .stdout
            .take()
            .unwrap()
            .read_to_string(&mut stdout)
            .unwrap();
        if killed_by_signal(&status) {
            kills += 1;
            span_us = (span_us + span_us / 20).min(calibrated_us);
            // A new temporary file (JSON) or a write-ahead log left open (SQLite) means the kill
            // landed inside a write or a session.
            let temps: Vec<String> = std::fs::read_dir(db.dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| match engine {
                    Engine::Json => name.starts_with(".db.json."),
                    Engine::Sqlite => name.ends_with("-wal"),
                    // Nothing of a server database is in the directory.
                    Engine::Postgres => false,
                })
                .map(|name| format!("{name} {attempts}"))
                .collect();
            let before = seen_temps.len();
            seen_temps.extend(temps);
            if seen_temps.len() > before {
                mid_write += 1;
            }
        } else {
            span_us = (span_us * 4 / 5).max(1000);
            assert!(
                status.success(),
                "attempt {attempts} failed on its own: {stdout} {}",
                context("")
            );
            let result: Value = serde_json::from_str(&stdout).unwrap();
            confirmed.push((result["node"].as_str().unwrap().to_string(), text));
        }

        // The database loads and holds every append that reported success, in order.
        let where_ = format!(" after attempt {attempts} ({delay:?} of {span_us} us)");
        let branches = db.tl(&["branches"]);
        assert_eq!(branches.code, 0, "{branches:?} {}", context(&where_));
        let head = branches.json()[0]["head"].as_str().unwrap().to_string();
        let messages = db.tl(&["context", "--node", &head]).json();
        let messages = messages.as_array().unwrap();
        let mut last = 0;
        for (node, text) in &confirmed {
            let position = messages
                .iter()
                .position(|m| m["node"] == node.as_str())
                .unwrap_or_else(|| panic!("{node} was reported but is lost; {}", context(&where_)));
            assert_eq!(
                messages[position]["text"],
                text.as_str(),
                "{node}; {}",
                context(&where_)
            );
            assert!(
                position >= last,
                "{node} is out of order; {}",
                context(&where_)
            );
            last = position;
        }
        if messages.len() > confirmed.len() + committed_unreported {
            committed_unreported += 1;
        }
        // The backup (JSON) is an earlier snapshot that loads on its own.
        if engine == Engine::Json {
            let copy = Db::new();
            std::fs::copy(db.backup_path(), &copy.path).unwrap();
            let run = copy.tl(&["branches"]);
            assert_eq!(
                run.code,
                0,
                "the backup does not load: {run:?}; {}",
                context(&where_)
            );
        }
    }
    // The engine's own check finds nothing wrong after the kills.
    if engine != Engine::Json {
        let name = if engine == Engine::Sqlite {
            "sqlite"
        } else {
            "postgres"
        };
        // json!: a Windows path's backslashes are escaped in JSON.
        db.tl(&["db", "check"])
            .ok(&serde_json::json!({"ok": true, "engine": name,
            "path": db.path.display().to_string(), "problems": []})
            .to_string());
    }

    // One last clean write removes what dead writers left behind.
    db.tl(&[
        "append", "--role", "user", "--text", "final", "--tokens", "1",
    ])
    .json();
    let names = common::names_in(db.dir.path());
    // Both snapshots match the published schema.
    let schema: Value = serde_json::from_slice(
        &std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/generated/schema/database.json"
        ))
        .unwrap(),
    )
    .unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let snapshots = match engine {
        Engine::Json => vec![
            std::fs::read(&db.path).unwrap(),
            std::fs::read(db.backup_path()).unwrap(),
        ],
        Engine::Sqlite | Engine::Postgres => vec![db.bytes()],
    };
    for bytes in snapshots {
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert!(
            validator.is_valid(&value),
            "a snapshot does not match the schema"
        );
    }
    // A clean close leaves only the database (for JSON its backup and lock, for SQLite its log,
    // blank).
    let expected = match engine {
        Engine::Json => vec![
            "db.json".into(),
            "db.json.bak".into(),
            "db.json.lock".into(),
        ],
        Engine::Sqlite => log.closed_sqlite(db.dir.path(), "db.sqlite"),
        Engine::Postgres => vec![],
    };
    assert_eq!(names, expected, "{}", context(""));
    eprintln!(
        "crash test on {engine:?} ({log:?} log): {kills} kills ({mid_write} inside a write, {committed_unreported} after the commit), {} confirmed appends, {attempts} attempts, {}",
        confirmed.len(),
        context("")
    );
}

#[test]
fn s2_sigkill_during_a_first_write_leaves_no_database_or_a_whole_one_json() {
    sigkill_during_first_writes(Engine::Json, Log::Kept, 12, 400);
}

#[test]
fn s2_sigkill_during_a_first_write_leaves_no_database_or_a_whole_one_sqlite() {
    sigkill_during_first_writes(Engine::Sqlite, Log::Kept, 12, 400);
}

#[test]
fn s2_sigkill_during_a_first_write_leaves_no_database_or_a_whole_one_sqlite_plain_log() {
    sigkill_during_first_writes(Engine::Sqlite, Log::Plain, 12, 400);
}

/// On a server: no tables, or tables holding the whole import (the schema is made in the import's
/// transaction). Fewer, smaller imports: each row is a statement, so an import takes longer.
#[test]
fn s2_sigkill_during_a_first_write_leaves_no_database_or_a_whole_one_on_postgres() {
    sigkill_during_first_writes(Engine::Postgres, Log::Kept, 8, 100);
}

/// `tl import` into a database that does not exist yet, killed at random moments (#21 items 1 and
/// 4; SQLite stages the new database beside its path, JSON writes a temporary snapshot): after every kill there is no database or one with the whole import, nothing at the path keeps
/// the next first write from working, and once the dead writers' temporary files are old enough the
/// next change removes them all.
fn sigkill_during_first_writes(
    engine: Engine,
    log: Log,
    kills_wanted: usize,
    messages_wanted: usize,
) {
    if engine == Engine::Postgres && common::postgres::server().is_none() {
        return;
    }
    use_engine(engine);
    let seed = seed();
    let mut rng = Rng(seed);
    let context =
        |extra: &str| format!("seed {seed} (rerun with TIMELINE_CRASH_SEED={seed}){extra}");
    let db = log.db();
    let dir = db.dir.path().to_path_buf();
    let messages: Vec<Value> = (0..messages_wanted)
        .map(|i| {
            serde_json::json!({
                "role": if i % 2 == 0 { "user" } else { "assistant" },
                "content": format!("message {i} {}", "x".repeat(2000)),
            })
        })
        .collect();
    let input = dir.join("input.json");
    std::fs::write(&input, serde_json::to_vec(&messages).unwrap()).unwrap();
    let import = || {
        let mut cmd = db.command(TL);
        cmd.arg("--db")
            .arg(&db.path)
            .args(["import", "--format", "openai", "--input"])
            .arg(&input)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    };
    // The database and what a clean write keeps beside it, removed between attempts.
    let remove_database = || {
        if engine == Engine::Postgres {
            let schema = common::pg_raw::schema(&db);
            common::pg_raw::execute(&db, &format!("DROP SCHEMA IF EXISTS {schema} CASCADE"));
        }
        for suffix in ["", ".bak", ".lock"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db.path.display()));
        }
    };
    let exists = || match engine {
        Engine::Postgres => common::stored_state(&db.path).is_some(),
        _ => db.path.exists(),
    };
    let names = || common::names_in(&dir);
    let start = Instant::now();
    let out = common::output_of(&mut import());
    assert!(out.status.success(), "{out:?}");
    let span_us = (start.elapsed().as_micros() as u64 * 3 / 2).max(1000);
    remove_database();

    let (mut kills, mut attempts, mut left_staged) = (0, 0, 0);
    while kills < kills_wanted {
        attempts += 1;
        assert!(
            attempts <= kills_wanted * 8,
            "only {kills} kills landed; {}",
            context("")
        );
        let delay = Duration::from_micros(rng.below(span_us));
        let temporaries = || {
            names()
                .into_iter()
                .filter(|n| n.contains(".new-") || n.contains(".tmp-"))
                .count()
        };
        let before = temporaries();
        let mut child = common::spawn(&mut import());
        std::thread::sleep(delay);
        let _ = child.kill();
        let status = child.wait().unwrap();
        let where_ = format!(" after attempt {attempts} ({delay:?} of {span_us} us)");
        if killed_by_signal(&status) {
            kills += 1;
            if temporaries() > before {
                left_staged += 1;
            }
        } else {
            assert!(status.success(), "{status:?} {}", context(&where_));
        }
        // No database, or one that holds the whole import.
        let listed = db.tl(&["timelines"]);
        assert_eq!(listed.code, 0, "{listed:?} {}", context(&where_));
        let listed = listed.json();
        let timelines = listed.as_array().unwrap();
        if exists() {
            assert_eq!(timelines.len(), 1, "{listed} {}", context(&where_));
            assert_eq!(
                timelines[0]["messages"],
                messages_wanted as u64,
                "{listed} {}",
                context(&where_)
            );
        } else {
            assert!(timelines.is_empty(), "{listed} {}", context(&where_));
        }
        remove_database();
    }
    // Nothing left at the path keeps a first write from working; once what the killed writers left
    // is old enough to be told from a writer that has only just started, that write removes it all.
    for name in names() {
        if name.starts_with('.') {
            let path = dir.join(&name);
            let then = std::time::SystemTime::now() - Duration::from_secs(60);
            std::fs::File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(then)
                .unwrap();
        }
    }
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    let expected: &[&str] = match engine {
        Engine::Json => &["db.json", "db.json.lock", "input.json"],
        Engine::Sqlite => &["db.sqlite", "input.json"],
        // Nothing of a server database is in the directory.
        Engine::Postgres => &["input.json"],
    };
    assert_eq!(names(), expected, "{}", context(""));
    eprintln!(
        "first-write crash test on {engine:?} ({log:?} log): {kills} kills ({left_staged} left temporary files), {attempts} attempts, {}",
        context("")
    );
}

/// Assert that every confirmed append (node ID, text) is on `timeline`'s current branch, in order.
#[track_caller]
fn assert_all_there(db: &Db, timeline: &str, confirmed: &[(String, String)], context: &str) {
    let branches = db.tl(&["--timeline", timeline, "branches"]);
    assert_eq!(branches.code, 0, "{branches:?} {context}");
    let head = branches.json()[0]["head"].as_str().unwrap().to_string();
    let run = db.tl(&["--timeline", timeline, "context", "--node", &head]);
    assert_eq!(run.code, 0, "{run:?} {context}");
    let messages: Vec<(String, String)> = run
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["node"].as_str().unwrap().to_string(),
                m["text"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let mut last = 0;
    for pair in confirmed {
        let position = messages
            .iter()
            .position(|m| m == pair)
            .unwrap_or_else(|| panic!("{pair:?} was acknowledged but is lost; {context}"));
        assert!(position >= last, "{pair:?} is out of order; {context}");
        last = position;
    }
}

#[test]
fn s2_sigkill_of_tl_mcp_mid_appends_never_loses_an_answered_one_on_postgres() {
    sigkill_tl_mcp_mid_appends(Engine::Postgres, Log::Kept, 12);
}

#[test]
fn s2_sigkill_of_tl_mcp_mid_appends_never_loses_an_answered_one_sqlite() {
    sigkill_tl_mcp_mid_appends(Engine::Sqlite, Log::Kept, 12);
}

#[test]
fn s2_sigkill_of_tl_mcp_mid_appends_never_loses_an_answered_one_sqlite_plain_log() {
    sigkill_tl_mcp_mid_appends(Engine::Sqlite, Log::Plain, 12);
}

/// A `tl-mcp` session is sent a burst of appends and killed at a random moment of it: every
/// append it answered is stored, in order, and the database checks clean (`db check`).
fn sigkill_tl_mcp_mid_appends(engine: Engine, log: Log, rounds: usize) {
    if engine == Engine::Postgres && common::postgres::server().is_none() {
        return;
    }
    use_engine(engine);
    const BURST: usize = 20;
    let seed = seed();
    let mut rng = Rng(seed);
    let context =
        |extra: &str| format!("seed {seed} (rerun with TIMELINE_CRASH_SEED={seed}){extra}");
    let db = log.db();
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    let burst = |mcp: &mut McpSession, round: usize| {
        for i in 0..BURST {
            mcp.send(
                &serde_json::json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {
                    "name": "timeline_append",
                    "arguments": {"timeline_id": "tl0", "role": "user", "text": format!("round {round} message {i}")}}})
                .to_string(),
            );
        }
    };
    // How long a whole burst takes here; kills are spread over 0..1.2 of that.
    let start = Instant::now();
    let mut mcp = McpSession::start(&db);
    burst(&mut mcp, 0);
    let mut confirmed = Vec::new();
    for i in 0..BURST {
        let answer: Value = serde_json::from_str(&mcp.recv()).unwrap();
        assert_eq!(answer["id"], i, "{answer}");
        let node = answer["result"]["structuredContent"]["node"]
            .as_str()
            .unwrap();
        confirmed.push((node.to_string(), format!("round 0 message {i}")));
    }
    drop(mcp);
    let span_us = (start.elapsed().as_micros() as u64 * 6 / 5).max(1000);
    let (mut answered_in_killed, mut killed_mid_burst) = (0, 0);
    for round in 1..=rounds {
        let mut mcp = McpSession::start(&db);
        burst(&mut mcp, round);
        let delay = Duration::from_micros(rng.below(span_us));
        std::thread::sleep(delay);
        let _ = mcp.child.kill();
        let _ = mcp.child.wait();
        // What it answered before it died (its output ends with the kill).
        let mut answered = 0;
        while let Ok(line) = mcp.try_recv() {
            let answer: Value = serde_json::from_str(line.trim_end())
                .unwrap_or_else(|e| panic!("{e}: a torn answer {line:?}; {}", context("")));
            assert_eq!(answer["id"], answered, "{answer}");
            assert_ne!(
                answer["result"]["isError"],
                true,
                "{answer} {}",
                context("")
            );
            let node = answer["result"]["structuredContent"]["node"]
                .as_str()
                .unwrap();
            confirmed.push((
                node.to_string(),
                format!("round {round} message {answered}"),
            ));
            answered += 1;
        }
        answered_in_killed += answered;
        if answered < BURST {
            killed_mid_burst += 1;
        }
        assert_all_there(
            &db,
            "tl0",
            &confirmed,
            &context(&format!(" after round {round} ({delay:?})")),
        );
    }
    let name = if engine == Engine::Sqlite {
        "sqlite"
    } else {
        "postgres"
    };
    db.tl(&["db", "check"]).ok(
        &serde_json::json!({"ok": true, "engine": name, "path": db.path.display().to_string(), "problems": []})
            .to_string(),
    );
    eprintln!(
        "tl-mcp crash test on {engine:?} ({log:?} log): {rounds} kills ({killed_mid_burst} before the burst was answered), {answered_in_killed} answers from killed sessions, {}",
        context("")
    );
}

/// The server itself is killed (`pg_ctl stop -m immediate`, as a power cut would stop it; fsync
/// on) and started again, twice, while four `tl` writers append to their own timelines: every
/// append that printed its result is there afterwards, in order; the others failed with the
/// connection's error (exit 3), and the database checks clean. A private server: the restart
/// must not disturb the other tests' shared one.
#[cfg(target_os = "linux")]
#[test]
fn s2_a_killed_server_loses_no_acknowledged_append_on_postgres() {
    use crate::common::pg_server::{self, Options, Server};
    use std::sync::atomic::{AtomicBool, Ordering};
    if let Err(why) = pg_server::programs() {
        pg_server::missing("CRASH", &why);
        return;
    }
    let root = common::postgres::scratch_dir("pg-crash");
    let _ = std::fs::remove_dir_all(&root);
    let options = Options {
        durable: true,
        ..Options::default()
    };
    let server = Server::start(&root, options).unwrap();
    server.psql("postgres", "CREATE DATABASE crash");
    let mut db = Db::new();
    db.path = format!("{}&schema=crash", server.socket_uri("crash")).into();
    const WRITERS: usize = 4;
    for w in 0..WRITERS {
        db.tl(&["create"])
            .ok(&format!(r#"{{"timeline_id":"tl{w}"}}"#));
    }
    let stop = AtomicBool::new(false);
    let (outcomes, failures): (Vec<Vec<(String, String)>>, Vec<usize>) = std::thread::scope(|s| {
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (db, stop) = (&db, &stop);
                s.spawn(move || {
                    let timeline = format!("tl{w}");
                    let (mut confirmed, mut failed) = (Vec::new(), 0);
                    let mut i = 0;
                    while !stop.load(Ordering::SeqCst) {
                        i += 1;
                        let text = format!("writer {w} message {i}");
                        let run = db.tl(&[
                            "--timeline",
                            &timeline,
                            "append",
                            "--role",
                            "user",
                            "--text",
                            &text,
                        ]);
                        if run.code == 0 {
                            confirmed
                                .push((run.json()["node"].as_str().unwrap().to_string(), text));
                        } else {
                            // A clean error for people (connection refused, outcome unknown), no panic.
                            assert_eq!(run.code, 3, "{run:?}");
                            assert!(run.stderr.starts_with(r#"{"error":"#), "{run:?}");
                            failed += 1;
                            std::thread::sleep(Duration::from_millis(20));
                        }
                    }
                    (confirmed, failed)
                })
            })
            .collect();
        for _ in 0..2 {
            std::thread::sleep(Duration::from_millis(700));
            server.restart();
        }
        std::thread::sleep(Duration::from_millis(500));
        stop.store(true, Ordering::SeqCst);
        writers.into_iter().map(|h| h.join().unwrap()).unzip()
    });
    for (w, confirmed) in outcomes.iter().enumerate() {
        assert!(!confirmed.is_empty(), "writer {w} wrote nothing");
        assert_all_there(&db, &format!("tl{w}"), confirmed, &format!("writer {w}"));
    }
    // (The URI as Timeline shows it, in its own order.)
    let shown = db.tl(&["db", "info"]).json()["path"].clone();
    db.tl(&["db", "check"]).ok(
        &serde_json::json!({"ok": true, "engine": "postgres", "path": shown, "problems": []})
            .to_string(),
    );
    eprintln!(
        "server crash test: {} acknowledged appends, {} failed while the server was down",
        outcomes.iter().map(Vec::len).sum::<usize>(),
        failures.iter().sum::<usize>()
    );
}
