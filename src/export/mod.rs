//! Read-only views of a timeline for people: draw.io diagrams and ASCII trees.
//!
//! Both renderers are pure functions of one `Timeline`; this module picks the timeline, renders it and
//! either returns the text (ASCII to stdout) or writes it to a new file that must not exist yet.
//! Export runs inside the store's read transaction and never changes the database.

mod ascii;
mod drawio;

use crate::error::{Error, ErrorKind, Result};
use crate::model::{Database, Timeline};
use crate::service::Output;
use crate::spec::validate::Args;
use serde_json::json;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind as IoKind, Write};
use std::path::Path;

/// A rendered export and what it contains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    pub text: String,
    /// Messages written (hot and cold; the root n0 is never counted).
    pub nodes: u64,
    /// Links written: see each renderer for exactly what counts.
    pub edges: u64,
}

/// Render `timeline` as an ASCII tree.
pub fn ascii(timeline: &Timeline) -> Rendered {
    ascii::render(timeline)
}

/// Render `timeline` as an uncompressed draw.io (mxGraph) document.
pub fn drawio(timeline: &Timeline) -> Rendered {
    drawio::render(timeline)
}

pub fn run(db: &mut Database, args: &Args) -> Result<Output> {
    let format = args.str("format").unwrap_or_default();
    let output = args.str("output");
    if format == "drawio" && output.is_none() {
        return Err(Error::invalid(
            "invalid argument --output: --format drawio writes a diagram file, so it needs --output FILE (for example --output timeline.drawio); only --format ascii can print to the terminal",
        ));
    }
    let timeline = db.timeline(crate::ops::timeline_of(db, args)?)?;
    let rendered = match format {
        "drawio" => drawio::render(timeline),
        "ascii" => ascii::render(timeline),
        other => {
            return Err(Error::invalid(format!(
                "invalid argument --format: {other:?} is not a format; use drawio or ascii"
            )));
        }
    };
    let Some(output) = output else {
        return Ok(Output::Text(rendered.text));
    };
    write_new_file(Path::new(output), rendered.text.as_bytes())?;
    Ok(Output::Json(json!({
        "format": format,
        "timeline_id": timeline.id_str(),
        "output": output,
        "nodes": rendered.nodes,
        "edges": rendered.edges,
    })))
}

fn exists_error(path: &Path) -> Error {
    Error::new(
        ErrorKind::Output,
        format!(
            "the output file {} already exists; choose another name (export never overwrites a file, so changes you made to it are kept)",
            path.display()
        ),
    )
}

fn write_error(path: &Path, e: std::io::Error) -> Error {
    Error::new(
        ErrorKind::Output,
        format!(
            "cannot write the output file {}: {e}; check that its directory exists and is writable",
            path.display()
        ),
    )
}

/// A fresh file that only its owner can read and write (Unix); fails if `path` exists.
fn create_new(path: &Path) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options.open(path)
}

/// Write `bytes` to `path`, which must not exist yet; an existing file is never touched.
///
/// The bytes go to a temporary file in the same directory, are fsynced, and the temporary file is
/// hard-linked to `path`, which fails atomically if `path` exists (a rename would replace it). Where
/// the file system has no hard links, `path` is created with `create_new`, written and fsynced, and
/// removed again if writing fails. Either way a reader never sees a half-written file under `path`
/// unless the machine crashes during the fallback.
pub fn write_new_file(path: &Path, bytes: &[u8]) -> Result<()> {
    if fs::symlink_metadata(path).is_ok() {
        return Err(exists_error(path));
    }
    let temp = crate::store::temp_path_beside(path, "export");
    let staged = (|| -> std::io::Result<()> {
        let mut file = create_new(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()
    })();
    if let Err(e) = staged {
        let _ = fs::remove_file(&temp);
        return Err(write_error(path, e));
    }
    let linked = fs::hard_link(&temp, path);
    let _ = fs::remove_file(&temp);
    match linked {
        Ok(()) => {
            crate::store::sync_parent(path);
            Ok(())
        }
        Err(e) if e.kind() == IoKind::AlreadyExists => Err(exists_error(path)),
        Err(_) => write_directly(path, bytes),
    }
}

/// The fallback without hard links: create_new, write, fsync; remove the partial file on failure.
fn write_directly(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = match create_new(path) {
        Ok(file) => file,
        Err(e) if e.kind() == IoKind::AlreadyExists => return Err(exists_error(path)),
        Err(e) => return Err(write_error(path, e)),
    };
    let written = file.write_all(bytes).and_then(|()| file.sync_all());
    drop(file);
    if let Err(e) = written {
        let _ = fs::remove_file(path);
        return Err(write_error(path, e));
    }
    crate::store::sync_parent(path);
    Ok(())
}

/// Branch heads by node: `(is_current, name)`, the current branch first, then in branch order.
fn heads_by_node(timeline: &Timeline) -> std::collections::HashMap<u64, Vec<(bool, &str)>> {
    let mut heads: std::collections::HashMap<u64, Vec<(bool, &str)>> = Default::default();
    let current = timeline.current();
    heads
        .entry(current.head)
        .or_default()
        .push((true, current.name.as_str()));
    for branch in &timeline.branches {
        if branch.name != current.name {
            heads
                .entry(branch.head)
                .or_default()
                .push((false, branch.name.as_str()));
        }
    }
    heads
}

/// The node's ID, kind and markers, as shown in the ASCII tree's brackets and the diagram's labels:
/// `n7 summary v2 covers n1..n3 supersedes n5 PIN`.
fn describe(timeline: &Timeline, n: u64) -> String {
    use crate::model::{SummaryKind, node_id};
    let node = &timeline.nodes[n as usize];
    let mut parts = vec![node_id(n)];
    match &node.summary {
        None => parts.push(node.role.as_str().to_string()),
        Some(s) if s.kind == SummaryKind::Placeholder => {
            parts.push("placeholder".into());
            parts.push(format!("covers {}..{}", node_id(s.from), node_id(s.to)));
        }
        Some(s) => {
            parts.push(format!("summary v{}", s.version));
            parts.push(format!("covers {}..{}", node_id(s.from), node_id(s.to)));
            if let Some(old) = s.supersedes {
                parts.push(format!("supersedes {}", node_id(old)));
            }
            if let Some(&newer) = timeline.derived.superseded_by.get(&n) {
                parts.push(format!("superseded-by {}", node_id(newer)));
            }
            if !s.derived_from.is_empty() {
                let sources: Vec<String> = s.derived_from.iter().map(|&d| node_id(d)).collect();
                parts.push(format!("derived-from {}", sources.join(",")));
            }
            if timeline.derived.stale[n as usize] {
                parts.push("STALE".into());
            }
        }
    }
    if timeline.pins.contains(&n) {
        parts.push("PIN".into());
    }
    if node.cold {
        parts.push("ARCHIVED".into());
    }
    parts.join(" ")
}

/// The first `max` Unicode scalars of `text`, and whether anything was cut.
pub fn cut(text: &str, max: usize) -> (&str, bool) {
    match text.char_indices().nth(max) {
        Some((byte, _)) => (&text[..byte], true),
        None => (text, false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_counts_scalars_not_bytes() {
        assert_eq!(cut("abc", 3), ("abc", false));
        assert_eq!(cut("abcd", 3), ("abc", true));
        assert_eq!(cut("讨论目标", 2), ("讨论", true));
        // The family emoji is seven scalars joined by zero-width joiners.
        assert_eq!(cut("👨‍👩‍👧‍👦", 3), ("👨‍👩", true));
    }
}
