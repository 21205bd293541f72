//! Issue 24 item 5: the fixed cost of one durable append against its floors, measured in one run on
//! the long SQLite fixture at the largest size: `tl append` against the `sqlite3` shell's durable
//! insert into a table of as many rows, and `timeline_append` in a new `tl-mcp` session, every call
//! from the first one timed, against a 300-byte write + `fdatasync` to a file on the same disk.
//! `TIMELINE_BENCH_APPEND=1` measures only these rows.

use super::*;

/// The floor of one durable change: 300 bytes appended to a file and `fdatasync`ed.
const FLOOR: &str = "floor: 300-byte append + `fdatasync` to a file on the same disk (in process)";

/// What one SQLite commit costs here, without Timeline: the reference table's insert through the
/// library in this process, with `tl`'s settings (WAL, `synchronous = FULL`), connection kept open.
const SQLITE_COMMIT: &str = "reference: one durable insert through the SQLite library in process (WAL, `synchronous = FULL`, a table of as many rows)";

/// What any MCP call costs before it does anything: the request line out, the answer back.
const PING: &str = "`ping` round trip in the same `tl-mcp` session";

/// Calls of the measured `tl-mcp` session, all timed (the first ones included).
const SESSION_CALLS: usize = 101;

/// What one run measured, in seconds.
struct FixedCosts {
    size: usize,
    tl_append: Measured,
    shell: Option<Measured>,
    /// Every call of the session, in order.
    session: Vec<f64>,
    /// The floor in turns with the session's calls (what they are compared with) and with the
    /// processes.
    floor: Measured,
    floor_process: Measured,
    /// In turns with the session's calls.
    ping: Measured,
    sqlite_commit: Option<Measured>,
}

impl Bench {
    /// A lane appending 300 bytes to `file` and syncing its data (and its new length).
    fn floor_lane<'a>(&'a self, file: &'a RefCell<fs::File>) -> Lane<'a> {
        Box::new(move || {
            let text = self.next_text();
            let mut bytes = text.into_bytes();
            bytes.resize(300, b'.');
            let mut file = file.borrow_mut();
            let started = Instant::now();
            file.write_all(&bytes)
                .and_then(|()| file.sync_data())
                .expect("write and sync the floor file");
            secs(started)
        })
    }

    /// A lane inserting one 300-byte row into the reference table through an open connection.
    fn sqlite_commit_lane<'a>(&'a self, conn: &'a rusqlite::Connection) -> Lane<'a> {
        Box::new(move || {
            let text = self.next_text();
            let started = Instant::now();
            conn.execute("INSERT INTO messages (text) VALUES (?1)", [&text])
                .expect("insert into the reference table");
            secs(started)
        })
    }

    fn measure_fixed_costs(&self, size: usize) -> FixedCosts {
        let fixture = self.fixtures(&format!("long-{size}"), &[Engine::Sqlite], || {
            Shape::Long.build(size)
        });
        let (timeline, _) = Shape::Long.target(size);
        let floor_path = self.work.join("floor.bin");
        let floor = RefCell::new(
            fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&floor_path)
                .expect("create the floor file"),
        );
        // `tl append` and the shell's insert, in turns with the floor.
        let work = self.working_copy(&fixture[0], &format!("fixed-append-{size}"));
        // The shell's table of as many rows (built once, cached), copied for each reference.
        let pristine = self
            .sqlite3
            .as_ref()
            .ok()
            .map(|shell| self.sqlite3_table(shell, size));
        let table = pristine
            .as_ref()
            .map(|t| self.working_copy(t, &format!("fixed-reference-{size}")));
        let (tl_append, shell, floor_process) = {
            let mut lanes: Vec<Lane> = vec![self.append_lane(&work, &timeline)];
            lanes.push(self.floor_lane(&floor));
            if let (Ok(shell), Some(table)) = (&self.sqlite3, &table) {
                lanes.push(self.sqlite3_lane(shell, table));
            }
            let measured = interleave(self.process_plan(), &mut lanes);
            (measured[0], measured.get(2).copied(), measured[1])
        };
        remove_db(&work);
        if let Some(table) = &table {
            remove_db(table);
        }
        // A new session on a fresh copy: the calls that open the database and its log count. In
        // turns with its calls: the floor, a `ping` (the protocol's share of a call) and a commit
        // through the SQLite library (SQLite's share).
        let work = self.working_copy(&fixture[0], &format!("fixed-session-{size}"));
        // A database Timeline has changed before, as one in use is: its log kept, blank, at the
        // length a session needs (`store::sqlite::kept_log`). One append, not timed.
        (self.append_lane(&work, &timeline))();
        let reference = pristine.as_ref().map(|t| {
            let copy = self.working_copy(t, &format!("fixed-library-{size}"));
            // The same for the reference: a blank log of 4 MiB, which SQLite writes over (zeros
            // written, not a hole, which would be allocated by the writes timed).
            let log = with_suffix(&copy, "-wal");
            fs::write(&log, vec![0; 4 << 20])
                .and_then(|()| fs::File::open(&log)?.sync_all())
                .expect("write the reference's log");
            let conn = rusqlite::Connection::open(&copy).expect("open the reference table");
            conn.execute_batch("PRAGMA synchronous = FULL;")
                .expect("set synchronous");
            conn.query_row("PRAGMA journal_mode = WAL", [], |_| Ok(()))
                .expect("set WAL");
            (copy, conn)
        });
        let calls = if self.smoke { 3 } else { SESSION_CALLS };
        let session = RefCell::new(Vec::new());
        let (floor_session, ping, sqlite_commit) = {
            let mut command = Command::new(&self.tl_mcp);
            command.arg("--db").arg(&work);
            let client = RefCell::new(McpClient::spawn(command, "tl-mcp").expect("tl-mcp starts"));
            let (session, timeline, client) = (&session, &timeline, &client);
            let mut lanes: Vec<Lane> = vec![
                Box::new(move || {
                    let arguments =
                        json!({"timeline_id": timeline, "role": "user", "text": self.next_text()});
                    let started = Instant::now();
                    client
                        .borrow_mut()
                        .call("timeline_append", arguments)
                        .expect("timeline_append succeeds");
                    let elapsed = secs(started);
                    session.borrow_mut().push(elapsed);
                    elapsed
                }),
                self.floor_lane(&floor),
                Box::new(move || {
                    let started = Instant::now();
                    client
                        .borrow_mut()
                        .request("ping", json!({}))
                        .expect("ping answers");
                    secs(started)
                }),
            ];
            if let Some((_, conn)) = &reference {
                lanes.push(self.sqlite_commit_lane(conn));
            }
            let plan = Plan {
                warmup: 0,
                min: calls,
                max: calls,
                budget: Duration::ZERO,
                slow: f64::INFINITY,
            };
            let measured = interleave(plan, &mut lanes);
            (measured[1], measured[2], measured.get(3).copied())
        };
        if let Some((copy, conn)) = reference {
            drop(conn);
            remove_db(&copy);
        }
        remove_db(&work);
        let _ = fs::remove_file(&floor_path);
        FixedCosts {
            size,
            tl_append,
            shell,
            session: session.take(),
            floor: floor_session,
            floor_process,
            ping,
            sqlite_commit,
        }
    }

    /// Measure and print the fixed costs at the largest size (with their targets).
    pub(super) fn print_fixed_costs(&self, sizes: &[usize]) {
        let size = *sizes.last().expect("at least one size");
        let m = self.measure_fixed_costs(size);
        let session = median(m.session.clone());
        let mean = m.session.iter().sum::<f64>() / m.session.len().max(1) as f64;
        let first = m.session.first().copied().unwrap_or(0.0);
        println!(
            "\n### Fixed costs at {} messages (issue 24 item 5; SQLite, long shape; median, runs in the last column)\n",
            fmt_count(m.size)
        );
        println!("| measurement | time | runs |\n| --- | ---: | ---: |");
        println!(
            "| {TL_APPEND} | {} | {} |",
            fmt_secs(m.tl_append.median),
            m.tl_append.runs
        );
        match &m.shell {
            Some(s) => println!("| {SQLITE3_INSERT} | {} | {} |", fmt_secs(s.median), s.runs),
            None => println!("| {SQLITE3_INSERT} | MISSING | — |"),
        }
        println!(
            "| `timeline_append` per call, a new `tl-mcp` session, every call from the first | {} (mean {}, first call {}) | {} |",
            fmt_secs(session.median),
            fmt_secs(mean),
            fmt_secs(first),
            session.runs
        );
        println!(
            "| {FLOOR}, in turns with the session | {} | {} |",
            fmt_secs(m.floor.median),
            m.floor.runs
        );
        println!(
            "| {FLOOR}, in turns with the processes | {} | {} |",
            fmt_secs(m.floor_process.median),
            m.floor_process.runs
        );
        println!("| {PING} | {} | {} |", fmt_secs(m.ping.median), m.ping.runs);
        match &m.sqlite_commit {
            Some(c) => println!("| {SQLITE_COMMIT} | {} | {} |", fmt_secs(c.median), c.runs),
            None => println!("| {SQLITE_COMMIT} | MISSING | — |"),
        }
        let verdict = |ratio: f64, limit: f64| match (self.smoke, ratio <= limit) {
            (true, _) => "(smoke figure, not a verdict)",
            (false, true) => "met",
            (false, false) => "**NOT met**",
        };
        println!("\n| target | ratio | goal |\n| --- | ---: | --- |");
        match &m.shell {
            Some(s) => {
                let r = m.tl_append.median / s.median.max(1e-9);
                println!(
                    "| `tl append` / `sqlite3` insert at {} rows | {r:.2} {} | ≤ 1.0 |",
                    fmt_count(m.size),
                    verdict(r, 1.0)
                );
            }
            None => println!("| `tl append` / `sqlite3` insert | MISSING | ≤ 1.0 |"),
        }
        for (what, value) in [("median", session.median), ("mean", mean)] {
            let r = value / m.floor.median.max(1e-9);
            println!(
                "| `timeline_append` per call ({what}, first calls included) / floor | {r:.2} {} | ≤ 1.5 |",
                verdict(r, 1.5)
            );
        }
        // What the medians are made of: a call pays the protocol's round trip and one SQLite commit
        // before any work of Timeline's own.
        let floor = m.floor.median.max(1e-9);
        println!(
            "\nWhat a `timeline_append` call is made of, as ratios to the floor: the `ping` round trip {:.2}, a commit through the SQLite library {}, the rest (Timeline's own work) {}.",
            m.ping.median / floor,
            m.sqlite_commit.map_or("MISSING".to_string(), |c| format!(
                "{:.2}",
                c.median / floor
            )),
            m.sqlite_commit.map_or("MISSING".to_string(), |c| format!(
                "{:.2}",
                (session.median - m.ping.median - c.median) / floor
            )),
        );
    }
}

/// With `TIMELINE_BENCH_APPEND=1`, measure and print only the fixed costs; says whether it did.
pub(super) fn only(bench: &Bench, sizes: &[usize]) -> bool {
    if !flag("TIMELINE_BENCH_APPEND") {
        return false;
    }
    println!(
        "\n## Timeline benchmark, fixed costs only ({}; load average {} before)",
        if bench.smoke { "smoke pass" } else { "release" },
        load_average()
    );
    bench.print_fixed_costs(sizes);
    println!("\nload average {} after", load_average());
    true
}
