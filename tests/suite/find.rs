//! Finding things (issue 14): ranked search, the paged log and the branch diff through both binaries
//! (`tl` and `tl-mcp`) on both storage engines, the same hits in the same order from both engines,
//! the SQLite index's repair and migration, and `--format text`.

use crate::common;

use common::{Db, Engine, McpSession as Mcp};
use serde_json::{Value, json};

/// `tl` with `args`, parsed; and the same request through `tl-mcp` must give the same value.
#[track_caller]
fn both(db: &Db, mcp: &mut Mcp, tool: &str, args: &[&str], arguments: Value) -> Value {
    let cli = db.tl(args).json();
    let over_mcp = mcp.ok(tool, arguments);
    assert_eq!(cli, over_mcp, "tl {args:?} and {tool} differ");
    cli
}

fn nodes(hits: &Value) -> Vec<String> {
    hits["hits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            format!(
                "{}/{}",
                h["timeline_id"].as_str().unwrap(),
                h["node"].as_str().unwrap()
            )
        })
        .collect()
}

fn log_nodes(page: &Value) -> Vec<String> {
    page["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["node"].as_str().unwrap().to_string())
        .collect()
}

/// Two timelines: tl0 with main (n1..n4), a branch "idea" from n2 (n5, n6), a summary and a pin;
/// tl1 with two messages.
fn corpus() -> Db {
    let db = Db::created_at("1767225600");
    for (role, text) in [
        ("user", "Plan the budget for the trip"),
        (
            "assistant",
            "The budget is 2000 euros; budget budget budget for hotels",
        ),
        ("user", "Book the hotel near the station"),
        ("assistant", "Booked. The café opens at seven"),
    ] {
        db.tl(&["append", "--role", role, "--text", text]);
    }
    db.tl(&["fork", "--node", "n2", "--name", "idea"]).json();
    db.tl(&["switch", "--name", "idea"]).json();
    db.tl(&[
        "append",
        "--role",
        "user",
        "--text",
        "What if the budget doubles?",
    ])
    .json();
    db.tl(&[
        "append",
        "--role",
        "system",
        "--text",
        "Budget review scheduled",
    ])
    .json();
    db.tl(&["switch", "--name", "main"]).json();
    db.tl(&["pin", "--node", "n3"]).json();
    db.tl(&[
        "summarize",
        "--from",
        "n1",
        "--to",
        "n2",
        "--summary",
        "Budget agreed: 2000 euros",
    ])
    .json();
    db.tl(&["create"]).json();
    for text in ["An unrelated budget talk", "Nothing to see here"] {
        db.tl(&[
            "--timeline",
            "tl1",
            "append",
            "--role",
            "user",
            "--text",
            text,
        ])
        .json();
    }
    // Messages without the word, so that it is rare enough for a positive weight (BM25).
    for i in 0..10 {
        db.tl(&[
            "--timeline",
            "tl1",
            "append",
            "--role",
            "assistant",
            "--text",
            &format!("filler {i}"),
        ])
        .json();
    }
    db
}

on_every_engine! {
    #[test]
    fn searches_reading_all_or_only_the_matches_give_the_scans_pages() {
        let (db, scan) = wide_corpus_from_a_snapshot();
        let search = |path: &std::path::Path, args: &[&str]| {
            let out = std::process::Command::new(common::TL)
                .arg("--db")
                .arg(path)
                .arg("search")
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "{args:?}: {out:?}");
            serde_json::from_slice::<Value>(&out.stdout).unwrap()
        };
        let mut pages = 0;
        for query in [
            "common",                    // 3,000 messages: one pass
            "common alpha",              // both in more than 1,024: one pass
            "\"beta gamma\" alp*",     // a phrase and a prefix, both common: one pass
            "common entry77",            // one rare word: counted, then the matches alone
            "\"beta gamma\" delta",    // a rare word with a common phrase
            "omega alpha",               // one pass, omega weighs more than the IDF floor
            "omega entry77",             // counted: omega's exact count sets its weight
            "\"gamma common\"",        // no message holds it
            "common common",             // a phrase twice: each counts
            "alpha alp*",                // a word and a prefix that starts it
        ] {
            for filter in [
                vec![],
                vec!["--role", "user"],
                vec!["--timeline", "tl1"],
                vec!["--zone", "hot"],
            ] {
                let mut args = vec!["--query", query, "--limit", "7"];
                args.extend(filter.iter().copied());
                // The first three pages, each after the last one's cursor.
                let mut cursor: Option<String> = None;
                for _ in 0..3 {
                    let mut paged = args.clone();
                    if let Some(c) = &cursor {
                        paged.extend(["--cursor", c.as_str()]);
                    }
                    let expected = search(&scan, &paged);
                    assert_eq!(search(&db.path, &paged), expected, "{paged:?}");
                    pages += usize::from(!expected["hits"].as_array().unwrap().is_empty());
                    match expected["next_cursor"].as_str() {
                        Some(next) => cursor = Some(next.to_string()),
                        None => break,
                    }
                }
            }
        }
        // Most of those pages hold hits: the comparison is not of empty answers.
        assert!(pages >= 40, "{pages} pages with hits");
    }

    #[test]
    fn search_ranks_by_relevance_then_recency() {
        let db = corpus();
        let mut mcp = Mcp::start(&db);
        let all = both(&db, &mut mcp, "timeline_search", &["search", "--query", "budget"], json!({"query": "budget"}));
        // n2 says budget four times; the short messages come next, newest first among equals.
        let order = nodes(&all);
        assert_eq!(order[0], "tl0/n2", "{all}");
        assert_eq!(order.len(), 6, "{all}");
        let scores: Vec<f64> = all["hits"].as_array().unwrap().iter().map(|h| h["score"].as_f64().unwrap()).collect();
        assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
        assert_eq!(all["next_cursor"], Value::Null);
        let first = &all["hits"][0];
        assert_eq!(first["role"], "assistant");
        assert_eq!(first["created_at"], 1767225600);
        assert_eq!(first["zone"], "hot");
        assert_eq!(
            first["snippet"],
            "The «budget» is 2000 euros; «budget» «budget» «budget» for hotels"
        );
        // Every word must occur; phrases keep their order; prefixes.
        let two = both(&db, &mut mcp, "timeline_search", &["search", "--query", "budget euros"], json!({"query": "budget euros"}));
        let mut two = nodes(&two);
        two.sort();
        assert_eq!(two, ["tl0/n2", "tl0/n7"]);
        let phrase = both(&db, &mut mcp, "timeline_search", &["search", "--query", "\"budget agreed\""], json!({"query": "\"budget agreed\""}));
        assert_eq!(nodes(&phrase), ["tl0/n7"]);
        let reversed = both(&db, &mut mcp, "timeline_search", &["search", "--query", "\"agreed budget\""], json!({"query": "\"agreed budget\""}));
        assert_eq!(nodes(&reversed), Vec::<String>::new());
        let prefix = both(&db, &mut mcp, "timeline_search", &["search", "--query", "boo*"], json!({"query": "boo*"}));
        assert_eq!(nodes(&prefix), ["tl0/n4", "tl0/n3"]);
        let none = both(&db, &mut mcp, "timeline_search", &["search", "--query", "zebra"], json!({"query": "zebra"}));
        assert_eq!(none, json!({"hits": [], "next_cursor": null}));
    }

    #[test]
    fn search_filters() {
        let db = corpus();
        let mut mcp = Mcp::start(&db);
        let mut check = |args: &[&str], arguments: Value, expected: &[&str]| {
            let mut cli = vec!["search", "--query", "budget"];
            cli.extend_from_slice(args);
            let mut arguments = arguments;
            arguments["query"] = json!("budget");
            let result = both(&db, &mut mcp, "timeline_search", &cli, arguments);
            assert_eq!(nodes(&result), expected, "{args:?}: {result}");
        };
        check(&["--timeline", "tl1"], json!({"timeline_id": "tl1"}), &["tl1/n1"]);
        check(&["--timeline", "tl0", "--branch", "main"], json!({"timeline_id": "tl0", "branch": "main"}), &["tl0/n2", "tl0/n1"]);
        // Without a timeline, a branch is the default timeline's (tl0).
        check(&["--branch", "idea"], json!({"branch": "idea"}), &["tl0/n2", "tl0/n6", "tl0/n5", "tl0/n1"]);
        check(&["--under", "n2"], json!({"under": "n2"}), &["tl0/n2", "tl0/n6", "tl0/n5"]);
        check(&["--under", "n5"], json!({"under": "n5"}), &["tl0/n6", "tl0/n5"]);
        check(&["--role", "system"], json!({"role": "system"}), &["tl0/n6"]);
        check(&["--role", "summary"], json!({"role": "summary"}), &["tl0/n7"]);
        check(&["--zone", "cold"], json!({"zone": "cold"}), &[]);
        // Every message of the corpus was written at 2026-01-01T00:00:00Z (the tests' clock).
        let all = ["tl0/n2", "tl0/n6", "tl1/n1", "tl0/n7", "tl0/n5", "tl0/n1"];
        check(&["--since", "0"], json!({"since": "0"}), &all);
        check(&["--until", "2100-01-01"], json!({"until": "2100-01-01"}), &all);
        check(&["--since", "2026-01-01T00:00:00Z"], json!({"since": "2026-01-01T00:00:00Z"}), &all);
        check(&["--since", "2026-01-02"], json!({"since": "2026-01-02"}), &[]);
        check(&["--until", "1767225599"], json!({"until": "1767225599"}), &[]);
        check(&["--zone", "all", "--role", "user", "--timeline", "tl0"], json!({"zone": "all", "role": "user", "timeline_id": "tl0"}), &["tl0/n5", "tl0/n1"]);
        // Archived messages are found, and the zone filter tells them apart.
        db.tl(&["switch", "--name", "idea"]).json();
        db.tl(&["append", "--role", "summary", "--text", "idea done"]).json();
        db.tl(&["summarize", "--from", "n5", "--to", "n8", "--summary", "Idea: double budget"]).json();
        db.tl(&["switch", "--name", "main"]).json();
        db.tl(&["archive-branch", "--name", "idea"]).json();
        check(&["--zone", "cold"], json!({"zone": "cold"}), &["tl0/n6", "tl0/n5"]);
        check(&["--zone", "hot", "--timeline", "tl0"], json!({"zone": "hot", "timeline_id": "tl0"}), &["tl0/n2", "tl0/n9", "tl0/n7", "tl0/n1"]);
    }

    #[test]
    fn search_argument_errors() {
        let db = corpus();
        let mut mcp = Mcp::start(&db);
        for (args, arguments, cli_message) in [
            (vec!["--query", "!!! *"], json!({"query": "!!! *"}), "invalid argument --query: it has no word to search for (only spaces, punctuation or *); give at least one word"),
            (vec!["--query", "x", "--since", "yesterday"], json!({"query": "x", "since": "yesterday"}), "invalid argument --since: \"yesterday\" is not a time; give Unix seconds (1767225600) or RFC 3339 (2026-01-01T00:00:00Z or 2026-01-01)"),
            (vec!["--query", "x", "--cursor", "zz"], json!({"query": "x", "cursor": "zz"}), "invalid argument --cursor: not a cursor of search; pass the next_cursor of the previous page unchanged, or leave it out for the first page"),
        ] {
            let mut cli = vec!["search"];
            cli.extend(args);
            db.tl(&cli).err(2, &json!({"error": cli_message}).to_string());
            let error = mcp.call("timeline_search", arguments).unwrap_err();
            assert!(error["error"].as_str().unwrap().starts_with("invalid argument `"), "{error}");
        }
        let run = db.tl(&["search", "--query", "x", "--limit", "0"]);
        assert_eq!(run.code, 2, "{run:?}");
        assert!(run.stderr.contains("must be at least 1"), "{run:?}");
        assert_eq!(db.tl(&["search", "--query", "x", "--limit", "1001"]).code, 2);
        let missing = db.tl(&["search", "--query", "x", "--branch", "nope"]);
        assert_eq!(missing.code, 1, "{missing:?}");
        let run = db.tl(&["search", "--query", "x", "--timeline", "tl9"]);
        assert_eq!(run.code, 1, "{run:?}");
    }

    #[test]
    fn search_with_the_most_words_phrases_and_prefixes_a_query_may_hold() {
        let db = Db::created_at("1767225600");
        for text in [
            "alphabet betamax gammaray deltawing epsilon zetajones etage theatre",
            "alphabet betamax gammaray deltawing epsilon zetajones etage",
            "alpha beta gamma delta epsilon zeta eta the end of it",
            "beta alpha gamma delta epsilon zeta eta the end of it",
            "nothing here",
        ] {
            db.tl(&["append", "--role", "user", "--text", text]).json();
        }
        let mut mcp = Mcp::start(&db);
        // The most a query may hold (8 search terms) of each kind: 4 prefixes, 4 phrases of two
        // words, and every kind together ("alpha beta" 2, gam* 2, 年 a prefix 2, e-mail 2).
        let prefixes = "alp* bet* gam* del*";
        let phrases = "\"alpha beta\" \"beta gamma\" \"gamma delta\" \"delta epsilon\"";
        let mixed = "\"alpha beta\" gam* 年 e-mail";
        db.tl(&["append", "--role", "user", "--text", "alpha beta gamma 年 e-mail end it"]).json();
        for (query, expected) in [
            // n1..n4 hold every prefix; each prefix is in most messages (the IDF floor), so the
            // shorter messages rank first, and of equal scores and times the later node.
            (prefixes.to_string(), vec!["tl0/n2", "tl0/n1", "tl0/n4", "tl0/n3"]),
            (phrases.to_string(), vec!["tl0/n3"]),
            (mixed.to_string(), vec!["tl0/n6"]),
            ("a b c d e f g h".to_string(), vec![]),
        ] {
            let result = both(&db, &mut mcp, "timeline_search", &["search", "--query", &query], json!({"query": query}));
            assert_eq!(nodes(&result), expected, "{query}: {result}");
        }
        // One more term is refused, whatever its kind; a phrase counts each of its words, a prefix
        // one more.
        for (query, n) in [
            (format!("{prefixes} x"), 9),
            (format!("{prefixes} nod*"), 10),
            (format!("{phrases} e-mail"), 10),
            (format!("{phrases} 年预算"), 10),
            (format!("{mixed} x"), 9),
            ("\"a b c d e f g h i\"".to_string(), 9),
            ("w ".repeat(33), 33),
        ] {
            let rest = format!("{n} search terms, more than the 8 one query may hold: a word counts 1, a \"phrase\" 1 for each of its words (a Chinese, Japanese or Korean word 1 for each pair of characters), and a prefix* 1 more; drop the least telling words");
            db.tl(&["search", "--query", &query]).err(2, &json!({"error": format!("invalid argument --query: {rest}")}).to_string());
            let error = mcp.call("timeline_search", json!({"query": query})).unwrap_err();
            assert_eq!(error["error"], format!("invalid argument `query`: {rest}"), "{query}");
        }
    }

    #[test]
    fn search_cjk_emoji_and_accents() {
        let db = Db::created_at("1767225600");
        for text in [
            "今年的预算很紧，我们需要讨论",
            "会議の予算について話しましょう",
            "예산 회의는 내일입니다",
            "Ship it 🚀 then celebrate 🎉🎉",
            "Crème brûlée at the CAFÉ",
            "预算",
            "The iPhone预算案 draft",
        ] {
            db.tl(&["append", "--role", "user", "--text", text]).json();
        }
        let mut mcp = Mcp::start(&db);
        for (query, expected) in [
            ("预算", vec!["tl0/n6", "tl0/n1", "tl0/n7"]),
            ("预", vec!["tl0/n6", "tl0/n1", "tl0/n7"]),
            ("讨论", vec!["tl0/n1"]),
            ("很紧", vec!["tl0/n1"]),
            ("算很", vec!["tl0/n1"]),
            ("预算案", vec!["tl0/n7"]),
            ("算预", vec![]),
            ("予算", vec!["tl0/n2"]),
            ("会議 話し", vec!["tl0/n2"]),
            ("예산", vec!["tl0/n3"]),
            ("회의", vec!["tl0/n3"]),
            ("🎉", vec!["tl0/n4"]),
            ("🚀 ship", vec!["tl0/n4"]),
            ("cafe", vec!["tl0/n5"]),
            ("brulee CREME", vec!["tl0/n5"]),
            ("café", vec!["tl0/n5"]),
            ("iphone", vec!["tl0/n7"]),
        ] {
            let result = both(&db, &mut mcp, "timeline_search", &["search", "--query", query], json!({"query": query}));
            let mut found = nodes(&result);
            let mut expected: Vec<String> = expected.into_iter().map(String::from).collect();
            found.sort();
            expected.sort();
            assert_eq!(found, expected, "{query}: {result}");
        }
        let hit = db.tl(&["search", "--query", "预算"]).json();
        let snippets: Vec<&str> = hit["hits"].as_array().unwrap().iter().map(|h| h["snippet"].as_str().unwrap()).collect();
        assert!(snippets.contains(&"今年的«预算»很紧，我们需要讨论"), "{snippets:?}");
        assert!(snippets.contains(&"The iPhone«预算»案 draft"), "{snippets:?}");
        let emoji = db.tl(&["search", "--query", "🎉"]).json();
        assert_eq!(emoji["hits"][0]["snippet"], "Ship it 🚀 then celebrate «🎉🎉»");
    }

    #[test]
    fn search_pages_never_repeat_or_skip_with_appends_in_between() {
        let db = Db::created_at("1767225600");
        // Equal texts score equally, so the order is by recency: newest first.
        for _ in 0..7 {
            db.tl(&["append", "--role", "user", "--text", "same words here"]).json();
        }
        let mut mcp = Mcp::start(&db);
        let mut seen = Vec::new();
        let mut cursor: Option<String> = None;
        let mut round = 0;
        loop {
            let mut args = vec!["search".to_string(), "--query".into(), "same words".into(), "--limit".into(), "3".into()];
            let mut arguments = json!({"query": "same words", "limit": 3});
            if let Some(c) = &cursor {
                args.extend(["--cursor".to_string(), c.clone()]);
                arguments["cursor"] = json!(c);
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let page = both(&db, &mut mcp, "timeline_search", &args, arguments);
            seen.extend(nodes(&page));
            // Another writer appends matching and other messages between pages.
            db.tl(&["append", "--role", "user", "--text", "same words here"]).json();
            db.tl(&["append", "--role", "user", "--text", "unrelated"]).json();
            round += 1;
            match page["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => break,
            }
            assert!(round < 10);
        }
        assert_eq!(seen, ["tl0/n7", "tl0/n6", "tl0/n5", "tl0/n4", "tl0/n3", "tl0/n2", "tl0/n1"]);
    }

    #[test]
    fn log_pages_newest_first_stable_under_appends() {
        let db = Db::created_at("1767225600");
        for i in 1..=7 {
            db.tl(&["append", "--role", "user", "--text", &format!("message {i}")]).json();
        }
        let mut mcp = Mcp::start(&db);
        let first = both(&db, &mut mcp, "timeline_log", &["log", "--limit", "3"], json!({"timeline_id": "tl0", "limit": 3}));
        assert_eq!(log_nodes(&first), ["n7", "n6", "n5"]);
        assert_eq!(first["messages"][0], json!({"node": "n7", "role": "user", "text": "message 7", "tokens": 3, "created_at": 1767225600, "zone": "hot", "pinned": false, "heads": ["main"]}));
        let cursor = first["next_cursor"].as_str().unwrap().to_string();
        // Appends from another process between pages change nothing of the next pages.
        db.tl(&["append", "--role", "user", "--text", "late 1"]).json();
        db.tl(&["append", "--role", "user", "--text", "late 2"]).json();
        let second = both(&db, &mut mcp, "timeline_log", &["log", "--limit", "3", "--cursor", &cursor], json!({"timeline_id": "tl0", "limit": 3, "cursor": cursor}));
        assert_eq!(log_nodes(&second), ["n4", "n3", "n2"]);
        let cursor = second["next_cursor"].as_str().unwrap().to_string();
        let third = both(&db, &mut mcp, "timeline_log", &["log", "--limit", "3", "--cursor", &cursor], json!({"timeline_id": "tl0", "limit": 3, "cursor": cursor}));
        assert_eq!(log_nodes(&third), ["n1"]);
        assert_eq!(third["next_cursor"], Value::Null);
        // The default page holds everything here; the newest message is now n9.
        let all = both(&db, &mut mcp, "timeline_log", &["log"], json!({"timeline_id": "tl0"}));
        assert_eq!(log_nodes(&all).len(), 9);
        assert_eq!(all["next_cursor"], Value::Null);
        // A branch, or the path up to a node.
        db.tl(&["fork", "--node", "n3", "--name", "side"]).json();
        let side = both(&db, &mut mcp, "timeline_log", &["log", "--branch", "side"], json!({"timeline_id": "tl0", "branch": "side"}));
        assert_eq!(log_nodes(&side), ["n3", "n2", "n1"]);
        assert_eq!(side["messages"][0]["heads"], json!(["side"]));
        let upto = both(&db, &mut mcp, "timeline_log", &["log", "--node", "n2", "--limit", "1"], json!({"timeline_id": "tl0", "node": "n2", "limit": 1}));
        assert_eq!(log_nodes(&upto), ["n2"]);
        assert!(upto["next_cursor"].is_string());
        // Errors.
        db.tl(&["log", "--branch", "side", "--node", "n2"]).err(2, r#"{"error":"invalid arguments --branch and --node: give one of them (a branch's path, or the path up to a node), not both"}"#);
        db.tl(&["log", "--cursor", "abc"]).err(2, r#"{"error":"invalid argument --cursor: not a cursor of log; pass the next_cursor of the previous page unchanged, or leave it out for the first page"}"#);
        db.tl(&["create"]).json();
        db.tl(&["--timeline", "tl1", "log", "--cursor", &cursor]).err(2, r#"{"error":"invalid argument --cursor: it continues a log of tl0, not of tl1"}"#);
        let empty = db.tl(&["--timeline", "tl1", "log"]).json();
        assert_eq!(empty, json!({"messages": [], "next_cursor": null}));
        let error = mcp.call("timeline_log", json!({"timeline_id": "tl0", "branch": "nope"})).unwrap_err();
        assert!(error["error"].as_str().unwrap().starts_with("branch not found"), "{error}");
    }

    #[test]
    fn diff_of_nested_forks() {
        let db = Db::created_at("1767225600");
        for text in ["root question", "first answer", "main goes on"] {
            db.tl(&["append", "--role", "user", "--text", text]).json();
        }
        db.tl(&["fork", "--node", "n2", "--name", "a"]).json();
        db.tl(&["switch", "--name", "a"]).json();
        db.tl(&["append", "--role", "assistant", "--text", "a one"]).json(); // n4
        db.tl(&["append", "--role", "user", "--text", "a two"]).json(); // n5
        db.tl(&["fork", "--node", "n4", "--name", "b"]).json();
        db.tl(&["switch", "--name", "b"]).json();
        db.tl(&["append", "--role", "user", "--text", "b one"]).json(); // n6
        db.tl(&["append", "--role", "assistant", "--text", "b two"]).json(); // n7
        db.tl(&["pin", "--node", "n6"]).json();
        db.tl(&["summarize", "--from", "n6", "--to", "n7", "--summary", "b in short"]).json(); // n8
        let mut mcp = Mcp::start(&db);
        let ab = both(&db, &mut mcp, "timeline_diff", &["diff", "--left", "a", "--right", "b"], json!({"timeline_id": "tl0", "left": "a", "right": "b"}));
        assert_eq!(ab["ancestor"], "n4");
        assert_eq!(ab["left"]["name"], "a");
        assert_eq!(ab["left"]["head"], "n5");
        assert_eq!(log_nodes(&ab["left"]), ["n5"]);
        assert_eq!(log_nodes(&ab["right"]), ["n6", "n7"]);
        assert_eq!(ab["right"]["messages"][0]["pinned"], true);
        assert_eq!(ab["right"]["messages"][1]["heads"], json!(["b"]));
        let main_b = both(&db, &mut mcp, "timeline_diff", &["diff", "--left", "main", "--right", "b"], json!({"timeline_id": "tl0", "left": "main", "right": "b"}));
        assert_eq!(main_b["ancestor"], "n2");
        assert_eq!(log_nodes(&main_b["left"]), ["n3"]);
        assert_eq!(log_nodes(&main_b["right"]), ["n4", "n6", "n7"]);
        // Nodes as sides; the summary hangs off n4 (the parent of its range's start).
        let nodes_diff = both(&db, &mut mcp, "timeline_diff", &["diff", "--left", "n8", "--right", "n5"], json!({"timeline_id": "tl0", "left": "n8", "right": "n5"}));
        assert_eq!(nodes_diff["ancestor"], "n4");
        assert_eq!(nodes_diff["left"]["name"], Value::Null);
        assert_eq!(nodes_diff["left"]["messages"][0]["summary"], json!({"kind": "real", "from": "n6", "to": "n7", "version": 1}));
        // A side that is an ancestor of the other has nothing after the ancestor.
        let ancestor = both(&db, &mut mcp, "timeline_diff", &["diff", "--left", "n2", "--right", "b"], json!({"timeline_id": "tl0", "left": "n2", "right": "b"}));
        assert_eq!(ancestor["ancestor"], "n2");
        assert_eq!(log_nodes(&ancestor["left"]), Vec::<String>::new());
        let same = both(&db, &mut mcp, "timeline_diff", &["diff", "--left", "b", "--right", "b"], json!({"timeline_id": "tl0", "left": "b", "right": "b"}));
        assert_eq!(same["ancestor"], "n7");
        let root = both(&db, &mut mcp, "timeline_diff", &["diff", "--left", "n0", "--right", "n1"], json!({"timeline_id": "tl0", "left": "n0", "right": "n1"}));
        assert_eq!(root["ancestor"], "n0");
        db.tl(&["diff", "--left", "nope", "--right", "b"]).err(1, r#"{"error":"not found: --left: no branch is named \"nope\" in timeline tl0 (branches: main, a, b); list them with `tl branches`"}"#);
        let error = mcp.call("timeline_diff", json!({"timeline_id": "tl0", "left": "a", "right": "n99"})).unwrap_err();
        assert_eq!(error["error"], "not found: `right`: no branch is named \"n99\" and no such node exists in timeline tl0 (it has n0..n8) (branches: main, a, b); list them with `timeline_branches` (`timeline_id: \"tl0\"`)");
    }
}

/// The same corpus in a JSON and a SQLite database gives the same hits, scores and order for every
/// query, through `tl`.
#[test]
fn both_engines_return_the_same_hits_in_the_same_order() {
    let words = [
        "budget", "hotel", "train", "decision", "café", "meeting", "预算", "会议", "讨论", "🎉",
        "review", "plan", "euros", "予算", "예산",
    ];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let mut script: Vec<Vec<String>> = Vec::new();
    for i in 0..80 {
        let len = 1 + next(12);
        let text: Vec<&str> = (0..len).map(|_| words[next(words.len())]).collect();
        let joiner = if i % 3 == 0 { "" } else { " " };
        let role = ["user", "assistant", "system"][i % 3];
        script.push(
            ["append", "--role", role, "--text", &text.join(joiner)]
                .map(String::from)
                .to_vec(),
        );
        if i % 17 == 5 {
            script.push(
                [
                    "fork",
                    "--node",
                    &format!("n{}", i / 2 + 1),
                    "--name",
                    &format!("b{i}"),
                ]
                .map(String::from)
                .to_vec(),
            );
        }
        if i == 40 {
            script.push(["create"].map(String::from).to_vec());
        }
    }
    let dbs: Vec<Db> = [Engine::Json, Engine::Sqlite]
        .into_iter()
        .map(|engine| {
            common::use_engine(engine);
            let db = Db::created_at("1767225600");
            for step in &script {
                let args: Vec<&str> = step.iter().map(String::as_str).collect();
                db.tl(&args).json();
            }
            db
        })
        .collect();
    for query in [
        "budget",
        "预算",
        "预",
        "budget hotel",
        "\"budget hotel\"",
        "bu*",
        "🎉",
        "cafe",
        "会议 讨论",
        "예산",
        "decision* 予算",
        "plan",
    ] {
        for extra in [
            vec![],
            vec!["--role", "user"],
            vec!["--limit", "5"],
            vec!["--timeline", "tl1"],
        ] {
            let mut args = vec!["search", "--query", query];
            args.extend(extra.iter().copied());
            let json = dbs[0].tl(&args).json();
            let sqlite = dbs[1].tl(&args).json();
            assert_eq!(json, sqlite, "{args:?}");
        }
    }
}

/// A corpus of 3,000 messages (two timelines) where some words and phrases are in more than 1,024
/// messages: SQLite then counts the phrases while it reads every message holding any of them (one
/// pass), and with a phrase in fewer it counts each and reads the matches alone. Both give the JSON
/// scan's hits, scores and pages, with and without filters. `omega` is in 1,200 messages: more
/// than the first count's 1,024, fewer than half, so its weight depends on its exact count.
fn wide_corpus_from_a_snapshot() -> (Db, std::path::PathBuf) {
    let db = Db::new();
    let timeline = |id: u64, count: u64| {
        let nodes: Vec<Value> = (1..=count)
            .map(|i| {
                let mut words = vec![format!("entry{i} common")];
                if i % 3 != 0 {
                    words.push("alpha".into());
                }
                if i % 4 != 0 {
                    words.push("beta gamma".into());
                }
                if i % 7 == 0 {
                    words.push("delta".into());
                }
                if i % 5 < 2 {
                    words.push("omega".into());
                }
                words.extend((0..i % 5).map(|_| "filler".to_string()));
                json!({
                    "id": format!("n{i}"), "parent": format!("n{}", i - 1),
                    "role": if i % 2 == 0 { "user" } else { "assistant" },
                    "text": words.join(" "), "tokens": 10, "created_at": 1_767_225_600 + i % 50,
                })
            })
            .collect();
        json!({
            "id": format!("tl{id}"), "next_node": count + 1, "current_branch": "main",
            "branches": [{ "name": "main", "head": format!("n{count}") }], "nodes": nodes,
        })
    };
    let snapshot = json!({
        "format_version": 1, "next_timeline": 2,
        "timelines": [timeline(0, 2_400), timeline(1, 600)],
    });
    let scan = db.dir.path().join("scan.json");
    std::fs::write(&scan, snapshot.to_string()).unwrap();
    db.fill_from_snapshot(&scan);
    (db, scan)
}

/// `tl db check --repair` rebuilds a damaged SQLite search index; a database from before the index
/// gets one, holding its existing messages, when it is first opened.
#[test]
fn sqlite_search_index_repair_and_migration() {
    common::use_engine(Engine::Sqlite);
    let db = Db::created_at("1767225600");
    for text in ["alpha budget", "beta budget", "gamma"] {
        db.tl(&["append", "--role", "user", "--text", text]).json();
    }
    // The appended messages wait for the index (src/store/sqlite/pending.rs); the repair indexes
    // them, so that the damage below reaches them.
    db.tl(&["db", "check", "--repair"]).json();
    let before = db.tl(&["search", "--query", "budget"]).json();
    assert_eq!(nodes(&before), ["tl0/n2", "tl0/n1"]);
    {
        let conn = rusqlite::Connection::open(&db.path).unwrap();
        conn.execute(
            "INSERT INTO search_index (search_index) VALUES ('delete-all')",
            [],
        )
        .unwrap();
    }
    assert_eq!(
        db.tl(&["search", "--query", "budget"]).json()["hits"],
        json!([])
    );
    let check = db.tl(&["db", "check"]);
    assert_eq!(check.code, 3, "{check:?}");
    assert!(
        check.stderr.contains(
            "3 searchable message(s) missing from the search index; run tl db check --repair"
        ),
        "{check:?}"
    );
    let repaired = db.tl(&["db", "check", "--repair"]).json();
    assert_eq!(repaired["ok"], true);
    assert_eq!(repaired["rebuilt"], json!(["search index"]));
    assert_eq!(db.tl(&["search", "--query", "budget"]).json(), before);
    db.tl(&["db", "check"]).json();
    // A database of schema version 2 (no index yet) is migrated and indexed on first use.
    {
        let conn = rusqlite::Connection::open(&db.path).unwrap();
        conn.execute_batch(
            "DROP TABLE search_pending; DROP INDEX nodes_summaries; DROP INDEX nodes_pinned; DROP INDEX nodes_by_real_start; ALTER TABLE nodes DROP COLUMN jump; ALTER TABLE nodes DROP COLUMN path_min_tokens; DROP INDEX nodes_with_newer_parent; DROP INDEX imports_by_digest; ALTER TABLE nodes DROP COLUMN provenance; DROP TABLE search_index; DROP TABLE search_docs; PRAGMA user_version = 2;",
        )
        .unwrap();
    }
    assert_eq!(db.tl(&["search", "--query", "budget"]).json(), before);
    db.tl(&["db", "check"]).json();
    // The JSON snapshot stores no index: nothing to rebuild.
    common::use_engine(Engine::Json);
    let json_db = Db::created_at("1767225600");
    let report = json_db.tl(&["db", "check", "--repair"]).json();
    assert_eq!(report["rebuilt"], json!([]));
    // Converting carries the messages into a new index.
    let target = json_db.dir.path().join("copy.db");
    json_db
        .tl(&["append", "--role", "user", "--text", "converted budget"])
        .json();
    json_db
        .tl(&["db", "convert", "--to", target.to_str().unwrap()])
        .json();
    let out = std::process::Command::new(common::TL)
        .args([
            "--db",
            target.to_str().unwrap(),
            "search",
            "--query",
            "budget",
        ])
        .output()
        .unwrap();
    let copy: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(nodes(&copy), ["tl0/n1"]);
}

/// A message whose size record FTS5 lost is found damaged by a search that matches it (SQLite
/// reads the length from that record to score it): both front-ends say so and what recovers it,
/// `--repair` rebuilds the index, and the search answers as before.
#[test]
fn sqlite_a_search_index_without_a_size_record_is_damaged_until_repaired() {
    common::use_engine(Engine::Sqlite);
    let db = Db::created_at("1767225600");
    for text in ["alpha budget", "beta budget"] {
        db.tl(&["append", "--role", "user", "--text", text]).json();
    }
    // The appended messages wait for the index (src/store/sqlite/pending.rs); the repair indexes
    // them, so that the damage below reaches them.
    db.tl(&["db", "check", "--repair"]).json();
    let before = db.tl(&["search", "--query", "budget"]).json();
    assert_eq!(nodes(&before), ["tl0/n2", "tl0/n1"]);
    let what = |node: u64| {
        format!(
            "the search index of the database {} is damaged: it has no readable size record for tl0 n{node}; nothing was changed; ",
            db.path.display()
        )
    };
    let damage = |sql: &str, node: u64| {
        rusqlite::Connection::open(&db.path)
            .unwrap()
            .execute(
                &format!("{sql} WHERE id = (SELECT doc FROM search_docs WHERE node = {node})"),
                [],
            )
            .unwrap();
    };
    // A record cut short, and one that is no record at all, are damage too.
    for sql in [
        "UPDATE search_index_docsize SET sz = x'81'",
        "UPDATE search_index_docsize SET sz = 'seven'",
    ] {
        damage(sql, 1);
        db.tl(&["search", "--query", "alpha"]).err(
            3,
            &json!({"error": format!("{}run tl db check --repair to rebuild the search index", what(1))})
                .to_string(),
        );
        db.tl(&["db", "check", "--repair"]).json();
        assert_eq!(db.tl(&["search", "--query", "budget"]).json(), before);
    }
    damage("DELETE FROM search_index_docsize", 2);
    let what = what(2);
    db.tl(&["search", "--query", "budget"]).err(
        3,
        &json!({"error": format!("{what}run tl db check --repair to rebuild the search index")})
            .to_string(),
    );
    let mut mcp = Mcp::start(&db);
    let error = mcp
        .call("timeline_search", json!({"query": "budget"}))
        .unwrap_err();
    assert_eq!(
        error["error"],
        format!(
            "{what}no MCP tool checks or repairs a database, so stop and tell the user that it needs checking"
        )
    );
    drop(mcp);
    // A search that does not reach that message is not affected.
    assert_eq!(
        nodes(&db.tl(&["search", "--query", "alpha"]).json()),
        ["tl0/n1"]
    );
    db.tl(&["db", "check", "--repair"]).json();
    assert_eq!(db.tl(&["search", "--query", "budget"]).json(), before);
}

/// The SQLite search index keeps each message's creation time (schema 7, issue 24): a database of
/// schema 6 gets them from its messages when it is first opened, `--since`/`--until` and the order
/// of ties read them, `tl db check` finds one that differs from its message and `--repair` puts it
/// right.
#[test]
fn sqlite_search_index_keeps_creation_times_migrated_checked_and_repaired() {
    common::use_engine(Engine::Sqlite);
    let mut db = Db::created_at("1767225600");
    for (now, text) in [
        ("1767225601", "alpha budget"),
        ("1767225602", "beta budget"),
        ("1767225603", "budget gamma"),
    ] {
        db.env("TIMELINE_NOW", now);
        db.tl(&["append", "--role", "user", "--text", text]).json();
    }
    // The appended messages wait for the index (src/store/sqlite/pending.rs); the repair indexes
    // them, as a database of schema 6 has every message indexed.
    db.tl(&["db", "check", "--repair"]).json();
    let times = |run: &Value| -> Vec<(String, u64)> {
        run["hits"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| {
                (
                    h["node"].as_str().unwrap().to_string(),
                    h["created_at"].as_u64().unwrap(),
                )
            })
            .collect()
    };
    let all = db.tl(&["search", "--query", "budget"]).json();
    // Equal scores: the newest first.
    let expected = [("n3", 1767225603), ("n2", 1767225602), ("n1", 1767225601)]
        .map(|(n, t)| (n.to_string(), t));
    assert_eq!(times(&all), expected);
    let since = db
        .tl(&[
            "search",
            "--query",
            "budget",
            "--since",
            "1767225602",
            "--until",
            "1767225602",
        ])
        .json();
    assert_eq!(times(&since), [("n2".to_string(), 1767225602)]);
    // Schema 6 had no creation times in search_docs.
    {
        let conn = rusqlite::Connection::open(&db.path).unwrap();
        conn.execute_batch(
            "DROP TABLE search_pending; DROP INDEX nodes_summaries; DROP INDEX nodes_pinned; DROP INDEX nodes_by_real_start; ALTER TABLE nodes DROP COLUMN jump; ALTER TABLE nodes DROP COLUMN path_min_tokens; ALTER TABLE search_docs DROP COLUMN created_at; PRAGMA user_version = 6;",
        )
        .unwrap();
    }
    assert_eq!(db.tl(&["search", "--query", "budget"]).json(), all);
    db.tl(&["db", "check"]).json();
    {
        let conn = rusqlite::Connection::open(&db.path).unwrap();
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .unwrap();
        assert_eq!(
            version,
            i64::try_from(timeline::store::sqlite_schema_version()).unwrap()
        );
        conn.execute("UPDATE search_docs SET created_at = 5 WHERE node = 2", [])
            .unwrap();
    }
    let check = db.tl(&["db", "check"]);
    assert_eq!(check.code, 3, "{check:?}");
    assert!(
        check.stderr.contains(
            "1 search index entries with another creation time than their message; run tl db check --repair to rebuild the search index"
        ),
        "{check:?}"
    );
    let repaired = db.tl(&["db", "check", "--repair"]).json();
    assert_eq!(repaired["rebuilt"], json!(["search index"]));
    assert_eq!(db.tl(&["search", "--query", "budget"]).json(), all);
    db.tl(&["db", "check"]).json();
}

/// Compare `actual` with `tests/golden/<name>`; rewrite the file instead when UPDATE_GOLDEN=1.
#[track_caller]
fn golden(name: &str, actual: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var("UPDATE_GOLDEN").as_deref() == Ok("1") {
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_default();
    assert_eq!(
        actual, expected,
        "tests/golden/{name} differs (UPDATE_GOLDEN=1 cargo test --test suite find:: rewrites it after you checked the change)"
    );
}

/// A small conversation with a fork, a pin, a summary, an intent, long, multi-line, CJK, emoji and
/// hostile text, for the text views.
fn text_corpus() -> Db {
    let mut db = Db::created_at("1767225600");
    db.env("COLUMNS", "60");
    db.tl(&[
        "append",
        "--role",
        "user",
        "--text",
        "Plan a three-day trip to Kyoto on a small budget",
    ])
    .json();
    db.tl(&[
        "append",
        "--role",
        "assistant",
        "--text",
        "Day one: temples in the east.\nDay two: Arashiyama 🎋 and a ryokan.\n\tBudget: about 60000 yen, 预算 included.\nThis line is long enough that it has to be wrapped at the width of the terminal.",
        "--intent-tag",
        "plan",
    ])
    .json();
    db.tl(&[
        "append",
        "--role",
        "user",
        "--text",
        "Too expensive \u{1b}[31mred\u{1b}[0m, cut the budget",
    ])
    .json();
    db.tl(&["fork", "--node", "n2", "--name", "cheap"]).json();
    db.tl(&["switch", "--name", "cheap"]).json();
    db.tl(&[
        "append",
        "--role",
        "assistant",
        "--text",
        "A budget version: hostels and buses.",
    ])
    .json();
    db.tl(&["pin", "--node", "n4"]).json();
    db.tl(&[
        "summarize",
        "--from",
        "n1",
        "--to",
        "n2",
        "--summary",
        "Kyoto plan, 60000 yen budget",
    ])
    .json();
    db
}

mod text {
    use super::*;

    on_every_engine! {
        /// `--format text` views, identical on both engines, compared with golden files; before or after
        /// the command; never with colour when piped.
        #[test]
        fn text_views_match_golden_files() {
            let db = text_corpus();
            for (name, args) in [
                ("text-log.txt", vec!["log", "--format", "text", "--limit", "2"]),
                ("text-search.txt", vec!["--format", "text", "search", "--query", "kyoto"]),
                ("text-diff.txt", vec!["diff", "--left", "main", "--right", "cheap", "--format", "text"]),
                ("text-context.txt", vec!["context", "--node", "n3", "--format", "text"]),
                ("text-branches.txt", vec!["branches", "--format", "text"]),
                ("text-timelines.txt", vec!["timelines", "--format", "text"]),
            ] {
                let run = db.tl(&args);
                assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{args:?}");
                assert!(!run.stdout.contains('\u{1b}'), "{args:?}: {}", run.stdout);
                golden(name, &run.stdout);
            }
            // JSON stays the default, and --format json says so explicitly.
            assert_eq!(db.tl(&["branches", "--format", "json"]).json(), db.tl(&["branches"]).json());
            db.tl(&["node", "--node", "n1", "--format", "text"]).err(2, r#"{"error":"invalid arguments: unexpected argument '--format' found; run tl --help for usage"}"#);
            db.tl(&["--format", "text", "node", "--node", "n1"]).err(2, r#"{"error":"invalid argument --format: node has no text view; --format text is for timelines, log, search, diff, context, branches, import"}"#);
            db.tl(&["--format", "yaml", "log"]).err(2, r#"{"error":"invalid argument --format: must be one of json, text, got \"yaml\""}"#);
            // export keeps its own --format.
            let tree = db.tl(&["export", "--format", "ascii"]);
            assert_eq!(tree.code, 0);
            assert!(tree.stdout.contains("[n1 user]"), "{}", tree.stdout);
            // Errors stay JSON.
            db.tl(&["log", "--format", "text", "--branch", "nope"]).err(1, r#"{"error":"branch not found: \"nope\" does not exist in timeline tl0 (branches: main, cheap)"}"#);
        }
    }
}

/// Colour: through the library with a view that may colour, and through a pseudo-terminal, where
/// NO_COLOR turns it off.
#[test]
fn text_colour_only_for_terminals_without_no_color() {
    use timeline::cli::{View, run_with};
    use timeline::service::Output;
    let db = text_corpus();
    let run = |args: &[&str], view: View| {
        let mut argv: Vec<std::ffi::OsString> =
            vec!["tl".into(), "--db".into(), db.path.clone().into_os_string()];
        argv.extend(args.iter().map(|a| a.into()));
        run_with(argv, &mut std::io::empty(), &mut Vec::new(), view)
            .unwrap()
            .unwrap()
    };
    let colour = View {
        width: 60,
        colour: true,
    };
    let Output::Text(text) = run(&["search", "--query", "budget", "--format", "text"], colour)
    else {
        panic!("a text view");
    };
    assert!(text.contains("\u{1b}[1;4mbudget\u{1b}[0m"), "{text}");
    assert!(!text.contains('«'), "{text}");
    // The caller's escape sequence stays escaped inside the coloured view.
    let Output::Text(log) = run(&["log", "--branch", "main", "--format", "text"], colour) else {
        panic!("a text view");
    };
    assert!(log.contains("\\u001b[31mred"), "{log}");
    // JSON never carries colour.
    let Output::Json(json) = run(&["search", "--query", "budget"], colour) else {
        panic!("JSON");
    };
    assert!(!json.to_string().contains('\u{1b}'));
    #[cfg(target_os = "linux")]
    if std::path::Path::new("/usr/bin/script").exists() {
        let in_pty = |no_color: Option<&str>| {
            let mut cmd = db.command("/usr/bin/script");
            cmd.args([
                "-qec",
                &format!(
                    "{} --db {} --format text branches",
                    common::TL,
                    db.path.display()
                ),
                "/dev/null",
            ]);
            if let Some(v) = no_color {
                cmd.env("NO_COLOR", v);
            } else {
                cmd.env_remove("NO_COLOR");
            }
            String::from_utf8(cmd.output().unwrap().stdout).unwrap()
        };
        assert!(
            in_pty(None).contains("\u{1b}[1mcheap\u{1b}[0m"),
            "{:?}",
            in_pty(None)
        );
        assert!(!in_pty(Some("1")).contains('\u{1b}'));
        // An empty NO_COLOR does not count (no-color.org).
        assert!(in_pty(Some("")).contains('\u{1b}'));
    }
}

/// Messages written one at a time wait for the SQLite search index in `search_pending`
/// (src/store/sqlite/pending.rs). A search finds them and ranks them exactly as once they are
/// indexed, under every filter and beside messages that are indexed; `tl db check` counts them as
/// indexed; `--repair` indexes them and changes no answer.
#[test]
fn sqlite_messages_waiting_for_the_index_are_found_and_ranked_as_indexed_ones() {
    common::use_engine(Engine::Sqlite);
    let db = Db::created_at("1767225600");
    let waiting = || -> i64 {
        rusqlite::Connection::open(&db.path)
            .unwrap()
            .query_row("SELECT count(*) FROM search_pending", [], |r| r.get(0))
            .unwrap()
    };
    let texts = [
        "the monthly budget was agreed",
        "a budget plan for the quarter, budget first",
        "nothing about money here",
        "预算 已经 批准",
        "budgeting is a monthly chore",
        "the plan: a budget, then a monthly budget review",
        "预算 还没有 批准",
        "an unrelated note",
    ];
    for (i, text) in texts.iter().enumerate() {
        if i == 4 {
            // The first four are indexed; the next four wait.
            db.tl(&["db", "check", "--repair"]).json();
            assert_eq!(waiting(), 0);
        }
        db.append(if i % 2 == 0 { "user" } else { "assistant" }, text, 5);
    }
    assert_eq!(waiting(), 4);
    let queries: [&[&str]; 8] = [
        &["search", "--query", "budget"],
        &["search", "--query", "budget monthly"],
        &["search", "--query", "\"monthly budget\""],
        &["search", "--query", "bud*"],
        &["search", "--query", "budget", "--role", "assistant"],
        &["search", "--query", "预算"],
        &["search", "--query", "budget", "--limit", "2"],
        &["search", "--query", "zebra"],
    ];
    let answers: Vec<Value> = queries.iter().map(|q| db.tl(q).json()).collect();
    // The waiting messages are found (n5: "budgeting" by the prefix only; n6, n7).
    assert_eq!(nodes(&answers[3]), ["tl0/n6", "tl0/n5", "tl0/n2", "tl0/n1"]);
    assert_eq!(nodes(&answers[5]), ["tl0/n4", "tl0/n7"]);
    db.tl(&["db", "check"]).json();
    db.tl(&["db", "check", "--repair"]).json();
    assert_eq!(waiting(), 0);
    for (query, answer) in queries.iter().zip(&answers) {
        assert_eq!(&db.tl(query).json(), answer, "{query:?}");
    }
}

/// How many rows a table of `db`'s SQLite file holds.
fn rows_in(db: &Db, table: &str) -> i64 {
    rusqlite::Connection::open(&db.path)
        .unwrap()
        .query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))
        .unwrap()
}

/// The change that brings the waiting messages to 64 indexes them all, in the same transaction:
/// the index then holds every message and nothing waits (`tl`, which never waits for a quiet
/// moment).
#[test]
fn sqlite_the_sixty_fourth_waiting_message_sends_them_all_to_the_index() {
    common::use_engine(Engine::Sqlite);
    let db = Db::created_at("1767225600");
    let count = |table: &str| rows_in(&db, table);
    for i in 1..64 {
        db.append("user", &format!("message {i} about budgets"), 5);
    }
    assert_eq!((count("search_pending"), count("search_docs")), (63, 0));
    db.append("user", "message 64 about budgets", 5);
    assert_eq!((count("search_pending"), count("search_docs")), (0, 64));
    let hits = db
        .tl(&["search", "--query", "budgets", "--limit", "1000"])
        .json();
    assert_eq!(hits["hits"].as_array().unwrap().len(), 64);
    db.tl(&["db", "check"]).json();
}

/// A `tl-mcp` session lets the messages it writes wait for the index (up to 256), and indexes
/// them once 32 wait and its client has sent nothing for a moment (src/mcp/idle.rs): fewer stay
/// waiting however long the client is quiet. Searches find every message either way.
#[cfg(unix)]
#[test]
fn sqlite_a_session_indexes_the_waiting_messages_while_its_client_is_quiet() {
    common::use_engine(Engine::Sqlite);
    let db = Db::created_at("1767225600");
    let count = |table: &str| rows_in(&db, table);
    let mut mcp = Mcp::start(&db);
    let append = |mcp: &mut Mcp, i: usize| {
        mcp.ok(
            "timeline_append",
            json!({"timeline_id": "tl0", "role": "user", "text": format!("message {i} about budgets")}),
        );
    };
    for i in 1..=31 {
        append(&mut mcp, i);
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!((count("search_pending"), count("search_docs")), (31, 0));
    append(&mut mcp, 32);
    // The session indexes while the client is quiet; the test waits for it, boundedly.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while count("search_pending") != 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!((count("search_pending"), count("search_docs")), (0, 32));
    let hits = mcp.ok(
        "timeline_search",
        json!({"query": "budgets", "limit": 1000}),
    );
    assert_eq!(hits["hits"].as_array().unwrap().len(), 32);
    mcp.close();
    db.tl(&["db", "check"]).json();
}
