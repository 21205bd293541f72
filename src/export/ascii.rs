//! The ASCII branch tree, written line by line as it is drawn.
//!
//! One line per node: `[n3 assistant PIN] "text" [HEAD* "main"]`. A history stays in one column,
//! joined by `|` lines. At a fork the branches that split off come first, each starting with `+-- `
//! and with the rest of its subtree under `| `; then, after a `|` line, the history goes on in the
//! same column with the child that continues it:
//!
//! ```text
//! [n1 user PIN] "only local data"
//! |
//! +-- [n4 assistant] "plan B" [HEAD "alternative"]
//! |
//! [n2 assistant] "plan A"
//! |
//! [n3 assistant] "verified" [HEAD* "main"]
//! ```
//!
//! The child that continues the column is the one on the current branch's path, else the one with
//! the most descendants (the first created on a tie). When every child is a single node, nothing
//! continues: the children are listed with `+-- `, the last with `` `-- ``.
//!
//! Width: a line is indented by one `| ` for each branch it is inside (a fork where it is not on the
//! continuing child). Off the current path, a branch that splits off has at most as many nodes as the
//! child that continues, so each level of indentation at least halves the nodes below: at most
//! 1 + log2(nodes) levels. A long history with a side child at every node (the placeholders of a
//! budget are siblings of the first node they cover) stays within two columns; the output is linear
//! in the number of nodes.
//!
//! The root n0 gets a line (`[n0 root]`) only when it is needed: when it has no child or several, or
//! when a branch head is n0. Texts and branch names longer than `MAX_SCALARS` Unicode scalars are cut
//! and followed by `...` after the closing quote.

use super::{Counts, cut, describe, heads_by_node};
use crate::model::{ROOT, Timeline};
use crate::terminal::json_quote;
use std::io::{self, Write};

/// Longest text or branch name shown in full, in Unicode scalars.
pub const MAX_SCALARS: usize = 64;

/// `text` JSON-quoted, cut to `MAX_SCALARS` scalars and followed by `...` when it was longer.
fn write_shown(out: &mut dyn Write, text: &str) -> io::Result<()> {
    let (kept, was_cut) = cut(text, MAX_SCALARS);
    out.write_all(json_quote(kept).as_bytes())?;
    if was_cut {
        out.write_all(b"...")?;
    }
    Ok(())
}

/// How a node's line starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    /// In its parent's column: the first node, or the child that continues a history.
    Continues,
    /// `+-- `: a branch that splits off; its subtree goes one `| ` further right.
    Branch,
    /// `` `-- ``: the last of a fork's children when none continues (always a single node).
    Last,
}

/// What the depth-first walk does next.
enum Step {
    /// Write node's line, indented by `lanes` times `| `.
    Node { n: u64, lanes: u32, place: Place },
    /// Write a `|` line, indented by `lanes` times `| `.
    Bar { lanes: u32 },
}

fn write_lanes(out: &mut dyn Write, lanes: u32) -> io::Result<()> {
    for _ in 0..lanes {
        out.write_all(b"| ")?;
    }
    Ok(())
}

/// Write the tree to `out`. `nodes` counts message lines (every hot and cold node, n0 excluded);
/// `edges` counts the parent links the tree draws: one per message, except those under a root that
/// has no line of its own. Holds the model and a few numbers per node, never the text.
pub fn write(timeline: &Timeline, out: &mut dyn Write) -> io::Result<Counts> {
    let heads = heads_by_node(timeline);
    let children = &timeline.derived.children;
    let count = timeline.nodes.len();

    // Nodes in each subtree. Parents are older than their children (checked on load), so one pass
    // from the newest node down adds every subtree before its parent reads it.
    let mut size = vec![1u64; count];
    for n in (1..count).rev() {
        let parent = timeline.nodes[n].parent as usize;
        size[parent] += size[n];
    }
    // The current branch's path, which always continues its column.
    let mut on_current = vec![false; count];
    let mut at = timeline.current().head;
    loop {
        on_current[at as usize] = true;
        if at == ROOT {
            break;
        }
        at = timeline.nodes[at as usize].parent;
    }
    let continuing = |kids: &[u64]| -> Option<u64> {
        match kids {
            [only] => Some(*only),
            _ if kids.iter().all(|&k| size[k as usize] == 1) => None,
            _ => kids
                .iter()
                .copied()
                .find(|&k| on_current[k as usize])
                .or_else(|| {
                    // The first of the largest: max_by_key would give the last.
                    kids.iter().copied().rev().max_by_key(|&k| size[k as usize])
                }),
        }
    };

    let show_root = children[ROOT as usize].len() != 1 || heads.contains_key(&ROOT);
    let nodes = count as u64 - 1;
    let edges = if show_root { nodes } else { nodes - 1 };
    let start = if show_root {
        ROOT
    } else {
        children[ROOT as usize][0]
    };

    // Depth-first with an explicit stack, so deep histories cannot overflow the call stack.
    let mut stack = vec![Step::Node {
        n: start,
        lanes: 0,
        place: Place::Continues,
    }];
    while let Some(step) = stack.pop() {
        let (n, lanes, place) = match step {
            Step::Bar { lanes } => {
                write_lanes(out, lanes)?;
                out.write_all(b"|\n")?;
                continue;
            }
            Step::Node { n, lanes, place } => (n, lanes, place),
        };
        write_lanes(out, lanes)?;
        out.write_all(match place {
            Place::Continues => b"",
            Place::Branch => b"+-- ",
            Place::Last => b"`-- ",
        })?;
        out.write_all(b"[")?;
        out.write_all(describe(timeline, n).as_bytes())?;
        out.write_all(b"]")?;
        if n != ROOT {
            out.write_all(b" ")?;
            write_shown(out, &timeline.nodes[n as usize].text)?;
        }
        for &(current, name) in heads.get(&n).map(Vec::as_slice).unwrap_or_default() {
            out.write_all(if current { b" [HEAD* " } else { b" [HEAD " })?;
            write_shown(out, name)?;
            out.write_all(b"]")?;
        }
        out.write_all(b"\n")?;

        let kids = &children[n as usize];
        if kids.is_empty() {
            continue;
        }
        debug_assert_ne!(place, Place::Last, "only single nodes are drawn with `--");
        let below = lanes + u32::from(place == Place::Branch);
        write_lanes(out, below)?;
        out.write_all(b"|\n")?;
        let next = continuing(kids);
        if let Some(next) = next {
            stack.push(Step::Node {
                n: next,
                lanes: below,
                place: Place::Continues,
            });
            if kids.len() > 1 {
                stack.push(Step::Bar { lanes: below });
            }
        }
        // Pushed in reverse, so they are written in creation order.
        let mut last = next.is_none();
        for &kid in kids.iter().rev().filter(|&&k| Some(k) != next) {
            stack.push(Step::Node {
                n: kid,
                lanes: below,
                place: if last { Place::Last } else { Place::Branch },
            });
            last = false;
        }
    }
    Ok(Counts { nodes, edges })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Branch, Node, Role};

    /// A timeline with messages under `parents` (n1's parent first) and branches at `heads`, the
    /// first one current.
    fn timeline(parents: &[u64], heads: &[u64]) -> Timeline {
        let mut t = Timeline::new(0, "b0");
        for (i, &parent) in parents.iter().enumerate() {
            t.nodes.push(Node {
                parent,
                role: Role::User,
                text: format!("m{}", i + 1),
                tokens: 1,
                ..Node::root()
            });
        }
        t.branches = heads
            .iter()
            .enumerate()
            .map(|(i, &head)| Branch {
                name: format!("b{i}"),
                head,
                watermark: ROOT,
            })
            .collect();
        t.rebuild().unwrap();
        t
    }

    /// Read the tree back: every node line with its parent as the drawing shows it. A node's parent
    /// is the last node whose children are drawn at the node's indentation; a node's children are
    /// drawn at its own indentation, one `| ` further for a `+-- ` line.
    fn read_back(text: &str) -> (Vec<(u64, Option<u64>)>, usize) {
        let mut owner: Vec<Option<u64>> = vec![None];
        let mut lines = Vec::new();
        let mut widest = 0;
        for line in text.lines() {
            let mut rest = line;
            let mut lanes = 0;
            while let Some(r) = rest.strip_prefix("| ") {
                rest = r;
                lanes += 1;
            }
            widest = widest.max(lanes);
            if rest == "|" {
                continue;
            }
            let (branch, rest) = match rest.strip_prefix("+-- ").or(rest.strip_prefix("`-- ")) {
                Some(r) => (true, r),
                None => (false, rest),
            };
            let digits: String = rest[2..].chars().take_while(char::is_ascii_digit).collect();
            let n: u64 = digits.parse().unwrap();
            lines.push((n, owner[lanes]));
            let below = lanes + usize::from(branch);
            owner.truncate(below);
            owner.resize(below + 1, None);
            owner[below] = Some(n);
        }
        (lines, widest)
    }

    #[test]
    fn random_trees_read_back_with_their_parents_and_bounded_indentation() {
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = |below: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % below
        };
        for round in 0..300 {
            let count = 1 + next(if round < 250 { 40 } else { 3000 });
            // Mostly recent parents (long histories), sometimes any earlier node (bushy trees).
            let parents: Vec<u64> = (1..=count)
                .map(|n| {
                    if next(4) == 0 {
                        next(n)
                    } else {
                        n - 1 - next(n.min(3))
                    }
                })
                .collect();
            let heads: Vec<u64> = (0..1 + next(4)).map(|_| next(count + 1)).collect();
            let t = timeline(&parents, &heads);
            let mut out = Vec::new();
            let counts = write(&t, &mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            let (lines, widest) = read_back(&text);
            let show_root = lines.first().is_some_and(|&(n, _)| n == ROOT);
            let mut expected: Vec<(u64, Option<u64>)> = (1..=count)
                .map(|n| {
                    let parent = parents[n as usize - 1];
                    (n, (show_root || parent != ROOT).then_some(parent))
                })
                .collect();
            if show_root {
                expected.push((ROOT, None));
            }
            let mut got = lines.clone();
            got.sort();
            expected.sort();
            assert_eq!(got, expected, "{text}");
            assert_eq!(counts.nodes, count);
            // Indentation: one level for leaving the current path, then each level halves the nodes.
            let bound = 1 + (count as f64).log2().floor() as usize;
            assert!(widest <= bound, "{widest} > {bound}:\n{text}");
        }
    }

    #[test]
    fn a_comb_of_any_length_stays_within_two_columns() {
        // Chain n1..n1000, and a side message at every node, created after the chain.
        let chain = 1000;
        let mut parents: Vec<u64> = (0..chain).collect();
        parents.extend(1..=chain);
        for head in [chain, 2 * chain, chain + 1] {
            let mut out = Vec::new();
            write(&timeline(&parents, &[head]), &mut out).unwrap();
            let text = String::from_utf8(out).unwrap();
            let (lines, widest) = read_back(&text);
            assert_eq!(lines.len() as u64, 2 * chain);
            assert!(widest <= 1, "{widest}");
            assert!(text.len() < 60 * 2 * chain as usize, "{}", text.len());
        }
    }
}
