//! `tl demo`: a guided tour that builds a small branching conversation in a new database with the same
//! code path as every `tl` command, printing each command and what it answered.
//!
//! It never touches an existing database: without `--db` it works in a new temporary directory (and
//! ignores `TIMELINE_DB`), and a `--db` path must not exist yet. The database is left for you to explore,
//! and the tour ends by writing the tree as an HTML page beside it (`<db>` with the extension `.html`),
//! so the first thing a newcomer opens is a picture of their own tree.

use super::{CliError, run};
use crate::error::{Error, ErrorKind};
use crate::service::Output;
use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The tour: each step is the arguments after `tl --db <demo database>`.
const STEPS: &[&[&str]] = &[
    &["create"],
    &[
        "append",
        "--role",
        "user",
        "--text",
        "Plan a local-first notes app.",
        "--tokens",
        "8",
    ],
    &[
        "append",
        "--role",
        "assistant",
        "--text",
        "Store notes as JSON; sync later.",
        "--tokens",
        "60",
    ],
    &[
        "append",
        "--role",
        "user",
        "--text",
        "Only local data for now.",
        "--tokens",
        "6",
        "--intent-tag",
        "decision",
    ],
    &["pin", "--node", "n3"],
    &[
        "append",
        "--role",
        "assistant",
        "--text",
        "Option A: one file per note.",
        "--tokens",
        "40",
    ],
    &["fork", "--node", "n3", "--name", "alternative"],
    &["switch", "--name", "alternative"],
    &[
        "append",
        "--role",
        "assistant",
        "--text",
        "Option B: one database file.",
        "--tokens",
        "40",
    ],
    &["context", "--node", "n5"],
    // The path (114 tokens) does not fit: n5 and the pinned n3 stay, a placeholder stands in for n1..n2.
    &["budget", "--node", "n5", "--max", "90"],
    &[
        "summarize",
        "--from",
        "n1",
        "--to",
        "n2",
        "--summary",
        "Goal: local-first notes app, JSON storage.",
        "--tokens",
        "9",
    ],
    // Now the summary fits where the placeholder stood, in a smaller budget.
    &["budget", "--node", "n5", "--max", "60"],
    &["branches"],
    &["export", "--format", "ascii"],
];

/// Run the tour against `db` (a path that must not exist) or a database in a new temporary directory.
/// Writes the transcript to `out` as it goes; a closed output stops nothing.
pub fn run_demo(db: Option<PathBuf>, out: &mut dyn Write) -> Result<(), Error> {
    let db = match db {
        Some(path) => {
            if crate::store::is_uri(&path.to_string_lossy()) {
                return Err(Error::new(
                    ErrorKind::Output,
                    "the demo writes a new database file and an HTML page beside it, not a PostgreSQL database: pass --db with the path of a file that does not exist yet, or leave --db out to use a new temporary directory",
                ));
            }
            if path.symlink_metadata().is_ok() {
                return Err(Error::new(
                    ErrorKind::Output,
                    format!(
                        "{} already exists; the demo writes a new database and never changes an existing one: pass --db with a path that does not exist yet, or leave --db out to use a new temporary directory",
                        path.display()
                    ),
                ));
            }
            path
        }
        None => new_temp_dir()?.join("demo.timeline.json"),
    };
    let page = db.with_extension("html");
    if page.symlink_metadata().is_ok() {
        return Err(Error::new(
            ErrorKind::Output,
            format!(
                "{} already exists; the demo ends by writing its tree there as an HTML page and never overwrites a file: pass --db with another path, or leave --db out to use a new temporary directory",
                page.display()
            ),
        ));
    }
    let page_str = page.to_string_lossy().into_owned();
    let last: &[&str] = &["export", "--format", "html", "--output", &page_str];
    let _ = writeln!(out, "Timeline demo: a short tour in {}\n", db.display());
    for &step in STEPS.iter().chain([&last]) {
        let _ = writeln!(out, "$ tl {}", shell_words(step.iter().copied()));
        let mut args: Vec<OsString> = vec!["tl".into(), "--db".into(), db.clone().into_os_string()];
        args.extend(step.iter().map(OsString::from));
        let _ = match run(args, &mut std::io::empty()) {
            Ok(Output::Json(value)) => writeln!(out, "{value}\n"),
            Ok(Output::Text(text)) => writeln!(out, "{text}"),
            Err(CliError::Text { text, .. }) => writeln!(out, "{text}"),
            Err(CliError::Failed(error)) => {
                // A step that fails means the demo itself is broken (or the disk is full): stop there.
                return Err(error);
            }
        };
        let _ = out.flush();
    }
    let path = shell_words([db.to_string_lossy().as_ref()]);
    let _ = writeln!(
        out,
        "Open the page {} in a browser to see the tree: the branches, the conversation of each, the summaries and a search box.",
        shell_words([page_str.as_str()])
    );
    let _ = writeln!(
        out,
        "The demo database is {path}. Explore it, for example:\n  tl --db {path} node --node n6\n  tl --db {path} budget --node n5 --max 50    # too small: it says what it needs\n(tl on your PATH: see Install in README; from a clone: cargo run -- --db {path} node --node n6)"
    );
    let _ = out.flush();
    Ok(())
}

/// A new directory `timeline-demo-<pid>-<n>` in the system's temporary directory.
fn new_temp_dir() -> Result<PathBuf, Error> {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!("timeline-demo-{}-{nanos}", std::process::id()));
    create_dir(&dir)?;
    Ok(dir)
}

fn create_dir(dir: &Path) -> Result<(), Error> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::new(
            ErrorKind::Output,
            format!(
                "cannot create the demo directory {}: {e}; pass --db with a path in a directory you can write",
                dir.display()
            ),
        )
    })
}

/// Arguments as a person would type them: quoted when they hold spaces or shell characters.
fn shell_words<'a>(args: impl IntoIterator<Item = &'a str>) -> String {
    args.into_iter()
        .map(|a| {
            if !a.is_empty()
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_./,:=+@%".contains(c))
            {
                a.to_string()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
