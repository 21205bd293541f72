//! Timeline performance harness: `cargo bench --bench timeline`.
//!
//! Builds databases of several sizes in-process through the library (`ops::run` on an in-memory
//! `Database`, then `store::encode` to a file in a temporary directory) and prints the median time of
//! the operations a user waits for: an append through `service::execute` (lock, load, validate, write,
//! backup), a context and a budget on a deep node, decoding the file, and starting the `tl` process for
//! a read. A second table splits one append into its phases, which shows what dominates.
//!
//! `TIMELINE_BENCH_QUICK=1` runs only the 1k and 10k sizes. `TIMELINE_BENCH_SIZES=1000,50000` picks
//! sizes explicitly. Under `cargo test --all-targets` (no `--bench` argument) the harness runs a tiny
//! smoke pass so the code stays working; it never asserts anything about wall-clock time.

use serde_json::{Map, Value, json};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use timeline::budget::{Candidate, Item};
use timeline::model::file::DatabaseFile;
use timeline::model::{Database, Timeline};
use timeline::ops::{self, Ctx};
use timeline::service::{self, Output, Request};
use timeline::spec::spec;
use timeline::spec::validate::{Origin, validate};
use timeline::store;

/// Fixed clock so that every run builds the same database.
const NOW: u64 = 1_767_225_600;
/// Messages between two summaries on the main branch; each summary covers the first 400 of them.
const SUMMARY_EVERY: usize = 500;
const SUMMARY_SPAN: usize = 400;
/// A pin sits just after each summarised range (a pin inside a range would make that summary unusable).
const PIN_OFFSET: usize = 450;
/// Every this many messages a side branch with `SIDE_LEN` messages forks off the main branch.
const SIDE_EVERY: usize = 2_000;
const SIDE_LEN: usize = 20;

fn args(op: &str, values: Value) -> timeline::spec::validate::Args {
    let operation = spec().operation(op).expect("known operation");
    let map = match values {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    validate(operation, &map, Origin::Mcp).expect("valid benchmark arguments")
}

fn run(db: &mut Database, op: &str, values: Value) -> Value {
    ops::run_in_memory(db, op, &args(op, values), &Ctx { now: NOW }).expect("operation succeeds")
}

fn node_number(result: &Value) -> u64 {
    result["node"].as_str().expect("a node ID")[1..]
        .parse()
        .expect("a numeric node ID")
}

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

struct Fixture {
    db: Database,
    /// The head of the main branch: the deepest node.
    deep: u64,
    depth: usize,
    path_tokens: u64,
    summaries: usize,
    pins: usize,
    branches: usize,
}

/// A timeline with `messages` appended messages: a long main branch with a real summary every
/// 500 messages, a pin after each summarised range, and a 20-message side branch every 2,000 messages.
fn build(messages: usize) -> Fixture {
    let mut db = Database::default();
    run(&mut db, "create", json!({}));
    let tl = "tl0";
    let mut main_count = 0usize;
    let mut appended = 0usize;
    let mut main_nodes: Vec<u64> = Vec::with_capacity(messages);
    let (mut summaries, mut pins, mut sides) = (0, 0, 0);
    while appended < messages {
        let role = if appended.is_multiple_of(2) {
            "user"
        } else {
            "assistant"
        };
        let n = node_number(&run(
            &mut db,
            "append",
            json!({"timeline_id": tl, "role": role, "text": message_text(appended)}),
        ));
        appended += 1;
        main_count += 1;
        main_nodes.push(n);
        if main_count % SUMMARY_EVERY == PIN_OFFSET {
            run(
                &mut db,
                "pin",
                json!({"timeline_id": tl, "node": format!("n{n}")}),
            );
            pins += 1;
        }
        if main_count.is_multiple_of(SUMMARY_EVERY) {
            let from = main_nodes[main_count - SUMMARY_EVERY];
            let to = main_nodes[main_count - SUMMARY_EVERY + SUMMARY_SPAN - 1];
            run(
                &mut db,
                "summarize",
                json!({
                    "timeline_id": tl,
                    "from": format!("n{from}"),
                    "to": format!("n{to}"),
                    "summary": format!("Summary of n{from}..n{to}: {}", message_text(main_count)),
                }),
            );
            summaries += 1;
        }
        if main_count % SIDE_EVERY == SIDE_EVERY / 2 && appended + SIDE_LEN <= messages {
            let name = format!("side-{sides}");
            sides += 1;
            run(
                &mut db,
                "fork",
                json!({"timeline_id": tl, "node": format!("n{n}"), "name": name}),
            );
            run(&mut db, "switch", json!({"timeline_id": tl, "name": name}));
            for _ in 0..SIDE_LEN {
                run(
                    &mut db,
                    "append",
                    json!({"timeline_id": tl, "role": "user", "text": message_text(appended)}),
                );
                appended += 1;
            }
            run(
                &mut db,
                "switch",
                json!({"timeline_id": tl, "name": "main"}),
            );
        }
    }
    let timeline = &db.timelines[0];
    let deep = timeline.current().head;
    Fixture {
        deep,
        depth: timeline.path(deep).len(),
        path_tokens: timeline.derived.prefix_tokens[deep as usize],
        summaries,
        pins,
        branches: timeline.branches.len(),
        db,
    }
}

/// The pure planner's input, gathered exactly as the budget operation gathers it.
fn planner_input(timeline: &Timeline, target: u64) -> (Vec<Item>, Vec<Candidate>) {
    let mut db = timeline::model::Database {
        next_timeline: timeline.id + 1,
        timelines: vec![timeline.clone()],
        ..Default::default()
    };
    let mut tx = timeline::store::MemTx {
        db: &mut db,
        engine: timeline::store::Engine::Json,
    };
    let (_path, items, candidates) =
        ops::planner_input(&mut tx, timeline.id, target).expect("target exists");
    (items, candidates.into_iter().map(|(_, c)| c).collect())
}

/// Median of `iterations` timed runs of `f` (after `warmup` untimed runs). What `f` returns is
/// dropped after the clock stops, so freeing a large result is not counted.
fn median<R>(iterations: usize, warmup: usize, mut f: impl FnMut() -> R) -> Duration {
    median_setup(iterations, warmup, || (), |()| f())
}

/// Like `median`, but `setup` (untimed) makes the input each timed run consumes.
fn median_setup<T, R>(
    iterations: usize,
    warmup: usize,
    mut setup: impl FnMut() -> T,
    mut f: impl FnMut(T) -> R,
) -> Duration {
    for _ in 0..warmup {
        drop(f(setup()));
    }
    let mut times: Vec<Duration> = (0..iterations.max(1))
        .map(|_| {
            let input = setup();
            let start = Instant::now();
            let result = std::hint::black_box(f(input));
            let elapsed = start.elapsed();
            drop(result);
            elapsed
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

fn execute(db: &Path, op: &str, values: Value) -> Output {
    execute_on(
        &mut timeline::store::Store::open(db.to_path_buf()).expect("database opens"),
        op,
        values,
    )
}

fn execute_on(store: &mut timeline::store::Store, op: &str, values: Value) -> Output {
    let operation = spec().operation(op).expect("known operation");
    let Value::Object(args) = values else {
        unreachable!()
    };
    service::execute(
        store,
        Request {
            op: operation,
            args,
            idempotency_key: None,
            origin: Origin::Mcp,
        },
    )
    .expect("request succeeds")
}

fn fmt_duration(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1_000.0 {
        format!("{us:.1} µs")
    } else if us < 1_000_000.0 {
        format!("{:.2} ms", us / 1_000.0)
    } else {
        format!("{:.2} s", us / 1_000_000.0)
    }
}

fn fmt_size(bytes: u64) -> String {
    if bytes < 1 << 20 {
        format!("{:.0} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
    }
}

fn fmt_count(n: usize) -> String {
    if n >= 1000 && n.is_multiple_of(1000) {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

struct Row {
    operation: &'static str,
    size: String,
    median: Duration,
    iterations: usize,
    file: u64,
}

fn print_table(title: &str, rows: &[Row]) {
    println!("\n{title}\n");
    println!(
        "| {:<50} | {:>6} | {:>11} | {:>5} | {:>9} |",
        "operation", "size", "median", "iter", "file"
    );
    println!(
        "|{:-<52}|{:->8}|{:->13}|{:->7}|{:->11}|",
        "", "", "", "", ""
    );
    for r in rows {
        println!(
            "| {:<50} | {:>6} | {:>11} | {:>5} | {:>9} |",
            r.operation,
            r.size,
            fmt_duration(r.median),
            r.iterations,
            fmt_size(r.file)
        );
    }
}

/// Iteration counts scaled to the size, so that the whole run stays within a few minutes.
fn iterations(messages: usize, smoke: bool) -> (usize, usize) {
    match (smoke, messages) {
        (true, _) => (1, 0),
        (_, m) if m <= 2_000 => (30, 3),
        (_, m) if m <= 20_000 => (10, 1),
        _ => (5, 1),
    }
}

fn write_file(path: &Path, bytes: &[u8]) {
    let mut file = fs::File::create(path).expect("create benchmark file");
    file.write_all(bytes).expect("write benchmark file");
    file.sync_all().expect("sync benchmark file");
}

fn bench_size(
    messages: usize,
    smoke: bool,
    dir: &Path,
    tl_binary: Option<&Path>,
    rows: &mut Vec<Row>,
    phases: &mut Vec<Row>,
) {
    let (iters, warmup) = iterations(messages, smoke);
    let size = fmt_count(messages);
    let started = Instant::now();
    let fixture = build(messages);
    let built = started.elapsed();
    let db_path = dir.join(format!("bench-{messages}.json"));
    let bytes = store::encode(&fixture.db);
    write_file(&db_path, &bytes);
    let file = bytes.len() as u64;
    eprintln!(
        "size {size}: built in {} ({} nodes, depth {}, {} summaries, {} pins, {} branches, {} path tokens, file {})",
        fmt_duration(built),
        fixture.db.timelines[0].nodes.len() - 1,
        fixture.depth,
        fixture.summaries,
        fixture.pins,
        fixture.branches,
        fixture.path_tokens,
        fmt_size(file)
    );
    let deep = format!("n{}", fixture.deep);
    let max_tokens = fixture.path_tokens / 10;
    let mut push = |operation, median, iterations, file| {
        rows.push(Row {
            operation,
            size: size.clone(),
            median,
            iterations,
            file,
        })
    };

    // Reads of the file alone.
    push(
        "store::decode (load + rebuild + checks)",
        median(iters, warmup, || {
            let bytes = fs::read(&db_path).unwrap();
            store::decode(&bytes).unwrap()
        }),
        iters,
        file,
    );
    push(
        "store::encode (pretty JSON)",
        median(iters, warmup, || store::encode(&fixture.db)),
        iters,
        file,
    );

    // In-memory operations on the deep node.
    let mut db = fixture.db.clone();
    push(
        "context on the deepest node (in memory)",
        median(iters, warmup, || {
            run(
                &mut db,
                "context",
                json!({"timeline_id": "tl0", "node": deep}),
            )
        }),
        iters,
        file,
    );
    let timeline = &fixture.db.timelines[0];
    push(
        "budget planner alone (budget::plan)",
        median(iters, warmup, || {
            let (items, candidates) = planner_input(timeline, fixture.deep);
            let reserve = spec().constants.reserve_tokens;
            timeline::budget::plan(&items, &candidates, reserve, max_tokens).unwrap()
        }),
        iters,
        file,
    );
    let budget_args = json!({"timeline_id": "tl0", "node": deep, "max_tokens": max_tokens});
    // The first budget creates its placeholders; later ones reuse them and change nothing.
    let first = Instant::now();
    let placeholders = run(&mut db, "context_budget", budget_args.clone())["summaries_created"]
        .as_array()
        .map_or(0, Vec::len);
    let first = first.elapsed();
    push("budget, first call (in memory)", first, 1, file);
    eprintln!("size {size}: the budget uses {placeholders} placeholder(s) and summaries");
    push(
        "budget, repeated (in memory)",
        median(iters, warmup, || {
            run(&mut db, "context_budget", budget_args.clone())
        }),
        iters,
        file,
    );

    // Through the service: lock, load, run, and for mutations encode, validate and write.
    push(
        "context on the deepest node (service)",
        median(iters, warmup, || {
            execute(
                &db_path,
                "context",
                json!({"timeline_id": "tl0", "node": deep}),
            )
        }),
        iters,
        file,
    );
    let first = Instant::now();
    execute(&db_path, "context_budget", budget_args.clone());
    push(
        "budget, first call (service, writes)",
        first.elapsed(),
        1,
        file,
    );
    push(
        "budget, repeated (service, nothing written)",
        median(iters, warmup, || {
            execute(&db_path, "context_budget", budget_args.clone())
        }),
        iters,
        file,
    );
    let mut i = 0;
    push(
        "append (service: lock+load+write+backup)",
        median(iters, warmup, || {
            i += 1;
            execute(
                &db_path,
                "append",
                json!({"timeline_id": "tl0", "role": "user", "text": message_text(i)}),
            );
        }),
        iters,
        fs::metadata(&db_path).map(|m| m.len()).unwrap_or(file),
    );

    // Search (issue 14) as tl-mcp runs it: one open store per session, each query through the
    // service. The JSON engine scans every message; SQLite answers from its FTS5 index. One query
    // names a rare term (a message number), one a word most messages hold.
    let sqlite_path = dir.join(format!("bench-{messages}.db"));
    let _ = fs::remove_file(&sqlite_path);
    timeline::store::Store::create_from(&sqlite_path, &fixture.db).expect("SQLite copy");
    let rare = format!("\"message {}\"", messages / 2);
    for (engine, path) in [("JSON", &db_path), ("SQLite", &sqlite_path)] {
        let mut store = timeline::store::Store::open(path.to_path_buf()).expect("database opens");
        for (what, query) in [("rare term", rare.as_str()), ("common word", "watermark")] {
            let label: &'static str = Box::leak(
                format!("search, {what} ({engine}, one open store like tl-mcp)").into_boxed_str(),
            );
            push(
                label,
                median(iters, warmup, || {
                    execute_on(&mut store, "search", json!({"query": query, "limit": 20}))
                }),
                iters,
                fs::metadata(path).map(|m| m.len()).unwrap_or(file),
            );
        }
    }

    if let Some(tl) = tl_binary {
        push(
            "tl process: --version (start-up alone)",
            median(iters.min(10), warmup, || {
                let status = Command::new(tl)
                    .arg("--version")
                    .stdout(Stdio::null())
                    .status()
                    .expect("spawn tl");
                assert!(status.success(), "tl --version failed");
            }),
            iters.min(10),
            file,
        );
        let db_arg = db_path.to_string_lossy().into_owned();
        push(
            "tl process: branches (spawn + load)",
            median(iters.min(10), warmup, || {
                let status = Command::new(tl)
                    .args(["--db", &db_arg, "branches"])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .status()
                    .expect("spawn tl");
                assert!(status.success(), "tl branches failed");
            }),
            iters.min(10),
            file,
        );
    }

    // One append split into the phases FileStore::write goes through. The fixture and its clones are
    // dropped first so that only one copy of the database is alive, as in a real `tl` process.
    drop(db);
    drop(fixture);
    bench_phases(&db_path, &size, iters, warmup, dir, phases);
}

/// The phases of one append through `FileStore::write` on the file at `db_path`.
fn bench_phases(
    db_path: &Path,
    size: &str,
    iters: usize,
    warmup: usize,
    dir: &Path,
    phases: &mut Vec<Row>,
) {
    let bytes = fs::read(db_path).unwrap();
    let file = bytes.len() as u64;
    let mut phase = |operation, median| {
        phases.push(Row {
            operation,
            size: size.to_string(),
            median,
            iterations: iters,
            file,
        })
    };
    let version = spec().constants.format_version;
    phase(
        "read the file",
        median(iters, warmup, || fs::read(db_path).unwrap()),
    );
    phase(
        "  Value route: parse JSON to serde_json::Value",
        median(iters, warmup, || {
            serde_json::from_slice::<Value>(&bytes).unwrap()
        }),
    );
    phase(
        "  Value route: Value -> DatabaseFile",
        median_setup(
            iters,
            warmup,
            || serde_json::from_slice::<Value>(&bytes).unwrap(),
            |value| serde_json::from_value::<DatabaseFile>(value).unwrap(),
        ),
    );
    phase(
        "  direct: parse JSON straight to DatabaseFile",
        median(iters, warmup, || {
            serde_json::from_slice::<DatabaseFile>(&bytes).unwrap()
        }),
    );
    phase(
        "  DatabaseFile -> Database (rebuild, checks)",
        median_setup(
            iters,
            warmup,
            || serde_json::from_slice::<DatabaseFile>(&bytes).unwrap(),
            |parsed| Database::from_file(parsed, version).unwrap(),
        ),
    );
    phase(
        "decode via Value (the route before the change)",
        median(iters, warmup, || {
            let value = serde_json::from_slice::<Value>(&bytes).unwrap();
            let parsed = serde_json::from_value::<DatabaseFile>(value).unwrap();
            Database::from_file(parsed, version).unwrap()
        }),
    );
    phase(
        "store::decode (direct) = load, and validation",
        median(iters, warmup, || store::decode(&bytes).unwrap()),
    );
    let loaded = store::decode(&bytes).unwrap();
    let mut db = loaded.clone();
    phase(
        "run append (in memory)",
        median(iters, warmup, || {
            run(
                &mut db,
                "append",
                json!({"timeline_id": "tl0", "role": "user", "text": "hello"}),
            );
        }),
    );
    drop(db);
    phase(
        "  Database::to_file (copy into file structs)",
        median(iters, warmup, || loaded.to_file(version)),
    );
    phase(
        "store::encode (to_file + pretty JSON)",
        median(iters, warmup, || store::encode(&loaded)),
    );
    let encoded = store::encode(&loaded);
    drop(loaded);
    let scratch = dir.join(format!("scratch-{size}.json"));
    phase(
        "write + fsync one copy (snapshot or backup)",
        median(iters, warmup, || write_file(&scratch, &encoded)),
    );
    let _ = fs::remove_file(&scratch);
}

fn sizes(smoke: bool) -> Vec<usize> {
    if smoke {
        return vec![1_200];
    }
    if let Ok(list) = std::env::var("TIMELINE_BENCH_SIZES") {
        let parsed: Vec<usize> = list
            .split(',')
            .filter_map(|s| s.trim().parse().ok())
            .filter(|&n| n > 0)
            .collect();
        if !parsed.is_empty() {
            return parsed;
        }
    }
    if std::env::var("TIMELINE_BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0") {
        vec![1_000, 10_000]
    } else {
        vec![1_000, 10_000, 100_000]
    }
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        // TIMELINE_BENCH_KEEP=1 keeps the databases, e.g. to profile `tl` on them with perf.
        if std::env::var("TIMELINE_BENCH_KEEP").is_ok_and(|v| !v.is_empty() && v != "0") {
            eprintln!("kept the benchmark databases in {}", self.0.display());
        } else {
            let _ = fs::remove_dir_all(&self.0);
        }
    }
}

fn main() {
    // `cargo bench` passes --bench; `cargo test --all-targets` does not: then only a smoke pass runs.
    let smoke = !std::env::args().any(|a| a == "--bench");
    let dir = TempDir(std::env::temp_dir().join(format!("timeline-bench-{}", std::process::id())));
    fs::create_dir_all(&dir.0).expect("create the benchmark directory");
    let tl = PathBuf::from(env!("CARGO_BIN_EXE_tl"));
    let tl_binary = tl.exists().then_some(tl.as_path());
    if tl_binary.is_none() {
        eprintln!(
            "{} does not exist; skipping the tl process rows",
            tl.display()
        );
    }
    let started = Instant::now();
    let mut rows = Vec::new();
    let mut phases = Vec::new();
    for messages in sizes(smoke) {
        bench_size(messages, smoke, &dir.0, tl_binary, &mut rows, &mut phases);
    }
    print_table(
        "Timeline operations (median over `iter` runs; file = snapshot size)",
        &rows,
    );
    print_table("Phases of one append through FileStore::write", &phases);
    println!(
        "\n{} logical cores; total {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        fmt_duration(started.elapsed())
    );
}
