//! Issue 24 item 6: the worst query shapes in one `tl-mcp` session on SQLite, on the long fixture
//! with a CJK sentence added to every message, so that every query below matches every message.
//! `TIMELINE_BENCH_SEARCH=1` measures only these rows (at the largest size).

use super::*;

/// The words of the generated texts that every message of 12 or more words holds, and the word
/// that always follows each of them (`message_text` steps 31 words on, 7 modulo 12).
fn search_words() -> Vec<(&'static str, &'static str)> {
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
    (0..WORDS.len())
        .map(|k| (WORDS[k], WORDS[(k + 7) % WORDS.len()]))
        .collect()
}

/// The shapes of issue 24 (item 6), each matching every message of the fixture; those over the
/// documented limit are refused at once.
fn queries() -> Vec<(String, String)> {
    let words = search_words();
    let prefixes = |n: usize| {
        (0..n)
            .map(|i| format!("{}*", &words[i % words.len()].0[..3]))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let phrases = |n: usize| {
        (0..n)
            .map(|i| {
                let (a, b) = words[i % words.len()];
                format!("\"{a} {b}\"")
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    let plain = |n: usize| {
        (0..n)
            .map(|i| words[i % words.len()].0)
            .collect::<Vec<_>>()
            .join(" ")
    };
    // The most a query may hold (the spec's `search_query`: 8 search terms, a phrase counting each
    // of its words and a prefix one more).
    let most = 8;
    vec![
        ("a word in every message".to_string(), "message".to_string()),
        (
            format!("{most} words (the most a query may hold)"),
            plain(most),
        ),
        (
            format!("{} prefix terms (the most)", most / 2),
            prefixes(most / 2),
        ),
        (
            format!("{} phrases of two words (the most)", most / 2),
            phrases(most / 2),
        ),
        (
            format!("{} phrases of two words (refused)", most / 2 + 1),
            phrases(most / 2 + 1),
        ),
        ("32 words (refused)".to_string(), plain(32)),
        ("32 prefix terms (refused)".to_string(), prefixes(32)),
        ("32 phrases (refused)".to_string(), phrases(32)),
        ("a two-character CJK word".to_string(), "预算".to_string()),
    ]
}

impl Bench {
    /// Returns (label, median seconds, whether tl-mcp refused the query with a tool error).
    fn measure_search_worst(&self, size: usize) -> Vec<(String, f64, bool)> {
        let fixture = self.fixtures(&format!("search-{size}"), &[Engine::Sqlite], || {
            let mut db = Shape::Long.build(size);
            for node in db.timelines[0].nodes.iter_mut().skip(1) {
                node.text.push_str(" 今年的预算很紧");
                node.tokens = estimate_tokens(&node.text);
            }
            database(db.timelines)
        });
        let work = self.working_copy(&fixture[0], "search-worst");
        let mut command = Command::new(&self.tl_mcp);
        command.arg("--db").arg(&work);
        let mut client = McpClient::spawn(command, "tl-mcp").expect("tl-mcp starts");
        let runs = if self.smoke { 1 } else { 7 };
        let mut rows = Vec::new();
        for (label, query) in queries() {
            let mut samples = Vec::new();
            let mut refused = false;
            for _ in 0..runs {
                let started = Instant::now();
                let answer = client
                    .request(
                        "tools/call",
                        json!({"name": "timeline_search", "arguments": {"query": query, "limit": 20}}),
                    )
                    .expect("tl-mcp answers timeline_search");
                samples.push(secs(started));
                refused = answer.get("isError") == Some(&Value::Bool(true));
            }
            rows.push((label, median(samples).median, refused));
        }
        drop(client);
        remove_db(&work);
        rows
    }

    /// Measure and print the worst cases at the largest size.
    pub(super) fn print_search_worst(&self, sizes: &[usize]) {
        let size = *sizes.last().expect("at least one size");
        // Measured before the heading, so that building the fixture prints nothing inside the table.
        let rows = self.measure_search_worst(size);
        println!(
            "\n### Search worst cases at {} messages (SQLite, one tl-mcp session, a page of 20, median of {}; target: under 100 ms, or refused by a documented limit)\n",
            fmt_count(size),
            if self.smoke { 1 } else { 7 }
        );
        println!("| query | time | answer | target |\n| --- | ---: | --- | --- |");
        for (label, t, refused) in rows {
            println!(
                "| {label} | {} | {} | {} |",
                fmt_secs(t),
                if refused { "refused" } else { "hits" },
                if self.smoke {
                    "(smoke figure)"
                } else if t < 0.1 {
                    "met"
                } else {
                    "**NOT met**"
                }
            );
        }
    }
}

/// With `TIMELINE_BENCH_SEARCH=1`, measure and print only the search worst cases; says whether it
/// did.
pub(super) fn only(bench: &Bench, sizes: &[usize]) -> bool {
    if !flag("TIMELINE_BENCH_SEARCH") {
        return false;
    }
    println!(
        "\n## Timeline benchmark, search worst cases only ({}; load average {} before)",
        if bench.smoke { "smoke pass" } else { "release" },
        load_average()
    );
    bench.print_search_worst(sizes);
    println!("\nload average {} after", load_average());
    true
}
