//! The writers of one cycle and what they acknowledge.

use super::mount::Procs;
use crate::common::{TL, TL_MCP};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

/// One acknowledged write: what must be there after any cut.
#[derive(Clone, Debug)]
pub(super) enum Ack {
    /// A message or summary: its node and exact text in timeline tl0.
    Message { node: String, text: String },
    /// `tl create` printed the timeline.
    Created,
    /// `import` printed this timeline with these messages.
    Imported {
        timeline: String,
        texts: Vec<String>,
    },
    /// `archive-branch` archived this branch.
    Archived { branch: String },
    /// `db convert` or `db backup` wrote this file, which holds every message acknowledged before.
    Copy {
        path: PathBuf,
        holds: Vec<(String, String)>,
    },
}

/// What a configuration runs on: the engine's file name and the environment of every process.
pub(super) struct Setup {
    pub(super) name: &'static str,
    pub(super) ext: &'static str,
    pub(super) env: Vec<(&'static str, &'static str)>,
    /// What `db info` must report as `sqlite_log` under `env` (None: not a SQLite configuration).
    pub(super) sqlite_log: Option<&'static str>,
}

impl Setup {
    pub(super) fn command(&self, bin: &str) -> Command {
        let mut cmd = crate::common::command_without_switches(bin);
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd
    }

    pub(super) fn tl(&self, db: &Path, args: &[&str]) -> Command {
        let mut cmd = self.command(TL);
        cmd.arg("--db").arg(db).args(args);
        cmd
    }
}

/// The title the other program writes in its `k`th commit of a cycle: about 12 KiB (four pages),
/// every part of it derived from its first line.
fn foreign_title(cycle: usize, k: usize) -> String {
    let head = format!("foreign-{cycle}-{k}:");
    head.repeat(12_000 / head.len() + 1)
}

/// Whether a title is exactly one that the other program wrote.
pub(super) fn is_foreign_title(title: &str) -> bool {
    let Some(head) = title.split_inclusive(':').next() else {
        return false;
    };
    let mut numbers = head
        .trim_start_matches("foreign-")
        .trim_end_matches(':')
        .split('-')
        .map(str::parse::<usize>);
    match (numbers.next(), numbers.next(), numbers.next()) {
        (Some(Ok(cycle)), Some(Ok(k)), None) => title == foreign_title(cycle, k),
        _ => false,
    }
}

#[test]
fn a_title_made_of_two_commits_is_not_the_other_programs() {
    let (a, b) = (foreign_title(3, 4), foreign_title(3, 5));
    assert!(is_foreign_title(&a));
    assert!(!is_foreign_title(&format!("{}{}", &a[..4096], &b[4096..])));
    assert!(!is_foreign_title(&a[..8192]));
    assert!(!is_foreign_title("foreign-x"));
}

pub(super) fn node_of(stdout: &str) -> Option<String> {
    let v: Value = serde_json::from_str(stdout.trim()).ok()?;
    v["node"].as_str().map(str::to_string)
}

/// The shared state of one cycle's writers.
pub(super) struct Cycle<'a> {
    pub(super) setup: &'a Setup,
    pub(super) db: PathBuf,
    pub(super) procs: Procs,
    pub(super) acks: Mutex<Vec<Ack>>,
    pub(super) texts: Mutex<HashSet<String>>,
    pub(super) failures: Mutex<Vec<String>>,
    pub(super) cycle: usize,
    pub(super) tmp: PathBuf,
    /// The messages acknowledged before this cycle: copies made in it must hold them.
    pub(super) before: Vec<(String, String)>,
}

impl Cycle<'_> {
    pub(super) fn text(&self, what: &str, k: usize) -> String {
        let text = format!("{what}-{}-{k}", self.cycle);
        self.texts.lock().unwrap().insert(text.clone());
        text
    }

    pub(super) fn ack(&self, ack: Ack) {
        self.acks.lock().unwrap().push(ack);
    }

    /// A writer that failed without being killed: a bug, unless the cut came first.
    pub(super) fn failed(&self, what: &str, stderr: &str) {
        // The archival rules may refuse a branch (its watermark, when main's head is the fork
        // point): an answer, not a failure of the store.
        let refused = stderr.contains("cannot be archived");
        if !self.procs.stopped() && !refused {
            self.failures
                .lock()
                .unwrap()
                .push(format!("{what}: {}", stderr.trim()));
        }
    }

    pub(super) fn run(&self, what: &str, args: &[&str]) -> Option<String> {
        let (stdout, ok, stderr) = self.procs.run(&mut self.setup.tl(&self.db, args))?;
        if !ok {
            self.failed(what, &stderr);
        }
        Some(stdout)
    }

    pub(super) fn appends(&self, writer: usize) {
        for k in 0.. {
            let text = self.text(&format!("tl{writer}"), k);
            let Some(out) = self.run(
                "tl append",
                &["append", "--role", "user", "--tokens", "1", "--text", &text],
            ) else {
                return;
            };
            if let Some(node) = node_of(&out) {
                self.ack(Ack::Message { node, text });
            }
        }
    }

    /// Another program writing the same SQLite database between Timeline's commits with
    /// `synchronous=NORMAL`, which leaves its commits unsynced: the `sqlite3` shell rewrites the
    /// first timeline's title with a value that spans several pages, so that a checkpoint that
    /// copied half of such a transaction into the database would show (`is_foreign_title`).
    pub(super) fn foreign(&self) {
        for k in 0.. {
            let sql = format!(
                "PRAGMA busy_timeout = 10000; PRAGMA synchronous = NORMAL; UPDATE timelines SET title = '{}' WHERE id = 0;",
                foreign_title(self.cycle, k)
            );
            let mut cmd = Command::new("sqlite3");
            cmd.arg(&self.db).arg(sql);
            let Some((_, ok, stderr)) = self.procs.run(&mut cmd) else {
                return;
            };
            if !ok {
                self.failed("sqlite3 (another program)", &stderr);
            }
        }
    }

    pub(super) fn create_then_append(&self) {
        let Some(out) = self.run("tl create", &["create"]) else {
            return;
        };
        if out.contains("\"timeline_id\":\"tl0\"") {
            self.ack(Ack::Created);
            self.appends(9);
        }
    }

    pub(super) fn mcp(&self) {
        let mut cmd = self.setup.command(TL_MCP);
        cmd.arg("--db")
            .arg(&self.db)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        let Some(mut child) = self.procs.spawn(&mut cmd) else {
            return;
        };
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut send = |line: Value| writeln!(stdin, "{line}").is_ok();
        let ok = send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "power-loss", "version": "0"}}}),
        ) && send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let mut line = String::new();
        if ok && stdout.read_line(&mut line).is_ok_and(|n| n > 0) {
            for k in 1.. {
                let text = self.text("mcp", k);
                let call = json!({"jsonrpc": "2.0", "id": k, "method": "tools/call", "params": {"name": "timeline_append", "arguments": {"timeline_id": "tl0", "role": "assistant", "text": text, "tokens": 1}}});
                line.clear();
                if !send(call) || !stdout.read_line(&mut line).is_ok_and(|n| n > 0) {
                    break;
                }
                let answer: Value = serde_json::from_str(&line).unwrap_or(Value::Null);
                match answer["result"]["structuredContent"]["node"].as_str() {
                    Some(node) if answer["result"]["isError"] != json!(true) => {
                        self.ack(Ack::Message {
                            node: node.to_string(),
                            text,
                        })
                    }
                    _ => self.failed("tl-mcp timeline_append", &line),
                }
            }
        }
        drop(stdin);
        let pid = child.id();
        let _ = child.wait();
        self.procs.running.lock().unwrap().retain(|&p| p != pid);
    }

    pub(super) fn imports(&self) {
        for k in 0.. {
            let (a, b) = (self.text("imp-a", k), self.text("imp-b", k));
            let input = self.tmp.join(format!("import-{}-{k}.json", self.cycle));
            std::fs::write(
                &input,
                json!([{"role": "user", "content": a}, {"role": "assistant", "content": b}])
                    .to_string(),
            )
            .unwrap();
            let Some(out) = self.run(
                "tl import",
                &[
                    "import",
                    "--format",
                    "openai",
                    "--input",
                    input.to_str().unwrap(),
                ],
            ) else {
                return;
            };
            let v: Value = serde_json::from_str(out.trim()).unwrap_or(Value::Null);
            if let Some(timeline) = v["timelines"][0]["timeline_id"].as_str() {
                self.ack(Ack::Imported {
                    timeline: timeline.to_string(),
                    texts: vec![a, b],
                });
            }
        }
    }

    /// Fork a branch at an acknowledged message, append to it, summarize that message, archive it.
    pub(super) fn summarize_and_archive(&self) {
        // A message of the main branch (not a summary, not one of an archived branch).
        let Some((at, _)) = self
            .before
            .iter()
            .rev()
            .find(|(_, text)| text.starts_with("tl") || text.starts_with("mcp"))
            .cloned()
        else {
            return;
        };
        for k in 0.. {
            let branch = format!("b{}-{k}", self.cycle);
            let Some(out) = self.run("tl fork", &["fork", "--name", &branch, "--node", &at]) else {
                return;
            };
            if !out.contains("\"head\"") {
                return;
            }
            let text = self.text("side", k);
            let Some(out) = self.run(
                "tl append --branch",
                &[
                    "append", "--branch", &branch, "--role", "user", "--tokens", "1", "--text",
                    &text,
                ],
            ) else {
                return;
            };
            let Some(node) = node_of(&out) else { return };
            self.ack(Ack::Message {
                node: node.clone(),
                text,
            });
            let summary = self.text("summary", k);
            let Some(out) = self.run(
                "tl summarize",
                &[
                    "summarize",
                    "--from",
                    &node,
                    "--to",
                    &node,
                    "--summary",
                    &summary,
                ],
            ) else {
                return;
            };
            let Some(sum) = node_of(&out) else { return };
            self.ack(Ack::Message {
                node: sum,
                text: summary,
            });
            let Some(out) = self.run("tl archive-branch", &["archive-branch", "--name", &branch])
            else {
                return;
            };
            if out.contains("\"archived\"") {
                self.ack(Ack::Archived { branch });
            }
        }
    }

    /// `db convert` and `db backup` to new files on the same file system.
    pub(super) fn copies(&self, ext: &str) {
        for k in 0.. {
            let path = self
                .db
                .with_file_name(format!("copy-{}-{k}{ext}", self.cycle));
            // A backup has the database's engine, a conversion the one its name asks for.
            let (what, args, ext) = if k % 2 == 0 {
                ("tl db convert", ["db", "convert", "--to"], ext)
            } else {
                ("tl db backup", ["db", "backup", "--to"], self.setup.ext)
            };
            let path = path.with_extension(&ext[1..]);
            let mut args = args.to_vec();
            args.push(path.to_str().unwrap());
            let Some(out) = self.run(what, &args) else {
                return;
            };
            if out.contains("\"to\"") {
                self.ack(Ack::Copy {
                    path,
                    holds: self.before.clone(),
                });
            }
        }
    }
}
