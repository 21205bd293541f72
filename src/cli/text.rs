//! `--format text`: results of log, search, diff, context and branches as text for people. The JSON
//! result is the input (so the text shows nothing the contract does not hold), caller text goes
//! through `terminal::escape_line`, and colour is only used when the caller says the output is a
//! terminal (never in JSON, never when piped, never with `NO_COLOR`).

use crate::ops::TxRequest;
use crate::search::{MARK_END, MARK_START};
use crate::terminal::escape_line;
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

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
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
fn entry_header(e: &Value, view: &View) -> Vec<String> {
    let role = text(e, "role");
    let mut role_text = role.to_string();
    if let Some(s) = e.get("summary").filter(|s| s.is_object()) {
        let range = format!("{}..{}", text(s, "from"), text(s, "to"));
        role_text = if text(s, "kind") == "placeholder" {
            format!("placeholder of {range}")
        } else {
            format!(
                "summary v{} of {range}",
                s.get("version").and_then(Value::as_u64).unwrap_or(1)
            )
        };
    }
    let mut header = vec![
        view.paint(BOLD, text(e, "node")),
        view.paint(role_colour(role), &role_text),
        time(e, view),
    ];
    if let Some(tag) = e.get("intent_tag").and_then(Value::as_str) {
        header.push(view.paint(DIM, &format!("#{}", escape_line(tag))));
    }
    if e.get("pinned").and_then(Value::as_bool) == Some(true) {
        header.push(view.paint(MARK, "PIN"));
    }
    if text(e, "zone") == "cold" {
        header.push(view.paint(DIM, "ARCHIVED"));
    }
    for head in e
        .get("heads")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        header.push(view.paint(
            MARK,
            &format!("[HEAD {}]", escape_line(head.as_str().unwrap_or_default())),
        ));
    }
    header
}

fn time(e: &Value, view: &View) -> String {
    match e.get("created_at").and_then(Value::as_u64) {
        Some(t) => view.paint(DIM, &crate::time::format(t)),
        None => String::new(),
    }
}

fn log(result: &Value, view: &View, out: &mut String) {
    let messages = result.get("messages").and_then(Value::as_array);
    if messages.is_none_or(Vec::is_empty) {
        out.push_str("(no messages)\n");
    }
    for e in messages.into_iter().flatten() {
        block(out, &entry_header(e, view), text(e, "text"), view, false);
    }
    if let Some(cursor) = result.get("next_cursor").and_then(Value::as_str) {
        out.push_str(&view.paint(DIM, &format!("older messages: --cursor {cursor}")));
        out.push('\n');
    }
}

fn search(result: &Value, view: &View, out: &mut String) {
    let hits = result.get("hits").and_then(Value::as_array);
    if hits.is_none_or(Vec::is_empty) {
        out.push_str("(no matches)\n");
    }
    for hit in hits.into_iter().flatten() {
        let role = text(hit, "role");
        let mut header = vec![
            view.paint(
                BOLD,
                &format!("{} {}", text(hit, "timeline_id"), text(hit, "node")),
            ),
            view.paint(role_colour(role), role),
            time(hit, view),
        ];
        if text(hit, "zone") == "cold" {
            header.push(view.paint(DIM, "ARCHIVED"));
        }
        if let Some(score) = hit.get("score").and_then(Value::as_f64) {
            header.push(view.paint(DIM, &format!("score {score}")));
        }
        let mut snippet = escape_line(text(hit, "snippet")).into_owned();
        if view.colour {
            snippet = snippet
                .replace(MARK_START, &format!("\u{1b}[{MATCH}m"))
                .replace(MARK_END, "\u{1b}[0m");
        }
        block(out, &header, &snippet, view, true);
    }
    if let Some(cursor) = result.get("next_cursor").and_then(Value::as_str) {
        out.push_str(&view.paint(DIM, &format!("more hits: --cursor {cursor}")));
        out.push('\n');
    }
}

fn diff(result: &Value, view: &View, out: &mut String) {
    let ancestor = text(result, "ancestor");
    out.push_str(&format!(
        "common ancestor: {}\n\n",
        view.paint(BOLD, ancestor)
    ));
    for (key, arrow) in [("left", "<<<"), ("right", ">>>")] {
        let side = &result[key];
        let name = match side.get("name").and_then(Value::as_str) {
            Some(name) => format!("{} (head {})", escape_line(name), text(side, "head")),
            None => text(side, "head").to_string(),
        };
        let messages = side.get("messages").and_then(Value::as_array);
        let count = messages.map_or(0, Vec::len);
        out.push_str(&view.paint(
            BOLD,
            &format!(
                "{arrow} {key}: {name}, {count} message{} after {ancestor}",
                if count == 1 { "" } else { "s" }
            ),
        ));
        out.push_str("\n\n");
        for e in messages.into_iter().flatten() {
            block(out, &entry_header(e, view), text(e, "text"), view, false);
        }
    }
}

fn context(result: &Value, view: &View, out: &mut String) {
    let messages = result.as_array();
    if messages.is_none_or(Vec::is_empty) {
        out.push_str("(no messages)\n");
    }
    for m in messages.into_iter().flatten() {
        let role = text(m, "role");
        let mut header = vec![
            view.paint(BOLD, text(m, "node")),
            view.paint(role_colour(role), role),
        ];
        if let Some(tag) = m.get("intent_tag").and_then(Value::as_str) {
            header.push(view.paint(DIM, &format!("#{}", escape_line(tag))));
        }
        if let Some(tokens) = m.get("tokens").and_then(Value::as_u64) {
            header.push(view.paint(DIM, &format!("{tokens} tokens")));
        }
        block(out, &header, text(m, "text"), view, false);
    }
}

fn branches(result: &Value, view: &View, out: &mut String) {
    let list: Vec<&Value> = result.as_array().into_iter().flatten().collect();
    let names: Vec<String> = list
        .iter()
        .map(|b| escape_line(text(b, "name")).into_owned())
        .collect();
    let wide = names.iter().map(|n| width(n)).max().unwrap_or(0);
    for (b, name) in list.iter().zip(&names) {
        let current = b.get("current").and_then(Value::as_bool) == Some(true);
        let pad = " ".repeat(wide - width(name));
        let name = if current {
            view.paint(BOLD, name)
        } else {
            name.clone()
        };
        out.push_str(&format!(
            "{} {name}{pad}  {}\n",
            if current { "*" } else { " " },
            text(b, "head")
        ));
    }
}

/// One line per timeline: its ID, title, counts, current branch and last change.
fn timelines(result: &Value, view: &View, out: &mut String) {
    let list: Vec<&Value> = result.as_array().into_iter().flatten().collect();
    if list.is_empty() {
        out.push_str("(no timelines)\n");
    }
    let count = |v: &Value, key: &str, one: &str, many: &str| {
        let n = v.get(key).and_then(Value::as_u64).unwrap_or(0);
        format!("{n} {}", if n == 1 { one } else { many })
    };
    for t in list {
        let title = match t.get("title").and_then(Value::as_str) {
            Some(title) => escape_line(title).into_owned(),
            None => view.paint(DIM, "(untitled)"),
        };
        let updated = match t.get("updated_at").and_then(Value::as_u64) {
            Some(at) => format!(", updated {}", crate::time::format(at)),
            None => String::new(),
        };
        out.push_str(&format!(
            "{}  {title}\n    {}, {}, current {}{updated}\n",
            view.paint(BOLD, text(t, "timeline_id")),
            count(t, "messages", "message", "messages"),
            count(t, "branches", "branch", "branches"),
            escape_line(text(t, "current_branch")),
        ));
    }
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
