//! S1/S2 under SIGKILL: `tl append` processes are killed at random moments of their life. After every
//! kill the database loads, every append whose success was printed is present with its text, and
//! the backup decodes. Reproduce a failure with the seed it prints: TIMELINE_CRASH_SEED=<seed>.

use crate::common;

use common::{Db, Engine, TL, use_engine};
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
    if let Some(seed) = std::env::var("TIMELINE_CRASH_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        return seed;
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    (nanos ^ u64::from(std::process::id()).rotate_left(32)) | 1
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
    sigkill_at_random_moments(Engine::Json, 100);
}

#[test]
fn s2_sigkill_at_random_moments_never_loses_a_reported_append_sqlite() {
    sigkill_at_random_moments(Engine::Sqlite, 60);
}

fn sigkill_at_random_moments(engine: Engine, kills_wanted: usize) {
    use_engine(engine);
    let kills_max_attempts = kills_wanted * 8;
    let seed = seed();
    let mut rng = Rng(seed);
    let context =
        |extra: &str| format!("seed {seed} (rerun with TIMELINE_CRASH_SEED={seed}){extra}");

    let db = Db::new();
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
            let out = append_command(&db, &format!("calibration {i}"))
                .output()
                .unwrap();
            assert!(out.status.success(), "{}", context(""));
            start.elapsed()
        })
        .collect();
    samples.sort();
    let span_us = (samples[1].as_micros() as u64 * 3 / 2).max(1000);

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
        let mut child = append_command(&db, &text).spawn().unwrap();
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
            // A new temporary file (JSON) or a write-ahead log left open (SQLite) means the kill
            // landed inside a write or a session.
            let temps: Vec<String> = std::fs::read_dir(db.dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|name| match engine {
                    Engine::Json => name.starts_with(".db.json."),
                    Engine::Sqlite => name.ends_with("-wal"),
                    Engine::Postgres => unreachable!("this test runs on the file engines only"),
                })
                .map(|name| format!("{name} {attempts}"))
                .collect();
            let before = seen_temps.len();
            seen_temps.extend(temps);
            if seen_temps.len() > before {
                mid_write += 1;
            }
        } else {
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
    // SQLite's own check finds nothing wrong after the kills.
    if engine == Engine::Sqlite {
        // json!: a Windows path's backslashes are escaped in JSON.
        db.tl(&["db", "check"])
            .ok(&serde_json::json!({"ok": true, "engine": "sqlite",
            "path": db.path.display().to_string(), "problems": []})
            .to_string());
    }

    // One last clean write removes what dead writers left behind.
    db.tl(&[
        "append", "--role", "user", "--text", "final", "--tokens", "1",
    ])
    .json();
    let mut names: Vec<String> = std::fs::read_dir(db.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
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
        Engine::Sqlite => vec![db.bytes()],
        Engine::Postgres => unreachable!("this test runs on the file engines only"),
    };
    for bytes in snapshots {
        let value: Value = serde_json::from_slice(&bytes).unwrap();
        assert!(
            validator.is_valid(&value),
            "a snapshot does not match the schema"
        );
    }
    // A clean close leaves only the database (and for JSON its backup and lock).
    let expected: &[&str] = match engine {
        Engine::Json => &["db.json", "db.json.bak", "db.json.lock"],
        Engine::Sqlite => &["db.sqlite"],
        Engine::Postgres => unreachable!("this test runs on the file engines only"),
    };
    assert_eq!(names, expected, "{}", context(""));
    eprintln!(
        "crash test on {engine:?}: {kills} kills ({mid_write} inside a write, {committed_unreported} after the commit), {} confirmed appends, {attempts} attempts, {}",
        confirmed.len(),
        context("")
    );
}

#[test]
fn s2_sigkill_during_a_first_write_leaves_no_database_or_a_whole_one_json() {
    sigkill_during_first_writes(Engine::Json, 12);
}

#[test]
fn s2_sigkill_during_a_first_write_leaves_no_database_or_a_whole_one_sqlite() {
    sigkill_during_first_writes(Engine::Sqlite, 12);
}

/// `tl import` into a database that does not exist yet, killed at random moments (#21 items 1 and
/// 4; SQLite stages the new database beside its path, JSON writes a temporary snapshot): after every kill there is no database or one with the whole import, nothing at the path keeps
/// the next first write from working, and once the dead writers' temporary files are old enough the
/// next change removes them all.
fn sigkill_during_first_writes(engine: Engine, kills_wanted: usize) {
    use_engine(engine);
    let seed = seed();
    let mut rng = Rng(seed);
    let context =
        |extra: &str| format!("seed {seed} (rerun with TIMELINE_CRASH_SEED={seed}){extra}");
    let db = Db::new();
    let dir = db.dir.path().to_path_buf();
    const MESSAGES: usize = 400;
    let messages: Vec<Value> = (0..MESSAGES)
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
        for suffix in ["", ".bak", ".lock"] {
            let _ = std::fs::remove_file(format!("{}{suffix}", db.path.display()));
        }
    };
    let names = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let start = Instant::now();
    let out = import().output().unwrap();
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
        let mut child = import().spawn().unwrap();
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
        if db.path.exists() {
            assert_eq!(timelines.len(), 1, "{listed} {}", context(&where_));
            assert_eq!(
                timelines[0]["messages"],
                MESSAGES as u64,
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
        Engine::Postgres => unreachable!("this test runs on the file engines only"),
    };
    assert_eq!(names(), expected, "{}", context(""));
    eprintln!(
        "first-write crash test on {engine:?}: {kills} kills ({left_staged} left temporary files), {attempts} attempts, {}",
        context("")
    );
}
