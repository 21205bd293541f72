//! The PostgreSQL rows (issue 25, item 7), in every run where PostgreSQL's server programs are
//! found (`TIMELINE_BENCH_POSTGRES=0` skips them, `=only` runs these rows alone): append throughput
//! of 1, 2, 4 and 8 concurrent `tl-mcp` writers on distinct timelines, on PostgreSQL and on SQLite
//! (whose writers take turns), and `timeline_append` per call at 100 and 100k messages on both. The
//! server is a private one started here (its socket only, fsync on, as in production), with the
//! tests' helper included by path.
// The server helper runs on Linux only; elsewhere only the line saying so is used.
#![cfg_attr(
    not(target_os = "linux"),
    allow(dead_code, unused_imports, unused_variables)
)]

use super::{Bench, McpClient, chain, database, fmt_count, fmt_secs};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use timeline::store::Store;

#[cfg(target_os = "linux")]
#[path = "../../tests/common/pg_server.rs"]
mod pg_server;

/// Writer counts of the throughput rows.
const WRITERS: [usize; 4] = [1, 2, 4, 8];
/// Messages of each writer's timeline before it starts.
const START: usize = 50;

/// The PostgreSQL rows, first in a run; `true` when `TIMELINE_BENCH_POSTGRES=only` asks for nothing
/// else.
pub fn run(bench: &Bench) -> bool {
    let setting = std::env::var("TIMELINE_BENCH_POSTGRES").unwrap_or_default();
    measure_all(
        bench,
        setting == "0"
            || (setting != "only" && super::another_topic_alone("TIMELINE_BENCH_POSTGRES=only")),
    );
    setting == "only"
}

fn measure_all(bench: &Bench, skip: bool) {
    let heading = "\n### PostgreSQL (issue 25; targets: 8 writers on distinct timelines >= 3x one writer on PostgreSQL, `timeline_append` at 100k <= 1.2x at 100)\n";
    if skip {
        println!(
            "{heading}\nnot run: TIMELINE_BENCH_POSTGRES=0, or another topic's filter, skips them"
        );
        return;
    }
    #[cfg(target_os = "linux")]
    {
        let root =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pg-bench-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let options = pg_server::Options {
            durable: true,
            ..Default::default()
        };
        match pg_server::Server::start(&root, options) {
            Ok(server) => measure(bench, &server, heading),
            Err(why) => not_run(heading, &why),
        }
    }
    #[cfg(not(target_os = "linux"))]
    println!("{heading}\nnot run: the benchmark's PostgreSQL server runs on Linux only (setpriv)");
}

/// The loud line of rows that could not run (no server programs, a server that would not start);
/// under CI=true, where .ci/run installs the programs, a failure instead.
fn not_run(heading: &str, why: &str) {
    let line = format!(
        "!!!!! PostgreSQL rows not run: {why}; install Debian's postgresql package, or set TIMELINE_BENCH_POSTGRES=0 to skip them !!!!!"
    );
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "under CI=true the PostgreSQL rows must run: {line}"
    );
    println!("{heading}\n{line}");
    eprintln!("\n{line}\n");
}

#[cfg(target_os = "linux")]
fn measure(bench: &Bench, server: &pg_server::Server, heading: &str) {
    server.psql("postgres", "CREATE DATABASE bench");
    let uri = |schema: &str| format!("{}&schema={schema}", server.socket_uri("bench"));
    let calls = if bench.smoke { 3 } else { 200 };

    // Throughput: a fresh copy of 8 timelines of START messages for every writer count.
    let mut throughput = Vec::new();
    for &n in &WRITERS {
        let file = fixture(
            bench,
            &format!("writers-{n}"),
            (0..8)
                .map(|i| chain(i, START, i as usize * START))
                .collect(),
        );
        let pg = uri(&format!("writers_{n}"));
        convert(bench, &file, &pg);
        let on_pg = writers(bench, &pg, n, calls);
        let on_sqlite = writers(bench, file.to_str().unwrap(), n, calls);
        throughput.push((n, on_pg, on_sqlite));
    }

    // Per call at 100 and 100k messages, in interleaved rounds.
    let sizes = if bench.smoke {
        [100, 200]
    } else {
        [100, 100_000]
    };
    let mut targets = Vec::new();
    for size in sizes {
        let file = fixture(bench, &format!("chain-{size}"), vec![chain(0, size, 0)]);
        let pg = uri(&format!("chain_{size}"));
        convert(bench, &file, &pg);
        targets.push((size, pg, file));
    }
    let mut lanes = Vec::new();
    for (_, pg, file) in &targets {
        for db in [pg.as_str(), file.to_str().unwrap()] {
            let mut command = Command::new(&bench.tl_mcp);
            command.arg("--db").arg(db);
            let client = McpClient::spawn(command, "tl-mcp").expect("tl-mcp starts");
            lanes.push(bench.mcp_lane(
                client,
                "timeline_append",
                None,
                |text| json!({"timeline_id": "tl0", "role": "user", "text": text}),
            ));
        }
    }
    let per_call = super::interleave(bench.call_plan(), &mut lanes);
    drop(lanes);

    println!("{heading}");
    println!(
        "| writers | PostgreSQL appends/s | SQLite appends/s | PostgreSQL / SQLite |\n| ---: | ---: | ---: | ---: |"
    );
    for (n, pg, sqlite) in &throughput {
        println!(
            "| {n} | {pg:.0} | {sqlite:.0} | {:.2}x |",
            pg / sqlite.max(1e-9)
        );
    }
    println!(
        "\n| `timeline_append` per call | PostgreSQL (Unix socket) | SQLite |\n| --- | ---: | ---: |"
    );
    for (i, (size, _, _)) in targets.iter().enumerate() {
        println!(
            "| at {} messages | {} ({} runs) | {} ({} runs) |",
            fmt_count(*size),
            fmt_secs(per_call[2 * i].median),
            per_call[2 * i].runs,
            fmt_secs(per_call[2 * i + 1].median),
            per_call[2 * i + 1].runs
        );
    }
    let one = throughput[0].1;
    let eight = throughput[throughput.len() - 1].1;
    let scale = eight / one.max(1e-9);
    let growth = per_call[2].median / per_call[0].median.max(1e-12);
    let verdict = |met: bool| {
        if bench.smoke {
            "(smoke figure)"
        } else if met {
            "met"
        } else {
            "not met"
        }
    };
    let budgets = budget_rows(bench, &uri);

    println!(
        "\n| `tl budget --node HEAD --max 4000` on PostgreSQL | first | repeated (median) | statements sent, repeated |\n| --- | ---: | ---: | ---: |"
    );
    for b in &budgets {
        println!(
            "| at {} messages | {} | {} ({} runs) | {} |",
            fmt_count(b.size),
            fmt_secs(b.first),
            fmt_secs(b.repeated.median),
            b.repeated.runs,
            b.statements
        );
    }

    println!("\n| ratio | value | target |\n| --- | ---: | --- |");
    println!(
        "| PostgreSQL: 8 writers / 1 writer | {scale:.2}x | >= 3x: {} |",
        verdict(scale >= 3.0)
    );
    println!(
        "| PostgreSQL `timeline_append` at {} / at {} | {growth:.2}x | <= 1.2x: {} |",
        fmt_count(sizes[1]),
        fmt_count(sizes[0]),
        verdict(growth <= 1.2)
    );
    if let [small, large] = budgets.as_slice() {
        let (at, of) = (fmt_count(large.size), fmt_count(small.size));
        println!(
            "| PostgreSQL budget, repeated, at {at} / at {of} | {:.2}x | (issue 24's <= 1.5x is for SQLite at a million) |",
            large.repeated.median / small.repeated.median.max(1e-12)
        );
        println!(
            "| PostgreSQL budget, first, at {at} / at {of} | {:.2}x | (issue 24's <= 3x is for SQLite at a million) |",
            large.first / small.first.max(1e-12)
        );
        println!(
            "| PostgreSQL budget, statements of a repeated call, at {at} / at {of} | {} / {} | equal: {} |",
            large.statements,
            small.statements,
            verdict(large.statements == small.statements)
        );
    }
}

/// The budget rows of issue 24 on PostgreSQL: at the head of a chain, a first `tl budget` (it
/// creates the placeholders) and the same call repeated, with the statements the repeated call
/// sends (`TIMELINE_COUNT_READS=1`), which must not grow with the path.
struct BudgetRow {
    size: usize,
    first: f64,
    repeated: super::Measured,
    statements: u64,
}

#[cfg(target_os = "linux")]
fn budget_rows(bench: &Bench, uri: &dyn Fn(&str) -> String) -> Vec<BudgetRow> {
    let sizes: &[usize] = if bench.smoke {
        &[100, 200]
    } else {
        &[1_000, 100_000]
    };
    let repeats = if bench.smoke { 2 } else { 9 };
    sizes
        .iter()
        .map(|&size| {
            let file = fixture(bench, &format!("budget-{size}"), vec![chain(0, size, 0)]);
            let pg = uri(&format!("budget_{size}"));
            convert(bench, &file, &pg);
            let head = format!("n{size}");
            let args = [
                "--db",
                &pg,
                "--timeline",
                "tl0",
                "budget",
                "--node",
                &head,
                "--max",
                "4000",
            ];
            let run = |count: bool| {
                let mut command = Command::new(&bench.tl);
                command.args(args);
                if count {
                    command.env(timeline::store::COUNT_READS_VARIABLE, "1");
                }
                let started = Instant::now();
                let out = command.output().expect("tl runs");
                let took = super::secs(started);
                assert!(
                    out.status.success(),
                    "tl budget on PostgreSQL: {}",
                    String::from_utf8_lossy(&out.stderr)
                );
                (took, String::from_utf8_lossy(&out.stderr).into_owned())
            };
            let first = run(false).0;
            let repeated = super::median((0..repeats).map(|_| run(false).0).collect());
            let statements = run(true)
                .1
                .lines()
                .filter_map(|l| l.strip_prefix("storage statements sent: "))
                .filter_map(|n| n.trim().parse::<u64>().ok())
                .sum();
            BudgetRow {
                size,
                first,
                repeated,
                statements,
            }
        })
        .collect()
}

/// A SQLite file of `timelines`, written through the library into the run's work directory.
fn fixture(bench: &Bench, name: &str, timelines: Vec<timeline::model::Timeline>) -> PathBuf {
    let path = bench.work.join(format!("pg-{name}.db"));
    Store::create_from(&path, &database(timelines)).expect("write a benchmark database");
    path
}

/// Copies the file at `from` into the (new) schema of the URI `to` with `tl db convert`.
fn convert(bench: &Bench, from: &Path, to: &str) {
    let out = Command::new(&bench.tl)
        .arg("--db")
        .arg(from)
        .args(["db", "convert", "--to", to])
        .output()
        .expect("tl runs");
    assert!(
        out.status.success(),
        "tl db convert --to {to}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Appends per second of `n` `tl-mcp` sessions on `db`, each appending `calls` messages to a
/// timeline of its own, all started together once every session is connected and warm.
fn writers(bench: &Bench, db: &str, n: usize, calls: usize) -> f64 {
    let start = std::sync::Barrier::new(n + 1);
    let text = super::append_text(0);
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..n)
            .map(|i| {
                let (start, text, tl_mcp) = (&start, &text, &bench.tl_mcp);
                scope.spawn(move || {
                    let mut command = Command::new(tl_mcp);
                    command.arg("--db").arg(db);
                    let mut client = McpClient::spawn(command, "tl-mcp").expect("tl-mcp starts");
                    let args =
                        json!({"timeline_id": format!("tl{i}"), "role": "user", "text": text});
                    // The first call opens the connection and prepares the statements.
                    client
                        .call("timeline_append", args.clone())
                        .expect("warm-up append");
                    start.wait();
                    for _ in 0..calls {
                        client
                            .call("timeline_append", args.clone())
                            .expect("append");
                    }
                    Instant::now()
                })
            })
            .collect();
        start.wait();
        let began = Instant::now();
        let ended = threads
            .into_iter()
            .map(|t| t.join().expect("a writer"))
            .max()
            .expect("one writer");
        (n * calls) as f64 / ended.duration_since(began).as_secs_f64().max(1e-9)
    })
}
