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

use crate::common;

use common::{TL, TL_MCP, TempDir};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// xorshift64*: the run's choices, repeatable from its seed.
#[derive(Clone)]
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

fn cuts() -> usize {
    std::env::var("TIMELINE_POWER_CUTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20)
}

fn seed() -> u64 {
    if let Some(seed) = std::env::var("TIMELINE_POWER_SEED")
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

/// Whether FUSE can be used here. Outside CI a missing piece is one loud line and no test; under
/// `CI=true` it fails the test.
fn fuse_ready(test: &str) -> bool {
    let missing: Vec<&str> = [
        (!Path::new("/dev/fuse").exists()).then_some("/dev/fuse"),
        Command::new("fusermount3")
            .arg("--version")
            .output()
            .is_err()
            .then_some("fusermount3 (Debian: apt-get install fuse3)"),
        Command::new("sqlite3")
            .arg("--version")
            .output()
            .is_err()
            .then_some("the sqlite3 shell (Debian: apt-get install sqlite3)"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if missing.is_empty() {
        return true;
    }
    let line = format!(
        "!!! {test} DID NOT RUN: the power-loss tests need {}",
        missing.join(" and ")
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{line}");
    eprintln!("{line}");
    false
}

/// The power-cut file system, built once per test process from its own package.
fn powercut() -> &'static Path {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    BUILT.get_or_init(|| {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/powercut");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = Command::new(cargo)
            .args([
                "build",
                "--release",
                "--quiet",
                "--locked",
                "--manifest-path",
            ])
            .arg(dir.join("Cargo.toml"))
            .arg("--target-dir")
            .arg(dir.join("target"))
            .output()
            .expect("cargo runs");
        assert!(
            out.status.success(),
            "building tools/powercut failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        dir.join("target/release/powercut")
    })
}

/// A mounted power-cut file system.
struct Mount {
    process: Option<Child>,
    backing: PathBuf,
    dir: PathBuf,
    socket: PathBuf,
}

fn is_mounted(dir: &Path) -> bool {
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let dir = dir.to_string_lossy();
    mounts
        .lines()
        .any(|l| l.split(' ').nth(4) == Some(&*dir) && l.contains("powercut"))
}

impl Mount {
    fn new(tmp: &Path) -> Mount {
        let mut mount = Mount {
            process: None,
            backing: tmp.join("disk"),
            dir: tmp.join("mnt"),
            socket: tmp.join("control.sock"),
        };
        std::fs::create_dir_all(&mount.backing).unwrap();
        std::fs::create_dir_all(&mount.dir).unwrap();
        mount.start();
        mount
    }

    fn start(&mut self) {
        let log = std::fs::File::create(self.dir.with_extension("log")).unwrap();
        let child = Command::new(powercut())
            .arg("mount")
            .arg(&self.backing)
            .arg(&self.dir)
            .arg("--control")
            .arg(&self.socket)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("powercut starts");
        self.process = Some(child);
        let deadline = Instant::now() + Duration::from_secs(20);
        while !(is_mounted(&self.dir) && UnixStream::connect(&self.socket).is_ok()) {
            assert!(
                Instant::now() < deadline,
                "powercut did not mount {}: {}",
                self.dir.display(),
                std::fs::read_to_string(self.dir.with_extension("log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    fn cut(&self, seed: u64) -> String {
        let mut stream = UnixStream::connect(&self.socket).expect("the control socket answers");
        writeln!(stream, "cut {seed}").unwrap();
        let mut answer = String::new();
        BufReader::new(stream).read_line(&mut answer).unwrap();
        assert!(answer.starts_with("cut "), "the cut failed: {answer}");
        answer.trim_end().to_string()
    }

    /// Unmount (a power cut as well: nothing unsynced reached the backing directory) and mount again.
    fn remount(&mut self) -> String {
        self.unmount();
        self.start();
        "cut by unmounting and mounting again".to_string()
    }

    fn unmount(&mut self) {
        for _ in 0..200 {
            let out = Command::new("fusermount3")
                .arg("-u")
                .arg(&self.dir)
                .output()
                .unwrap();
            if out.status.success() || !is_mounted(&self.dir) {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        if let Some(mut child) = self.process.take() {
            let deadline = Instant::now() + Duration::from_secs(10);
            while child.try_wait().unwrap().is_none() {
                if Instant::now() > deadline {
                    let _ = child.kill();
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        }
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        if is_mounted(&self.dir) {
            let _ = Command::new("fusermount3")
                .arg("-uz")
                .arg(&self.dir)
                .output();
        }
        if let Some(mut child) = self.process.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// The writers' processes of one cycle, all killed at the cut.
#[derive(Default)]
struct Procs {
    stop: AtomicBool,
    running: Mutex<Vec<u32>>,
}

impl Procs {
    /// Start `cmd` unless the power is already cut; registered so that the cut kills it.
    fn spawn(&self, cmd: &mut Command) -> Option<Child> {
        let mut running = self.running.lock().unwrap();
        if self.stop.load(Ordering::SeqCst) {
            return None;
        }
        let child = cmd.spawn().expect("the binary starts");
        running.push(child.id());
        Some(child)
    }

    /// Run `cmd` to its end (or its kill): its stdout, and whether it exited with 0.
    fn run(&self, cmd: &mut Command) -> Option<(String, bool, String)> {
        cmd.stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let child = self.spawn(cmd)?;
        let pid = child.id();
        let out = child.wait_with_output().unwrap();
        self.running.lock().unwrap().retain(|&p| p != pid);
        Some((
            String::from_utf8_lossy(&out.stdout).into_owned(),
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        ))
    }

    fn kill_all(&self) {
        let running = self.running.lock().unwrap();
        self.stop.store(true, Ordering::SeqCst);
        for &pid in running.iter() {
            // SAFETY: kill(2) on a child of this process that is not reaped yet.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
        }
    }

    fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }
}

/// One acknowledged write: what must be there after any cut.
#[derive(Clone, Debug)]
enum Ack {
    /// A message or summary: its node and exact text in timeline tl0.
    Message { node: String, text: String },
    /// `tl create` printed the timeline.
    Created,
    /// `import` printed this timeline with these messages.
    Imported {
        timeline: String,
        texts: Vec<String>,
    },
    /// `archive-branch` archived this branch.
    Archived { branch: String },
    /// `db convert` or `db backup` wrote this file, which holds every message acknowledged before.
    Copy {
        path: PathBuf,
        holds: Vec<(String, String)>,
    },
}

/// What a configuration runs on: the engine's file name and the environment of every process.
struct Setup {
    name: &'static str,
    ext: &'static str,
    env: Vec<(&'static str, &'static str)>,
}

impl Setup {
    fn command(&self, bin: &str) -> Command {
        let mut cmd = Command::new(bin);
        cmd.env_remove("TIMELINE_DB")
            .env_remove("TIMELINE_NOW")
            .env_remove("TIMELINE_FAULT_STEP")
            .env_remove("COMPLETE");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    fn tl(&self, db: &Path, args: &[&str]) -> Command {
        let mut cmd = self.command(TL);
        cmd.arg("--db").arg(db).args(args);
        cmd
    }
}

fn node_of(stdout: &str) -> Option<String> {
    let v: Value = serde_json::from_str(stdout.trim()).ok()?;
    v["node"].as_str().map(str::to_string)
}

/// The shared state of one cycle's writers.
struct Cycle<'a> {
    setup: &'a Setup,
    db: PathBuf,
    procs: Procs,
    acks: Mutex<Vec<Ack>>,
    texts: Mutex<HashSet<String>>,
    failures: Mutex<Vec<String>>,
    cycle: usize,
    tmp: PathBuf,
    /// The messages acknowledged before this cycle: copies made in it must hold them.
    before: Vec<(String, String)>,
}

impl Cycle<'_> {
    fn text(&self, what: &str, k: usize) -> String {
        let text = format!("{what}-{}-{k}", self.cycle);
        self.texts.lock().unwrap().insert(text.clone());
        text
    }

    fn ack(&self, ack: Ack) {
        self.acks.lock().unwrap().push(ack);
    }

    /// A writer that failed without being killed: a bug, unless the cut came first.
    fn failed(&self, what: &str, stderr: &str) {
        // The archival rules may refuse a branch (its watermark, when main's head is the fork
        // point): an answer, not a failure of the store.
        let refused = stderr.contains("cannot be archived");
        if !self.procs.stopped() && !refused {
            self.failures
                .lock()
                .unwrap()
                .push(format!("{what}: {}", stderr.trim()));
        }
    }

    fn run(&self, what: &str, args: &[&str]) -> Option<String> {
        let (stdout, ok, stderr) = self.procs.run(&mut self.setup.tl(&self.db, args))?;
        if !ok {
            self.failed(what, &stderr);
        }
        Some(stdout)
    }

    fn appends(&self, writer: usize) {
        for k in 0.. {
            let text = self.text(&format!("tl{writer}"), k);
            let Some(out) = self.run(
                "tl append",
                &["append", "--role", "user", "--tokens", "1", "--text", &text],
            ) else {
                return;
            };
            if let Some(node) = node_of(&out) {
                self.ack(Ack::Message { node, text });
            }
        }
    }

    fn create_then_append(&self) {
        let Some(out) = self.run("tl create", &["create"]) else {
            return;
        };
        if out.contains("\"timeline_id\":\"tl0\"") {
            self.ack(Ack::Created);
            self.appends(9);
        }
    }

    fn mcp(&self) {
        let mut cmd = self.setup.command(TL_MCP);
        cmd.arg("--db")
            .arg(&self.db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let Some(mut child) = self.procs.spawn(&mut cmd) else {
            return;
        };
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut send = |line: Value| writeln!(stdin, "{line}").is_ok();
        let ok = send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "power-loss", "version": "0"}}}),
        ) && send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let mut line = String::new();
        if ok && stdout.read_line(&mut line).is_ok_and(|n| n > 0) {
            for k in 1.. {
                let text = self.text("mcp", k);
                let call = json!({"jsonrpc": "2.0", "id": k, "method": "tools/call", "params": {"name": "timeline_append", "arguments": {"timeline_id": "tl0", "role": "assistant", "text": text, "tokens": 1}}});
                line.clear();
                if !send(call) || !stdout.read_line(&mut line).is_ok_and(|n| n > 0) {
                    break;
                }
                let answer: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                match answer["result"]["structuredContent"]["node"].as_str() {
                    Some(node) if answer["result"]["isError"] != json!(true) => {
                        self.ack(Ack::Message {
                            node: node.to_string(),
                            text,
                        })
                    }
                    _ => self.failed("tl-mcp timeline_append", &line),
                }
            }
        }
        drop(stdin);
        let pid = child.id();
        let _ = child.wait();
        self.procs.running.lock().unwrap().retain(|&p| p != pid);
    }

    fn imports(&self) {
        for k in 0.. {
            let (a, b) = (self.text("imp-a", k), self.text("imp-b", k));
            let input = self.tmp.join(format!("import-{}-{k}.json", self.cycle));
            std::fs::write(
                &input,
                json!([{"role": "user", "content": a}, {"role": "assistant", "content": b}])
                    .to_string(),
            )
            .unwrap();
            let Some(out) = self.run(
                "tl import",
                &[
                    "import",
                    "--format",
                    "openai",
                    "--input",
                    input.to_str().unwrap(),
                ],
            ) else {
                return;
            };
            let v: Value = serde_json::from_str(out.trim()).unwrap_or(Value::Null);
            if let Some(timeline) = v["timelines"][0]["timeline_id"].as_str() {
                self.ack(Ack::Imported {
                    timeline: timeline.to_string(),
                    texts: vec![a, b],
                });
            }
        }
    }

    /// Fork a branch at an acknowledged message, append to it, summarize that message, archive it.
    fn summarize_and_archive(&self) {
        // A message of the main branch (not a summary, not one of an archived branch).
        let Some((at, _)) = self
            .before
            .iter()
            .rev()
            .find(|(_, text)| text.starts_with("tl") || text.starts_with("mcp"))
            .cloned()
        else {
            return;
        };
        for k in 0.. {
            let branch = format!("b{}-{k}", self.cycle);
            let Some(out) = self.run("tl fork", &["fork", "--name", &branch, "--node", &at]) else {
                return;
            };
            if !out.contains("\"head\"") {
                return;
            }
            let text = self.text("side", k);
            let Some(out) = self.run(
                "tl append --branch",
                &[
                    "append", "--branch", &branch, "--role", "user", "--tokens", "1", "--text",
                    &text,
                ],
            ) else {
                return;
            };
            let Some(node) = node_of(&out) else { return };
            self.ack(Ack::Message {
                node: node.clone(),
                text,
            });
            let summary = self.text("summary", k);
            let Some(out) = self.run(
                "tl summarize",
                &[
                    "summarize",
                    "--from",
                    &node,
                    "--to",
                    &node,
                    "--summary",
                    &summary,
                ],
            ) else {
                return;
            };
            let Some(sum) = node_of(&out) else { return };
            self.ack(Ack::Message {
                node: sum,
                text: summary,
            });
            let Some(out) = self.run("tl archive-branch", &["archive-branch", "--name", &branch])
            else {
                return;
            };
            if out.contains("\"archived\"") {
                self.ack(Ack::Archived { branch });
            }
        }
    }

    /// `db convert` and `db backup` to new files on the same file system.
    fn copies(&self, ext: &str) {
        for k in 0.. {
            let path = self
                .db
                .with_file_name(format!("copy-{}-{k}{ext}", self.cycle));
            // A backup has the database's engine, a conversion the one its name asks for.
            let (what, args, ext) = if k % 2 == 0 {
                ("tl db convert", ["db", "convert", "--to"], ext)
            } else {
                ("tl db backup", ["db", "backup", "--to"], self.setup.ext)
            };
            let path = path.with_extension(&ext[1..]);
            let mut args = args.to_vec();
            args.push(path.to_str().unwrap());
            let Some(out) = self.run(what, &args) else {
                return;
            };
            if out.contains("\"to\"") {
                self.ack(Ack::Copy {
                    path,
                    holds: self.before.clone(),
                });
            }
        }
    }
}

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
        let scenario = rng.below(6);
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
        "{test}: {} cuts ({} by remounting) in {secs:.0} s ({:.1} cuts/s), {} acknowledged writes, modes {:?}, {} cuts lost acknowledged writes or damaged the database",
        tally.cuts,
        tally.remounts,
        tally.cuts as f64 / secs,
        tally.acks,
        tally.modes,
        tally.lost
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
        env: vec![("TIMELINE_TEST_UNSAFE_SYNCHRONOUS_OFF", "1")],
    });
}

#[test]
fn control_json_without_fsync_loses_writes() {
    control(&Setup {
        name: "control_json_without_fsync",
        ext: ".json",
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
