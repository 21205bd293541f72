//! `--format text`: results of log, search, diff, context, branches, timelines and import as text for
//! people.
//! The input is the result read as its type (`ops::results`, the contract's shapes, so the text
//! shows nothing the contract does not hold), caller text goes
//! through `terminal::escape_line`, and colour is only used when the caller says the output is a
//! terminal (never in JSON, never when piped, never with `NO_COLOR`).

use crate::ops::results::{
    BranchInfo, Diff, Entry, ImportStatus, Imported, LogPage, Message, SearchPage, TimelineInfo,
};
use crate::ops::{DatabaseRequest, TxRequest};
use crate::search::{MARK_END, MARK_START};
use crate::terminal::escape_line;
use serde::Deserialize;
use serde_json::Value;
use std::io::IsTerminal;

/// How text output looks: its width in columns and whether it may use colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct View {
    /// Columns to wrap texts at.
    pub width: usize,
    /// Whether ANSI colours may be used (a terminal, and `NO_COLOR` unset).
    pub colour: bool,
}

impl View {
    /// Without a terminal: `COLUMNS` columns (80 when unset), no colour.
    pub fn plain() -> View {
        View {
            width: columns_env().unwrap_or(80),
            colour: false,
        }
    }

    /// For standard output: colour when it is a terminal and `NO_COLOR` is unset or empty; the
    /// terminal's width (else `COLUMNS`, else 80).
    pub fn stdout() -> View {
        let terminal = std::io::stdout().is_terminal();
        let no_colour = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        View {
            width: columns_env()
                .or_else(|| terminal.then(crate::terminal::columns).flatten())
                .unwrap_or(80),
            colour: terminal && !no_colour && crate::terminal::shows_ansi_colour(),
        }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.colour && !text.is_empty() {
            format!("\u{1b}[{code}m{text}\u{1b}[0m")
        } else {
            text.to_string()
        }
    }
}

fn columns_env() -> Option<usize> {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse().ok())
        .filter(|&c: &usize| c >= 20)
}

const BOLD: &str = "1";
const DIM: &str = "2";
const MARK: &str = "1;33";
const MATCH: &str = "1;4";

fn role_colour(role: &str) -> &'static str {
    match role {
        "user" => "36",
        "assistant" => "32",
        "system" => "35",
        _ => "33",
    }
}

/// A text view: draws a result (its JSON) for people into the string.
pub type Renderer = fn(&Value, &View, &mut String);

/// The text view of a request's result; `None` when its operation has none.
pub fn renderer(request: &TxRequest) -> Option<Renderer> {
    Some(match request {
        TxRequest::Log(_) => log,
        TxRequest::Search(_) => search,
        TxRequest::Diff(_) => diff,
        TxRequest::Context(_) => context,
        TxRequest::Branches(_) => branches,
        TxRequest::Timelines(_) => timelines,
        TxRequest::Create(_)
        | TxRequest::Append(_)
        | TxRequest::Fork(_)
        | TxRequest::Switch(_)
        | TxRequest::DropBranch(_)
        | TxRequest::RenameBranch(_)
        | TxRequest::ContextBudget(_)
        | TxRequest::Pin(_)
        | TxRequest::Unpin(_)
        | TxRequest::Summarize(_)
        | TxRequest::Node(_)
        | TxRequest::ArchiveCheck(_)
        | TxRequest::ArchiveBranch(_)
        | TxRequest::RestoreBranch(_) => return None,
    })
}

/// The text view of a request on the database as a whole; `None` when its operation has none.
pub fn database_renderer(request: &DatabaseRequest) -> Option<Renderer> {
    Some(match request {
        DatabaseRequest::Import(_) => import,
        DatabaseRequest::DbInfo(_)
        | DatabaseRequest::DbCheck(_)
        | DatabaseRequest::DbConvert(_)
        | DatabaseRequest::DbBackup(_) => return None,
    })
}

/// The result as its type (`ops::results`); a result that does not read as one is a bug, said in
/// the output instead of a half-drawn view.
fn typed<'a, T: Deserialize<'a>>(result: &'a Value, out: &mut String) -> Option<T> {
    match T::deserialize(result) {
        Ok(typed) => Some(typed),
        Err(e) => {
            out.push_str(&format!(
                "(internal error: this result cannot be shown as text: {e}; run the command again with --format json)\n"
            ));
            None
        }
    }
}

/// One message: a header line, then its text indented and wrapped, then a blank line. `escaped`: the
/// body went through `escape_line` already (and may carry colour codes).
fn block(out: &mut String, header: &[String], body: &str, view: &View, escaped: bool) {
    let header: Vec<&String> = header.iter().filter(|h| !h.is_empty()).collect();
    out.push_str(
        &header
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("  "),
    );
    out.push('\n');
    for line in wrap(body, view.width.saturating_sub(4).max(16), escaped) {
        if line.is_empty() {
            out.push('\n');
        } else {
            out.push_str("    ");
            out.push_str(&line);
            out.push('\n');
        }
    }
    out.push('\n');
}

/// The header fields of a log or diff entry: node, role (with the summary range), time, markers.
fn entry_header(e: &Entry, view: &View) -> Vec<String> {
    let mut role_text = e.role.clone();
    if let Some(s) = &e.summary {
        let range = format!("{}..{}", s.from, s.to);
        role_text = if s.kind == "placeholder" {
            format!("placeholder of {range}")
        } else {
            format!("summary v{} of {range}", s.version)
        };
    }
    let mut header = vec![
        view.paint(BOLD, &e.node),
        view.paint(role_colour(&e.role), &role_text),
        time(e.created_at, view),
    ];
    if let Some(tag) = &e.intent_tag {
        header.push(view.paint(DIM, &format!("#{}", escape_line(tag))));
    }
    if e.pinned {
        header.push(view.paint(MARK, "PIN"));
    }
    if e.zone == "cold" {
        header.push(view.paint(DIM, "ARCHIVED"));
    }
    for head in &e.heads {
        header.push(view.paint(MARK, &format!("[HEAD {}]", escape_line(head))));
    }
    header
}

fn time(created_at: Option<u64>, view: &View) -> String {
    match created_at {
        Some(t) => view.paint(DIM, &crate::time::format(t)),
        None => String::new(),
    }
}

fn log(result: &Value, view: &View, out: &mut String) {
    let Some(page) = typed::<LogPage>(result, out) else {
        return;
    };
    if page.messages.is_empty() {
        out.push_str("(no messages)\n");
    }
    for e in &page.messages {
        block(out, &entry_header(e, view), &e.text, view, false);
    }
    if let Some(cursor) = &page.next_cursor {
        out.push_str(&view.paint(DIM, &format!("older messages: --cursor {cursor}")));
        out.push('\n');
    }
}

fn search(result: &Value, view: &View, out: &mut String) {
    let Some(page) = typed::<SearchPage>(result, out) else {
        return;
    };
    if page.hits.is_empty() {
        out.push_str("(no matches)\n");
    }
    for hit in &page.hits {
        let mut header = vec![
            view.paint(BOLD, &format!("{} {}", hit.timeline_id, hit.node)),
            view.paint(role_colour(&hit.role), &hit.role),
            time(hit.created_at, view),
        ];
        if hit.zone == "cold" {
            header.push(view.paint(DIM, "ARCHIVED"));
        }
        header.push(view.paint(DIM, &format!("score {}", hit.score)));
        let mut snippet = escape_line(&hit.snippet).into_owned();
        if view.colour {
            snippet = snippet
                .replace(MARK_START, &format!("\u{1b}[{MATCH}m"))
                .replace(MARK_END, "\u{1b}[0m");
        }
        block(out, &header, &snippet, view, true);
    }
    if let Some(cursor) = &page.next_cursor {
        out.push_str(&view.paint(DIM, &format!("more hits: --cursor {cursor}")));
        out.push('\n');
    }
}

fn diff(result: &Value, view: &View, out: &mut String) {
    let Some(diff) = typed::<Diff>(result, out) else {
        return;
    };
    let ancestor = &diff.ancestor;
    out.push_str(&format!(
        "common ancestor: {}\n\n",
        view.paint(BOLD, ancestor)
    ));
    for (key, arrow, side) in [("left", "<<<", &diff.left), ("right", ">>>", &diff.right)] {
        let name = match &side.name {
            Some(name) => format!("{} (head {})", escape_line(name), side.head),
            None => side.head.clone(),
        };
        let count = side.messages.len();
        out.push_str(&view.paint(
            BOLD,
            &format!(
                "{arrow} {key}: {name}, {count} message{} after {ancestor}",
                if count == 1 { "" } else { "s" }
            ),
        ));
        out.push_str("\n\n");
        for e in &side.messages {
            block(out, &entry_header(e, view), &e.text, view, false);
        }
    }
}

fn context(result: &Value, view: &View, out: &mut String) {
    let Some(messages) = typed::<Vec<Message>>(result, out) else {
        return;
    };
    if messages.is_empty() {
        out.push_str("(no messages)\n");
    }
    for m in &messages {
        let mut header = vec![
            view.paint(BOLD, &m.node),
            view.paint(role_colour(&m.role), &m.role),
        ];
        if let Some(tag) = &m.intent_tag {
            header.push(view.paint(DIM, &format!("#{}", escape_line(tag))));
        }
        header.push(view.paint(DIM, &format!("{} tokens", m.tokens)));
        block(out, &header, &m.text, view, false);
    }
}

fn branches(result: &Value, view: &View, out: &mut String) {
    let Some(list) = typed::<Vec<BranchInfo>>(result, out) else {
        return;
    };
    let names: Vec<String> = list
        .iter()
        .map(|b| escape_line(&b.name).into_owned())
        .collect();
    let wide = names.iter().map(|n| width(n)).max().unwrap_or(0);
    for (b, name) in list.iter().zip(&names) {
        let pad = " ".repeat(wide - width(name));
        let name = if b.current {
            view.paint(BOLD, name)
        } else {
            name.clone()
        };
        out.push_str(&format!(
            "{} {name}{pad}  {}\n",
            if b.current { "*" } else { " " },
            b.head
        ));
    }
}

/// One line per timeline: its ID, title, counts, current branch and last change.
fn timelines(result: &Value, view: &View, out: &mut String) {
    let Some(list) = typed::<Vec<TimelineInfo>>(result, out) else {
        return;
    };
    if list.is_empty() {
        out.push_str("(no timelines)\n");
    }
    let count = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    for t in &list {
        let title = match &t.title {
            Some(title) => escape_line(title).into_owned(),
            None => view.paint(DIM, "(untitled)"),
        };
        let updated = match t.updated_at {
            Some(at) => format!(", updated {}", crate::time::format(at)),
            None => String::new(),
        };
        out.push_str(&format!(
            "{}  {title}\n    {}, {}, current {}{updated}\n",
            view.paint(BOLD, &t.timeline_id),
            count(t.messages, "message", "messages"),
            count(t.branches, "branch", "branches"),
            escape_line(&t.current_branch),
        ));
    }
}

/// One line per conversation, in input order: its status, timeline, title (else its source ID) and
/// what was written (`+N messages` for an update, with the branches); a skipped one with its file,
/// its place there and the reason; then the totals.
fn import(result: &Value, view: &View, out: &mut String) {
    let Some(report) = typed::<Imported>(result, out) else {
        return;
    };
    let count = |n: u64| format!("{n} {}", if n == 1 { "message" } else { "messages" });
    let name = |title: &Option<String>, source_id: &Option<String>| match title
        .as_ref()
        .or(source_id.as_ref())
    {
        Some(name) => escape_line(name).into_owned(),
        None => view.paint(DIM, "(untitled)"),
    };
    for t in &report.timelines {
        let (status, colour, written) = match t.status {
            ImportStatus::New => ("new", "32", format!("  {}", count(t.messages))),
            ImportStatus::Updated => ("updated", "36", format!("  +{}", count(t.messages))),
            ImportStatus::Unchanged => ("unchanged", DIM, String::new()),
        };
        let mut details: Vec<String> = t
            .branches
            .iter()
            .map(|b| escape_line(b).into_owned())
            .collect();
        if let Some(from) = &t.from {
            details.push(format!("from {from}"));
        }
        if let Some(joined) = &t.joined {
            details.push(format!("joined {}", escape_line(joined)));
        }
        if !t.reused_ids.is_empty() {
            let ids: Vec<String> = t
                .reused_ids
                .iter()
                .map(|id| escape_line(id).into_owned())
                .collect();
            details.push(format!("written as its own: {}", ids.join(" ")));
        }
        if let Some(earlier) = &t.earlier_import {
            details.push(format!("earlier import {earlier}"));
        }
        let details = if details.is_empty() {
            String::new()
        } else {
            format!(" ({})", details.join(", "))
        };
        out.push_str(&format!(
            "{}  {}  {}{written}{details}\n",
            view.paint(colour, &format!("{status:<9}")),
            view.paint(BOLD, &t.timeline_id),
            name(&t.title, &t.source_id),
        ));
    }
    for s in &report.skipped_conversations {
        out.push_str(&format!(
            "{}  {} #{}  {}: {}\n",
            view.paint("33", "skipped  "),
            escape_line(&s.file),
            s.index,
            name(&s.title, &s.source_id),
            escape_line(&s.reason),
        ));
    }
    out.push_str(&format!(
        "{}: {} imported, {} unchanged, {} skipped; {} written\n",
        report.format,
        report.imported,
        report.unchanged,
        report.skipped,
        count(report.messages),
    ));
}

/// Columns a character takes on a terminal: 2 for East Asian wide characters and emoji, 0 for
/// combining marks and joiners, else 1.
fn char_width(c: char) -> usize {
    match c as u32 {
        0x0300..=0x036f | 0x200b..=0x200f | 0xfe00..=0xfe0f | 0x1f3fb..=0x1f3ff => 0,
        0x1100..=0x115f
        | 0x2e80..=0x303e
        | 0x3041..=0x33ff
        | 0x3400..=0x4dbf
        | 0x4e00..=0x9fff
        | 0xa000..=0xa4cf
        | 0xac00..=0xd7a3
        | 0xf900..=0xfaff
        | 0xfe30..=0xfe4f
        | 0xff00..=0xff60
        | 0xffe0..=0xffe6
        | 0x1f300..=0x1f64f
        | 0x1f900..=0x1f9ff
        | 0x1fa70..=0x1faff
        | 0x20000..=0x3fffd => 2,
        _ => 1,
    }
}

fn width(text: &str) -> usize {
    text.chars().map(char_width).sum()
}

/// `text` as lines of at most `width` columns: line breaks kept, tabs as four spaces, every line
/// escaped for the terminal (unless `escaped` says it is already), broken at spaces, and words wider
/// than a line broken anywhere.
pub fn wrap(text: &str, width: usize, escaped: bool) -> Vec<String> {
    let mut lines = Vec::new();
    for raw in text.replace("\r\n", "\n").split('\n') {
        let raw = raw.replace('\t', "    ");
        let line = if escaped {
            raw
        } else {
            escape_line(&raw).into_owned()
        };
        if line.trim().is_empty() {
            lines.push(String::new());
            continue;
        }
        let mut current = String::new();
        let mut used = 0;
        for word in line.split(' ') {
            let w = width_of_visible(word);
            let gap = usize::from(!current.is_empty());
            if used + gap + w <= width {
                if gap == 1 {
                    current.push(' ');
                }
                current.push_str(word);
                used += gap + w;
                continue;
            }
            if !current.is_empty() {
                lines.push(std::mem::take(&mut current));
                used = 0;
            }
            // A word wider than the line is broken between characters.
            let mut in_escape = false;
            for c in word.chars() {
                let cw = if in_escape || c == '\u{1b}' {
                    in_escape = c != 'm';
                    0
                } else {
                    char_width(c)
                };
                if used + cw > width && !current.is_empty() {
                    lines.push(std::mem::take(&mut current));
                    used = 0;
                }
                current.push(c);
                used += cw;
            }
        }
        lines.push(current);
    }
    while lines.last().is_some_and(String::is_empty) {
        lines.pop();
    }
    lines
}

/// Width without the colour codes and match markers a snippet may carry.
fn width_of_visible(word: &str) -> usize {
    let mut w = 0;
    let mut in_escape = false;
    for c in word.chars() {
        if in_escape {
            in_escape = c != 'm';
            continue;
        }
        if c == '\u{1b}' {
            in_escape = true;
            continue;
        }
        w += char_width(c);
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_by_columns() {
        assert_eq!(
            wrap("one two three four", 9, false),
            ["one two", "three", "four"]
        );
        assert_eq!(
            wrap("今年的预算很紧张", 6, false),
            ["今年的", "预算很", "紧张"]
        );
        assert_eq!(wrap("a\n\nb\tc\n", 20, false), ["a", "", "b    c"]);
        assert_eq!(wrap("abcdefghij", 4, false), ["abcd", "efgh", "ij"]);
        assert_eq!(
            wrap("esc \u{1b}[2J here", 40, false),
            ["esc \\u001b[2J here"]
        );
        // Colour codes take no columns.
        assert_eq!(
            wrap("\u{1b}[1mab\u{1b}[0m cd", 5, true),
            ["\u{1b}[1mab\u{1b}[0m cd"]
        );
    }

    #[test]
    fn widths() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("预算"), 4);
        assert_eq!(width("cafe\u{301}"), 4);
        assert_eq!(width("🎉"), 2);
    }
}
