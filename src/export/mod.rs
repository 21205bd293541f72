//! Read-only views of a timeline for people: draw.io diagrams, ASCII trees and HTML pages; and of one context
//! for programs and people: OpenAI messages, an Anthropic body, a Markdown transcript (`context`).
//!
//! `tl` runs an export through [`execute`]: the timeline is read under the store's shared lock, the
//! lock is released, and the ASCII tree is written to standard output or to the output file line by
//! line as it is drawn, so its text is never held in memory whole (the model is). A draw.io diagram is
//! rendered in memory, then written; an HTML page is written as it is made. [`run`] is the same export for library callers that want the
//! text back. Export never changes the database.

mod ascii;
mod context;
mod drawio;
mod html;

use crate::error::{Error, ErrorKind, Result};
use crate::model::Timeline;
use crate::ops::results::Exported;
use crate::ops::{ExportArgs, Output};
use crate::store::{Store, Tx};
use serde_json::Value;
use std::io::{self, BufWriter, ErrorKind as IoKind, Write};
use std::path::Path;

/// A rendered export and what it contains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The rendered text.
    pub text: String,
    /// Messages written (hot and cold; the root n0 is never counted).
    pub nodes: u64,
    /// Links written: see each renderer for exactly what counts.
    pub edges: u64,
}

/// What a renderer wrote: see [`Rendered`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    /// Messages written.
    pub nodes: u64,
    /// Links written.
    pub edges: u64,
}

/// Write `timeline` as an ASCII tree to `out`, line by line.
pub fn write_ascii(timeline: &Timeline, out: &mut dyn Write) -> io::Result<Counts> {
    ascii::write(timeline, out)
}

/// The export for library callers (`service::execute`): the ASCII text comes back in memory.
pub fn run(tx: &mut dyn Tx, args: &ExportArgs) -> Result<Output> {
    check_output(args)?;
    if context::is_context_format(&args.format) {
        let gathered = context::gather(tx, args)?;
        let mut text = Vec::new();
        return Ok(match deliver_context(&gathered, args, &mut text)? {
            Some(result) => Output::Json(result),
            None => Output::Text(String::from_utf8(text).expect("exports are UTF-8")),
        });
    }
    let row = crate::ops::timeline_of(tx, args.timeline_id)?;
    check_start(tx, &row, args)?;
    let timeline = tx.load_timeline(row.id)?;
    let mut text = Vec::new();
    Ok(match deliver(&timeline, args, &mut text)? {
        Some(result) => Output::Json(result),
        None => Output::Text(String::from_utf8(text).expect("the tree is UTF-8")),
    })
}

/// `tl export` (without an idempotency key, which `service::execute` refuses): checked arguments in,
/// the JSON result out, or `None` when the tree went to `stdout`. The database is read under its
/// shared lock, which is released before anything is written: a slow reader of the output (a pager)
/// never holds up writers.
pub fn execute(
    store: &mut Store,
    args: &ExportArgs,
    stdout: &mut dyn Write,
) -> Result<Option<Value>> {
    if context::is_context_format(&args.format) {
        let gathered = store.read(|tx| {
            check_output(args)?;
            context::gather(tx, args)
        })?;
        return deliver_context(&gathered, args, stdout);
    }
    let timeline = store.read(|tx| {
        check_output(args)?;
        let row = crate::ops::timeline_of(tx, args.timeline_id)?;
        check_start(tx, &row, args)?;
        tx.load_timeline(row.id)
    })?;
    deliver(&timeline, args, stdout)
}

fn check_output(args: &ExportArgs) -> Result<()> {
    if !context::is_context_format(&args.format) {
        if args.node.is_some() && args.format != "html" {
            return Err(Error::invalid(format!(
                "invalid argument --node: --format {} exports the whole timeline; --node is for the context formats openai, anthropic and markdown, and for html (the message the page opens at)",
                args.format
            )));
        }
        if args.max_tokens.is_some() {
            return Err(Error::invalid(format!(
                "invalid argument --max: --format {} exports the whole timeline; --max is for the context formats openai, anthropic and markdown",
                args.format
            )));
        }
    }
    let file = match args.format.as_str() {
        "drawio" => {
            Some("a diagram file, so it needs --output FILE (for example --output timeline.drawio)")
        }
        "html" => {
            Some("a page file, so it needs --output FILE (for example --output timeline.html)")
        }
        _ => None,
    };
    if let (Some(file), None) = (file, &args.output) {
        return Err(Error::invalid(format!(
            "invalid argument --output: --format {} writes {file}; the other formats can print to the terminal",
            args.format
        )));
    }
    Ok(())
}

/// The message an HTML page opens at must be a message of the exported timeline.
fn check_start(tx: &mut dyn Tx, row: &crate::store::TimelineRow, args: &ExportArgs) -> Result<()> {
    match args.node {
        Some(n) if args.format == "html" => crate::ops::message(tx, row, n).map(|_| ()),
        _ => Ok(()),
    }
}

/// Write an exported context to the output file (and return the JSON result) or to `stdout` (and
/// return `None`).
fn deliver_context(
    gathered: &context::Context,
    args: &ExportArgs,
    stdout: &mut dyn Write,
) -> Result<Option<Value>> {
    let (text, messages) = context::render(gathered, args);
    match args.output.as_deref() {
        None => match stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
        {
            Ok(()) => Ok(None),
            Err(e) if e.kind() == IoKind::BrokenPipe => Ok(None),
            Err(e) => Err(Error::new(
                ErrorKind::Output,
                format!("cannot write the export to standard output: {e}"),
            )),
        },
        Some(output) => {
            write_new_file(Path::new(output), &mut |out| out.write_all(text.as_bytes()))?;
            crate::ops::json(Ok(context::result(gathered, args, output, messages))).map(Some)
        }
    }
}

/// Write the export of `timeline` to the output file (and return the JSON result) or, for an ASCII
/// tree without `--output`, to `stdout` (and return `None`).
fn deliver(
    timeline: &Timeline,
    args: &ExportArgs,
    stdout: &mut dyn Write,
) -> Result<Option<Value>> {
    let format = args.format.as_str();
    if !matches!(format, "drawio" | "ascii" | "html") {
        return Err(Error::invalid(format!(
            "invalid argument --format: {format:?} is not a format; use drawio, ascii or html"
        )));
    }
    let Some(output) = args.output.as_deref() else {
        let mut out = BufWriter::with_capacity(1 << 16, stdout);
        return match write_ascii(timeline, &mut out).and_then(|_| out.flush()) {
            Ok(()) => Ok(None),
            // The reader left (`tl export --format ascii | head`): its choice, not an error.
            Err(e) if e.kind() == IoKind::BrokenPipe => Ok(None),
            Err(e) => Err(Error::new(
                ErrorKind::Output,
                format!("cannot write the tree to standard output: {e}"),
            )),
        };
    };
    let path = Path::new(output);
    let counts = if format == "html" {
        let mut counts = None;
        write_new_file(path, &mut |out| {
            counts = Some(html::write(timeline, args.node, out)?);
            Ok(())
        })?;
        counts.expect("written")
    } else if format == "drawio" {
        let rendered = drawio::render(timeline);
        write_new_file(path, &mut |out| out.write_all(rendered.text.as_bytes()))?;
        Counts {
            nodes: rendered.nodes,
            edges: rendered.edges,
        }
    } else {
        let mut counts = None;
        write_new_file(path, &mut |out| {
            counts = Some(ascii::write(timeline, out)?);
            Ok(())
        })?;
        counts.expect("written")
    };
    let result = Exported {
        format: format.to_string(),
        timeline_id: timeline.id_str(),
        output: output.to_string(),
        nodes: counts.nodes,
        edges: Some(counts.edges),
        node: args
            .node
            .filter(|_| format == "html")
            .map(crate::model::node_id),
        messages: None,
    };
    crate::ops::json(Ok(result)).map(Some)
}

/// Write what `fill` writes to `path`, which must not exist yet (see `fsutil::write_new_file`),
/// with export's words for what went wrong.
pub fn write_new_file(
    path: &Path,
    fill: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
) -> Result<()> {
    crate::fsutil::write_new_file(path, fill).map_err(|e| Error::new_file(path, e))
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
