//! Issue 24, items 4 and 7: a budget at the head of a 1,000,000-message chain, and the import of a
//! ChatGPT export of 100,000 messages (docs/performance.md, "At a million messages").
//!
//! The chains (long shape, 1k, 100k and 1M messages) are the harness's own fixtures: an in-memory
//! `Database` bulk-loaded by `Store::create_from` in one transaction (what `tl db convert` writes),
//! loaded back and compared, and checked once with `tl db check` when first built. Each row is a
//! release binary as a whole process, or one `tl-mcp` session, with its peak memory: the maximum
//! resident set of the process (for `tl`, `wait4`'s `ru_maxrss` or its `VmHWM` in
//! `/proc/<pid>/status`, see `wait_peak`; for `tl-mcp`, its `VmHWM` at the end of the session).
//! `TIMELINE_BENCH_MILLION=1` runs only these rows, `TIMELINE_BENCH_IMPORT=1` only the import;
//! `TIMELINE_BENCH_QUICK=1` leaves them out.

use super::*;

/// The chain lengths of the budget rows; the smoke pass uses tiny ones.
const SIZES: [usize; 3] = [1_000, 100_000, 1_000_000];
const SMOKE_SIZES: [usize; 3] = [100, 200, 400];
/// The budget of every call, as the issue states it.
const MAX_TOKENS: u64 = 4_000;
/// The ChatGPT export: conversations of this many messages, 100k messages in all.
const IMPORT_MESSAGES: usize = 100_000;
const PER_CONVERSATION: usize = 100;

const FIRST: &str = "`tl budget --node HEAD --max 4000`, first call (process)";
const REPEATED: &str = "`tl budget --node HEAD --max 4000`, repeated (process)";
const MCP: &str = "`timeline_context_budget` per call, repeated (one `tl-mcp` session)";

/// One measured row: its time per size, and its peak memory per size.
struct Row {
    name: &'static str,
    time: Vec<Cell>,
    memory: Vec<Cell>,
}

/// Run the rows of this module (unless `TIMELINE_BENCH_QUICK` is set); true when
/// `TIMELINE_BENCH_MILLION` asks for them alone, so the caller measures nothing else.
pub(super) fn measure(bench: &Bench) -> bool {
    // The import row alone (TIMELINE_BENCH_IMPORT=1): a minute, where the million rows take several.
    if flag("TIMELINE_BENCH_IMPORT") && !super::another_topic_alone("TIMELINE_BENCH_IMPORT") {
        let load_before = load_average();
        let import = bench.chatgpt_import(if bench.smoke { 200 } else { IMPORT_MESSAGES });
        println!(
            "\n## ChatGPT import only (issue 24 item 7; {}; load average {load_before} before, {} after)",
            if bench.smoke { "smoke pass" } else { "release" },
            load_average()
        );
        import.print(bench.smoke);
        let _ = fs::remove_dir_all(&bench.work);
        return true;
    }
    let only = flag("TIMELINE_BENCH_MILLION");
    if super::another_topic_alone("TIMELINE_BENCH_MILLION")
        || (!only && flag("TIMELINE_BENCH_QUICK"))
    {
        return false;
    }
    let started = Instant::now();
    let load_before = load_average();
    let sizes: &[usize] = if bench.smoke { &SMOKE_SIZES } else { &SIZES };
    let pristine: Vec<PathBuf> = sizes.iter().map(|&size| bench.chain(size)).collect();
    let rows = bench.budget_rows(sizes, &pristine);
    let import = bench.chatgpt_import(if bench.smoke { 200 } else { IMPORT_MESSAGES });
    println!(
        "\n## At a million messages (issue 24; {}; SQLite; load average {load_before} before, {} after)\n",
        if bench.smoke { "smoke pass" } else { "release" },
        load_average()
    );
    print_rows(sizes, &rows);
    print_targets(bench.smoke, sizes, &rows);
    import.print(bench.smoke);
    eprintln!(
        "measured the million-message rows in {}",
        fmt_secs(secs(started))
    );
    if only {
        let _ = fs::remove_dir_all(&bench.work);
    }
    only
}

impl Bench {
    /// The cached long chain of `size` messages on SQLite, checked with `tl db check` when built.
    fn chain(&self, size: usize) -> PathBuf {
        let name = format!("long-{size}");
        let cached = self.cache.join(format!("{name}-{}.db", self.key));
        let fresh = !cached.exists();
        let started = Instant::now();
        let path = self
            .fixtures(&name, &[Engine::Sqlite], || Shape::Long.build(size))
            .remove(0);
        if fresh {
            let built = secs(started);
            let checked = Instant::now();
            let out = Command::new(&self.tl)
                .arg("--db")
                .arg(&path)
                .args(["db", "check"])
                .stdin(Stdio::null())
                .output()
                .expect("spawn tl db check");
            let report: Value = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
            assert!(
                out.status.success() && report["ok"] == json!(true),
                "tl db check refuses the benchmark's {size}-message chain: {} {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            eprintln!(
                "the {}-message chain: built and loaded back in {}, `tl db check` ok in {}",
                fmt_count(size),
                fmt_secs(built),
                fmt_secs(secs(checked))
            );
        }
        path
    }

    /// `tl` with `args` as a whole process: its wall-clock time and its peak memory. A failure
    /// stops the benchmark.
    fn tl_peak(&self, args: &[&str]) -> (f64, Option<f64>) {
        let (ok, elapsed, peak, _, stderr) = self.tl_output(args);
        assert!(ok, "tl {args:?} failed: {stderr}");
        (elapsed, peak)
    }

    /// `tl` with `args`: whether it succeeded, its time and peak memory, its stdout and stderr
    /// (through files, so that nothing is read before it is waited for).
    fn tl_output(&self, args: &[&str]) -> (bool, f64, Option<f64>, String, String) {
        let out = self.work.join("million-stdout");
        let err = self.work.join("million-stderr");
        let file = |p: &Path| fs::File::create(p).expect("create an output file");
        let started = Instant::now();
        let child = Command::new(&self.tl)
            .args(args)
            .stdin(Stdio::null())
            .stdout(file(&out))
            .stderr(file(&err))
            .spawn()
            .expect("spawn tl");
        let (ok, peak) = wait_peak(child);
        let elapsed = secs(started);
        let read = |p: &Path| fs::read_to_string(p).unwrap_or_default();
        (ok, elapsed, peak, read(&out), read(&err))
    }

    /// The budget rows at every size: a first call on a fresh copy (it creates the placeholders),
    /// the same call again on that copy, and the same call repeated in one `tl-mcp` session.
    fn budget_rows(&self, sizes: &[usize], pristine: &[PathBuf]) -> Vec<Row> {
        let args = |db: &Path, size: usize| -> Vec<String> {
            [
                "--db",
                db.to_str().expect("a UTF-8 working directory"),
                "--timeline",
                "tl0",
                "budget",
                "--node",
                &format!("n{size}"),
                "--max",
                &MAX_TOKENS.to_string(),
            ]
            .map(String::from)
            .to_vec()
        };
        // Process rows: per size, peak memory of the first and of the repeated calls beside the times.
        let peaks: Vec<RefCell<[Vec<f64>; 2]>> = sizes.iter().map(|_| Default::default()).collect();
        let repeats: Vec<RefCell<Vec<f64>>> = sizes.iter().map(|_| Default::default()).collect();
        // The copy of each size's last run is kept for the tl-mcp session: its placeholders exist.
        let kept: Vec<RefCell<Option<PathBuf>>> =
            sizes.iter().map(|_| Default::default()).collect();
        let mut lanes: Vec<Lane> = sizes
            .iter()
            .enumerate()
            .map(|(i, &size)| {
                let (peaks, repeats, pristine) = (&peaks[i], &repeats[i], &pristine[i]);
                let kept = &kept[i];
                Box::new(move || {
                    if let Some(old) = kept.take() {
                        remove_db(&old);
                    }
                    let db = self.working_copy(pristine, &format!("million-budget-{size}"));
                    let args = args(&db, size);
                    let args: Vec<&str> = args.iter().map(String::as_str).collect();
                    let (first, first_peak) = self.tl_peak(&args);
                    let (again, again_peak) = self.tl_peak(&args);
                    *kept.borrow_mut() = Some(db);
                    let mut peaks = peaks.borrow_mut();
                    peaks[0].extend(first_peak);
                    peaks[1].extend(again_peak);
                    repeats.borrow_mut().push(again);
                    first
                }) as Lane
            })
            .collect();
        let firsts = interleave(self.process_plan(), &mut lanes);
        drop(lanes);
        let mut first = Row {
            name: FIRST,
            time: Vec::new(),
            memory: Vec::new(),
        };
        let mut repeated = Row {
            name: REPEATED,
            time: Vec::new(),
            memory: Vec::new(),
        };
        for (i, m) in firsts.into_iter().enumerate() {
            // The timed runs are the last ones (warm-ups come first).
            let keep = |all: Vec<f64>| all[all.len().saturating_sub(m.runs)..].to_vec();
            let [first_peaks, again_peaks] = peaks[i].take();
            first.time.push(Cell::Time(m));
            first.memory.push(memory_cell(keep(first_peaks)));
            repeated
                .time
                .push(Cell::Time(median(keep(repeats[i].take()))));
            repeated.memory.push(memory_cell(keep(again_peaks)));
        }

        // One tl-mcp session per size, on the copy of its last run, whose placeholders the first
        // call made already, so that every timed call (and the session's peak) is a repeated budget.
        let copies: Vec<PathBuf> = kept
            .into_iter()
            .map(|db| db.into_inner().expect("every size ran at least once"))
            .collect();
        let mut pids = Vec::new();
        let mut lanes: Vec<Lane> = Vec::new();
        for (db, &size) in copies.iter().zip(sizes) {
            let mut command = Command::new(&self.tl_mcp);
            command.arg("--db").arg(db);
            let client = McpClient::spawn(command, "tl-mcp").expect("tl-mcp starts");
            pids.push(client.pid);
            lanes.push(self.mcp_lane(client, "timeline_context_budget", None, move |_| {
                json!({"timeline_id": "tl0", "node": format!("n{size}"), "max_tokens": MAX_TOKENS})
            }));
        }
        let measured = interleave(self.call_plan(), &mut lanes);
        // The servers are still running: their high-water marks cover every call of the session.
        let session_peaks: Vec<Cell> = pids
            .iter()
            .map(|&pid| match vm_hwm(pid) {
                Some(bytes) => Cell::Bytes(Measured {
                    median: bytes,
                    runs: 1,
                }),
                None => Cell::Missing("n/a (no /proc)".into()),
            })
            .collect();
        drop(lanes);
        for db in &copies {
            remove_db(db);
        }
        let mcp = Row {
            name: MCP,
            time: measured.into_iter().map(Cell::Time).collect(),
            memory: session_peaks,
        };
        vec![first, repeated, mcp]
    }

    /// `tl import --format chatgpt` of a `conversations.json` of `messages` messages (conversations
    /// of 100) into a new SQLite database, as a whole process, once.
    fn chatgpt_import(&self, messages: usize) -> Import {
        let input = self.work.join(format!("chatgpt-{messages}.json"));
        let conversations: Vec<Value> = (0..messages.div_ceil(PER_CONVERSATION))
            .map(|c| {
                let count = PER_CONVERSATION.min(messages - c * PER_CONVERSATION);
                chatgpt_conversation(c, count)
            })
            .collect();
        fs::write(&input, serde_json::to_vec(&conversations).unwrap())
            .expect("write the ChatGPT export");
        drop(conversations);
        let bytes = fs::metadata(&input).map_or(0, |m| m.len());
        let db = self.work.join(format!("chatgpt-{messages}.db"));
        remove_db(&db);
        settle();
        let (input_arg, db_arg) = (input.to_str().unwrap(), db.to_str().unwrap());
        let args = [
            "--db", db_arg, "import", "--format", "chatgpt", "--input", input_arg,
        ];
        let (ok, time, peak, stdout, stderr) = self.tl_output(&args);
        let report: Value = serde_json::from_str(&stdout).unwrap_or(Value::Null);
        assert!(
            ok && report["messages"] == json!(messages),
            "tl {args:?} did not import {messages} messages: {stdout} {stderr}"
        );
        remove_db(&db);
        let _ = fs::remove_file(&input);
        Import {
            messages,
            bytes,
            time,
            peak,
        }
    }
}

/// Conversation `c` of the ChatGPT export: a hidden root, then `count` messages in one chain, each
/// the answer to the one before (the texts of the benchmark's other fixtures).
fn chatgpt_conversation(c: usize, count: usize) -> Value {
    let mut mapping = Map::new();
    let id = |m: usize| format!("c{c}-m{m}");
    mapping.insert(
        "root".into(),
        json!({"id": "root", "message": null, "parent": null, "children": [id(0)]}),
    );
    for m in 0..count {
        let parent = if m == 0 {
            "root".to_string()
        } else {
            id(m - 1)
        };
        let children = if m + 1 == count {
            json!([])
        } else {
            json!([id(m + 1)])
        };
        let role = if m % 2 == 0 { "user" } else { "assistant" };
        mapping.insert(
            id(m),
            json!({"id": id(m), "parent": parent, "children": children, "message": {
                "id": id(m), "author": {"role": role}, "create_time": NOW + m as u64,
                "content": {"content_type": "text", "parts": [message_text(c * PER_CONVERSATION + m + 1)]},
            }}),
        );
    }
    json!({
        "id": format!("conversation-{c}"),
        "title": format!("Conversation {c}"),
        "create_time": NOW,
        "mapping": mapping,
        "current_node": id(count - 1),
    })
}

/// The import row's measurement.
struct Import {
    messages: usize,
    bytes: u64,
    time: f64,
    peak: Option<f64>,
}

impl Import {
    fn print(&self, smoke: bool) {
        let rate = self.messages as f64 / self.time.max(1e-9);
        let verdict = if smoke {
            "(smoke figure, not a verdict)"
        } else if rate >= 50_000.0 {
            "met"
        } else {
            "**NOT met**"
        };
        println!(
            "\n### Import of a ChatGPT export of {} messages ({} conversations of {PER_CONVERSATION}, {} of `conversations.json`) into a new SQLite database (`tl import`, whole process, one run)\n",
            fmt_count(self.messages),
            self.messages.div_ceil(PER_CONVERSATION),
            fmt_bytes(self.bytes as f64)
        );
        println!(
            "| time | messages per second | peak memory | target: ≥ 50,000 messages per second |\n| ---: | ---: | ---: | --- |"
        );
        println!(
            "| {} | {rate:.0} | {} | {verdict} |",
            fmt_secs(self.time),
            self.peak.map_or("n/a".to_string(), fmt_bytes)
        );
    }
}

/// The median of the peaks of several runs, or why there is none.
fn memory_cell(peaks: Vec<f64>) -> Cell {
    if peaks.is_empty() {
        return Cell::Missing("n/a (no wait4)".into());
    }
    Cell::Bytes(median(peaks))
}

fn print_rows(sizes: &[usize], rows: &[Row]) {
    let header: Vec<String> = sizes.iter().map(|&n| fmt_count(n)).collect();
    println!(
        "Chains of {} messages (long shape), the budget at the head with max 4000 (median; runs in brackets)\n",
        header.join(", ")
    );
    println!(
        "| measurement | {} |\n| --- |{}",
        header.join(" | "),
        " ---: |".repeat(sizes.len())
    );
    for row in rows {
        let times: Vec<String> = row
            .time
            .iter()
            .map(|c| match c.runs() {
                Some(runs) => format!("{} ({runs})", c.text()),
                None => c.text(),
            })
            .collect();
        println!("| {} | {} |", row.name, times.join(" | "));
        let memory: Vec<String> = row.memory.iter().map(Cell::text).collect();
        println!("| … its peak memory | {} |", memory.join(" | "));
    }
}

/// The targets of issue 24 item 4, ratios of the largest to the smallest size in this run.
fn print_targets(smoke: bool, sizes: &[usize], rows: &[Row]) {
    let (sm, lg) = (fmt_count(sizes[0]), fmt_count(sizes[sizes.len() - 1]));
    println!("\n### Targets at a million messages (ratios from this run)\n");
    if smoke {
        println!(
            "(Smoke pass: a debug build, tiny chains and one run per row, so these verdicts mean nothing.)\n"
        );
    }
    println!("| target | ratio | goal |\n| --- | ---: | --- |");
    let ratio = |cells: &[Cell]| match (cells[cells.len() - 1].value(), cells[0].value()) {
        (Some(a), Some(b)) if b > 0.0 => Some(a / b),
        _ => None,
    };
    let verdict = |value: Option<f64>, limit: f64| match value {
        None => "n/a (not measured)".to_string(),
        Some(_) if smoke => format!("{:.2} (smoke figure, not a verdict)", value.unwrap()),
        Some(v) if v <= limit => format!("{v:.2} met"),
        Some(v) => format!("{v:.2} **NOT met**"),
    };
    let [first, repeated, mcp] = rows else {
        unreachable!("three budget rows")
    };
    for (what, cells, limit) in [
        ("repeated `tl budget`", &repeated.time, 1.5),
        ("first `tl budget`", &first.time, 3.0),
        ("`timeline_context_budget` per call", &mcp.time, 1.5),
        ("peak memory of the first `tl budget`", &first.memory, 1.5),
        (
            "peak memory of the repeated `tl budget`",
            &repeated.memory,
            1.5,
        ),
        ("peak memory of the `tl-mcp` session", &mcp.memory, 1.5),
    ] {
        println!(
            "| {what} at {lg} / at {sm} | {} | ≤ {limit} |",
            verdict(ratio(cells), limit)
        );
    }
}

/// Wait for `child` and return whether it succeeded and its peak resident memory in bytes.
///
/// `wait4`'s `ru_maxrss` is exact only above this process's own peak: a child started with
/// `posix_spawn` (a vfork) inherits its parent's high-water mark at `exec`. Below that, the peak is
/// the child's `VmHWM`, read every millisecond while it runs (it only grows).
#[cfg(target_os = "linux")]
fn wait_peak(child: Child) -> (bool, Option<f64>) {
    let pid = child.id() as libc::pid_t;
    let own = vm_hwm(std::process::id()).unwrap_or(f64::INFINITY);
    let mut polled = 0.0_f64;
    let mut status: libc::c_int = 0;
    // SAFETY: plain values the call fills in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let reaped = loop {
        // SAFETY: `child` is ours and not waited for yet, so the pid still names it.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r != 0 {
            break r;
        }
        if let Some(hwm) = vm_hwm(pid as u32) {
            polled = polled.max(hwm);
        }
        std::thread::sleep(Duration::from_millis(1));
    };
    // Reaped here: dropping `child` neither waits nor kills.
    drop(child);
    if reaped != pid {
        return (false, None);
    }
    let ok = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    // Linux gives ru_maxrss in KiB.
    let maxrss = usage.ru_maxrss as f64 * 1024.0;
    (ok, Some(if maxrss > own { maxrss } else { polled }))
}

/// Elsewhere the peak is not measured (the benchmark's figures are taken on Linux).
#[cfg(not(target_os = "linux"))]
fn wait_peak(mut child: Child) -> (bool, Option<f64>) {
    (child.wait().is_ok_and(|s| s.success()), None)
}

/// The peak resident memory so far of the running process `pid` (Linux), in bytes.
fn vm_hwm(pid: u32) -> Option<f64> {
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib * 1024.0)
}
