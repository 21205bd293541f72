//! `tl export` (X1 draw.io, X2 ASCII, G1 no idempotency key), through the real `tl` binary.
//!
//! Golden files live in `tests/golden/`; the synthetic example in `examples/`. On a mismatch the tests
//! fail with a diff; run them with `UPDATE_GOLDEN=1` to rewrite the files after a deliberate change.

use crate::common;

use common::{Db, Run, TempDir};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

// ---------------------------------------------------------------------------------------------
// Golden files

fn repo_path(relative: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(relative)
}

fn updating() -> bool {
    std::env::var("UPDATE_GOLDEN").is_ok_and(|v| v == "1")
}

/// A line diff good enough to see what changed: lines only in `expected` (-) and only in `actual` (+).
fn diff(expected: &str, actual: &str) -> String {
    let old: Vec<&str> = expected.lines().collect();
    let new: Vec<&str> = actual.lines().collect();
    // Longest common subsequence, then walk it.
    let mut lcs = vec![vec![0usize; new.len() + 1]; old.len() + 1];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < old.len() || j < new.len() {
        if i < old.len() && j < new.len() && old[i] == new[j] {
            out.push_str(&format!("  {}\n", old[i]));
            i += 1;
            j += 1;
        } else if j < new.len() && (i == old.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            out.push_str(&format!("+ {}\n", new[j]));
            j += 1;
        } else {
            out.push_str(&format!("- {}\n", old[i]));
            i += 1;
        }
    }
    if expected.ends_with('\n') != actual.ends_with('\n') {
        out.push_str("(the files differ in the final newline)\n");
    }
    out
}

/// Compare `actual` with the committed file; rewrite it instead when UPDATE_GOLDEN=1.
#[track_caller]
fn golden(relative: &str, actual: &[u8]) {
    let path = repo_path(relative);
    let expected = std::fs::read(&path).ok();
    if expected.as_deref() == Some(actual) {
        return;
    }
    if updating() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        eprintln!("updated {relative}");
        return;
    }
    let expected = String::from_utf8_lossy(expected.as_deref().unwrap_or_default()).into_owned();
    let actual = String::from_utf8_lossy(actual);
    panic!(
        "{relative} is out of date (run `UPDATE_GOLDEN=1 cargo test --test suite export::` to rewrite it after checking the change):\n{}",
        diff(&expected, &actual)
    );
}

// ---------------------------------------------------------------------------------------------
// A tiny XML checker: well-formedness (tags, attributes, entities, characters) and a tree to inspect.

#[derive(Debug, Clone)]
struct Element {
    name: String,
    attrs: BTreeMap<String, String>,
    children: Vec<Element>,
}

impl Element {
    fn attr(&self, name: &str) -> Option<&str> {
        self.attrs.get(name).map(String::as_str)
    }

    fn child(&self, name: &str) -> &Element {
        let found: Vec<&Element> = self.children.iter().filter(|c| c.name == name).collect();
        assert_eq!(
            found.len(),
            1,
            "<{}> must have exactly one <{name}>",
            self.name
        );
        found[0]
    }
}

fn is_xml_char(c: char) -> bool {
    matches!(c, '\u{9}' | '\u{a}' | '\u{d}' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
}

fn is_name_char(c: char, first: bool) -> bool {
    c.is_alphabetic()
        || c == '_'
        || c == ':'
        || (!first && (c.is_ascii_digit() || c == '-' || c == '.'))
}

struct XmlParser<'a> {
    chars: Vec<char>,
    at: usize,
    source: &'a str,
}

impl XmlParser<'_> {
    fn fail<T>(&self, what: &str) -> Result<T, String> {
        let shown: String = self.chars[self.at.min(self.chars.len())..]
            .iter()
            .take(40)
            .collect();
        Err(format!(
            "XML error at char {}: {what} (near {shown:?})",
            self.at
        ))
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn starts(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.chars.get(self.at + i) == Some(&c))
    }

    fn expect(&mut self, s: &str) -> Result<(), String> {
        if !self.starts(s) {
            return self.fail(&format!("expected {s:?}"));
        }
        self.at += s.chars().count();
        Ok(())
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(' ' | '\t' | '\n' | '\r')) {
            self.at += 1;
        }
    }

    fn name(&mut self) -> Result<String, String> {
        let start = self.at;
        while let Some(c) = self.peek() {
            if !is_name_char(c, self.at == start) {
                break;
            }
            self.at += 1;
        }
        if self.at == start {
            return self.fail("expected a name");
        }
        Ok(self.chars[start..self.at].iter().collect())
    }

    /// `&...;` at the cursor, decoded.
    fn entity(&mut self) -> Result<char, String> {
        self.expect("&")?;
        let start = self.at;
        while self.peek().is_some_and(|c| c != ';') {
            self.at += 1;
            if self.at - start > 10 {
                return self.fail("unterminated entity");
            }
        }
        let body: String = self.chars[start..self.at].iter().collect();
        self.expect(";")?;
        let c = match body.as_str() {
            "amp" => '&',
            "lt" => '<',
            "gt" => '>',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let code = if let Some(hex) = body.strip_prefix("#x") {
                    u32::from_str_radix(hex, 16).ok()
                } else if let Some(dec) = body.strip_prefix('#') {
                    dec.parse().ok()
                } else {
                    None
                };
                match code.and_then(char::from_u32) {
                    Some(c) if is_xml_char(c) => c,
                    _ => return self.fail(&format!("invalid entity &{body};")),
                }
            }
        };
        Ok(c)
    }

    fn element(&mut self) -> Result<Element, String> {
        self.expect("<")?;
        let name = self.name()?;
        let mut attrs = BTreeMap::new();
        loop {
            let before = self.at;
            self.skip_ws();
            if self.starts("/>") {
                self.at += 2;
                return Ok(Element {
                    name,
                    attrs,
                    children: Vec::new(),
                });
            }
            if self.starts(">") {
                self.at += 1;
                break;
            }
            if self.at == before {
                return self.fail("expected whitespace before an attribute");
            }
            let key = self.name()?;
            self.skip_ws();
            self.expect("=")?;
            self.skip_ws();
            let quote = match self.peek() {
                Some(q @ ('"' | '\'')) => q,
                _ => return self.fail("expected a quoted attribute value"),
            };
            self.at += 1;
            let mut value = String::new();
            loop {
                match self.peek() {
                    None => return self.fail("unterminated attribute value"),
                    Some(c) if c == quote => {
                        self.at += 1;
                        break;
                    }
                    Some('<') => return self.fail("'<' in an attribute value"),
                    Some('&') => value.push(self.entity()?),
                    // Attribute-value normalisation: literal whitespace characters become spaces.
                    Some('\n' | '\r' | '\t') => {
                        value.push(' ');
                        self.at += 1;
                    }
                    Some(c) => {
                        value.push(c);
                        self.at += 1;
                    }
                }
            }
            if attrs.insert(key.clone(), value).is_some() {
                return self.fail(&format!("duplicate attribute {key}"));
            }
        }
        let mut children = Vec::new();
        loop {
            if self.starts("</") {
                self.at += 2;
                let end = self.name()?;
                if end != name {
                    return self.fail(&format!("</{end}> closes <{name}>"));
                }
                self.skip_ws();
                self.expect(">")?;
                return Ok(Element {
                    name,
                    attrs,
                    children,
                });
            }
            if self.starts("<!--") {
                while !self.starts("-->") {
                    if self.peek().is_none() {
                        return self.fail("unterminated comment");
                    }
                    self.at += 1;
                }
                self.at += 3;
                continue;
            }
            match self.peek() {
                None => return self.fail(&format!("<{name}> is never closed")),
                Some('<') => children.push(self.element()?),
                Some('&') => {
                    self.entity()?;
                }
                Some(_) => self.at += 1,
            }
        }
    }

    fn document(source: &str) -> Result<Element, String> {
        let mut parser = XmlParser {
            chars: source.chars().collect(),
            at: 0,
            source,
        };
        if let Some(bad) = parser.source.chars().find(|&c| !is_xml_char(c)) {
            return Err(format!(
                "character U+{:04X} is not allowed in XML",
                bad as u32
            ));
        }
        parser.skip_ws();
        if parser.starts("<?xml") {
            while !parser.starts("?>") {
                if parser.peek().is_none() {
                    return parser.fail("unterminated XML declaration");
                }
                parser.at += 1;
            }
            parser.at += 2;
            parser.skip_ws();
        }
        let root = parser.element()?;
        parser.skip_ws();
        if parser.peek().is_some() {
            return parser.fail("content after the root element");
        }
        Ok(root)
    }
}

// ---------------------------------------------------------------------------------------------
// Scenarios built through `tl`

/// A fixed clock, so the example database (audit timestamps) is reproducible.
const NOW: &str = "1767225600";

/// Run a step of a scenario and require success.
#[track_caller]
fn step(db: &Db, args: &[&str]) -> Run {
    let run = db.tl(args);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (0, ""),
        "tl {args:?}: {run:?}"
    );
    run
}

/// The synthetic example (examples/demo.*): every marker the exports have. Documented in docs/export.md.
const DEMO: &[&[&str]] = &[
    &[
        "append",
        "--role",
        "user",
        "--text",
        "Plan a local-first notes app",
        "--tokens",
        "8",
    ],
    &[
        "append",
        "--role",
        "assistant",
        "--text",
        "Scope: offline first, sync later",
        "--tokens",
        "10",
    ],
    &["fork", "--node", "n2", "--name", "sqlite-trial"],
    &["switch", "--name", "sqlite-trial"],
    &[
        "append",
        "--role",
        "user",
        "--text",
        "Try SQLite as the storage engine",
        "--tokens",
        "8",
    ],
    &[
        "append",
        "--role",
        "assistant",
        "--text",
        "SQLite works, but it adds a native dependency",
        "--tokens",
        "12",
    ],
    &[
        "summarize",
        "--from",
        "n1",
        "--to",
        "n2",
        "--summary",
        "Goal: a local notes app",
        "--tokens",
        "6",
    ],
    &[
        "summarize",
        "--from",
        "n3",
        "--to",
        "n4",
        "--summary",
        "SQLite trial: it works, rejected for the native dependency",
        "--tokens",
        "9",
        "--derived-from",
        "n5",
    ],
    &["switch", "--name", "main"],
    &["archive-branch", "--name", "sqlite-trial"],
    &[
        "append",
        "--role",
        "assistant",
        "--text",
        "Store notes as JSON snapshots with a backup file",
        "--tokens",
        "10",
        "--intent-tag",
        "decision",
        "--intent-note",
        "no database server",
    ],
    &[
        "append",
        "--role",
        "user",
        "--text",
        "Keep long chats within a token budget",
        "--tokens",
        "200",
    ],
    &["pin", "--node", "n7"],
    &[
        "summarize",
        "--from",
        "n1",
        "--to",
        "n2",
        "--summary",
        "Goal: a local-first notes app; sync comes later",
        "--tokens",
        "9",
        "--supersede",
        "n5",
    ],
    &["fork", "--node", "n8", "--name", "细节"],
    &[
        "append",
        "--role",
        "user",
        "--text",
        "Budgets: keep the newest messages and the pins",
        "--tokens",
        "11",
    ],
    &["budget", "--node", "n10", "--max", "62"],
];

fn demo_db() -> Db {
    let db = Db::created_at(NOW);
    for args in DEMO {
        step(&db, args);
    }
    db
}

/// Append `count` messages alternating user/assistant, texts from `text(i)`.
fn append_many(db: &Db, count: usize, text: impl Fn(usize) -> String) {
    for i in 1..=count {
        let role = if i % 2 == 1 { "user" } else { "assistant" };
        step(db, &["append", "--role", role, "--text", &text(i)]);
    }
}

fn ascii(db: &Db) -> String {
    let run = step(db, &["export", "--format", "ascii"]);
    run.stdout
}

/// The database file's source view: message IDs by zone and each message's parent.
struct Stored {
    hot: BTreeSet<String>,
    cold: BTreeSet<String>,
    parent: BTreeMap<String, String>,
}

fn stored(db: &Db) -> Stored {
    let file = db.value();
    let timeline = &file["timelines"][0];
    let mut s = Stored {
        hot: BTreeSet::new(),
        cold: BTreeSet::new(),
        parent: BTreeMap::new(),
    };
    for (zone, set) in [("nodes", &mut s.hot), ("cold", &mut s.cold)] {
        for node in timeline[zone].as_array().unwrap() {
            let id = node["id"].as_str().unwrap().to_string();
            s.parent
                .insert(id.clone(), node["parent"].as_str().unwrap().to_string());
            set.insert(id);
        }
    }
    s
}

// ---------------------------------------------------------------------------------------------
// ASCII (X2) golden files

// ---------------------------------------------------------------------------------------------
// draw.io (X1)

type Attrs = BTreeMap<String, String>;

struct Diagram {
    root: Element,
    result: Value,
    bytes: Vec<u8>,
}

fn export_drawio(db: &Db, name: &str) -> Diagram {
    let out = db.dir.path().join(name);
    let run = step(
        db,
        &[
            "export",
            "--format",
            "drawio",
            "--output",
            out.to_str().unwrap(),
        ],
    );
    let bytes = std::fs::read(&out).unwrap();
    let text = String::from_utf8(bytes.clone()).expect("the diagram is UTF-8");
    let root = XmlParser::document(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    Diagram {
        root,
        result: run.json(),
        bytes,
    }
}

/// The cells under <mxfile><diagram><mxGraphModel><root>: (cell attributes merged with its
/// UserObject's, geometry).
fn cells(root: &Element) -> Vec<(Attrs, Option<Attrs>)> {
    assert_eq!(root.name, "mxfile");
    let model_root = root.child("diagram").child("mxGraphModel").child("root");
    model_root
        .children
        .iter()
        .map(|e| {
            let (mut attrs, cell) = match e.name.as_str() {
                "mxCell" => (e.attrs.clone(), e),
                "UserObject" | "object" => (e.attrs.clone(), e.child("mxCell")),
                other => panic!("unexpected <{other}> in <root>"),
            };
            for (k, v) in &cell.attrs {
                attrs.insert(k.clone(), v.clone());
            }
            let geometry = cell
                .children
                .iter()
                .find(|g| g.name == "mxGeometry")
                .map(|g| g.attrs.clone());
            (attrs, geometry)
        })
        .collect()
}

/// (x, y, width, height) of every vertex.
fn boxes(root: &Element) -> Vec<(String, f64, f64, f64, f64)> {
    cells(root)
        .into_iter()
        .filter(|(a, _)| a.get("vertex").map(String::as_str) == Some("1"))
        .map(|(a, g)| {
            let g = g.expect("a vertex has a geometry");
            let num = |k: &str| g.get(k).map(|v| v.parse::<f64>().unwrap()).unwrap_or(0.0);
            (
                a["id"].clone(),
                num("x"),
                num("y"),
                num("width"),
                num("height"),
            )
        })
        .collect()
}

#[track_caller]
fn assert_no_overlap(root: &Element) {
    let boxes = boxes(root);
    for (i, a) in boxes.iter().enumerate() {
        assert!(a.3 > 0.0 && a.4 > 0.0, "{a:?}");
        for b in &boxes[i + 1..] {
            let apart =
                a.1 + a.3 <= b.1 || b.1 + b.3 <= a.1 || a.2 + a.4 <= b.2 || b.2 + b.4 <= a.2;
            assert!(apart, "{a:?} overlaps {b:?}");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// examples/: the synthetic demo database and its exports stay in step with the code

// Every test below runs on both storage engines (json::… and sqlite::…).
on_every_engine! {
    #[test]
    fn the_xml_checker_rejects_broken_documents() {
        for bad in [
            "<a>",
            "<a></b>",
            "<a x=\"1\" x=\"2\"/>",
            "<a x=\"<\"/>",
            "<a x=\"&bogus;\"/>",
            "<a x=\"&#1;\"/>",
            "<a x=1/>",
            "<a/><b/>",
            "<a>\u{1}</a>",
            "<a>&amp</a>",
        ] {
            assert!(XmlParser::document(bad).is_err(), "accepted {bad:?}");
        }
        let ok = XmlParser::document(
            "<?xml version=\"1.0\"?>\n<a x='1' y=\"&lt;&#10;&#x41;\"><b/><!-- c --><c>t</c></a>",
        )
        .unwrap();
        assert_eq!(ok.attr("y"), Some("<\nA"));
        assert_eq!(ok.children.len(), 2);
    }

    #[test]
    fn ascii_matches_the_original_example() {
        let db = Db::created_at(NOW);
        step(
            &db,
            &["append", "--role", "user", "--text", "只使用本地数据"],
        );
        step(&db, &["append", "--role", "assistant", "--text", "方案 A"]);
        step(
            &db,
            &["append", "--role", "assistant", "--text", "验证结果"],
        );
        step(&db, &["fork", "--node", "n1", "--name", "alternative"]);
        step(&db, &["switch", "--name", "alternative"]);
        step(&db, &["append", "--role", "assistant", "--text", "方案 B"]);
        step(&db, &["switch", "--name", "main"]);
        step(&db, &["pin", "--node", "n1"]);
        // The tree of the product description, with its markers. Since issue 12 (item 3) the branch
        // that splits off comes first and the current branch's history stays in the first column, so the
        // tree grows no wider at each fork; the description drew plan A indented and plan B after it.
        assert_eq!(
            ascii(&db),
            "[n1 user PIN] \"只使用本地数据\"\n|\n+-- [n4 assistant] \"方案 B\" [HEAD \"alternative\"]\n|\n[n2 assistant] \"方案 A\"\n|\n[n3 assistant] \"验证结果\" [HEAD* \"main\"]\n"
        );
        // When no child continues (every child is a single message) the last one gets `--.
        step(&db, &["fork", "--node", "n2", "--name", "plan-c"]);
        step(&db, &["switch", "--name", "plan-c"]);
        step(&db, &["append", "--role", "user", "--text", "方案 C"]);
        assert_eq!(
            ascii(&db),
            "[n1 user PIN] \"只使用本地数据\"\n|\n+-- [n4 assistant] \"方案 B\" [HEAD \"alternative\"]\n|\n[n2 assistant] \"方案 A\"\n|\n+-- [n3 assistant] \"验证结果\" [HEAD \"main\"]\n`-- [n5 user] \"方案 C\" [HEAD* \"plan-c\"]\n"
        );
    }

    #[test]
    fn ascii_linear_history_stays_in_one_column() {
        let db = Db::created_at(NOW);
        append_many(&db, 30, |i| format!("message {i}"));
        let text = ascii(&db);
        golden("tests/golden/linear.txt", text.as_bytes());
        // No staircase: every node line starts at column 0 and every other line is a bare "|".
        for line in text.lines() {
            assert!(line == "|" || line.starts_with("[n"), "{line:?}");
        }
        assert_eq!(text.lines().count(), 59);
    }

    #[test]
    fn ascii_branches_at_several_depths() {
        let db = Db::created_at(NOW);
        append_many(&db, 6, |i| format!("main {i}"));
        step(&db, &["fork", "--node", "n2", "--name", "early"]);
        step(&db, &["fork", "--node", "n4", "--name", "late"]);
        step(&db, &["fork", "--node", "n6", "--name", "same-head"]);
        step(&db, &["fork", "--node", "n0", "--name", "empty"]);
        step(&db, &["switch", "--name", "early"]);
        append_many(&db, 3, |i| format!("early {i}"));
        step(&db, &["fork", "--node", "n8", "--name", "nested"]);
        step(&db, &["switch", "--name", "nested"]);
        step(
            &db,
            &["append", "--role", "assistant", "--text", "nested 1"],
        );
        step(&db, &["switch", "--name", "late"]);
        step(&db, &["append", "--role", "user", "--text", "late 1"]);
        let text = ascii(&db);
        golden("tests/golden/branching.txt", text.as_bytes());
        // The root gets a line because the "empty" branch's head is n0.
        assert!(
            text.starts_with("[n0 root] [HEAD \"empty\"]\n|\n[n1 user]"),
            "{text}"
        );
        assert!(
            text.contains("[n6 assistant] \"main 6\" [HEAD \"main\"] [HEAD \"same-head\"]\n"),
            "{text}"
        );
        assert!(
            text.contains("[n11 user] \"late 1\" [HEAD* \"late\"]\n"),
            "{text}"
        );
    }

    #[test]
    fn ascii_summaries_versions_stale_and_placeholders() {
        let db = Db::created_at(NOW);
        append_many(&db, 2, |i| format!("message {i}"));
        // Too big to keep: the budget covers it with a placeholder.
        step(
            &db,
            &[
                "append",
                "--role",
                "user",
                "--text",
                "message 3",
                "--tokens",
                "100",
            ],
        );
        step(
            &db,
            &["append", "--role", "assistant", "--text", "message 4"],
        );
        step(&db, &["append", "--role", "user", "--text", "message 5"]);
        step(
            &db,
            &[
                "summarize",
                "--from",
                "n1",
                "--to",
                "n2",
                "--summary",
                "first two",
            ],
        ); // n6
        step(
            &db,
            &[
                "summarize",
                "--from",
                "n3",
                "--to",
                "n3",
                "--summary",
                "third",
                "--derived-from",
                "n6",
            ],
        ); // n7
        step(
            &db,
            &[
                "summarize",
                "--from",
                "n3",
                "--to",
                "n4",
                "--summary",
                "from both",
                "--derived-from",
                "n6,n7",
            ],
        ); // n8
        step(
            &db,
            &[
                "summarize",
                "--from",
                "n1",
                "--to",
                "n2",
                "--summary",
                "first two, v2",
                "--supersede",
                "n6",
            ],
        ); // n9
        step(
            &db,
            &[
                "summarize",
                "--from",
                "n1",
                "--to",
                "n2",
                "--summary",
                "first two, v3",
                "--supersede",
                "n9",
            ],
        ); // n10
        step(&db, &["pin", "--node", "n4"]);
        let run = step(&db, &["budget", "--node", "n5", "--max", "50"]);
        assert_eq!(
            run.json()["summaries_created"],
            serde_json::json!(["n11"]),
            "{run:?}"
        );
        let text = ascii(&db);
        golden("tests/golden/summaries.txt", text.as_bytes());
        assert!(
            text.contains("[n7 summary v1 covers n3..n3 derived-from n6 STALE] \"third\"\n"),
            "{text}"
        );
        assert!(
            text.contains("[n9 summary v2 covers n1..n2 supersedes n6 superseded-by n10] "),
            "{text}"
        );
        assert!(text.contains("[n11 placeholder covers n3..n3] "), "{text}");
    }

    #[test]
    fn ascii_archived_branch() {
        let db = Db::created_at(NOW);
        append_many(&db, 2, |i| format!("shared {i}"));
        step(&db, &["fork", "--node", "n2", "--name", "side"]);
        step(&db, &["switch", "--name", "side"]);
        append_many(&db, 3, |i| format!("side {i}"));
        // The whole path must be covered by summaries; creating them advances the watermark to the head.
        step(
            &db,
            &[
                "summarize",
                "--from",
                "n1",
                "--to",
                "n5",
                "--summary",
                "everything on side",
            ],
        );
        step(&db, &["switch", "--name", "main"]);
        step(&db, &["archive-branch", "--name", "side"]).ok(r#"{"archived":["n3","n4","n5"]}"#);
        step(&db, &["append", "--role", "user", "--text", "main goes on"]);
        let text = ascii(&db);
        golden("tests/golden/archived.txt", text.as_bytes());
        assert!(text.contains("[n5 user ARCHIVED] \"side 3\"\n"), "{text}");
    }

    #[test]
    fn ascii_cuts_long_texts_at_64_scalars() {
        let db = Db::created_at(NOW);
        let cjk64: String = "长文本测试中文字符".chars().cycle().take(64).collect();
        let cjk65: String = "长文本测试中文字符".chars().cycle().take(65).collect();
        // 👨‍👩‍👧‍👦 is one grapheme of seven scalars; the cut may split it, which shows the count is in scalars.
        let emoji: String = "👨‍👩‍👧‍👦".repeat(10);
        let branch: String = "分支🌿".repeat(30);
        step(&db, &["append", "--role", "user", "--text", &cjk64]);
        step(&db, &["append", "--role", "assistant", "--text", &cjk65]);
        step(&db, &["append", "--role", "user", "--text", &emoji]);
        step(
            &db,
            &[
                "append",
                "--role",
                "user",
                "--text",
                "line one\nline \"two\"\t\\ end\u{1b}[0m",
            ],
        );
        step(&db, &["fork", "--node", "n2", "--name", &branch]);
        let text = ascii(&db);
        golden("tests/golden/long-text.txt", text.as_bytes());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], format!("[n1 user] \"{cjk64}\""));
        let cut65: String = cjk65.chars().take(64).collect();
        let cut_branch: String = branch.chars().take(64).collect();
        assert_eq!(
            lines[2],
            format!("[n2 assistant] \"{cut65}\"... [HEAD \"{cut_branch}\"...]")
        );
        let cut_emoji: String = emoji.chars().take(64).collect();
        assert_eq!(lines[4], format!("[n3 user] \"{cut_emoji}\"..."));
        assert_eq!(
            lines[6],
            "[n4 user] \"line one\\nline \\\"two\\\"\\t\\\\ end\\u001b[0m\" [HEAD* \"main\"]"
        );
        assert_eq!(lines.len(), 7);
    }

    #[test]
    fn ascii_output_file_and_result() {
        let db = demo_db();
        let printed = ascii(&db);
        let out = db.dir.path().join("tree.txt");
        let out_str = out.to_str().unwrap();
        db.tl(&["export", "--format", "ascii", "--output", out_str])
            .ok(&format!(
                r#"{{"format":"ascii","timeline_id":"tl0","output":{},"nodes":11,"edges":11}}"#,
                serde_json::json!(out_str)
            ));
        assert_eq!(std::fs::read_to_string(&out).unwrap(), printed);
        // Refused the second time; the first file stays as it was.
        db.tl(&["export", "--format", "ascii", "--output", out_str]).err(
            1,
            &serde_json::json!({"error": format!("the output file {out_str} already exists; choose another name (export never overwrites a file, so changes you made to it are kept)")}).to_string(),
        );
        assert_eq!(std::fs::read_to_string(&out).unwrap(), printed);
    }

    #[test]
    fn ascii_edges_count_only_drawn_links() {
        // Without a root line the link n0 → n1 is not drawn.
        let db = Db::created_at(NOW);
        append_many(&db, 3, |i| format!("m{i}"));
        let out = db.dir.path().join("t.txt");
        let run = step(
            &db,
            &[
                "export",
                "--format",
                "ascii",
                "--output",
                out.to_str().unwrap(),
            ],
        );
        assert_eq!(
            (run.json()["nodes"].clone(), run.json()["edges"].clone()),
            (3.into(), 2.into())
        );
        // An empty timeline: just the root with its head.
        let empty = Db::created_at(NOW);
        assert_eq!(ascii(&empty), "[n0 root] [HEAD* \"main\"]\n");
    }

    #[test]
    fn ascii_survives_a_closed_pipe() {
        use std::io::{BufRead, BufReader};
        use std::process::Stdio;
        let db = Db::created_at(NOW);
        // About 200 KB of tree, more than a pipe buffer, so `tl` is still writing when the reader leaves.
        append_many(&db, 400, |i| format!("{i} {}", "很长的消息".repeat(20)));
        let mut cmd = db.command(common::TL);
        cmd.arg("--db")
            .arg(&db.path)
            .args(["export", "--format", "ascii"]);
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        // The reader (like `head -n 1`) is gone now.
        let output = child.wait_with_output().unwrap();
        assert!(first.starts_with("[n1 user] \"1 很长的消息"), "{first:?}");
        assert_eq!(
            (
                output.status.code(),
                String::from_utf8_lossy(&output.stderr).as_ref()
            ),
            (Some(0), "")
        );
    }

    #[test]
    fn drawio_holds_every_node_edge_and_layer() {
        let db = demo_db();
        let stored = stored(&db);
        assert_eq!(
            stored.cold,
            BTreeSet::from(["n3".to_string(), "n4".to_string()])
        );
        let diagram = export_drawio(&db, "demo.drawio");
        let cells = cells(&diagram.root);

        // Layers: the default one and a hidden second one.
        let layers: Vec<&BTreeMap<String, String>> = cells
            .iter()
            .map(|(a, _)| a)
            .filter(|a| a.get("parent").map(String::as_str) == Some("0"))
            .collect();
        assert_eq!(layers.len(), 2, "{layers:?}");
        assert_eq!(layers[0].get("visible"), None);
        assert_eq!(layers[1].get("visible").map(String::as_str), Some("0"));
        let messages_layer = layers[0]["id"].clone();
        let hidden_layer = layers[1]["id"].clone();

        // Every hot and cold node exactly once, with its full text in text_json.
        let mut seen = BTreeMap::new();
        for (attrs, _) in cells.iter().filter(|(a, _)| a.contains_key("text_json")) {
            let id = attrs["id"].clone();
            let text: String = serde_json::from_str(&attrs["text_json"]).unwrap();
            assert!(
                seen.insert(id.clone(), (text, attrs.clone())).is_none(),
                "{id} twice"
            );
        }
        let all: BTreeSet<String> = stored.hot.union(&stored.cold).cloned().collect();
        assert_eq!(seen.keys().cloned().collect::<BTreeSet<_>>(), all);
        for (id, (text, attrs)) in &seen {
            let node = step(&db, &["node", "--node", id]).json();
            assert_eq!(Some(text.as_str()), node["text"].as_str(), "{id}");
            assert_eq!(attrs["zone"], node["zone"].as_str().unwrap(), "{id}");
            assert!(
                attrs["style"].contains("rounded=1;"),
                "{id}: {}",
                attrs["style"]
            );
            assert_eq!(attrs["vertex"], "1");
            assert_eq!(attrs["parent"], messages_layer);
        }

        // Styles: the current head green, plain hot messages light blue, the rest distinct.
        let fill = |id: &str| {
            let style = &seen[id].1["style"];
            style
                .split(';')
                .find_map(|kv| kv.strip_prefix("fillColor="))
                .unwrap()
                .to_string()
        };
        assert_eq!(fill("n10"), "#d5e8d4"); // HEAD* main
        for plain in ["n1", "n2", "n7"] {
            assert_eq!(fill(plain), "#dae8fc", "{plain}");
        }
        let others: BTreeSet<String> = ["n3", "n5", "n8", "n11"].iter().map(|n| fill(n)).collect();
        assert_eq!(
            others.len(),
            4,
            "archived, summary, other head and placeholder look different: {others:?}"
        );
        assert!(!others.contains("#d5e8d4") && !others.contains("#dae8fc"));
        assert!(
            seen["n7"].1["style"].contains("strokeColor=#d79b00;"),
            "the pin is marked"
        );
        assert!(
            seen["n6"].1["style"].contains("strokeColor=#b85450;"),
            "stale is marked"
        );

        // Parent links on the visible layer: exactly one per message.
        let edges: Vec<&BTreeMap<String, String>> = cells
            .iter()
            .map(|(a, _)| a)
            .filter(|a| a.get("edge").map(String::as_str) == Some("1"))
            .collect();
        let parent_links: BTreeSet<(String, String)> = edges
            .iter()
            .filter(|e| e["parent"] == messages_layer)
            .map(|e| (e["source"].clone(), e["target"].clone()))
            .collect();
        let expected: BTreeSet<(String, String)> = stored
            .parent
            .iter()
            .map(|(n, p)| (p.clone(), n.clone()))
            .collect();
        assert_eq!(parent_links, expected);
        assert_eq!(
            edges
                .iter()
                .filter(|e| e["parent"] == messages_layer)
                .count(),
            expected.len()
        );

        // The hidden layer: coverage, versions, dependencies.
        let relations: BTreeSet<(String, String, String)> = edges
            .iter()
            .filter(|e| e["parent"] == hidden_layer)
            .map(|e| (e["source"].clone(), e["target"].clone(), e["value"].clone()))
            .collect();
        let rel = |s: &str, t: &str, v: &str| (s.to_string(), t.to_string(), v.to_string());
        let expected_relations = BTreeSet::from([
            rel("n5", "n1", "covers from"),
            rel("n5", "n2", "covers to"),
            rel("n6", "n3", "covers from"),
            rel("n6", "n4", "covers to"),
            rel("n6", "n5", "derived from"),
            rel("n9", "n1", "covers from"),
            rel("n9", "n2", "covers to"),
            rel("n9", "n5", "supersedes"),
            rel("n11", "n8", "covers"),
        ]);
        assert_eq!(relations, expected_relations);
        assert_eq!(edges.len(), expected.len() + expected_relations.len());

        // Every edge connects existing cells; IDs are unique.
        let ids: Vec<&String> = cells.iter().map(|(a, _)| &a["id"]).collect();
        assert_eq!(
            ids.len(),
            ids.iter().collect::<BTreeSet<_>>().len(),
            "cell IDs are unique"
        );
        for e in &edges {
            assert!(
                ids.contains(&&e["source"]) && ids.contains(&&e["target"]),
                "{e:?}"
            );
        }

        // The result counts what was written: message vertices and edge cells.
        assert_eq!(diagram.result["nodes"], serde_json::json!(all.len()));
        assert_eq!(diagram.result["edges"], serde_json::json!(edges.len()));
        let keys: Vec<&String> = diagram.result.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["format", "timeline_id", "output", "nodes", "edges"]);
    }

    #[test]
    fn drawio_layout_is_left_to_right_without_overlaps() {
        let demo = export_drawio(&demo_db(), "demo.drawio");
        assert_no_overlap(&demo.root);
        // A bushier tree: branches at every depth, summaries beside their ranges.
        let db = Db::created_at(NOW);
        append_many(&db, 8, |i| format!("m{i}"));
        for at in [1, 3, 5, 7] {
            step(
                &db,
                &[
                    "fork",
                    "--node",
                    &format!("n{at}"),
                    "--name",
                    &format!("b{at}"),
                ],
            );
            step(&db, &["switch", "--name", &format!("b{at}")]);
            append_many(&db, 3, |i| format!("b{at}.{i}"));
        }
        step(
            &db,
            &[
                "summarize",
                "--from",
                "n2",
                "--to",
                "n6",
                "--summary",
                "middle",
            ],
        );
        let diagram = export_drawio(&db, "bushy.drawio");
        assert_no_overlap(&diagram.root);
        // Depth grows to the right: each child lies right of its parent.
        let boxes: BTreeMap<String, (f64, f64)> = boxes(&diagram.root)
            .into_iter()
            .map(|(id, x, y, _, _)| (id, (x, y)))
            .collect();
        for (node, parent) in stored(&db).parent {
            assert!(
                boxes[&node].0 > boxes[&parent].0,
                "{node} is not right of {parent}"
            );
        }
        // A chain of single children stays in one lane.
        assert_eq!(boxes["n8"].1, boxes["n1"].1);
    }

    #[test]
    fn drawio_text_json_keeps_any_text_exactly() {
        let db = Db::created_at(NOW);
        let texts = [
            "<b>tags</b> & \"quotes\" 'apostrophes' ]]> <!-- -->",
            "line one\nline two\r\n\ttabbed",
            "control \u{1} \u{1b}[31m and non-characters \u{fffe}\u{ffff}",
            "讨论目标 👨‍👩‍👧‍👦 \u{202e}reversed\u{202c}",
            "",
        ];
        for text in texts {
            step(&db, &["append", "--role", "user", "--text", text]);
        }
        step(&db, &["fork", "--node", "n2", "--name", "<&\"branch\">"]);
        let diagram = export_drawio(&db, "texts.drawio");
        let cells = cells(&diagram.root);
        for (i, text) in texts.iter().enumerate() {
            let id = format!("n{}", i + 1);
            let (attrs, _) = cells.iter().find(|(a, _)| a["id"] == id).unwrap();
            assert_eq!(
                serde_json::from_str::<String>(&attrs["text_json"]).unwrap(),
                *text,
                "{id}"
            );
        }
    }

    #[test]
    fn drawio_refuses_an_existing_file_and_keeps_it() {
        let db = demo_db();
        let first = export_drawio(&db, "out.drawio");
        let out = db.dir.path().join("out.drawio");
        let out_str = out.to_str().unwrap();
        db.tl(&["export", "--format", "drawio", "--output", out_str]).err(
            1,
            &serde_json::json!({"error": format!("the output file {out_str} already exists; choose another name (export never overwrites a file, so changes you made to it are kept)")}).to_string(),
        );
        assert_eq!(std::fs::read(&out).unwrap(), first.bytes);
        // A file the user edited is refused just the same, and left alone.
        std::fs::write(&out, b"my edits").unwrap();
        assert_eq!(
            db.tl(&["export", "--format", "drawio", "--output", out_str])
                .code,
            1
        );
        assert_eq!(std::fs::read(&out).unwrap(), b"my edits");
        // No temporary files are left behind.
        let names: Vec<String> = std::fs::read_dir(db.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.contains("export"))
            .collect();
        assert!(names.is_empty(), "{names:?}");
    }

    #[test]
    fn export_never_changes_the_database() {
        let db = demo_db();
        let before = db.bytes();
        let backup = db.json_backup();
        // (A server database has no file; `bytes` compares what it holds.)
        let modified = || std::fs::metadata(&db.path).and_then(|m| m.modified()).ok();
        let mtime = modified();
        export_drawio(&db, "a.drawio");
        ascii(&db);
        step(
            &db,
            &[
                "export",
                "--format",
                "ascii",
                "--output",
                db.dir.path().join("a.txt").to_str().unwrap(),
            ],
        );
        assert_eq!(db.bytes(), before);
        assert_eq!(db.json_backup(), backup);
        assert_eq!(modified(), mtime);
    }

    #[test]
    fn export_argument_errors() {
        let db = demo_db();
        let out = db.dir.path().join("x.drawio");
        let out_str = out.to_str().unwrap();
        // G1: no idempotency key.
        db.tl(&["--idempotency-key", "k1", "export", "--format", "ascii"]).err(
            2,
            r#"{"error":"invalid argument --idempotency-key: export does not take an idempotency key; it changes nothing in the database, so it is always safe to run again"}"#,
        );
        db.tl(&["--idempotency-key", "k1", "export", "--format", "drawio", "--output", out_str]).err(
            2,
            r#"{"error":"invalid argument --idempotency-key: export does not take an idempotency key; it changes nothing in the database, so it is always safe to run again"}"#,
        );
        assert!(!out.exists());
        db.tl(&["export", "--format", "drawio"]).err(
            2,
            r#"{"error":"invalid argument --output: --format drawio writes a diagram file, so it needs --output FILE (for example --output timeline.drawio); the other formats can print to the terminal"}"#,
        );
        db.tl(&["--timeline", "tl7", "export", "--format", "ascii"])
            .err(
                1,
                r#"{"error":"timeline not found: tl7 (this database has tl0)"}"#,
            );
        // A directory that does not exist: an output error that names the file.
        let missing = db.dir.path().join("no-such-dir").join("x.txt");
        let run = db.tl(&[
            "export",
            "--format",
            "ascii",
            "--output",
            missing.to_str().unwrap(),
        ]);
        assert_eq!((run.code, run.stdout.as_str()), (1, ""), "{run:?}");
        let message = serde_json::from_str::<Value>(&run.stderr).unwrap()["error"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(
            message.starts_with(&format!(
                "cannot write the output file {}: ",
                missing.display()
            )),
            "{message}"
        );
        assert!(!missing.exists());
    }

    #[test]
    fn export_selects_the_timeline() {
        let db = Db::created_at(NOW);
        step(&db, &["append", "--role", "user", "--text", "in tl0"]);
        step(&db, &["create"]).ok(r#"{"timeline_id":"tl1"}"#);
        step(
            &db,
            &[
                "--timeline",
                "tl1",
                "append",
                "--role",
                "user",
                "--text",
                "in tl1",
            ],
        );
        assert_eq!(ascii(&db), "[n1 user] \"in tl0\" [HEAD* \"main\"]\n");
        let run = step(&db, &["--timeline", "tl1", "export", "--format", "ascii"]);
        assert_eq!(run.stdout, "[n1 user] \"in tl1\" [HEAD* \"main\"]\n");
        let out = db.dir.path().join("tl1.drawio");
        let run = step(
            &db,
            &[
                "--timeline",
                "tl1",
                "export",
                "--format",
                "drawio",
                "--output",
                out.to_str().unwrap(),
            ],
        );
        assert_eq!(run.json()["timeline_id"], "tl1");
        assert_eq!(
            (run.json()["nodes"].clone(), run.json()["edges"].clone()),
            (1.into(), 1.into())
        );
    }

    #[test]
    fn examples_are_up_to_date() {
        let db = demo_db();
        golden("examples/demo.timeline.json", &db.bytes());
        // Export the committed example from a copy, so no lock file appears in examples/.
        let dir = TempDir::new();
        let copy = Db {
            path: dir.path().join("demo.timeline.json"),
            dir,
            env: Vec::new(),
        };
        std::fs::copy(repo_path("examples/demo.timeline.json"), &copy.path).unwrap();
        let drawio = export_drawio(&copy, "demo.drawio");
        golden("examples/demo.drawio", &drawio.bytes);
        golden("examples/demo.txt", ascii(&copy).as_bytes());
    }

    #[test]
    fn docs_show_the_example() {
        let docs = std::fs::read_to_string(repo_path("docs/export.md")).unwrap();
        for args in DEMO {
            let shown: Vec<String> = args
                .iter()
                .map(|a| {
                    if a.contains(' ') {
                        format!("\"{a}\"")
                    } else {
                        a.to_string()
                    }
                })
                .collect();
            let line = format!("tl --db demo.timeline.json {}\n", shown.join(" "));
            assert!(
                docs.contains(&line),
                "docs/export.md lacks the example command {line}"
            );
        }
        let tree = std::fs::read_to_string(repo_path("examples/demo.txt")).unwrap();
        // The tree closes the console block of the demo's commands (which the docs-examples test
        // also runs), right after the ascii export that prints it.
        assert!(
            docs.contains(&format!(
                "$ tl --db demo.timeline.json export --format ascii\n{tree}```\n"
            )),
            "docs/export.md shows an outdated example tree"
        );
    }
}

// Export on shapes written straight to a JSON snapshot (issue 12 item 3), and temporary files of
// killed exports (item 9).

/// A database file with one timeline whose messages are `(parent, role, text, tokens)`, numbered
/// n1, n2, … in order, with `main` at `head` and these pins. Written directly, so a test can have
/// thousands of messages without thousands of runs of `tl`.
fn write_timeline(db: &Db, nodes: &[(u64, &str, String, u64)], head: u64, pins: &[u64]) {
    let nodes: Vec<Value> = nodes
        .iter()
        .enumerate()
        .map(|(i, (parent, role, text, tokens))| {
            serde_json::json!({"id": format!("n{}", i + 1), "parent": format!("n{parent}"), "role": role, "text": text, "tokens": tokens})
        })
        .collect();
    let pins: Vec<String> = pins.iter().map(|p| format!("n{p}")).collect();
    let file = serde_json::json!({
        "format_version": 1,
        "next_timeline": 1,
        "timelines": [{
            "id": "tl0",
            "next_node": nodes.len() + 1,
            "current_branch": "main",
            "branches": [{"name": "main", "head": format!("n{head}")}],
            "pins": pins,
            "nodes": nodes,
        }],
    });
    std::fs::write(&db.path, file.to_string()).unwrap();
}

/// Every node of 1..=count on exactly one line, and the output linear in size: under 200 bytes per
/// node and no line wider than `width` (what quadratic indentation would break first).
#[track_caller]
fn assert_linear(text: &str, count: u64, width: usize) {
    assert!(
        text.len() < 200 * count as usize,
        "{} bytes for {count} nodes",
        text.len()
    );
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= width, "a line of {widest} characters");
    let mut seen = BTreeMap::new();
    for line in text.lines() {
        if let Some(at) = line.find("[n") {
            let id: String = line[at + 2..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            *seen.entry(id.parse::<u64>().unwrap()).or_insert(0) += 1;
        }
    }
    seen.remove(&0);
    let missing: Vec<u64> = (1..=count).filter(|n| !seen.contains_key(n)).collect();
    let twice: Vec<u64> = seen
        .iter()
        .filter(|&(_, &c)| c != 1)
        .map(|(&n, _)| n)
        .collect();
    assert_eq!((seen.len() as u64, missing, twice), (count, vec![], vec![]));
}

#[test]
fn ascii_a_comb_of_2000_nodes_stays_in_two_columns() {
    // Issue 12 item 3: a history of 1000 messages with a side message at every one (the shape that
    // made the old layout indent two more columns at every fork: quadratic output, 60k nodes ran out
    // of memory). Each side message is created after the whole history, so it is the second child.
    let db = Db::new();
    let n = 1000u64;
    let mut nodes: Vec<(u64, &str, String, u64)> = (1..=n)
        .map(|k| (k - 1, "user", format!("chain {k}"), 1))
        .collect();
    nodes.extend((1..=n).map(|k| (k, "assistant", format!("side {k}"), 1)));
    write_timeline(&db, &nodes, n, &[]);
    let text = ascii(&db);
    let mut expected = String::new();
    for k in 1..n {
        expected.push_str(&format!(
            "[n{k} user] \"chain {k}\"\n|\n+-- [n{} assistant] \"side {k}\"\n|\n",
            n + k
        ));
    }
    expected.push_str(&format!(
        "[n{n} user] \"chain {n}\" [HEAD* \"main\"]\n|\n[n{} assistant] \"side {n}\"\n",
        2 * n
    ));
    assert_eq!(text, expected);
    assert_linear(&text, 2 * n, 40);
    // The file output is the same text, written the same way.
    let out = db.dir.path().join("comb.txt");
    db.tl(&[
        "export",
        "--format",
        "ascii",
        "--output",
        out.to_str().unwrap(),
    ])
    .ok(&format!(
        r#"{{"format":"ascii","timeline_id":"tl0","output":{},"nodes":2000,"edges":1999}}"#,
        serde_json::json!(out.to_str().unwrap())
    ));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), expected);
}

#[test]
fn ascii_one_budget_over_a_pinned_history_stays_linear() {
    // Issue 12 item 3, as reported: one `budget` over a long history with every other message pinned
    // makes a placeholder for every message in between, and a placeholder is the sibling of the
    // first message it covers.
    let db = Db::created_at(NOW);
    let n = 600u64;
    let nodes: Vec<(u64, &str, String, u64)> = (1..=n)
        .map(|k| {
            (
                k - 1,
                "user",
                format!("message {k}"),
                if k % 2 == 0 { 1 } else { 100 },
            )
        })
        .collect();
    let pins: Vec<u64> = (1..=n).filter(|k| k % 2 == 0).collect();
    write_timeline(&db, &nodes, n, &pins);
    // The smallest budget that fits: every pin plus one 32-token placeholder for each message between.
    let max = (n / 2 + 32 * (n / 2)).to_string();
    let run = step(&db, &["budget", "--node", &format!("n{n}"), "--max", &max]);
    let created = run.json()["summaries_created"].as_array().unwrap().len() as u64;
    assert_eq!(created, n / 2);
    let text = ascii(&db);
    assert_linear(&text, n + created, 180);
    // The root has two children now (n1 and the placeholder for n1), then the same pattern repeats.
    assert!(
        text.starts_with(&format!(
            "[n0 root]\n|\n+-- [n{p} placeholder covers n1..n1] \"[placeholder] 1 message(s) n1..n1 (100 tokens) omitted to fit th\"...\n|\n[n1 user] \"message 1\"\n|\n[n2 user PIN] \"message 2\"\n|\n+-- [n{q} placeholder covers n3..n3] ",
            p = n + 1,
            q = n + 2
        )),
        "{}",
        &text[..600]
    );
}

#[test]
fn export_removes_temporary_files_that_killed_exports_left() {
    // Issue 12 item 9: an export killed between creating its temporary file and linking it left
    // `.<name>.export-<pid>-<nanos>` behind for ever. The next export to the same directory removes
    // such files once they are unlocked (their writer is gone) and unchanged for 10 seconds.
    let db = demo_db();
    let dir = db.dir.path();
    let dead = {
        let mut child = db.command(common::TL).arg("--version").spawn().unwrap();
        let pid = child.id();
        child.wait().unwrap();
        pid
    };
    let an_hour_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let make = |name: &str, modified: std::time::SystemTime| {
        let file = std::fs::File::create(dir.join(name)).unwrap();
        std::io::Write::write_all(&mut &file, b"half a tree").unwrap();
        file.set_modified(modified).unwrap();
        file
    };
    let stale = [
        format!(".tree.txt.export-{dead}-123456789"),
        format!(".other.drawio.export-{dead}-42"),
    ];
    for name in &stale {
        make(name, an_hour_ago);
    }
    // Kept: just written (its export may still be starting), locked by a live process (this test),
    // and names that only look similar.
    let fresh = format!(".fresh.txt.export-{dead}-1");
    make(&fresh, std::time::SystemTime::now());
    let locked_name = format!(".busy.txt.export-{}-7", std::process::id());
    let locked = make(&locked_name, an_hour_ago);
    locked.lock().unwrap();
    let lookalikes = [
        ".tree.txt.export-12a-3",
        ".tree.txt.export-1-2-3",
        "tree.txt.export-1-2",
        "..export-1-2",
        ".tree.txt.export-1-",
    ];
    for name in lookalikes {
        make(name, an_hour_ago);
    }
    std::fs::create_dir(dir.join(".dir.txt.export-1-2")).unwrap();

    let out = dir.join("tree.txt");
    step(
        &db,
        &[
            "export",
            "--format",
            "ascii",
            "--output",
            out.to_str().unwrap(),
        ],
    );
    let names: BTreeSet<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("export"))
        .collect();
    let mut kept: BTreeSet<String> = lookalikes.iter().map(|n| n.to_string()).collect();
    kept.extend([fresh, locked_name, ".dir.txt.export-1-2".to_string()]);
    assert_eq!(names, kept);
    for name in &stale {
        assert!(!dir.join(name).exists(), "{name}");
    }
    drop(locked);
}

// ---------------------------------------------------------------------------------------------
// The HTML view (issue 27), with its browser tests: tests/suite/export/html.rs.

#[path = "export/html.rs"]
mod html;
