//! Archival: eligibility (archive-check) and moving a finished branch's own messages to the cold zone.

use super::{Ctx, timeline_of};
use crate::error::{Error, ErrorKind, Result};
use crate::model::file::AuditEntry;
use crate::model::{Database, Timeline, node_id};
use crate::spec::validate::Args;
use serde_json::{Value, json};

/// Every reason the branch cannot be archived, in a stable order; empty when it can.
pub fn reasons(timeline: &Timeline, name: &str) -> Result<Vec<String>> {
    let branch = timeline.branch(name)?;
    let mut reasons = Vec::new();
    if timeline.current_branch == name {
        reasons.push(format!(
            "{name:?} is the current branch; switch to another branch first"
        ));
    }
    let path = timeline.path(branch.head);
    if branch.watermark != branch.head {
        let uncovered = path.iter().find(|&&n| !timeline.is_covered(n)).copied();
        reasons.push(match uncovered {
            Some(n) => format!(
                "the watermark does not cover the whole branch: {} is neither pinned nor summarised; summarise it (tl summarize) or run a budget that covers it",
                node_id(n)
            ),
            None => format!(
                "the watermark ({}) does not reach the head ({}); it advances when the next summary or placeholder is created",
                node_id(branch.watermark),
                node_id(branch.head)
            ),
        });
    }
    let pinned: Vec<String> = path
        .iter()
        .filter(|n| timeline.pins.contains(n))
        .map(|&n| node_id(n))
        .collect();
    if !pinned.is_empty() {
        reasons.push(format!(
            "pinned nodes on the branch: {}; unpin them first",
            pinned.join(", ")
        ));
    }
    let on_path: std::collections::HashSet<u64> = path.iter().copied().collect();
    let mut open = Vec::new();
    // The placeholder index holds every placeholder by (parent, from, to); sorted for a stable message.
    let mut placeholders: Vec<(u64, u64, u64)> = timeline
        .derived
        .placeholders
        .iter()
        .filter(|((_, from, to), _)| {
            on_path.contains(from)
                && on_path.contains(to)
                && !timeline.derived.real_by_range.contains_key(&(*from, *to))
        })
        .map(|(&(_, from, to), &n)| (n, from, to))
        .collect();
    placeholders.sort_unstable();
    for (n, from, to) in placeholders {
        open.push(format!(
            "{} ({}..{})",
            node_id(n),
            node_id(from),
            node_id(to)
        ));
    }
    if !open.is_empty() {
        reasons.push(format!(
            "placeholders without a real summary of the same range: {}; write those summaries with tl summarize",
            open.join(", ")
        ));
    }
    Ok(reasons)
}

/// The depth of the lowest common ancestor of `a` and `b` (0 for the root).
fn common_depth(timeline: &Timeline, mut a: u64, mut b: u64) -> usize {
    let depth = |n: u64| timeline.derived.depth[n as usize];
    while depth(a) > depth(b) {
        a = timeline.nodes[a as usize].parent;
    }
    while depth(b) > depth(a) {
        b = timeline.nodes[b as usize].parent;
    }
    while a != b {
        a = timeline.nodes[a as usize].parent;
        b = timeline.nodes[b as usize].parent;
    }
    depth(a) as usize
}

pub fn check(db: &mut Database, args: &Args) -> Result<Value> {
    let timeline = db.timeline(timeline_of(db, args)?)?;
    let reasons = reasons(timeline, args.str("branch").unwrap_or_default())?;
    Ok(json!({ "eligible": reasons.is_empty(), "reasons": reasons }))
}

pub fn archive(db: &mut Database, args: &Args, ctx: &Ctx) -> Result<Value> {
    let tl = timeline_of(db, args)?;
    let timeline = db.timeline_mut(tl)?;
    let name = args.str("branch").unwrap_or_default().to_string();
    let reasons = reasons(timeline, &name)?;
    if !reasons.is_empty() {
        return Err(Error::new(
            ErrorKind::NotEligible,
            format!("branch {name:?} cannot be archived: {}", reasons.join("; ")),
        )
        .with_data(json!({ "reasons": reasons })));
    }
    let index = timeline.branch_index(&name)?;
    let head = timeline.branches[index].head;
    // A node of the path is referenced by this branch alone exactly when it lies below every point
    // where another branch leaves the path. Another branch shares the path down to the lowest common
    // ancestor of the two heads, so only the nodes deeper than the deepest such ancestor are the
    // branch's own: O(branches × depth) instead of a reference count per node.
    let shared = timeline
        .branches
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != index)
        .map(|(_, b)| common_depth(timeline, head, b.head))
        .max()
        .unwrap_or(0);
    let movable: Vec<u64> = timeline
        .path(head)
        .into_iter()
        .skip(shared)
        .filter(|&n| {
            let node = &timeline.nodes[n as usize];
            !node.cold && node.summary.is_none() && !timeline.pins.contains(&n)
        })
        .collect();
    timeline.branches.remove(index);
    for &n in &movable {
        timeline.nodes[n as usize].cold = true;
    }
    let archived: Vec<String> = movable.iter().map(|&n| node_id(n)).collect();
    let timeline_name = timeline.id_str();
    db.audit(
        ctx.now,
        AuditEntry {
            op: "archive".into(),
            timeline: Some(timeline_name),
            branch: Some(name),
            nodes: Some(archived.clone()),
            ..AuditEntry::default()
        },
    );
    Ok(json!({ "archived": archived }))
}
