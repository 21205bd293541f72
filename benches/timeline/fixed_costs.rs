//! Issue 24 item 5: the fixed cost of one durable append against its floors, measured in one run on
//! the long SQLite fixture at the largest size: `tl append` against the `sqlite3` shell's durable
//! insert into a table of as many rows, and `timeline_append` in a new `tl-mcp` session, every call
//! from the first one timed, against a 300-byte write + `fdatasync` to a file on the same disk.
//! `TIMELINE_BENCH_APPEND=1` measures only these rows.

use super::*;

/// The floor of one durable change: 300 bytes appended to a file and `fdatasync`ed.
const FLOOR: &str = "floor: 300-byte append + `fdatasync` to a file on the same disk (in process)";

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
        let table = match &self.sqlite3 {
            Ok(shell) => {
                let table = self.sqlite3_table(shell, size);
                Some(self.working_copy(&table, &format!("fixed-reference-{size}")))
            }
            Err(_) => None,
        };
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
        // A new session on a fresh copy: the calls that open the database and its log count.
        let work = self.working_copy(&fixture[0], &format!("fixed-session-{size}"));
        let calls = if self.smoke { 3 } else { SESSION_CALLS };
        let session = RefCell::new(Vec::new());
        let floor_session = {
            let mut command = Command::new(&self.tl_mcp);
            command.arg("--db").arg(&work);
            let mut client = McpClient::spawn(command, "tl-mcp").expect("tl-mcp starts");
            let session = &session;
            let timeline = &timeline;
            let mut lanes: Vec<Lane> = vec![
                Box::new(move || {
                    let arguments =
                        json!({"timeline_id": timeline, "role": "user", "text": self.next_text()});
                    let started = Instant::now();
                    client
                        .call("timeline_append", arguments)
                        .expect("timeline_append succeeds");
                    let elapsed = secs(started);
                    session.borrow_mut().push(elapsed);
                    elapsed
                }),
                self.floor_lane(&floor),
            ];
            let plan = Plan {
                warmup: 0,
                min: calls,
                max: calls,
                budget: Duration::ZERO,
                slow: f64::INFINITY,
            };
            interleave(plan, &mut lanes)[1]
        };
        remove_db(&work);
        let _ = fs::remove_file(&floor_path);
        FixedCosts {
            size,
            tl_append,
            shell,
            session: session.take(),
            floor: floor_session,
            floor_process,
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
