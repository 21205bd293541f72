//! A small builder for integration tests: runs the real `tl` / `tl-mcp` binaries against a database in
//! a fresh temporary directory and returns exactly what they printed.
#![allow(dead_code)]

use serde_json::{Value, json};
use std::cell::Cell;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

pub mod pg_raw;
pub mod postgres;

/// The clock `Db::new` sets: TIMELINE_NOW=2026-01-01T00:00:00Z.
pub const CLOCK: &str = "1767225600";

pub const TL: &str = env!("CARGO_BIN_EXE_tl");
pub const TL_MCP: &str = env!("CARGO_BIN_EXE_tl-mcp");

/// The storage engine of the databases `Db::new` makes on this test's thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Json,
    Sqlite,
    /// A schema of its own on the test process's PostgreSQL server (`postgres.rs`).
    Postgres,
}

impl Engine {
    /// The file name of a database of a file engine (PostgreSQL's is a URI: see `Db::new`).
    pub fn file_name(self) -> &'static str {
        match self {
            Engine::Json => "db.json",
            Engine::Sqlite | Engine::Postgres => "db.sqlite",
        }
    }
}

thread_local! {
    static ENGINE: Cell<Engine> = const { Cell::new(Engine::Json) };
}

/// Make `Db::new` on this thread create databases of `engine` (each test runs on its own thread).
pub fn use_engine(engine: Engine) {
    ENGINE.with(|e| e.set(engine));
}

pub fn engine() -> Engine {
    ENGINE.with(Cell::get)
}

/// Every test inside runs twice, as `json::<name>` and `sqlite::<name>`, each with `Db::new` making a
/// database of that engine: the same assertions hold on both storage engines (S8).
#[macro_export]
macro_rules! on_both_engines {
    ($( $(#[$meta:meta])* fn $name:ident() $body:block )*) => {
        mod json {
            #[allow(unused_imports)]
            use super::*;
            $( $(#[$meta])* fn $name() {
                $crate::common::use_engine($crate::common::Engine::Json);
                $body
            } )*
        }
        mod sqlite {
            #[allow(unused_imports)]
            use super::*;
            $( $(#[$meta])* fn $name() {
                $crate::common::use_engine($crate::common::Engine::Sqlite);
                $body
            } )*
        }
    };
}

/// Every test inside runs three times, as `json::<name>`, `sqlite::<name>` and `postgres::<name>`,
/// each with `Db::new` making a database of that engine. The PostgreSQL cases need the server
/// programs (see `postgres.rs`): where they are missing, those cases say so once and pass (fail
/// under CI=true).
#[macro_export]
macro_rules! on_every_engine {
    ($( $(#[$meta:meta])* fn $name:ident() $body:block )*) => {
        $crate::on_both_engines! { $( $(#[$meta])* fn $name() $body )* }
        mod postgres {
            #[allow(unused_imports)]
            use super::*;
            $( $(#[$meta])* fn $name() {
                if $crate::common::postgres::server().is_none() {
                    return;
                }
                $crate::common::use_engine($crate::common::Engine::Postgres);
                $body
            } )*
        }
    };
}

/// The names of the files in `dir`, sorted.
pub fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The files a clean close leaves of the SQLite database `name` in `dir`: the database, and on
/// Unix its write-ahead log, kept blank for the next process (`store::sqlite::kept_log`). Checks
/// that the log is blank: one that still began with a log's header would be read again.
pub fn closed_sqlite(dir: &Path, name: &str) -> Vec<String> {
    let mut names = vec![name.to_string()];
    if cfg!(unix) {
        let wal = format!("{name}-wal");
        let bytes = std::fs::read(dir.join(&wal)).expect("the closed database's log is kept");
        assert!(
            bytes.len() >= 32 && bytes[..32].iter().all(|&b| b == 0),
            "the kept log {wal} does not start with a blank header"
        );
        names.push(wal);
    }
    names
}

/// A command for `bin` that inherits none of the variables that change what Timeline does (the
/// database, the clock, fault injection, the log switches): a test sets those it wants itself.
/// COMPLETE=<shell> would turn the run into a completion request (tests/suite/completion.rs).
pub fn command_without_switches(bin: &str) -> Command {
    let mut cmd = Command::new(bin);
    for var in [
        "TIMELINE_DB",
        "TIMELINE_NOW",
        "TIMELINE_FAULT_STEP",
        "TIMELINE_FAULT_ERROR",
        "TIMELINE_SQLITE_KEPT_LOG",
        "TIMELINE_TEST_UNSAFE_SYNCHRONOUS_OFF",
        "COMPLETE",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// A random seed, or the one in the environment variable `var` (to repeat a failing run).
pub fn seed_from(var: &str) -> u64 {
    if let Some(seed) = std::env::var(var).ok().and_then(|s| s.parse().ok()) {
        return seed;
    }
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    (nanos ^ u64::from(std::process::id()).rotate_left(32)) | 1
}

/// The write-ahead log `db info` reports for a SQLite database in the tests' processes (which run
/// without TIMELINE_SQLITE_KEPT_LOG, see `Db::command`): the kept log on Unix.
pub const SQLITE_LOG: &str = if cfg!(unix) {
    "kept"
} else {
    "plain_unavailable"
};

/// `info`, a SQLite database's `db info` result without its SQLite fields, with them: the log of
/// `log` and the SQLite version linked in.
pub fn with_sqlite_fields(mut info: Value, log: &str) -> Value {
    info["sqlite_log"] = json!(log);
    info["sqlite_version"] = json!(timeline::store::sqlite_version());
    info
}

/// What a change alters, or `None` when there is no database. For the JSON snapshot (a name ending
/// in `.json`), the file's bytes. For SQLite, whose bytes move between the file and its write-ahead
/// log when a process closes, the whole database as the library reads it, in the snapshot format
/// (every node, branch, idempotency record and audit entry).
pub fn stored_state(path: &Path) -> Option<Vec<u8>> {
    if timeline::store::is_uri(&path.to_string_lossy()) {
        // A server database exists once its tables do.
        let mut store = timeline::store::Store::open(path.to_path_buf()).expect("the URI opens");
        store.format_version().expect("the server answers")?;
        return Some(timeline::store::encode(
            &store
                .read(|tx| tx.load_database())
                .expect("the database loads"),
        ));
    }
    if !path.exists() {
        return None;
    }
    if path.extension().is_some_and(|e| e == "json") {
        std::fs::read(path).ok()
    } else {
        Some(timeline::store::encode(
            &timeline::store::load_database(path).expect("the database loads"),
        ))
    }
}

/// A temporary directory removed on drop.
pub struct TempDir {
    path: PathBuf,
}

impl TempDir {
    pub fn new() -> TempDir {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let path = std::env::temp_dir().join(format!(
            "timeline-test-{}-{nanos}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&path).unwrap();
        TempDir { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

/// What a binary printed and how it exited.
#[derive(Debug, Clone)]
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

impl Run {
    /// What a finished process printed and how it exited.
    pub fn from(output: Output) -> Run {
        Run {
            stdout: String::from_utf8(output.stdout).expect("stdout is UTF-8"),
            stderr: String::from_utf8(output.stderr).expect("stderr is UTF-8"),
            code: output.status.code().unwrap_or(-1),
        }
    }

    /// Assert success with exactly this stdout line (JSON, newline added) and nothing on stderr.
    #[track_caller]
    pub fn ok(&self, stdout: &str) -> &Run {
        assert_eq!(
            (self.code, self.stderr.as_str(), self.stdout.as_str()),
            (0, "", format!("{stdout}\n").as_str()),
            "{self:?}"
        );
        self
    }

    /// Assert failure with this exit code and exactly this stderr line, nothing on stdout.
    #[track_caller]
    pub fn err(&self, code: i32, stderr: &str) -> &Run {
        assert_eq!(
            (self.code, self.stdout.as_str(), self.stderr.as_str()),
            (code, "", format!("{stderr}\n").as_str()),
            "{self:?}"
        );
        self
    }

    /// The stdout parsed as JSON (asserting success).
    #[track_caller]
    pub fn json(&self) -> serde_json::Value {
        assert_eq!(self.code, 0, "{self:?}");
        serde_json::from_str(&self.stdout)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e}): {self:?}"))
    }
}

/// A database in its own temporary directory, with helpers to run `tl` against it.
pub struct Db {
    pub dir: TempDir,
    pub path: PathBuf,
    pub env: Vec<(String, String)>,
}

impl Db {
    /// A database of this thread's engine (see `use_engine`), not created yet.
    pub fn new() -> Db {
        let dir = TempDir::new();
        let path = match engine() {
            Engine::Postgres => PathBuf::from(
                postgres::fresh_uri().expect("the PostgreSQL cases check for a server first"),
            ),
            engine => dir.path().join(engine.file_name()),
        };
        Db {
            dir,
            path,
            // A fixed clock (2026-01-01T00:00:00Z) unless a test sets another, so creation times in
            // results are exact.
            env: vec![("TIMELINE_NOW".into(), CLOCK.into())],
        }
    }

    /// Replace the database by a snapshot as it was written (maybe with damaged derived fields,
    /// which loading rebuilds): a file engine's file is overwritten with it (the JSON engine reads
    /// it as it is; SQLite finds a JSON snapshot by its content); on PostgreSQL the snapshot is
    /// converted into a new schema, which the database becomes.
    pub fn replace_with_snapshot(&mut self, snapshot: &Value) {
        let bytes = serde_json::to_vec_pretty(snapshot).unwrap();
        if self.engine() != Engine::Postgres {
            std::fs::write(&self.path, bytes).unwrap();
            return;
        }
        let file = self.dir.path().join("replacement.json");
        std::fs::write(&file, bytes).unwrap();
        let uri = postgres::fresh_uri().expect("a server");
        let mut cmd = self.command(TL);
        cmd.arg("--db")
            .arg(&file)
            .args(["db", "convert", "--to", &uri]);
        Run::from(output_of(&mut cmd)).json();
        self.path = PathBuf::from(uri);
    }

    /// Set an environment variable for every later run (e.g. TIMELINE_NOW).
    pub fn env(&mut self, key: &str, value: &str) -> &mut Db {
        self.env.retain(|(k, _)| k != key);
        self.env.push((key.into(), value.into()));
        self
    }

    pub fn command(&self, bin: &str) -> Command {
        let mut cmd = command_without_switches(bin);
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    /// `tl --db <db>` with each of `runs`' arguments, all started at once; their outputs in order.
    pub fn tl_at_once(&self, runs: &[Vec<String>]) -> Vec<Run> {
        let children: Vec<_> = runs
            .iter()
            .map(|args| {
                let mut cmd = self.command(TL);
                cmd.arg("--db")
                    .arg(&self.path)
                    .args(args)
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped());
                spawn(&mut cmd)
            })
            .collect();
        children
            .into_iter()
            .map(|c| Run::from(c.wait_with_output().unwrap()))
            .collect()
    }

    /// Run `tl --db <db> <args>`.
    pub fn tl(&self, args: &[&str]) -> Run {
        let mut cmd = self.command(TL);
        cmd.arg("--db")
            .arg(&self.path)
            .args(args)
            .stdin(Stdio::null());
        Run::from(output_of(&mut cmd))
    }

    /// Run `tl --db <db> <args>` with `input` on standard input.
    pub fn tl_stdin(&self, args: &[&str], input: &[u8]) -> Run {
        let mut cmd = self.command(TL);
        cmd.arg("--db")
            .arg(&self.path)
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = spawn(&mut cmd);
        let mut stdin = child.stdin.take().unwrap();
        let input = input.to_vec();
        let writer = std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        });
        let output = child.wait_with_output().unwrap();
        writer.join().unwrap();
        Run::from(output)
    }

    /// Run `tl` and return the "node" field of its JSON result.
    #[track_caller]
    pub fn append(&self, role: &str, text: &str, tokens: u64) -> String {
        let run = self.tl(&[
            "append",
            "--role",
            role,
            "--text",
            text,
            "--tokens",
            &tokens.to_string(),
        ]);
        run.json()["node"].as_str().unwrap().to_string()
    }

    /// A database with `TIMELINE_NOW` fixed to `now` (reproducible audit timestamps) and one
    /// timeline, tl0.
    #[track_caller]
    pub fn created_at(now: &str) -> Db {
        let mut db = Db::new();
        db.env("TIMELINE_NOW", now);
        db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
        db
    }

    /// Fill this new database from the JSON snapshot file `snapshot` in one go (instead of one
    /// `tl` run per message): a copy for the JSON engine, `tl db convert` for the others.
    #[track_caller]
    pub fn fill_from_snapshot(&self, snapshot: &Path) {
        if self.engine() == Engine::Json {
            std::fs::copy(snapshot, &self.path).unwrap();
            return;
        }
        let out = Command::new(TL)
            .arg("--db")
            .arg(snapshot)
            .args(["db", "convert", "--to"])
            .arg(&self.path)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }

    pub fn engine(&self) -> Engine {
        if timeline::store::is_uri(&self.path.to_string_lossy()) {
            return Engine::Postgres;
        }
        if self.path.extension().is_some_and(|e| e == "json") {
            Engine::Json
        } else {
            Engine::Sqlite
        }
    }

    /// What a change alters (see `stored_state`); empty when there is no database.
    pub fn bytes(&self) -> Vec<u8> {
        stored_state(&self.path).unwrap_or_default()
    }

    /// The database in the snapshot format, parsed as JSON (either engine).
    #[track_caller]
    pub fn value(&self) -> serde_json::Value {
        serde_json::from_slice(&self.bytes()).unwrap()
    }

    /// The JSON engine's `.bak` file (which must exist); `None` on SQLite, which keeps no such file.
    #[track_caller]
    pub fn json_backup(&self) -> Option<Vec<u8>> {
        (self.engine() == Engine::Json).then(|| std::fs::read(self.backup_path()).unwrap())
    }

    pub fn backup_path(&self) -> PathBuf {
        PathBuf::from(format!("{}.bak", self.path.display()))
    }
}

/// How long a read from `tl-mcp` may wait: a server that stalls fails the test instead of hanging it.
/// A guard against a hang, not a performance assertion: a correct server answers in milliseconds.
pub const MCP_STALL_GUARD: Duration = Duration::from_secs(60);

/// The one driver of a running `tl-mcp` for every test: line-delimited JSON-RPC over its pipes.
/// Its stdout is read by a thread (so a read can time out) and its stderr is kept. `start` and
/// `spawn` initialize at protocol 2025-11-25; `open` and `open_command` leave that to the test.
/// The `try_` methods return what went wrong instead of panicking (the conformance runner reports
/// it with the case and step).
pub struct McpSession {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    stderr_reader: Option<JoinHandle<()>>,
    next_id: u64,
}

impl McpSession {
    /// `tl-mcp --db <db>`, initialized.
    pub fn start(db: &Db) -> McpSession {
        let mut cmd = db.command(TL_MCP);
        cmd.arg("--db").arg(&db.path);
        McpSession::spawn(cmd)
    }

    /// A `tl-mcp` command line made by the caller (another binary, another user), initialized.
    pub fn spawn(cmd: Command) -> McpSession {
        let mut mcp = McpSession::open_command(cmd);
        mcp.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}),
        );
        mcp.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        mcp
    }

    /// `tl-mcp --db <db>`, not initialized.
    pub fn open(db: &Db) -> McpSession {
        let mut cmd = db.command(TL_MCP);
        cmd.arg("--db").arg(&db.path);
        McpSession::open_command(cmd)
    }

    /// A command line made by the caller, not initialized.
    pub fn open_command(cmd: Command) -> McpSession {
        McpSession::try_open_command(cmd).unwrap()
    }

    pub fn try_open_command(mut cmd: Command) -> Result<McpSession, String> {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start {cmd:?}: {e}"))?;
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut line = String::new();
                match reader.read_line(&mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        if tx.send(line).is_err() {
                            break;
                        }
                    }
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut pipe = child.stderr.take().unwrap();
        let sink = stderr.clone();
        let stderr_reader = std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n @ 1..) = pipe.read(&mut chunk) {
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&chunk[..n]));
            }
        });
        Ok(McpSession {
            stdin: child.stdin.take(),
            child,
            lines,
            stderr,
            stderr_reader: Some(stderr_reader),
            next_id: 1,
        })
    }

    /// Open `tl-mcp --db <db>` and negotiate `version`, checking the exact answer.
    pub fn init(db: &Db, version: &str) -> McpSession {
        let mut mcp = McpSession::open(db);
        mcp.initialize(version, version);
        mcp
    }

    /// Ask for protocol `requested`, check that exactly `expected` is negotiated, and send
    /// `notifications/initialized`.
    #[track_caller]
    pub fn initialize(&mut self, requested: &str, expected: &str) {
        self.ask(
            &format!(
                r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{requested}","capabilities":{{}},"clientInfo":{{"name":"test","version":"0"}}}}}}"#
            ),
            &format!(
                r#"{{"jsonrpc":"2.0","id":0,"result":{{"protocolVersion":"{expected}","capabilities":{{"tools":{{"listChanged":false}}}},"serverInfo":{{"name":"timeline","version":"{}"}},"instructions":{}}}}}"#,
                env!("CARGO_PKG_VERSION"),
                json!(timeline::spec::spec().mcp_instructions)
            ),
        );
        self.send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    }

    /// A request ID not used before in this session.
    pub fn fresh_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// What the server has written to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Write `bytes` and a newline.
    pub fn try_send_bytes(&mut self, bytes: &[u8]) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("stdin already closed")?;
        stdin
            .write_all(bytes)
            .and_then(|()| stdin.write_all(b"\n"))
            .and_then(|()| stdin.flush())
            .map_err(|e| {
                format!(
                    "cannot write to tl-mcp ({e}); it may have exited. stderr: {}",
                    self.stderr()
                )
            })
    }

    /// Write `bytes` exactly as they are.
    #[track_caller]
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Write one line (the newline is added).
    #[track_caller]
    pub fn send(&mut self, line: &str) {
        self.send_raw(format!("{line}\n").as_bytes());
    }

    /// The next line of output, with its newline, within `MCP_STALL_GUARD`.
    pub fn try_recv(&mut self) -> Result<String, String> {
        self.lines.recv_timeout(MCP_STALL_GUARD).map_err(|_| {
            format!(
                "tl-mcp sent no response (it exited or stalled). stderr: {}",
                self.stderr()
            )
        })
    }

    /// The next line of output, without its newline.
    #[track_caller]
    pub fn recv(&mut self) -> String {
        let mut line = self.try_recv().unwrap_or_else(|problem| {
            let _ = self.child.kill();
            panic!("{problem}")
        });
        assert!(line.ends_with('\n'), "unterminated line {line:?}");
        line.pop();
        line
    }

    /// Send `line` and assert that the answer is exactly `expected`.
    #[track_caller]
    pub fn ask(&mut self, line: &str, expected: &str) {
        self.send(line);
        assert_eq!(self.recv(), expected, "answer to {line}");
    }

    /// Send `line` and return the answer parsed.
    #[track_caller]
    pub fn ask_json(&mut self, line: &str) -> Value {
        self.send(line);
        serde_json::from_str(&self.recv()).unwrap()
    }

    /// Assert that nothing was written since the last answer: the next line answers a fresh ping.
    #[track_caller]
    pub fn assert_silent(&mut self) {
        self.ask(
            r#"{"jsonrpc":"2.0","id":"silence","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":"silence","result":{}}"#,
        );
    }

    /// Call a tool with request ID `id` and return the exact answer line.
    pub fn call_line(&mut self, id: u64, tool: &str, arguments: &str) -> String {
        self.send(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
        ));
        self.recv()
    }

    /// Send a request with a fresh ID and return its response.
    #[track_caller]
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.fresh_id();
        self.ask_json(
            &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string(),
        )
    }

    /// A tool's structured result, or `Err` with its error object (`isError: true`).
    pub fn call(&mut self, tool: &str, arguments: Value) -> Result<Value, Value> {
        let answer = self.request("tools/call", json!({"name": tool, "arguments": arguments}));
        let result = &answer["result"];
        assert!(result.is_object(), "{answer}");
        let structured = result["structuredContent"].clone();
        let text: Value =
            serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, structured);
        if result["isError"] == json!(true) {
            Err(structured)
        } else {
            Ok(structured)
        }
    }

    #[track_caller]
    pub fn ok(&mut self, tool: &str, arguments: Value) -> Value {
        self.call(tool, arguments)
            .unwrap_or_else(|e| panic!("{tool} failed: {e}"))
    }

    /// Kill the server and return all it wrote to stderr.
    pub fn stderr_now(&mut self) -> String {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(reader) = self.stderr_reader.take() {
            let _ = reader.join();
        }
        self.stderr()
    }

    /// Close standard input; return the exit code, the rest of stdout and all of stderr.
    pub fn finish(mut self) -> (i32, String, String) {
        drop(self.stdin.take());
        let mut rest = String::new();
        while let Ok(line) = self.lines.recv_timeout(MCP_STALL_GUARD) {
            rest.push_str(&line);
        }
        let code = self.child.wait().unwrap().code().unwrap_or(-1);
        if let Some(reader) = self.stderr_reader.take() {
            reader.join().unwrap();
        }
        (code, rest, self.stderr())
    }

    /// Close standard input and let the server exit (killing it after 30 s).
    pub fn close(mut self) {
        drop(self.stdin.take());
        for _ in 0..600 {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Run `tl-mcp --db <db>` with `lines` on standard input (one message each) until it exits, assert
/// that it succeeded, and return its stdout.
#[track_caller]
pub fn mcp_transcript(db: &Db, lines: &[&str]) -> String {
    let mut mcp = McpSession::open(db);
    for line in lines {
        mcp.send(line);
    }
    let (code, stdout, stderr) = mcp.finish();
    assert_eq!(code, 0, "{stdout}{stderr}");
    stdout
}

impl Drop for McpSession {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `cmd`'s output. Under Wine, starting a process now and then fails with ERROR_INTERNAL_ERROR
/// (1359) when the machine is loaded; nothing ran then, so it is started again.
pub fn output_of(cmd: &mut Command) -> std::process::Output {
    started(|| cmd.output())
}

/// `cmd` started (see [`output_of`] for why a start is tried again under Wine).
pub fn spawn(cmd: &mut Command) -> std::process::Child {
    started(|| cmd.spawn())
}

/// `cmd`'s output, or why it could not start (tried again as [`output_of`] is).
pub fn try_output_of(cmd: &mut Command) -> std::io::Result<std::process::Output> {
    retried(|| cmd.output())
}

/// What `start` gives, tried up to six times while Wine fails it with ERROR_INTERNAL_ERROR.
fn started<T>(start: impl FnMut() -> std::io::Result<T>) -> T {
    retried(start).unwrap()
}

fn retried<T>(mut start: impl FnMut() -> std::io::Result<T>) -> std::io::Result<T> {
    let mut tries = 0;
    loop {
        match start() {
            Err(e) if e.raw_os_error() == Some(1359) && cfg!(windows) && tries < 5 => tries += 1,
            other => return other,
        }
    }
}

/// PostgreSQL servers: the shared one of `postgres.rs`, one of its own per fault test or benchmark,
/// and the TLS server.
#[cfg(unix)]
pub mod pg_server;
#[cfg(target_os = "linux")]
pub mod pg_tls;
/// A PgBouncer in transaction mode in front of the shared server.
#[cfg(unix)]
pub mod pgbouncer;
