//! The ASCII branch tree.
//!
//! One line per node: `[n3 assistant PIN] "text" [HEAD* "main"]`. A run of single children stays in
//! one column, joined by `|` lines; at a branch point each child starts with `+-- ` (the last one with
//! `` `-- ``) and the rest of its subtree is indented by two columns (`| ` or two spaces):
//!
//! ```text
//! [n1 user PIN] "only local data"
//! |
//! +-- [n2 assistant] "plan A"
//! | |
//! | [n3 assistant] "verified" [HEAD* "main"]
//! `-- [n4 assistant] "plan B" [HEAD "alternative"]
//! ```
//!
//! The root n0 gets a line (`[n0 root]`) only when it is needed: when it has no child or several, or
//! when a branch head is n0. Texts and branch names longer than `MAX_SCALARS` Unicode scalars are cut
//! and followed by `...` after the closing quote.

use super::{Rendered, cut, describe, heads_by_node};
use crate::model::{ROOT, Timeline};
use crate::terminal::json_quote;

/// Longest text or branch name shown in full, in Unicode scalars.
pub const MAX_SCALARS: usize = 64;

/// `text` JSON-quoted, cut to `MAX_SCALARS` scalars and followed by `...` when it was longer.
fn shown(text: &str) -> String {
    let (kept, was_cut) = cut(text, MAX_SCALARS);
    let mut out = json_quote(kept);
    if was_cut {
        out.push_str("...");
    }
    out
}

/// Render the tree. `nodes` counts message lines (every hot and cold node, n0 excluded); `edges`
/// counts the parent links the tree draws: one per message, except those under a root that has no
/// line of its own.
pub fn render(timeline: &Timeline) -> Rendered {
    let heads = heads_by_node(timeline);
    let children = &timeline.derived.children;
    let label = |n: u64| -> String {
        let mut line = format!("[{}]", describe(timeline, n));
        if n != ROOT {
            line.push(' ');
            line.push_str(&shown(&timeline.nodes[n as usize].text));
        }
        for &(current, name) in heads.get(&n).map(Vec::as_slice).unwrap_or_default() {
            let marker = if current { "HEAD*" } else { "HEAD" };
            line.push_str(&format!(" [{marker} {}]", shown(name)));
        }
        line
    };

    let show_root = children[ROOT as usize].len() != 1 || heads.contains_key(&ROOT);
    let nodes = timeline.nodes.len() as u64 - 1;
    let edges = if show_root { nodes } else { nodes - 1 };
    let start = if show_root {
        ROOT
    } else {
        children[ROOT as usize][0]
    };

    let mut text = String::new();
    // Depth-first with an explicit stack, so deep histories cannot overflow the call stack:
    // (node, prefix of its own line, prefix of the lines below it).
    let mut stack: Vec<(u64, String, String)> = vec![(start, String::new(), String::new())];
    while let Some((n, first, rest)) = stack.pop() {
        text.push_str(&first);
        text.push_str(&label(n));
        text.push('\n');
        let kids = &children[n as usize];
        if kids.is_empty() {
            continue;
        }
        text.push_str(&rest);
        text.push_str("|\n");
        if let [only] = kids.as_slice() {
            stack.push((*only, rest.clone(), rest));
            continue;
        }
        for (i, &kid) in kids.iter().enumerate().rev() {
            let last = i + 1 == kids.len();
            let (own, below) = if last { ("`-- ", "  ") } else { ("+-- ", "| ") };
            stack.push((kid, format!("{rest}{own}"), format!("{rest}{below}")));
        }
    }
    Rendered { text, nodes, edges }
}
