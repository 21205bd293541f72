//! A context as a Markdown transcript for people: a heading per message (node, role, intent tag,
//! what a summary covers) and its text as written. Characters that act on a terminal (controls
//! other than newline and tab, bidirectional controls) are written as `\uXXXX` escapes, so the
//! transcript is safe to print.

use super::{Entry, EntryKind, joined};
use crate::model::node_id;
use crate::terminal::needs_escape;

/// The transcript of `entries`, the context of `target` in `timeline` (within `max` tokens when a
/// budget shaped it).
pub fn render(timeline: &str, target: u64, max: Option<u64>, entries: &[Entry]) -> String {
    let mut out = format!("# {timeline}: context of {}", node_id(target));
    if let Some(max) = max {
        out.push_str(&format!(" within {max} tokens"));
    }
    out.push('\n');
    for (entry, text) in joined(entries) {
        let mut heading: Vec<String> = Vec::new();
        match entry.kind {
            EntryKind::Message => {
                heading.extend(entry.node.map(node_id));
                heading.push(entry.role.as_str().to_string());
            }
            EntryKind::Summary { from, to } => {
                heading.extend(entry.node.map(node_id));
                heading.push(format!("summary of {}..{}", node_id(from), node_id(to)));
            }
            EntryKind::Placeholder { from, to } => {
                heading.extend(entry.node.map(node_id));
                heading.push(format!(
                    "placeholder for {}..{}",
                    node_id(from),
                    node_id(to)
                ));
                if entry.node.is_none() {
                    heading.push("not stored".into());
                }
            }
        }
        if let Some(intent) = &entry.intent {
            heading.push(format!("intent: {}", intent.tag));
        }
        out.push_str(&format!("\n## {}\n\n", escape(&heading.join(" · "))));
        let body = escape(&text);
        out.push_str(&body);
        if !body.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// `text` with every character of `terminal::needs_escape` but newline and tab written as `\uXXXX`, as in
/// every other output.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c != '\n' && c != '\t' && needs_escape(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_terminal_controls_but_keeps_lines() {
        assert_eq!(
            escape("a\nb\tc\u{1b}[2J\u{202e}"),
            "a\nb\tc\\u001b[2J\\u202e"
        );
    }
}
