//! Timeline performance harness: `cargo bench --bench timeline` (see docs/performance.md).
//!
//! One run measures both storage engines (SQLite, and the JSON snapshot) at 100, 10k and 100k
//! messages, in two shapes: one long timeline, and many short timelines of 50 messages. Every number
//! is what a user or an MCP client waits for:
//!
//! - `tl append`, `context`, `budget` and `branches` as whole processes (the release `tl` binary
//!   spawned; median of several runs); `context` and `budget` on a 50-message path inside the big
//!   database;
//! - `timeline_append` per call in one long-lived `tl-mcp` session (initialize, then many calls);
//! - bytes written to disk per append, measured in this process through the library (`wchar` of
//!   `/proc/self/io` around one `service::execute` append);
//! - beside them, in the same run: the `sqlite3` shell doing one durable insert (WAL,
//!   `synchronous=FULL`) into a table of the same row count, timed as a whole process like
//!   `tl append`, and the MCP reference memory server (`@modelcontextprotocol/server-memory`, pinned
//!   below, installed with npm under `target/bench-tools`) adding one observation per call over stdio
//!   to a store of the same size;
//! - the quadratic shapes of issue 12 (many branches, advanced watermarks, thousands of summaries over
//!   one range) on both engines;
//! - the ratios the SQLite engine is held to, each marked met or not met.
//!
//! Databases are built in this process through the library (an in-memory `Database` written by
//! `Store::create_from`, which picks the engine by extension) and cached under
//! `target/bench-fixtures`, keyed by shape, size and storage format, so a rerun only measures.
//!
//! `TIMELINE_BENCH_QUICK=1` measures 100 and 10k messages only, `TIMELINE_BENCH_SIZES=100,5000`
//! picks sizes (multiples of 50), `TIMELINE_BENCH_KEEP=1` keeps the working copies,
//! `TIMELINE_BENCH_APPEND=1` and `TIMELINE_BENCH_SEARCH=1` measure only the fixed costs of an append
//! or the search worst cases (issue 24). Under
//! `cargo test --all-targets` (no `--bench` argument) a tiny smoke pass runs instead, with one run
//! per row and no memory server (no npm needed); it never asserts anything about time.

use serde_json::{Map, Value, json};
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};
use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use timeline::model::{
    Branch, Database, Node, ROOT, Role, Summary, SummaryKind, Timeline, estimate_tokens,
};
use timeline::service::{self, Request};
use timeline::spec::spec;
use timeline::spec::validate::Origin;
use timeline::store::{Engine, Store};

#[path = "timeline/fixed_costs.rs"]
mod fixed_costs;
#[path = "timeline/million.rs"]
mod million;
#[path = "timeline/postgres.rs"]
mod postgres;
#[path = "timeline/search_worst.rs"]
mod search_worst;

/// Bump when the fixtures below change shape, so cached files are rebuilt.
const FIXTURE_VERSION: u32 = 3;
/// The creation time of every generated message (2026-01-01T00:00:00Z).
const NOW: u64 = 1_767_225_600;
/// The MCP reference server, pinned.
const MEMORY_PACKAGE: &str = "@modelcontextprotocol/server-memory";
const MEMORY_VERSION: &str = "2026.8.31";
/// Messages per timeline in the "short" shape, and the length of the path `context` and `budget`
/// read in every shape.
const SHORT: usize = 50;
/// The MCP protocol version both servers are asked for.
const PROTOCOL: &str = "2025-06-18";
/// How long a server may take to answer one request before the harness gives up on it.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(120);

// ---------------------------------------------------------------------------------------------
// Texts and fixtures

/// A message text of 150 to 450 bytes (about 40 to 110 tokens), varied but deterministic.
fn message_text(i: usize) -> String {
    const WORDS: [&str; 12] = [
        "timeline",
        "branch",
        "context",
        "budget",
        "summary",
        "message",
        "token",
        "archive",
        "pin",
        "watermark",
        "placeholder",
        "node",
    ];
    let words = 25 + (i * 7919) % 50;
    let mut text = format!("Message {i}:");
    for w in 0..words {
        text.push(' ');
        text.push_str(WORDS[(i + w * 31) % WORDS.len()]);
    }
    text
}

/// The text of one measured append, insert or observation: exactly 300 bytes, unique per call.
fn append_text(i: usize) -> String {
    let mut text = format!("Appended message {i} of the benchmark:");
    let filler = " the quick brown fox jumps over the lazy dog";
    while text.len() < 300 {
        text.push_str(filler);
    }
    text.truncate(300);
    text
}

fn message_node(parent: u64, i: usize) -> Node {
    let text = message_text(i);
    Node {
        parent,
        role: if i.is_multiple_of(2) {
            Role::User
        } else {
            Role::Assistant
        },
        tokens: estimate_tokens(&text),
        text,
        created_at: Some(NOW),
        intent: None,
        provenance: None,
        summary: None,
        cold: false,
    }
}

/// A real summary of `from..=to` (a sibling of `from`, whose parent is `parent`).
fn summary_node(parent: u64, from: u64, to: u64, text: String) -> Node {
    Node {
        parent,
        role: Role::Summary,
        tokens: estimate_tokens(&text),
        text,
        created_at: Some(NOW),
        intent: None,
        provenance: None,
        summary: Some(Summary {
            kind: SummaryKind::Real,
            from,
            to,
            derived_from: Vec::new(),
            supersedes: None,
            version: 1,
        }),
        cold: false,
    }
}

/// Timeline `id` whose main branch is a chain of `messages` messages, texts `first_text + 1..`.
fn chain(id: u64, messages: usize, first_text: usize) -> Timeline {
    let mut nodes = Vec::with_capacity(messages + 1);
    nodes.push(Node::root());
    for k in 1..=messages {
        nodes.push(message_node(k as u64 - 1, first_text + k));
    }
    let main = spec().constants.first_branch.clone();
    Timeline {
        id,
        title: None,
        created_at: Some(NOW),
        updated_at: Some(NOW),
        nodes,
        archived: Vec::new(),
        branches: vec![Branch {
            name: main.clone(),
            head: messages as u64,
            watermark: ROOT,
        }],
        current_branch: main,
        pins: BTreeSet::new(),
        derived: Default::default(),
    }
}

fn database(mut timelines: Vec<Timeline>) -> Database {
    for t in &mut timelines {
        t.rebuild().expect("a consistent benchmark timeline");
    }
    Database {
        next_timeline: timelines.len() as u64,
        timelines,
        ..Database::default()
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Shape {
    /// One timeline whose main branch holds every message.
    Long,
    /// Timelines of 50 messages each.
    Short,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::Long => "long",
            Shape::Short => "short",
        }
    }

    fn build(self, messages: usize) -> Database {
        match self {
            Shape::Long => database(vec![chain(0, messages, 0)]),
            Shape::Short => database(
                (0..messages / SHORT)
                    .map(|t| chain(t as u64, SHORT, t * SHORT))
                    .collect(),
            ),
        }
    }

    /// The timeline every row of this shape works on, and the tokens of its 50-message path n1..n50.
    fn target(self, messages: usize) -> (String, u64) {
        let (timeline, first_text) = match self {
            Shape::Long => (0, 0),
            Shape::Short => {
                let last = messages / SHORT - 1;
                (last, last * SHORT)
            }
        };
        let tokens = (1..=SHORT)
            .map(|k| estimate_tokens(&message_text(first_text + k)))
            .sum();
        (format!("tl{timeline}"), tokens)
    }
}

/// One timeline: a chain of `chain_len` messages and `branches` more branches whose heads are spread
/// over it (issue 12: duplicate branch names were checked pairwise).
fn many_branches(chain_len: usize, branches: usize) -> Database {
    let mut t = chain(0, chain_len, 0);
    for i in 0..branches {
        t.branches.push(Branch {
            name: format!("b{i:06}"),
            head: 1 + (i * 7919 % chain_len) as u64,
            watermark: ROOT,
        });
    }
    database(vec![t])
}

/// One timeline: a chain of `chain_len` messages, one summary of n1..n`covered`, and `branches` more
/// branches with heads beyond it whose watermarks (and main's) have advanced to n`covered` (issue 12:
/// every load walked each branch's path to its watermark).
fn advanced_watermarks(chain_len: usize, covered: usize, branches: usize) -> Database {
    let mut t = chain(0, chain_len, 0);
    let covered = covered as u64;
    t.nodes.push(summary_node(
        ROOT,
        1,
        covered,
        format!("Summary of n1..n{covered}: {}", message_text(chain_len + 1)),
    ));
    t.branches[0].watermark = covered;
    let tail = chain_len - covered as usize;
    for i in 0..branches {
        t.branches.push(Branch {
            name: format!("w{i:05}"),
            head: covered + 1 + (i * 7919 % tail) as u64,
            watermark: covered,
        });
    }
    database(vec![t])
}

/// One timeline: a chain of `chain_len` messages and `summaries` different real summaries of the same
/// range n1..n`covered` (issue 12: reads took seconds).
fn many_summaries(chain_len: usize, covered: usize, summaries: usize) -> Database {
    let mut t = chain(0, chain_len, 0);
    for s in 0..summaries {
        t.nodes.push(summary_node(
            ROOT,
            1,
            covered as u64,
            format!("Summary {s} of n1..n{covered}: {}", message_text(s)),
        ));
    }
    t.branches[0].watermark = covered as u64;
    database(vec![t])
}

fn engine_name(engine: Engine) -> &'static str {
    match engine {
        Engine::Sqlite => "sqlite",
        Engine::Json => "json",
        Engine::Postgres => "postgres",
    }
}

fn engine_ext(engine: Engine) -> &'static str {
    match engine {
        // (The rows here use files; a PostgreSQL database has no extension.)
        Engine::Sqlite | Engine::Postgres => "db",
        Engine::Json => "json",
    }
}

fn remove_db(path: &Path) {
    for suffix in ["", "-wal", "-shm", ".bak", ".lock"] {
        let mut name = path.as_os_str().to_owned();
        name.push(suffix);
        let _ = fs::remove_file(PathBuf::from(name));
    }
}

fn with_suffix(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

// ---------------------------------------------------------------------------------------------
// Measuring

/// How many runs a row gets: `warmup` untimed, then at least `min` and at most `max` timed runs,
/// stopping after `min` once `budget` has been spent on the row. A first run slower than `slow`
/// seconds is kept as the row's only run (the pathological shapes take many seconds per call).
#[derive(Clone, Copy)]
struct Plan {
    warmup: usize,
    min: usize,
    max: usize,
    budget: Duration,
    slow: f64,
}

/// A median and the number of runs it came from.
#[derive(Clone, Copy)]
struct Measured {
    median: f64,
    runs: usize,
}

/// One row being measured: a run returns the measured value (seconds or bytes).
type Lane<'a> = Box<dyn FnMut() -> f64 + 'a>;

/// Measure several rows in turns (one run of each, then the next round), so that a burst of load
/// from other processes on a shared machine hits every row alike and their ratios stay fair.
fn interleave(plan: Plan, lanes: &mut [Lane]) -> Vec<Measured> {
    let n = lanes.len();
    let mut values: Vec<Vec<f64>> = vec![Vec::new(); n];
    let mut spent = vec![Duration::ZERO; n];
    let mut done = vec![false; n];
    for round in 0..plan.warmup {
        for (i, lane) in lanes.iter_mut().enumerate() {
            if done[i] {
                continue;
            }
            let value = lane();
            if round == 0 && value > plan.slow {
                values[i].push(value);
                done[i] = true;
            }
        }
    }
    for round in 0.. {
        let mut ran = false;
        // Each round starts one lane later, so no lane always runs right after the same other one.
        for k in 0..n {
            let i = (round + k) % n;
            let lane = &mut lanes[i];
            let runs = values[i].len();
            if done[i]
                || runs >= plan.max.max(1)
                || (runs >= plan.min.max(1) && spent[i] >= plan.budget)
            {
                continue;
            }
            let started = Instant::now();
            values[i].push(lane());
            spent[i] += started.elapsed();
            ran = true;
        }
        if !ran {
            break;
        }
    }
    values.into_iter().map(median).collect()
}

fn sample(plan: Plan, run: impl FnMut() -> f64) -> Measured {
    let mut lanes: Vec<Lane> = vec![Box::new(run)];
    interleave(plan, &mut lanes)[0]
}

fn median(mut values: Vec<f64>) -> Measured {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    let median = if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    };
    Measured { median, runs: n }
}

fn secs(start: Instant) -> f64 {
    start.elapsed().as_secs_f64()
}

/// Write every dirty page to disk (untimed), so no later measurement pays for an earlier one's.
fn settle() {
    let _ = Command::new("sync").status();
}

/// The load averages, to show how busy the machine was.
fn load_average() -> String {
    fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}

/// Bytes this process has passed to write(2) and friends so far (Linux), page cache or not.
fn wchar() -> Option<u64> {
    let io = fs::read_to_string("/proc/self/io").ok()?;
    io.lines()
        .find_map(|l| l.strip_prefix("wchar:"))
        .and_then(|v| v.trim().parse().ok())
}

/// One MCP server over stdio: requests out, one JSON message per line back. The answer is read on
/// the calling thread, so a timed call pays for the server's work and the pipe's two wake-ups, not
/// for a hop through a reader thread of the harness's own; a watchdog kills a server that does not
/// answer within `ANSWER_TIMEOUT`.
struct McpClient {
    child: Arc<Mutex<Child>>,
    pid: u32,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
    watchdog: Arc<Watchdog>,
    next_id: u64,
    what: String,
}

/// When the watchdog kills the server unless an answer came first, and whether it did kill it.
#[derive(Default)]
struct Watchdog {
    deadline: Mutex<Option<Instant>>,
    fired: AtomicBool,
    done: AtomicBool,
}

impl McpClient {
    fn spawn(mut command: Command, what: &str) -> Result<McpClient, String> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("cannot start {what}: {e}"))?;
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let stdin = child.stdin.take();
        let pid = child.id();
        let child = Arc::new(Mutex::new(child));
        let watchdog = Arc::new(Watchdog::default());
        {
            let (child, watchdog) = (Arc::clone(&child), Arc::clone(&watchdog));
            std::thread::spawn(move || {
                while !watchdog.done.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(100));
                    let late = watchdog
                        .deadline
                        .lock()
                        .expect("watchdog lock")
                        .is_some_and(|deadline| Instant::now() > deadline);
                    if late {
                        watchdog.fired.store(true, Ordering::Relaxed);
                        let _ = child.lock().expect("child lock").kill();
                        return;
                    }
                }
            });
        }
        let mut client = McpClient {
            child,
            pid,
            stdin,
            stdout,
            watchdog,
            next_id: 1,
            what: what.to_string(),
        };
        client.request(
            "initialize",
            json!({
                "protocolVersion": PROTOCOL,
                "capabilities": {},
                "clientInfo": {"name": "timeline-bench", "version": "1"},
            }),
        )?;
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))?;
        Ok(client)
    }

    fn send(&mut self, message: &Value) -> Result<(), String> {
        let stdin = self.stdin.as_mut().ok_or("stdin closed")?;
        let mut line = message.to_string();
        line.push('\n');
        stdin
            .write_all(line.as_bytes())
            .and_then(|()| stdin.flush())
            .map_err(|e| format!("{} stopped reading: {e}", self.what))
    }

    /// Send a request and wait for its answer (notifications in between are skipped).
    fn request(&mut self, method: &str, params: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        *self.watchdog.deadline.lock().expect("watchdog lock") =
            Some(Instant::now() + ANSWER_TIMEOUT);
        let answer = self.answer(method, id, params);
        *self.watchdog.deadline.lock().expect("watchdog lock") = None;
        answer
    }

    fn answer(&mut self, method: &str, id: u64, params: Value) -> Result<Value, String> {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))?;
        let mut line = String::new();
        loop {
            line.clear();
            let read = self.stdout.read_line(&mut line);
            if !matches!(read, Ok(n) if n > 0) {
                return Err(if self.watchdog.fired.load(Ordering::Relaxed) {
                    format!("{} gave no answer to {method}", self.what)
                } else {
                    format!("{} exited during {method}", self.what)
                });
            }
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message.get("id") != Some(&json!(id)) {
                continue;
            }
            if let Some(error) = message.get("error") {
                return Err(format!("{} answered {method} with {error}", self.what));
            }
            return Ok(message["result"].clone());
        }
    }

    /// Call a tool; a tool error (`isError`) is a failure of the benchmark.
    fn call(&mut self, tool: &str, arguments: Value) -> Result<Value, String> {
        let result = self.request("tools/call", json!({"name": tool, "arguments": arguments}))?;
        if result.get("isError") == Some(&Value::Bool(true)) {
            return Err(format!("{} failed {tool}: {result}", self.what));
        }
        Ok(result)
    }
}

impl Drop for McpClient {
    fn drop(&mut self) {
        self.watchdog.done.store(true, Ordering::Relaxed);
        // Closing stdin ends both servers; kill only if one does not exit in time.
        drop(self.stdin.take());
        let mut child = self.child.lock().expect("child lock");
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

// ---------------------------------------------------------------------------------------------
// Results

#[derive(Clone)]
enum Cell {
    Time(Measured),
    Bytes(Measured),
    /// Not measured, with the reason; `loud` ones are also announced at the end.
    Missing(String),
}

impl Cell {
    fn value(&self) -> Option<f64> {
        match self {
            Cell::Time(m) | Cell::Bytes(m) => Some(m.median),
            Cell::Missing(_) => None,
        }
    }

    fn text(&self) -> String {
        match self {
            Cell::Time(m) => fmt_secs(m.median),
            Cell::Bytes(m) => fmt_bytes(m.median),
            Cell::Missing(why) if why.starts_with("MISSING") => "**MISSING**".into(),
            Cell::Missing(why) => why.clone(),
        }
    }

    fn runs(&self) -> Option<usize> {
        match self {
            Cell::Time(m) | Cell::Bytes(m) => Some(m.runs),
            Cell::Missing(_) => None,
        }
    }
}

fn fmt_secs(s: f64) -> String {
    let us = s * 1e6;
    if us < 1_000.0 {
        format!("{us:.0} µs")
    } else if us < 100_000.0 {
        format!("{:.2} ms", us / 1_000.0)
    } else if us < 1_000_000.0 {
        format!("{:.0} ms", us / 1_000.0)
    } else {
        format!("{:.2} s", us / 1_000_000.0)
    }
}

fn fmt_bytes(b: f64) -> String {
    if b < 10_000.0 {
        format!("{b:.0} B")
    } else if b < 10.0 * 1024.0 * 1024.0 {
        format!("{:.0} KiB", b / 1024.0)
    } else {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    }
}

fn fmt_count(n: usize) -> String {
    if n >= 1000 && n.is_multiple_of(1000) {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

/// A row of the issue 12 table: one measurement on one shape, a cell per engine.
struct ShapeRow {
    shape: String,
    measurement: String,
    cells: Vec<(String, Cell)>,
}

/// Row key of the main table: measurement, shape, engine.
type Key = (String, String, String);

#[derive(Default)]
struct Results {
    order: Vec<Key>,
    cells: HashMap<(Key, usize), Cell>,
    /// Issue 12 shapes.
    shapes: Vec<ShapeRow>,
    /// Columns that could not be measured in a real run, printed loudly at the end.
    missing: Vec<String>,
}

impl Results {
    fn set(&mut self, measurement: &str, shape: &str, engine: &str, size: usize, cell: Cell) {
        let key = (
            measurement.to_string(),
            shape.to_string(),
            engine.to_string(),
        );
        if !self.order.contains(&key) {
            self.order.push(key.clone());
        }
        self.cells.insert((key, size), cell);
    }

    fn get(&self, measurement: &str, shape: &str, engine: &str, size: usize) -> Option<f64> {
        let key = (
            measurement.to_string(),
            shape.to_string(),
            engine.to_string(),
        );
        self.cells.get(&(key, size)).and_then(Cell::value)
    }

    fn shape_row(&mut self, shape: &str, measurement: &str, engine: &str, cell: Cell) {
        if let Some(row) = self
            .shapes
            .iter_mut()
            .find(|r| r.shape == shape && r.measurement == measurement)
        {
            row.cells.push((engine.to_string(), cell));
        } else {
            self.shapes.push(ShapeRow {
                shape: shape.to_string(),
                measurement: measurement.to_string(),
                cells: vec![(engine.to_string(), cell)],
            });
        }
    }

    fn print_main(&self, sizes: &[usize]) {
        println!("\n### Engines at each size (median; runs per size in the last column)\n");
        let mut header = String::from("| measurement | shape | engine |");
        let mut rule = String::from("| --- | --- | --- |");
        for &s in sizes {
            header.push_str(&format!(" {} |", fmt_count(s)));
            rule.push_str(" ---: |");
        }
        header.push_str(" runs |");
        rule.push_str(" --- |");
        println!("{header}\n{rule}");
        for key in &self.order {
            let mut line = format!("| {} | {} | {} |", key.0, key.1, key.2);
            let mut runs = Vec::new();
            for &s in sizes {
                let cell = self.cells.get(&(key.clone(), s));
                line.push_str(&format!(" {} |", cell.map_or("—".into(), Cell::text)));
                runs.push(
                    cell.and_then(Cell::runs)
                        .map_or("—".to_string(), |r| r.to_string()),
                );
            }
            line.push_str(&format!(" {} |", runs.join("/")));
            println!("{line}");
        }
    }

    fn print_shapes(&self) {
        println!("\n### Issue 12 shapes (median, runs in brackets)\n");
        println!("| shape | measurement | sqlite | json |");
        println!("| --- | --- | ---: | ---: |");
        for ShapeRow {
            shape,
            measurement,
            cells,
        } in &self.shapes
        {
            let cell = |engine: &str| {
                cells
                    .iter()
                    .find(|(e, _)| e == engine)
                    .map_or("—".to_string(), |(_, c)| match c.runs() {
                        Some(r) => format!("{} ({r})", c.text()),
                        None => c.text(),
                    })
            };
            println!(
                "| {shape} | {measurement} | {} | {} |",
                cell("sqlite"),
                cell("json")
            );
        }
    }
}

// Row names shared by the measurements and the ratios.
const TL_APPEND: &str = "`tl append` (process)";
const MCP_APPEND: &str = "`timeline_append` per call (one `tl-mcp` session)";
const CONTEXT: &str = "`tl context`, 50-message path (process)";
const BUDGET_FIRST: &str = "`tl budget`, 50-message path, first call (process)";
const BUDGET_REPEAT: &str = "`tl budget`, 50-message path, repeated (process)";
const BRANCHES: &str = "`tl branches` (process)";
const BYTES_OPEN: &str = "bytes written per append (open store)";
const BYTES_PROCESS: &str = "bytes written per append (open, append, close)";
const FILE_SIZE: &str = "database file size";
const SQLITE3_INSERT: &str = "reference: `sqlite3` shell, one durable insert (process)";
const MEMORY_ADD: &str = "reference: memory server `add_observations` per call";
const STARTUP: &str = "`tl --version` (process start-up alone)";

// ---------------------------------------------------------------------------------------------
// The harness

struct Bench {
    smoke: bool,
    tl: PathBuf,
    tl_mcp: PathBuf,
    cache: PathBuf,
    work: PathBuf,
    /// Suffix of cached fixture names: changes with the fixtures and the storage formats.
    key: String,
    sqlite3: Result<PathBuf, String>,
    /// `node` and the memory server's entry point.
    memory: Result<(PathBuf, PathBuf), String>,
    texts: std::cell::Cell<usize>,
    results: Results,
}

/// The working copies of one shape on one engine, one per size.
struct Copies {
    shape: Shape,
    engine: Engine,
    sizes: Vec<usize>,
    pristine: Vec<PathBuf>,
    work: Vec<PathBuf>,
}

impl Bench {
    fn process_plan(&self) -> Plan {
        if self.smoke {
            return Plan {
                warmup: 0,
                min: 1,
                max: 1,
                budget: Duration::ZERO,
                slow: f64::INFINITY,
            };
        }
        Plan {
            warmup: 1,
            min: 5,
            max: 61,
            budget: Duration::from_secs(2),
            slow: 2.0,
        }
    }

    fn call_plan(&self) -> Plan {
        if self.smoke {
            return self.process_plan();
        }
        Plan {
            warmup: 2,
            min: 7,
            max: 101,
            budget: Duration::from_secs(2),
            slow: 2.0,
        }
    }

    fn bytes_plan(&self) -> Plan {
        if self.smoke {
            return self.process_plan();
        }
        Plan {
            warmup: 0,
            min: 3,
            max: 9,
            budget: Duration::from_secs(2),
            slow: f64::INFINITY,
        }
    }

    fn next_text(&self) -> String {
        self.texts.set(self.texts.get() + 1);
        append_text(self.texts.get())
    }

    /// The cached fixture `name` for each engine, built (once, for all engines) when missing.
    fn fixtures(
        &self,
        name: &str,
        engines: &[Engine],
        build: impl FnOnce() -> Database,
    ) -> Vec<PathBuf> {
        let paths: Vec<PathBuf> = engines
            .iter()
            .map(|&e| {
                self.cache
                    .join(format!("{name}-{}.{}", self.key, engine_ext(e)))
            })
            .collect();
        if paths.iter().all(|p| p.exists()) {
            return paths;
        }
        let started = Instant::now();
        let db = build();
        let nodes: usize = db.timelines.iter().map(|t| t.nodes.len() - 1).sum();
        for path in &paths {
            if path.exists() {
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy();
            // Same extension as the final name: it picks the engine.
            let building = self
                .cache
                .join(format!(".building-{}-{name}", std::process::id()));
            remove_db(&building);
            Store::create_from(&building, &db).expect("write the benchmark database");
            // The file must load back as the database it was built from.
            let loaded =
                timeline::store::load_database(&building).expect("the benchmark database loads");
            assert!(
                loaded == db,
                "{name} does not load back as the database it was built from"
            );
            for suffix in ["-wal", "-shm", ".lock"] {
                let _ = fs::remove_file(with_suffix(&building, suffix));
            }
            fs::rename(&building, path).expect("move the benchmark database into the cache");
        }
        eprintln!(
            "built {name}: {} timeline(s), {nodes} nodes, in {}",
            db.timelines.len(),
            fmt_secs(secs(started))
        );
        paths
    }

    /// A private working copy of a cached fixture.
    fn working_copy(&self, pristine: &Path, name: &str) -> PathBuf {
        let ext = pristine.extension().unwrap().to_string_lossy().into_owned();
        let work = self.work.join(format!("{name}.{ext}"));
        remove_db(&work);
        fs::copy(pristine, &work).expect("copy the benchmark database");
        // On disk before anything is timed, so no timed fsync pays for writing the copy.
        // (Opened for writing: Windows refuses to flush a read-only handle.)
        fs::OpenOptions::new()
            .write(true)
            .open(&work)
            .and_then(|f| f.sync_all())
            .expect("sync the copy");
        work
    }

    /// Run `tl --db DB` with `args` and return its wall-clock time; a failure stops the benchmark.
    fn tl(&self, db: &Path, args: &[&str]) -> f64 {
        let mut full = vec!["--db", db.to_str().expect("a UTF-8 working directory")];
        full.extend_from_slice(args);
        self.tl_raw(&full)
    }

    fn tl_raw(&self, args: &[&str]) -> f64 {
        let started = Instant::now();
        let out = Command::new(&self.tl)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .expect("spawn tl");
        let elapsed = secs(started);
        assert!(
            out.status.success(),
            "tl {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        elapsed
    }

    /// A lane running `tl append` on `db`.
    fn append_lane<'a>(&'a self, db: &'a Path, timeline: &'a str) -> Lane<'a> {
        Box::new(move || {
            let text = self.next_text();
            self.tl(
                db,
                &[
                    "--timeline",
                    timeline,
                    "append",
                    "--role",
                    "user",
                    "--text",
                    &text,
                ],
            )
        })
    }

    /// A lane running a `tl` read (or a change that repeats itself) on `db`.
    fn tl_lane<'a>(&'a self, db: &'a Path, args: Vec<String>) -> Lane<'a> {
        Box::new(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            self.tl(db, &args)
        })
    }

    /// A lane calling `tool` in one long-lived MCP session; `arguments` makes each call's arguments.
    /// A failed call stops the benchmark, or, with `failed`, is recorded there and ends the lane's
    /// work (its later runs return at once).
    fn mcp_lane<'a>(
        &'a self,
        mut client: McpClient,
        tool: &'a str,
        failed: Option<&'a RefCell<Option<String>>>,
        arguments: impl Fn(String) -> Value + 'a,
    ) -> Lane<'a> {
        Box::new(move || {
            if failed.is_some_and(|f| f.borrow().is_some()) {
                return 0.0;
            }
            let args = arguments(self.next_text());
            let started = Instant::now();
            let answer = client.call(tool, args);
            let elapsed = secs(started);
            match (answer, failed) {
                (Ok(_), _) => elapsed,
                (Err(e), Some(failed)) => {
                    *failed.borrow_mut() = Some(e);
                    0.0
                }
                (Err(e), None) => panic!("{e}"),
            }
        })
    }

    fn append_request(&self, timeline: &str) -> Request<'static> {
        let mut args = Map::new();
        args.insert("timeline_id".into(), json!(timeline));
        args.insert("role".into(), json!("user"));
        args.insert("text".into(), json!(self.next_text()));
        Request {
            op: spec().operation("append").expect("append is in the spec"),
            args,
            idempotency_key: None,
            origin: Origin::Mcp,
        }
    }

    /// Bytes written per append through the library: on an open store (as `tl-mcp` does), and for a
    /// whole open-append-close (as one `tl append` process does, SQLite's checkpoint at close included).
    fn bytes_per_append(&self, db: &Path, timeline: &str) -> (Cell, Cell) {
        if wchar().is_none() {
            let why = "n/a (no /proc/self/io)".to_string();
            return (Cell::Missing(why.clone()), Cell::Missing(why));
        }
        let plan = self.bytes_plan();
        let mut store = Store::open(db.to_path_buf()).expect("the database opens");
        service::execute(&mut store, self.append_request(timeline)).expect("append succeeds");
        let open = sample(plan, || {
            let request = self.append_request(timeline);
            let before = wchar().unwrap();
            service::execute(&mut store, request).expect("append succeeds");
            (wchar().unwrap() - before) as f64
        });
        drop(store);
        let whole = sample(plan, || {
            let request = self.append_request(timeline);
            let before = wchar().unwrap();
            let mut store = Store::open(db.to_path_buf()).expect("the database opens");
            service::execute(&mut store, request).expect("append succeeds");
            drop(store);
            (wchar().unwrap() - before) as f64
        });
        (Cell::Bytes(open), Cell::Bytes(whole))
    }

    /// The reference table for the `sqlite3` shell: `rows` rows of 300 bytes, cached.
    fn sqlite3_table(&self, sqlite3: &Path, rows: usize) -> PathBuf {
        let pristine = self
            .cache
            .join(format!("reference-sqlite3-{rows}-v{FIXTURE_VERSION}.db"));
        if !pristine.exists() {
            let building = self.cache.join(format!(
                ".building-{}-reference-{rows}.db",
                std::process::id()
            ));
            remove_db(&building);
            let sql = format!(
                "PRAGMA journal_mode=WAL; CREATE TABLE messages (id INTEGER PRIMARY KEY, text TEXT NOT NULL); \
                 WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < {rows}) \
                 INSERT INTO messages (text) SELECT printf('Message %d: %s', i, substr(hex(randomblob(150)), 1, 286)) FROM c;"
            );
            let status = Command::new(sqlite3)
                .args(["-batch", "-bail"])
                .arg(&building)
                .arg(&sql)
                .stdout(Stdio::null())
                .status()
                .expect("run sqlite3");
            assert!(status.success(), "sqlite3 could not build its table");
            fs::rename(&building, &pristine).expect("move the reference table into the cache");
        }
        pristine
    }

    /// A lane running the `sqlite3` shell: one durable insert of a 300-byte row into `db`.
    fn sqlite3_lane<'a>(&'a self, sqlite3: &'a Path, db: &'a Path) -> Lane<'a> {
        Box::new(move || {
            let text = self.next_text();
            let sql = format!(
                "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; INSERT INTO messages (text) VALUES ('{text}');"
            );
            let started = Instant::now();
            let status = Command::new(sqlite3)
                .args(["-batch", "-bail"])
                .arg(db)
                .arg(&sql)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .status()
                .expect("run sqlite3");
            let elapsed = secs(started);
            assert!(status.success(), "sqlite3 insert failed");
            elapsed
        })
    }

    /// The memory server's store for `size` observations grouped like the timelines of `shape` (one
    /// entity, or entities of 50 observations); returns the entity the calls add to.
    fn memory_store(&self, shape: Shape, size: usize, path: &Path) -> String {
        let groups = match shape {
            Shape::Long => 1,
            Shape::Short => size / SHORT,
        };
        let per_group = size / groups;
        let mut jsonl = String::new();
        for g in 0..groups {
            let observations: Vec<String> = (0..per_group)
                .map(|k| message_text(g * per_group + k + 1))
                .collect();
            let line = json!({
                "type": "entity",
                "name": format!("conversation-{g}"),
                "entityType": "conversation",
                "observations": observations,
            });
            jsonl.push_str(&line.to_string());
            jsonl.push('\n');
        }
        fs::write(path, jsonl).expect("write the memory server's store");
        format!("conversation-{}", groups - 1)
    }

    /// Every size of one shape on one engine, each measurement interleaved over the sizes. On the
    /// SQLite pass the references run as more lanes of the same turns: the `sqlite3` shell beside
    /// `tl append`, the memory server beside `timeline_append`.
    fn measure_engine(&mut self, copies: &Copies) {
        let (s, e) = (copies.shape.name(), engine_name(copies.engine));
        let started = Instant::now();
        let n = copies.sizes.len();
        let targets: Vec<(String, u64)> = copies
            .sizes
            .iter()
            .map(|&size| copies.shape.target(size))
            .collect();
        let node = format!("n{SHORT}");
        let references = copies.engine == Engine::Sqlite;
        let mut rows: Vec<(&str, &str, usize, Cell)> = Vec::new();

        // `tl append`, and the sqlite3 shell's insert.
        let sqlite3 = self.sqlite3.clone();
        let tables: Vec<PathBuf> = match (&sqlite3, references) {
            (Ok(shell), true) => copies
                .sizes
                .iter()
                .map(|&size| {
                    let table = self.sqlite3_table(shell, size);
                    self.working_copy(&table, &format!("reference-{s}-{size}"))
                })
                .collect(),
            _ => Vec::new(),
        };
        {
            let mut lanes: Vec<Lane> = (0..n)
                .map(|i| self.append_lane(&copies.work[i], &targets[i].0))
                .collect();
            if let Ok(shell) = &sqlite3 {
                lanes.extend(tables.iter().map(|t| self.sqlite3_lane(shell, t)));
            }
            let measured = interleave(self.process_plan(), &mut lanes);
            for (i, m) in measured.into_iter().enumerate() {
                if i < n {
                    rows.push((TL_APPEND, e, copies.sizes[i], Cell::Time(m)));
                } else {
                    rows.push((
                        SQLITE3_INSERT,
                        "sqlite3",
                        copies.sizes[i - n],
                        Cell::Time(m),
                    ));
                }
            }
        }
        for table in &tables {
            remove_db(table);
        }
        if references && let Err(why) = &sqlite3 {
            for &size in &copies.sizes {
                rows.push((SQLITE3_INSERT, "sqlite3", size, Cell::Missing(why.clone())));
            }
        }

        // `timeline_append` in one tl-mcp session per size.
        {
            let mut lanes: Vec<Lane> = Vec::new();
            for (work, (timeline, _)) in copies.work.iter().zip(&targets) {
                let mut command = Command::new(&self.tl_mcp);
                command.arg("--db").arg(work);
                let client = McpClient::spawn(command, "tl-mcp").expect("tl-mcp starts");
                let timeline = timeline.clone();
                lanes.push(self.mcp_lane(
                    client,
                    "timeline_append",
                    None,
                    move |text| json!({"timeline_id": timeline, "role": "user", "text": text}),
                ));
            }
            for (i, m) in interleave(self.call_plan(), &mut lanes)
                .into_iter()
                .enumerate()
            {
                rows.push((MCP_APPEND, e, copies.sizes[i], Cell::Time(m)));
            }
            // Dropping the lanes ends the servers.
        }

        // The memory server's add_observations, in a pass of its own: it rewrites its whole file on
        // every call without syncing it, and the kernel's writeback of those bytes would land on
        // whichever lane came next.
        if references {
            let memory = match (&self.memory, self.smoke) {
                (_, true) => Err("not in the smoke pass".to_string()),
                (Err(why), _) => Err(why.clone()),
                (Ok(found), false) => Ok(found.clone()),
            };
            match memory {
                Err(why) => {
                    for &size in &copies.sizes {
                        let cell = Cell::Missing(why.clone());
                        rows.push((MEMORY_ADD, "memory server", size, cell));
                    }
                }
                Ok((node_program, entry)) => {
                    // A server that fails to start or to answer makes its cells MISSING, loudly;
                    // the rest of the benchmark goes on.
                    let failures: Vec<RefCell<Option<String>>> =
                        copies.sizes.iter().map(|_| RefCell::default()).collect();
                    let mut lanes: Vec<Lane> = Vec::new();
                    for (&size, failed) in copies.sizes.iter().zip(&failures) {
                        let store = self.work.join(format!("memory-{s}-{size}.jsonl"));
                        let entity = self.memory_store(copies.shape, size, &store);
                        let mut command = Command::new(&node_program);
                        command.arg(&entry).env("MEMORY_FILE_PATH", &store);
                        match McpClient::spawn(command, "the memory server") {
                            Ok(client) => lanes.push(self.mcp_lane(
                                client,
                                "add_observations",
                                Some(failed),
                                move |text| {
                                    json!({"observations": [{"entityName": entity, "contents": [text]}]})
                                },
                            )),
                            Err(e) => {
                                *failed.borrow_mut() = Some(e);
                                lanes.push(Box::new(|| 0.0));
                            }
                        }
                    }
                    let measured = interleave(self.call_plan(), &mut lanes);
                    drop(lanes);
                    for ((m, &size), failed) in
                        measured.into_iter().zip(&copies.sizes).zip(&failures)
                    {
                        match failed.take() {
                            None => rows.push((MEMORY_ADD, "memory server", size, Cell::Time(m))),
                            Some(e) => {
                                let why = format!(
                                    "MISSING: the memory server failed at {} ({s}): {e}",
                                    fmt_count(size)
                                );
                                eprintln!("\n!!!!! {why} !!!!!\n");
                                self.results.missing.push(why.clone());
                                rows.push((MEMORY_ADD, "memory server", size, Cell::Missing(why)));
                            }
                        }
                    }
                    for &size in &copies.sizes {
                        let _ = fs::remove_file(self.work.join(format!("memory-{s}-{size}.jsonl")));
                    }
                    settle();
                }
            }
        }

        // Reads: context of the 50-message path, and branches.
        for (row, args) in [
            (CONTEXT, vec!["context", "--node", &node]),
            (BRANCHES, vec!["branches"]),
        ] {
            let mut lanes: Vec<Lane> = (0..n)
                .map(|i| {
                    let mut full = vec!["--timeline".to_string(), targets[i].0.clone()];
                    full.extend(args.iter().map(|a| a.to_string()));
                    self.tl_lane(&copies.work[i], full)
                })
                .collect();
            for (i, m) in interleave(self.process_plan(), &mut lanes)
                .into_iter()
                .enumerate()
            {
                rows.push((row, e, copies.sizes[i], Cell::Time(m)));
            }
        }

        // Budget on the 50-message path with half its tokens: a first call on a fresh copy (it
        // creates placeholders), then the same call again (it reuses them).
        {
            let repeats: Vec<std::cell::RefCell<Vec<f64>>> =
                (0..n).map(|_| Default::default()).collect();
            let mut lanes: Vec<Lane> = (0..n)
                .map(|i| {
                    let args = [
                        "--timeline".to_string(),
                        targets[i].0.clone(),
                        "budget".into(),
                        "--node".into(),
                        node.clone(),
                        "--max".into(),
                        (targets[i].1 / 2).to_string(),
                    ];
                    let pristine = &copies.pristine[i];
                    let repeats = &repeats[i];
                    let name = format!("budget-{s}-{e}-{}", copies.sizes[i]);
                    let this = &*self;
                    Box::new(move || {
                        let db = this.working_copy(pristine, &name);
                        let args: Vec<&str> = args.iter().map(String::as_str).collect();
                        let first = this.tl(&db, &args);
                        repeats.borrow_mut().push(this.tl(&db, &args));
                        remove_db(&db);
                        first
                    }) as Lane
                })
                .collect();
            let firsts = interleave(self.process_plan(), &mut lanes);
            drop(lanes);
            for (i, first) in firsts.into_iter().enumerate() {
                // The repeats of the timed runs (warm-up runs come first).
                let all = repeats[i].take();
                let timed = all[all.len() - first.runs..].to_vec();
                rows.push((BUDGET_FIRST, e, copies.sizes[i], Cell::Time(first)));
                rows.push((BUDGET_REPEAT, e, copies.sizes[i], Cell::Time(median(timed))));
            }
        }

        // Bytes written per append, in this process, on a fresh copy (the working copies have grown
        // by the appends above, which matters for the JSON engine's small files).
        for ((pristine, (timeline, _)), &size) in
            copies.pristine.iter().zip(&targets).zip(&copies.sizes)
        {
            let db = self.working_copy(pristine, &format!("bytes-{s}-{e}-{size}"));
            let (open, whole) = self.bytes_per_append(&db, timeline);
            remove_db(&db);
            rows.push((BYTES_OPEN, e, size, open));
            rows.push((BYTES_PROCESS, e, size, whole));
        }

        for (i, &size) in copies.sizes.iter().enumerate() {
            let bytes = fs::metadata(&copies.pristine[i]).map_or(0, |m| m.len()) as f64;
            let cell = Cell::Bytes(Measured {
                median: bytes,
                runs: 1,
            });
            self.results.set(FILE_SIZE, s, e, size, cell);
        }
        // Rows in a fixed order, whatever order they were measured in.
        for row in [
            TL_APPEND,
            MCP_APPEND,
            CONTEXT,
            BUDGET_FIRST,
            BUDGET_REPEAT,
            BRANCHES,
            BYTES_OPEN,
            BYTES_PROCESS,
            SQLITE3_INSERT,
            MEMORY_ADD,
        ] {
            for (name, engine, size, cell) in &rows {
                if *name == row {
                    self.results.set(row, s, engine, *size, cell.clone());
                }
            }
        }
        eprintln!(
            "measured {s} on {e} at {} in {}",
            copies
                .sizes
                .iter()
                .map(|&n| fmt_count(n))
                .collect::<Vec<_>>()
                .join(", "),
            fmt_secs(secs(started))
        );
    }

    /// One shape at every size on both engines.
    fn measure_shape(&mut self, shape: Shape, sizes: &[usize]) {
        let engines = [Engine::Sqlite, Engine::Json];
        let fixtures: Vec<Vec<PathBuf>> = sizes
            .iter()
            .map(|&size| {
                self.fixtures(&format!("{}-{size}", shape.name()), &engines, || {
                    shape.build(size)
                })
            })
            .collect();
        for (k, &engine) in engines.iter().enumerate() {
            let pristine: Vec<PathBuf> = fixtures.iter().map(|f| f[k].clone()).collect();
            let work = sizes
                .iter()
                .zip(&pristine)
                .map(|(&size, p)| {
                    self.working_copy(
                        p,
                        &format!("{}-{size}-{}", shape.name(), engine_name(engine)),
                    )
                })
                .collect();
            let copies = Copies {
                shape,
                engine,
                sizes: sizes.to_vec(),
                pristine,
                work,
            };
            self.measure_engine(&copies);
            for w in &copies.work {
                remove_db(w);
            }
        }
    }

    /// One row of the issue 12 table: `args` run on each engine's copy, interleaved.
    fn shape_rows(
        &mut self,
        shape: &str,
        measurement: &str,
        dbs: &[(Engine, PathBuf)],
        args: &[&str],
    ) {
        let mut lanes: Vec<Lane> = dbs
            .iter()
            .map(|(_, db)| self.tl_lane(db, args.iter().map(|a| a.to_string()).collect()))
            .collect();
        let measured = interleave(self.process_plan(), &mut lanes);
        drop(lanes);
        for ((engine, _), m) in dbs.iter().zip(measured) {
            self.results
                .shape_row(shape, measurement, engine_name(*engine), Cell::Time(m));
        }
    }

    fn shape_appends(&mut self, shape: &str, dbs: &[(Engine, PathBuf)]) {
        let mut lanes: Vec<Lane> = dbs
            .iter()
            .map(|(_, db)| self.append_lane(db, "tl0"))
            .collect();
        let measured = interleave(self.process_plan(), &mut lanes);
        drop(lanes);
        for ((engine, _), m) in dbs.iter().zip(measured) {
            self.results
                .shape_row(shape, "`tl append`", engine_name(*engine), Cell::Time(m));
        }
    }

    fn copies(
        &self,
        name: &str,
        engines: &[Engine],
        fixtures: &[PathBuf],
    ) -> Vec<(Engine, PathBuf)> {
        engines
            .iter()
            .zip(fixtures)
            .map(|(&engine, pristine)| {
                (
                    engine,
                    self.working_copy(pristine, &format!("{name}-{}", engine_name(engine))),
                )
            })
            .collect()
    }

    /// The shapes of issue 12, item 5, on both engines (the JSON engine only where it finishes in a
    /// reasonable time).
    fn measure_issue_shapes(&mut self) {
        let started = Instant::now();
        let both = [Engine::Sqlite, Engine::Json];
        let (chain_len, small_branches, big_branches) = if self.smoke {
            (100, 50, 200)
        } else {
            (10_000, 10_000, 100_000)
        };
        for (branches, engines) in [(small_branches, &both[..]), (big_branches, &both[..1])] {
            let shape = format!(
                "{} branches on a {}-message chain",
                fmt_count(branches),
                fmt_count(chain_len)
            );
            let name = format!("branches-{chain_len}-{branches}");
            let fixtures = self.fixtures(&name, engines, || many_branches(chain_len, branches));
            let dbs = self.copies(&name, engines, &fixtures);
            self.shape_rows(&shape, "`tl branches`", &dbs, &["branches"]);
            self.shape_appends(&shape, &dbs);
            if engines.len() == 1 {
                let why = format!(
                    "not run: loads compare branch names pairwise, ≈ {}× the {} row",
                    (branches / small_branches).pow(2),
                    fmt_count(small_branches)
                );
                for row in ["`tl branches`", "`tl append`"] {
                    self.results
                        .shape_row(&shape, row, "json", Cell::Missing(why.clone()));
                }
            }
            for (_, db) in &dbs {
                remove_db(db);
            }
        }

        let (chain_len, covered, branches) = if self.smoke {
            (200, 150, 20)
        } else {
            (50_000, 40_000, 5_000)
        };
        let shape = format!(
            "{} branches, watermarks advanced to n{covered} of a {}-message chain",
            fmt_count(branches),
            fmt_count(chain_len)
        );
        let name = format!("watermarks-{chain_len}-{covered}-{branches}");
        let fixtures = self.fixtures(&name, &both, || {
            advanced_watermarks(chain_len, covered, branches)
        });
        let dbs = self.copies(&name, &both, &fixtures);
        let node = format!("n{SHORT}");
        self.shape_rows(
            &shape,
            "`tl context`, 50-message path",
            &dbs,
            &["context", "--node", &node],
        );
        self.shape_appends(&shape, &dbs);
        let (from, to) = (format!("n{}", covered + 1), format!("n{}", covered + 10));
        {
            let mut lanes: Vec<Lane> = dbs
                .iter()
                .map(|(_, db)| {
                    let (from, to) = (&from, &to);
                    let this = &*self;
                    Box::new(move || {
                        let text = this.next_text();
                        this.tl(
                            db,
                            &["summarize", "--from", from, "--to", to, "--summary", &text],
                        )
                    }) as Lane
                })
                .collect();
            let measured = interleave(self.process_plan(), &mut lanes);
            drop(lanes);
            for ((engine, _), m) in dbs.iter().zip(measured) {
                self.results.shape_row(
                    &shape,
                    "`tl summarize` of 10 messages past the watermark",
                    engine_name(*engine),
                    Cell::Time(m),
                );
            }
        }
        for (_, db) in &dbs {
            remove_db(db);
        }

        let (chain_len, covered, summaries) = if self.smoke {
            (100, 90, 20)
        } else {
            (10_000, 9_000, 2_000)
        };
        let shape = format!(
            "{} summaries of n1..n{covered} on a {}-message chain",
            fmt_count(summaries),
            fmt_count(chain_len)
        );
        let name = format!("summaries-{chain_len}-{covered}-{summaries}");
        let fixtures = self.fixtures(&name, &both, || {
            many_summaries(chain_len, covered, summaries)
        });
        let dbs = self.copies(&name, &both, &fixtures);
        self.shape_rows(
            &shape,
            "`tl context`, 50-message path",
            &dbs,
            &["context", "--node", &node],
        );
        // Room for about the last 100 messages beside a summary: the budget reads every summary.
        let head = format!("n{chain_len}");
        let max = (chain_len - 99..=chain_len)
            .map(|k| estimate_tokens(&message_text(k)))
            .sum::<u64>()
            .to_string();
        let args = ["budget", "--node", &head, "--max", &max];
        // The first call may create placeholders; the measured ones reuse them.
        for (_, db) in &dbs {
            self.tl(db, &args);
        }
        self.shape_rows(
            &shape,
            &format!("`tl budget` at n{chain_len}, repeated"),
            &dbs,
            &args,
        );
        self.shape_appends(&shape, &dbs);
        for (_, db) in &dbs {
            remove_db(db);
        }
        eprintln!(
            "measured the issue 12 shapes in {}",
            fmt_secs(secs(started))
        );
    }

    fn print_ratios(&self, sizes: &[usize]) {
        let (Some(&small), Some(&large)) = (sizes.first(), sizes.last()) else {
            return;
        };
        let (sm, lg) = (fmt_count(small), fmt_count(large));
        println!("\n### Targets for the SQLite engine (ratios from this run)\n");
        if self.smoke {
            println!(
                "(Smoke pass: a debug build and one run per row, so these verdicts mean nothing.)\n"
            );
        }
        if large != 100_000 || small != 100 {
            println!(
                "(The targets are defined at 100 and 100k messages; this run compares {sm} and {lg}.)\n"
            );
        }
        println!("| target | long | short | goal |");
        println!("| --- | ---: | ---: | --- |");
        let r = &self.results;
        let ratio = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) if b > 0.0 => Some(a / b),
            _ => None,
        };
        let smoke = self.smoke;
        let verdict = |value: Option<f64>, limit: f64, strict: bool| match value {
            None => "n/a (not measured)".to_string(),
            Some(v) => {
                let met = if strict { v < limit } else { v <= limit };
                // A smoke figure is no measurement: it is labelled as such, never as a verdict.
                let verdict = match (smoke, met) {
                    (true, _) => "(smoke figure, not a verdict)",
                    (false, true) => "met",
                    (false, false) => "**NOT met**",
                };
                if v < 0.1 {
                    format!("{v:.4} (1/{:.0}) {verdict}", 1.0 / v)
                } else {
                    format!("{v:.2} {verdict}")
                }
            }
        };
        type Ratio<'a> = Box<dyn Fn(&str) -> Option<f64> + 'a>;
        let rows: Vec<(String, Ratio, f64, bool, &str)> = vec![
            (
                format!("`tl append` at {lg} / at {sm}"),
                Box::new(|s| {
                    ratio(
                        r.get(TL_APPEND, s, "sqlite", large),
                        r.get(TL_APPEND, s, "sqlite", small),
                    )
                }),
                1.5,
                false,
                "≤ 1.5",
            ),
            (
                format!("`tl append` at {lg} / `sqlite3` insert at {lg} rows"),
                Box::new(|s| {
                    ratio(
                        r.get(TL_APPEND, s, "sqlite", large),
                        r.get(SQLITE3_INSERT, s, "sqlite3", large),
                    )
                }),
                1.5,
                false,
                "≤ 1.5",
            ),
            (
                format!("`timeline_append` in `tl-mcp` at {lg} / at {sm}"),
                Box::new(|s| {
                    ratio(
                        r.get(MCP_APPEND, s, "sqlite", large),
                        r.get(MCP_APPEND, s, "sqlite", small),
                    )
                }),
                1.2,
                false,
                "≤ 1.2",
            ),
            (
                format!("`timeline_append` / memory server `add_observations` at {lg}"),
                Box::new(|s| {
                    ratio(
                        r.get(MCP_APPEND, s, "sqlite", large),
                        r.get(MEMORY_ADD, s, "memory server", large),
                    )
                }),
                1.0,
                true,
                "< 1 (faster)",
            ),
            (
                format!("`tl context` of a 50-message path at {lg} / at {sm}"),
                Box::new(|s| {
                    ratio(
                        r.get(CONTEXT, s, "sqlite", large),
                        r.get(CONTEXT, s, "sqlite", small),
                    )
                }),
                1.5,
                false,
                "≤ 1.5",
            ),
            (
                format!("bytes written per `tl append` at {lg} / at {sm}"),
                Box::new(|s| {
                    ratio(
                        r.get(BYTES_PROCESS, s, "sqlite", large),
                        r.get(BYTES_PROCESS, s, "sqlite", small),
                    )
                }),
                1.5,
                false,
                "about 1: ≤ 1.5",
            ),
            (
                format!("bytes written per append, open store, at {lg} / at {sm}"),
                Box::new(|s| {
                    ratio(
                        r.get(BYTES_OPEN, s, "sqlite", large),
                        r.get(BYTES_OPEN, s, "sqlite", small),
                    )
                }),
                1.5,
                false,
                "about 1: ≤ 1.5",
            ),
        ];
        for (name, value, limit, strict, goal) in rows {
            println!(
                "| {name} | {} | {} | {goal} |",
                verdict(value("long"), limit, strict),
                verdict(value("short"), limit, strict)
            );
        }
        // For comparison: the JSON engine's bytes per append grow with the file (snapshot + backup).
        if let (Some(b), Some(f)) = (
            r.get(BYTES_PROCESS, "long", "json", large),
            r.get(FILE_SIZE, "long", "json", large),
        ) {
            println!(
                "\nJSON engine at {lg} (long): {} written per append for a {} file ({:.2}× the file: the new snapshot and the backup).",
                fmt_bytes(b),
                fmt_bytes(f),
                b / f
            );
        }
    }
}

impl Bench {
    /// Search (issue 14) as `tl-mcp` runs it: one open store, each query through the service. The
    /// JSON engine scans every message; SQLite answers from its FTS5 index. One query names a rare
    /// term, one a word every generated message holds. Returns (label, [sqlite, json]) medians in
    /// seconds.
    fn measure_search(&self, size: usize) -> Vec<(String, [f64; 2])> {
        let engines = [Engine::Sqlite, Engine::Json];
        let fixtures = self.fixtures(&format!("long-{size}"), &engines, || {
            Shape::Long.build(size)
        });
        let rare = format!(
            "\"{}\"",
            message_text(size / 2)
                .split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" ")
        );
        let common = message_text(1)
            .split_whitespace()
            .next()
            .unwrap_or("the")
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_string();
        let mut rows = Vec::new();
        for (what, query) in [("rare phrase", rare), ("common word", common)] {
            let mut times = [0.0; 2];
            for (k, path) in fixtures.iter().enumerate() {
                let mut store = timeline::store::Store::open(path.clone())
                    .expect("the benchmark database opens");
                let operation = spec().operation("search").expect("search exists");
                let runs = if self.smoke {
                    1
                } else if k == 1 {
                    3
                } else {
                    21
                };
                let mut samples = Vec::new();
                for _ in 0..runs {
                    let start = Instant::now();
                    let mut args = Map::new();
                    args.insert("query".into(), json!(query));
                    args.insert("limit".into(), json!(20));
                    service::execute(
                        &mut store,
                        Request {
                            op: operation,
                            args,
                            idempotency_key: None,
                            origin: Origin::Mcp,
                        },
                    )
                    .expect("search succeeds");
                    samples.push(secs(start));
                }
                samples.sort_by(f64::total_cmp);
                times[k] = samples[samples.len() / 2];
            }
            rows.push((
                format!("search, {what} (one open store, like tl-mcp)"),
                times,
            ));
        }
        rows
    }
}

impl Bench {
    /// `tl import` of `messages` OpenAI Chat Completions messages (one file, one new timeline) as a
    /// whole process into a new database of each engine. Returns seconds per engine [sqlite, json].
    fn measure_import(&self, messages: usize) -> [f64; 2] {
        let input = self.work.join(format!("source-{messages}.json"));
        let body: Vec<Value> = (0..messages)
            .map(|i| {
                json!({
                    "role": if i % 2 == 0 { "user" } else { "assistant" },
                    "content": message_text(i + 1),
                })
            })
            .collect();
        fs::write(
            &input,
            serde_json::to_vec(&json!({ "messages": body })).unwrap(),
        )
        .expect("write the import file");
        let mut times = [0.0; 2];
        for (k, ext) in ["db", "json"].iter().enumerate() {
            let db = self.work.join(format!("import-{messages}.{ext}"));
            remove_db(&db);
            times[k] = self.tl_raw(&[
                "--db",
                db.to_str().unwrap(),
                "import",
                "--format",
                "openai",
                "--input",
                input.to_str().unwrap(),
            ]);
            remove_db(&db);
        }
        times
    }
}

/// `node` and the pinned memory server, installed under `tools` with npm when missing.
fn find_memory_server(tools: &Path) -> Result<(PathBuf, PathBuf), String> {
    let works = |program: &str| {
        Command::new(program)
            .arg("--version")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !works("node") {
        return Err("MISSING: node is not installed".into());
    }
    let package = tools.join("node_modules").join(MEMORY_PACKAGE);
    let entry = package.join("dist").join("index.js");
    let installed = fs::read_to_string(package.join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .and_then(|v| v["version"].as_str().map(str::to_string));
    if installed.as_deref() != Some(MEMORY_VERSION) || !entry.exists() {
        if !works("npm") {
            return Err("MISSING: npm is not installed".into());
        }
        fs::create_dir_all(tools).map_err(|e| format!("MISSING: {}: {e}", tools.display()))?;
        eprintln!(
            "installing {MEMORY_PACKAGE}@{MEMORY_VERSION} under {}",
            tools.display()
        );
        let status = Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--save-exact",
                "--no-package-lock",
                "--prefix",
            ])
            .arg(tools)
            .arg(format!("{MEMORY_PACKAGE}@{MEMORY_VERSION}"))
            .stdout(Stdio::null())
            .status()
            .map_err(|e| format!("MISSING: npm install failed to start: {e}"))?;
        if !status.success() || !entry.exists() {
            return Err(format!(
                "MISSING: npm install {MEMORY_PACKAGE}@{MEMORY_VERSION} failed ({status})"
            ));
        }
    }
    Ok((PathBuf::from("node"), entry))
}

fn find_sqlite3() -> Result<PathBuf, String> {
    let ok = Command::new("sqlite3")
        .arg("-version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        Ok(PathBuf::from("sqlite3"))
    } else {
        Err("MISSING: the sqlite3 shell is not installed".into())
    }
}

fn sizes(smoke: bool) -> Vec<usize> {
    if smoke {
        return vec![100, 200];
    }
    let mut sizes = if let Ok(list) = std::env::var("TIMELINE_BENCH_SIZES") {
        list.split(',')
            .filter_map(|s| s.trim().parse().ok())
            .filter(|&n: &usize| n > 0)
            .map(|n: usize| n.div_ceil(SHORT) * SHORT)
            .collect()
    } else if std::env::var("TIMELINE_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0") {
        vec![100, 10_000]
    } else {
        vec![100, 10_000, 100_000]
    };
    sizes.sort();
    sizes.dedup();
    sizes
}

fn flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// The filters that each ask for one topic's rows alone.
const ONLY_FILTERS: [&str; 5] = [
    "TIMELINE_BENCH_MILLION",
    "TIMELINE_BENCH_IMPORT",
    "TIMELINE_BENCH_APPEND",
    "TIMELINE_BENCH_SEARCH",
    "TIMELINE_BENCH_POSTGRES=only",
];

/// Whether a filter other than `mine` asks for its own rows alone, so that `mine`'s rows stay out.
fn another_topic_alone(mine: &str) -> bool {
    ONLY_FILTERS
        .iter()
        .filter(|f| **f != mine)
        .any(|f| match f.split_once('=') {
            Some((name, value)) => std::env::var(name).is_ok_and(|v| v == value),
            None => flag(f),
        })
}

/// The storage versions the fixtures depend on: SQLite schema and JSON format.
fn storage_key(dir: &Path) -> String {
    let probe = dir.join(format!(".probe-{}.db", std::process::id()));
    remove_db(&probe);
    let db = database(vec![chain(0, 1, 0)]);
    Store::create_from(&probe, &db).expect("write a probe database");
    let schema = Store::open(probe.clone())
        .and_then(|mut s| s.format_version())
        .expect("read the probe's schema version")
        .unwrap_or(0);
    remove_db(&probe);
    format!(
        "v{FIXTURE_VERSION}-s{schema}-j{}",
        spec().constants.format_version
    )
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --all-targets` does not: then only a smoke pass runs.
    let smoke = !std::env::args().any(|a| a == "--bench");
    let started = Instant::now();
    let load_before = load_average();
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .expect("CARGO_TARGET_TMPDIR is inside the target directory")
        .to_path_buf();
    let cache = target.join("bench-fixtures");
    let work = target
        .join("bench-work")
        .join(format!("run-{}", std::process::id()));
    fs::create_dir_all(&cache).expect("create target/bench-fixtures");
    fs::create_dir_all(&work).expect("create target/bench-work");
    let tools = target.join("bench-tools");
    let sqlite3 = find_sqlite3();
    let memory = if smoke {
        Err("not in the smoke pass".to_string())
    } else if flag("TIMELINE_BENCH_APPEND") || flag("TIMELINE_BENCH_SEARCH") {
        Err("not measured with TIMELINE_BENCH_APPEND or TIMELINE_BENCH_SEARCH".to_string())
    } else {
        find_memory_server(&tools)
    };
    let mut bench = Bench {
        smoke,
        tl: PathBuf::from(env!("CARGO_BIN_EXE_tl")),
        tl_mcp: PathBuf::from(env!("CARGO_BIN_EXE_tl-mcp")),
        key: storage_key(&cache),
        cache,
        work: work.clone(),
        sqlite3,
        memory,
        texts: std::cell::Cell::new(0),
        results: Results::default(),
    };
    if !smoke {
        for missing in [&bench.sqlite3.as_ref().err(), &bench.memory.as_ref().err()]
            .into_iter()
            .flatten()
        {
            eprintln!("\n!!!!! {missing}: that column will be missing from the results !!!!!\n");
            bench.results.missing.push((*missing).clone());
        }
    }
    // The PostgreSQL rows (skipped with TIMELINE_BENCH_POSTGRES=0; alone with =only).
    if postgres::run(&bench) {
        return;
    }
    // Issue 24's rows at a million messages; alone with TIMELINE_BENCH_MILLION=1.
    if million::measure(&bench) {
        return;
    }
    let sizes = sizes(smoke);
    if fixed_costs::only(&bench, &sizes) || search_worst::only(&bench, &sizes) {
        return;
    }
    let plan = bench.process_plan();
    let startup = sample(plan, || bench.tl_raw(&["--version"]));
    bench
        .results
        .set(STARTUP, "—", "—", sizes[0], Cell::Time(startup));
    for shape in [Shape::Long, Shape::Short] {
        bench.measure_shape(shape, &sizes);
    }
    bench.measure_issue_shapes();

    println!(
        "\n## Timeline benchmark ({}; {} logical cores; load average {load_before} before, {} after)",
        if smoke { "smoke pass" } else { "release" },
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        load_average()
    );
    bench.results.print_main(&sizes);
    bench.results.print_shapes();
    bench.print_ratios(&sizes);
    let search_size = *sizes.last().expect("at least one size");
    println!(
        "\n### Search at {} messages (median; target: SQLite under 50 ms and at least 10x faster than the JSON scan)\n",
        fmt_count(search_size)
    );
    println!(
        "| query | sqlite | json | json / sqlite | under 50 ms |\n| --- | ---: | ---: | ---: | --- |"
    );
    for (label, [sqlite, json]) in bench.measure_search(search_size) {
        println!(
            "| {label} | {} | {} | {:.0}x | {} |",
            fmt_secs(sqlite),
            fmt_secs(json),
            json / sqlite.max(1e-9),
            if smoke {
                "(smoke figure)"
            } else if sqlite < 0.05 {
                "met"
            } else {
                "not met"
            }
        );
    }
    if !smoke && !bench.results.missing.is_empty() {
        println!();
        for missing in &bench.results.missing {
            println!("!!!!! {missing}: its column is missing from this run !!!!!");
        }
    }
    bench.print_fixed_costs(&sizes);
    bench.print_search_worst(&sizes);
    let import_size = *sizes.last().expect("at least one size");
    let [sqlite, json] = bench.measure_import(import_size);
    println!(
        "\n### Import of {} OpenAI messages (`tl import`, whole process, one run; target: at least 20,000 messages per second into SQLite)\n",
        fmt_count(import_size)
    );
    println!("| engine | time | messages per second | target |\n| --- | ---: | ---: | --- |");
    for (engine, t) in [("sqlite", sqlite), ("json", json)] {
        let rate = import_size as f64 / t.max(1e-9);
        println!(
            "| {engine} | {} | {:.0} | {} |",
            fmt_secs(t),
            rate,
            if engine == "json" {
                "(none)"
            } else if smoke {
                "(smoke figure)"
            } else if rate >= 20_000.0 {
                "met"
            } else {
                "not met"
            }
        );
    }
    println!("\ntotal {}", fmt_secs(secs(started)));
    if flag("TIMELINE_BENCH_KEEP") {
        eprintln!("kept the working files in {}", work.display());
    } else {
        let _ = fs::remove_dir_all(&work);
    }
}
