//! Issue 43: durability under power loss, not only under a killed process. The database lives on
//! `tools/powercut`, a FUSE file system that keeps every write, truncation and name change that no
//! sync made durable, and throws it away (or keeps an arbitrary part of it, reordered or torn) at a
//! simulated power cut. Writers run (`tl append` processes, a `tl-mcp` session, `import`,
//! `summarize` and `archive-branch`, `db convert`, `db backup`, the `tl create` that makes the file,
//! several at once), are killed at a random moment, the power is cut, and then: every write that was
//! acknowledged (what `tl` printed, what `tl-mcp` answered) is there, nothing half-written is
//! visible, `tl db check` and the `sqlite3` shell's `PRAGMA integrity_check` are clean, and the next
//! write succeeds. The control run leaves out the commit's sync (a debug-only switch) and must lose
//! acknowledged writes under the same cuts, or the suite fails: a harness that stopped cutting
//! would be noticed.
//!
//! `TIMELINE_POWER_CUTS=N` sets the number of cuts per engine (default 20; CI runs 1,000);
//! `TIMELINE_POWER_SEED=S` repeats a run's choices (each run prints its seed, each failure its cut).
//! `scripts/power-loss.sh --cuts N` runs the suite alone. Without /dev/fuse or fusermount3 the tests
//! print one loud line and do not run; under `CI=true` they fail.

mod mount;
mod writers;

use crate::common::TempDir;
use mount::{Mount, Procs, Rng, cuts, fuse_ready, seed};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use writers::{Ack, Cycle, Setup, node_of};

/// The database as `tl db convert` dumps it to a JSON snapshot off the file system under test.
struct Dump {
    /// (timeline, node) -> text
    nodes: BTreeMap<(String, String), String>,
    branches: HashSet<String>,
}

fn dump(setup: &Setup, db: &Path, out: &Path) -> Result<Dump, String> {
    let _ = std::fs::remove_file(out);
    let run = setup
        .tl(db, &["db", "convert", "--to", out.to_str().unwrap()])
        .output()
        .unwrap();
    if !run.status.success() {
        return Err(format!(
            "reading {} failed: {}",
            db.display(),
            String::from_utf8_lossy(&run.stderr)
        ));
    }
    let v: Value = serde_json::from_slice(&std::fs::read(out).unwrap()).unwrap();
    let mut nodes = BTreeMap::new();
    let mut branches = HashSet::new();
    for t in v["timelines"].as_array().unwrap() {
        let id = t["id"].as_str().unwrap().to_string();
        for n in t["nodes"].as_array().unwrap() {
            nodes.insert(
                (id.clone(), n["id"].as_str().unwrap().to_string()),
                n["text"].as_str().unwrap_or_default().to_string(),
            );
        }
        if id == "tl0" {
            for b in t["branches"].as_array().unwrap() {
                branches.insert(b["name"].as_str().unwrap().to_string());
            }
        }
    }
    Ok(Dump { nodes, branches })
}

/// A configuration runs with the write-ahead log it is named for (a switch that stopped working
/// would make the plain-VFS run a second kept-log run without anyone noticing).
fn assert_sqlite_log(setup: &Setup, test: &str) {
    let Some(expected) = setup.sqlite_log else {
        return;
    };
    let tmp = TempDir::new();
    let db = tmp.path().join("log.db");
    let created = setup.tl(&db, &["create"]).output().unwrap();
    assert!(created.status.success(), "{test}: tl create: {created:?}");
    let info = setup.tl(&db, &["db", "info"]).output().unwrap();
    let info: Value = serde_json::from_slice(&info.stdout)
        .unwrap_or_else(|e| panic!("{test}: tl db info: {e}: {info:?}"));
    assert_eq!(info["sqlite_log"], expected, "{test}: db info {info}");
}

fn db_check(setup: &Setup, db: &Path) -> Result<(), String> {
    let run = setup.tl(db, &["db", "check"]).output().unwrap();
    let out = String::from_utf8_lossy(&run.stdout);
    if !run.status.success() || !out.contains("\"ok\":true") || !out.contains("\"problems\":[]") {
        return Err(format!(
            "tl db check {}: {out}{}",
            db.display(),
            String::from_utf8_lossy(&run.stderr)
        ));
    }
    let header = std::fs::read(db).unwrap_or_default();
    if header.starts_with(b"SQLite format 3\0") {
        let run = Command::new("sqlite3")
            .arg(db)
            .arg("PRAGMA integrity_check")
            .output()
            .unwrap();
        let out = String::from_utf8_lossy(&run.stdout);
        if out.trim() != "ok" {
            return Err(format!(
                "sqlite3 {} 'PRAGMA integrity_check': {out}{}",
                db.display(),
                String::from_utf8_lossy(&run.stderr)
            ));
        }
        // The other program's title is whole: one of its commits, never pages of two.
        let run = Command::new("sqlite3")
            .arg(db)
            .arg("SELECT title FROM timelines WHERE id = 0")
            .output()
            .unwrap();
        let title = String::from_utf8_lossy(&run.stdout);
        let title = title.trim_end_matches('\n');
        if title.starts_with("foreign-") && !writers::is_foreign_title(title) {
            return Err(format!(
                "{}: the other program's title is not one it wrote (half a transaction?): {} bytes, starting {:?}",
                db.display(),
                title.len(),
                &title[..title.len().min(60)]
            ));
        }
    }
    Ok(())
}

/// The checks after a cut: every acknowledged write is there, nothing unknown is, both checks are
/// clean. `Err` names the first problem.
fn verify(
    setup: &Setup,
    db: &Path,
    acks: &[Ack],
    texts: &HashSet<String>,
    scratch: &Path,
) -> Result<(), String> {
    if !db.exists() {
        return match acks.iter().any(|a| matches!(a, Ack::Created)) {
            true => Err(format!("the database {} is gone", db.display())),
            false => Ok(()),
        };
    }
    let d = dump(setup, db, &scratch.join("dump.json"))?;
    for ack in acks {
        match ack {
            Ack::Message { node, text } => match d.nodes.get(&("tl0".to_string(), node.clone())) {
                Some(t) if t == text => {}
                found => {
                    return Err(format!(
                        "lost an acknowledged write: {node} {text:?} (found {found:?})"
                    ));
                }
            },
            Ack::Created => {}
            Ack::Imported { timeline, texts } => {
                for text in texts {
                    if !d
                        .nodes
                        .iter()
                        .any(|((t, _), found)| t == timeline && found == text)
                    {
                        return Err(format!(
                            "lost an acknowledged import: {timeline} has no {text:?}"
                        ));
                    }
                }
            }
            Ack::Archived { branch } => {
                if d.branches.contains(branch) {
                    return Err(format!(
                        "an acknowledged archive-branch is undone: {branch}"
                    ));
                }
            }
            Ack::Copy { .. } => {}
        }
    }
    // Nothing half-written: every text is one a writer sent, whole.
    for ((t, n), text) in &d.nodes {
        if !texts.contains(text) {
            return Err(format!("{t}/{n} has a text no writer sent: {text:?}"));
        }
    }
    db_check(setup, db)
}

fn verify_copy(
    setup: &Setup,
    path: &Path,
    holds: &[(String, String)],
    scratch: &Path,
) -> Result<(), String> {
    if !path.exists() {
        return Err(format!("an acknowledged copy is gone: {}", path.display()));
    }
    let d = dump(setup, path, &scratch.join("copy.json"))?;
    for (node, text) in holds {
        if d.nodes.get(&("tl0".to_string(), node.clone())) != Some(text) {
            return Err(format!(
                "the acknowledged copy {} lacks {node} {text:?}",
                path.display()
            ));
        }
    }
    db_check(setup, path)
}

/// Remove a file for good (the name's removal made durable), so that old databases do not
/// come back at the next cut and fill the file system's memory.
fn remove_durably(paths: &[PathBuf]) {
    for path in paths {
        let _ = std::fs::remove_file(path);
    }
    if let Some(dir) = paths.first().and_then(|p| p.parent()) {
        std::fs::File::open(dir).unwrap().sync_all().unwrap();
    }
}

fn db_files(db: &Path) -> Vec<PathBuf> {
    let name = db.file_name().unwrap().to_string_lossy().to_string();
    let mut files = Vec::new();
    for entry in std::fs::read_dir(db.parent().unwrap()).unwrap().flatten() {
        if entry.file_name().to_string_lossy().contains(&name) {
            files.push(entry.path());
        }
    }
    files
}

#[derive(Default)]
struct Tally {
    cuts: usize,
    remounts: usize,
    acks: usize,
    lost: usize,
    /// Cuts after which the database held a title that the other program (`sqlite3`) wrote.
    foreign: usize,
    first_problem: Option<String>,
    modes: BTreeMap<String, usize>,
}

/// Run `cuts` cycles of writers, kill and cut on `setup`. A normal run fails at the first problem;
/// a control run counts the cuts that lost acknowledged writes and returns the tally.
fn run(setup: &Setup, control: bool) -> Option<Tally> {
    let test = format!("power_loss::{}", setup.name);
    if !fuse_ready(&test) {
        return None;
    }
    assert_sqlite_log(setup, &test);
    let seed = seed();
    // The control needs only to show that cuts lose writes: a quarter of the cuts is plenty (it
    // loses some in about a third of them).
    let cuts = if control {
        (cuts() / 4).max(20)
    } else {
        cuts()
    };
    eprintln!(
        "{test}: {cuts} cuts, seed {seed} (TIMELINE_POWER_SEED={seed} TIMELINE_POWER_CUTS={cuts} repeats the choices)"
    );
    let tmp = TempDir::new();
    let scratch = tmp.path().join("scratch");
    std::fs::create_dir_all(&scratch).unwrap();
    let mut mount = Mount::new(tmp.path());
    let mut rng = Rng(seed);
    let mut tally = Tally::default();
    let mut generation = 0;
    let mut db = PathBuf::new();
    let mut acks: Vec<Ack> = Vec::new();
    let mut texts: HashSet<String> = HashSet::new();
    // A new database every so often: the first write that creates one is cut too, and the
    // JSON snapshot (rewritten whole by every write) stays small.
    let fresh_every = if control { 10 } else { 25 };
    let started = Instant::now();
    for cycle in 0..cuts {
        if cycle % fresh_every == 0 || db.as_os_str().is_empty() {
            if !db.as_os_str().is_empty() {
                let mut old = db_files(&db);
                for entry in std::fs::read_dir(&mount.dir).unwrap().flatten() {
                    if entry.file_name().to_string_lossy().starts_with("copy-") {
                        old.push(entry.path());
                    }
                }
                remove_durably(&old);
            }
            generation += 1;
            db = mount
                .dir
                .join(format!("timeline-{generation}{}", setup.ext));
            acks.clear();
        }
        let before: Vec<(String, String)> = acks
            .iter()
            .filter_map(|a| match a {
                Ack::Message { node, text } => Some((node.clone(), text.clone())),
                _ => None,
            })
            .collect();
        let state = Cycle {
            setup,
            db: db.clone(),
            procs: Procs::default(),
            acks: Mutex::new(Vec::new()),
            texts: Mutex::new(HashSet::new()),
            failures: Mutex::new(Vec::new()),
            cycle,
            tmp: scratch.clone(),
            before,
        };
        let created = acks.iter().any(|a| matches!(a, Ack::Created));
        let scenario = rng.below(7);
        let delay = Duration::from_millis(2 + rng.below(if control { 60 } else { 45 }));
        let state = Arc::new(state);
        std::thread::scope(|s| {
            let st = &*state;
            if !created {
                s.spawn(move || st.create_then_append());
            } else {
                match scenario {
                    // Several `tl append` processes and a `tl-mcp` session at once.
                    0 => {
                        s.spawn(move || st.appends(0));
                        s.spawn(move || st.appends(1));
                        s.spawn(move || st.mcp());
                    }
                    1 => {
                        s.spawn(move || st.mcp());
                    }
                    2 => {
                        s.spawn(move || st.imports());
                        s.spawn(move || st.appends(0));
                    }
                    3 => {
                        s.spawn(move || st.summarize_and_archive());
                        s.spawn(move || st.mcp());
                    }
                    4 => {
                        let ext = if rng.below(2) == 0 { ".db" } else { ".json" };
                        s.spawn(move || st.copies(ext));
                        s.spawn(move || st.appends(0));
                    }
                    // Another program committing between Timeline's commits without syncing
                    // them (SQLite only): the kept log must sync its frames before a
                    // checkpoint copies them into the database.
                    6 if setup.ext == ".db" => {
                        s.spawn(move || st.foreign());
                        s.spawn(move || st.appends(0));
                        s.spawn(move || st.mcp());
                    }
                    _ => {
                        s.spawn(move || st.appends(0));
                    }
                }
            }
            std::thread::sleep(delay);
            st.procs.kill_all();
        });
        let state = Arc::into_inner(state).unwrap();
        let new_acks = state.acks.into_inner().unwrap();
        texts.extend(state.texts.into_inner().unwrap());
        let failures = state.failures.into_inner().unwrap();
        assert!(
            failures.is_empty() || control,
            "{test} cut {cycle} (seed {seed}): a writer failed before the cut: {failures:#?}"
        );
        tally.acks += new_acks.len();
        let copies: Vec<Ack> = new_acks
            .iter()
            .filter(|a| matches!(a, Ack::Copy { .. }))
            .cloned()
            .collect();
        acks.extend(new_acks);
        // The cut: every few hundred by unmounting and mounting again, else in place.
        let how = if cycle % 200 == 199 || (cycle == cuts / 2 && cuts >= 10) {
            tally.remounts += 1;
            mount.remount()
        } else {
            mount.cut(rng.next())
        };
        tally.cuts += 1;
        let mode = how
            .split(' ')
            .find_map(|w| w.strip_prefix("mode="))
            .unwrap_or("remount")
            .to_string();
        *tally.modes.entry(mode).or_default() += 1;
        let mut result = verify(setup, &db, &acks, &texts, &scratch);
        // Read-only and only when the file exists: `sqlite3` opening a missing file creates it
        // empty, which the next `tl create` then rightly refuses (an empty file is not a database).
        if result.is_ok() && scenario == 6 && setup.sqlite_log.is_some() && db.exists() {
            let run = Command::new("sqlite3")
                .arg("-readonly")
                .arg(&db)
                .arg("SELECT title FROM timelines WHERE id = 0")
                .output()
                .unwrap();
            if run.stdout.starts_with(b"foreign-") {
                tally.foreign += 1;
            }
        }
        for copy in &copies {
            if let (Ok(()), Ack::Copy { path, holds }) = (&result, copy) {
                result = verify_copy(setup, path, holds, &scratch);
            }
        }
        // The next write succeeds: an append, or the `tl create` that no acknowledgement says ran.
        if result.is_ok() {
            let text = format!("next-{cycle}");
            texts.insert(text.clone());
            let created = acks.iter().any(|a| matches!(a, Ack::Created));
            let args: Vec<&str> = if created {
                vec!["append", "--role", "user", "--tokens", "1", "--text", &text]
            } else {
                vec!["create"]
            };
            let out = setup.tl(&db, &args).output().unwrap();
            if !out.status.success() {
                result = Err(format!(
                    "the next write (tl {}) failed: {}",
                    args[0],
                    String::from_utf8_lossy(&out.stderr)
                ));
            } else if let Some(node) = node_of(&String::from_utf8_lossy(&out.stdout)) {
                acks.push(Ack::Message { node, text });
            } else {
                acks.push(Ack::Created);
            }
        }
        if (cycle + 1) % 1000 == 0 && cycle + 1 < cuts {
            eprintln!(
                "{test}: {} cuts in {:.0} s, {} acknowledged writes, {} cuts lost some",
                cycle + 1,
                started.elapsed().as_secs_f64(),
                tally.acks,
                tally.lost
            );
        }
        if let Err(problem) = result {
            if !control {
                panic!(
                    "{test}: after cut {cycle} of {cuts} ({how}; seed {seed}, scenario {scenario}, writers killed after {delay:?}): {problem}"
                );
            }
            tally.lost += 1;
            tally
                .first_problem
                .get_or_insert(format!("cut {cycle} ({how}): {problem}"));
            // Start over on a new database: this one is known to be damaged.
            db = PathBuf::new();
        }
    }
    mount.unmount();
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "{test}: {} cuts ({} by remounting) in {secs:.0} s ({:.1} cuts/s), {} acknowledged writes, modes {:?}, {} cuts with another program's commits kept, {} cuts lost acknowledged writes or damaged the database",
        tally.cuts,
        tally.remounts,
        tally.cuts as f64 / secs,
        tally.acks,
        tally.modes,
        tally.foreign,
        tally.lost
    );
    // The other program's writes must really reach the database, or its scenario tests nothing.
    assert!(
        control || setup.sqlite_log.is_none() || tally.cuts < 100 || tally.foreign > 0,
        "{test}: in {} cuts no commit of the other program (sqlite3, synchronous=NORMAL) was kept",
        tally.cuts
    );
    if let Some(problem) = &tally.first_problem {
        eprintln!("{test}: the first: {problem}");
    }
    Some(tally)
}

#[test]
fn sqlite_kept_log() {
    run(
        &Setup {
            name: "sqlite_kept_log",
            ext: ".db",
            sqlite_log: Some("kept"),
            env: vec![],
        },
        false,
    );
}

#[test]
fn sqlite_plain_vfs() {
    run(
        &Setup {
            name: "sqlite_plain_vfs",
            ext: ".db",
            sqlite_log: Some("plain_switched_off"),
            env: vec![("TIMELINE_SQLITE_KEPT_LOG", "off")],
        },
        false,
    );
}

#[test]
fn json() {
    run(
        &Setup {
            name: "json",
            ext: ".json",
            sqlite_log: None,
            env: vec![],
        },
        false,
    );
}

/// A control run: without the commit's sync, the same cuts must lose acknowledged writes.
fn control(setup: &Setup) {
    let Some(tally) = run(setup, true) else {
        return;
    };
    assert!(
        tally.lost > 0,
        "the control run {} (TIMELINE_TEST_UNSAFE_SYNCHRONOUS_OFF=1) lost no acknowledged write in {} cuts: the harness is not cutting the power",
        setup.name,
        tally.cuts
    );
}

#[test]
fn control_without_syncs_loses_writes() {
    control(&Setup {
        name: "control_sqlite_synchronous_off",
        ext: ".db",
        sqlite_log: Some("kept"),
        env: vec![("TIMELINE_TEST_UNSAFE_SYNCHRONOUS_OFF", "1")],
    });
}

#[test]
fn control_json_without_fsync_loses_writes() {
    control(&Setup {
        name: "control_json_without_fsync",
        ext: ".json",
        sqlite_log: None,
        env: vec![("TIMELINE_TEST_UNSAFE_SYNCHRONOUS_OFF", "1")],
    });
}

/// The file system itself, through the kernel: an unsynced write and an unsynced name are lost at a
/// `discard` cut, a synced file under a synced name survives, and the `names` mode keeps writes but
/// not names.
#[test]
fn the_file_system_loses_what_no_sync_made_durable() {
    if !fuse_ready("power_loss::the_file_system_loses_what_no_sync_made_durable") {
        return;
    }
    let tmp = TempDir::new();
    let mount = Mount::new(tmp.path());
    let cut = |mode: &str| {
        let mut stream = UnixStream::connect(&mount.socket).unwrap();
        writeln!(stream, "cut 7 {mode}").unwrap();
        let mut answer = String::new();
        BufReader::new(stream).read_line(&mut answer).unwrap();
        assert!(
            answer.starts_with(&format!("cut seed=7 mode={mode} ")),
            "{answer}"
        );
    };
    let (a, b) = (mount.dir.join("a"), mount.dir.join("b"));
    let sync_dir = || std::fs::File::open(&mount.dir).unwrap().sync_all().unwrap();

    std::fs::write(&a, "unsynced").unwrap();
    cut("discard");
    assert!(!a.exists(), "a file whose name was never synced survived");

    let mut file = std::fs::File::create(&a).unwrap();
    file.write_all(b"synced").unwrap();
    file.sync_all().unwrap();
    drop(file);
    sync_dir();
    let mut file = std::fs::OpenOptions::new().append(true).open(&a).unwrap();
    file.write_all(b" and more").unwrap();
    drop(file);
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "synced and more");
    cut("discard");
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "synced");
    assert_eq!(
        std::fs::read_to_string(mount.backing.join("a")).unwrap(),
        "synced"
    );

    std::fs::rename(&a, &b).unwrap();
    std::fs::write(&b, "rewritten").unwrap();
    cut("names");
    assert!(
        !b.exists(),
        "a rename whose directory was never synced survived"
    );
    assert_eq!(std::fs::read_to_string(&a).unwrap(), "rewritten");

    std::fs::rename(&a, &b).unwrap();
    sync_dir();
    cut("discard");
    assert!(!a.exists());
    assert_eq!(std::fs::read_to_string(&b).unwrap(), "rewritten");
}
