//! Archival: eligibility (archive-check), moving a finished branch's own messages to the cold zone,
//! and bringing an archived branch back (restore-branch).

use super::results::{ArchiveCheck, Archived, Restored};
use super::walk::path_rows;
use super::{
    ArchiveBranchArgs, ArchiveCheckArgs, Ctx, RestoreBranchArgs, branch_named, existing,
    timeline_of,
};
use crate::error::{Error, ErrorKind, Message, Result, Step};
use crate::model::file::AuditEntry;
use crate::model::{ArchivedBranch, Branch, SummaryKind, node_id, timeline_id};
use crate::spec::validate::Origin;
use crate::store::{NodeChange, NodeRow, PathFind, TimelineRow, Tx};
use serde_json::json;
use std::collections::HashSet;

/// Every reason the branch cannot be archived, in a stable order; empty when it can. Also returns the
/// branch's path, which archival moves.
fn reasons(
    tx: &mut dyn Tx,
    timeline: &TimelineRow,
    name: &str,
    origin: Origin,
) -> Result<(Vec<String>, Vec<NodeRow>)> {
    let tl = timeline.id;
    let summarize = Step::new("summarize").timeline(timeline_id(tl));
    let branch = branch_named(tx, timeline, name)?;
    let mut reasons = Vec::new();
    if timeline.current_branch == name {
        reasons.push(format!(
            "{name:?} is the current branch; switch to another branch first"
        ));
    }
    let path = path_rows(tx, tl, branch.head)?;
    if branch.watermark != branch.head {
        let uncovered = tx
            .find_on_path(tl, branch.head, PathFind::OldestBare { deeper_than: 0 })?
            .map(|r| r.id);
        reasons.push(match uncovered {
            Some(n) => format!(
                "the watermark does not cover the whole branch: {} is neither pinned nor summarised; summarise it with {} or run a budget that covers it",
                node_id(n),
                summarize.render(origin)
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
        .filter(|r| r.pinned)
        .map(|r| node_id(r.id))
        .collect();
    if !pinned.is_empty() {
        reasons.push(format!(
            "pinned nodes on the branch: {}; unpin them first",
            pinned.join(", ")
        ));
    }
    let on_path: HashSet<u64> = path.iter().map(|r| r.id).collect();
    // Placeholders of ranges on the path with no real summary of the same range, by node ID.
    let mut open: Vec<(u64, u64, u64)> = Vec::new();
    for row in &path {
        let mut placeholders = Vec::new();
        let mut real_ends = HashSet::new();
        for s in tx.summaries_from(tl, row.id)? {
            let summary_row = existing(tx, tl, s)?;
            let Some(summary) = &summary_row.node.summary else {
                continue;
            };
            match summary.kind {
                SummaryKind::Real => {
                    real_ends.insert(summary.to);
                }
                SummaryKind::Placeholder if on_path.contains(&summary.to) => {
                    placeholders.push((s, summary.to));
                }
                SummaryKind::Placeholder => {}
            }
        }
        for (s, to) in placeholders {
            if !real_ends.contains(&to) {
                open.push((s, row.id, to));
            }
        }
    }
    open.sort_unstable();
    if !open.is_empty() {
        let listed: Vec<String> = open
            .iter()
            .map(|&(n, from, to)| format!("{} ({}..{})", node_id(n), node_id(from), node_id(to)))
            .collect();
        reasons.push(format!(
            "placeholders without a real summary of the same range: {}; write those summaries with {}",
            listed.join(", "),
            summarize.render(origin)
        ));
    }
    Ok((reasons, path))
}

/// The depth of the lowest common ancestor of `a` and `b` (0 for the root).
fn common_depth(tx: &mut dyn Tx, tl: u64, a: u64, b: u64) -> Result<u64> {
    let mut a = existing(tx, tl, a)?;
    let mut b = existing(tx, tl, b)?;
    while a.depth > b.depth {
        a = existing(tx, tl, a.node.parent)?;
    }
    while b.depth > a.depth {
        b = existing(tx, tl, b.node.parent)?;
    }
    while a.id != b.id {
        a = existing(tx, tl, a.node.parent)?;
        b = existing(tx, tl, b.node.parent)?;
    }
    Ok(a.depth)
}

pub fn check(tx: &mut dyn Tx, args: &ArchiveCheckArgs, ctx: &Ctx) -> Result<ArchiveCheck> {
    let timeline = timeline_of(tx, args.timeline_id)?;
    let (reasons, _) = reasons(tx, &timeline, &args.branch, ctx.origin)?;
    Ok(ArchiveCheck {
        eligible: reasons.is_empty(),
        reasons,
    })
}

pub fn archive(tx: &mut dyn Tx, args: &ArchiveBranchArgs, ctx: &Ctx) -> Result<Archived> {
    let timeline = timeline_of(tx, args.timeline_id)?;
    let tl = timeline.id;
    let name = args.branch.clone();
    let (reasons, path) = reasons(tx, &timeline, &name, ctx.origin)?;
    if !reasons.is_empty() {
        return Err(Error::new(
            ErrorKind::NotEligible,
            format!("branch {name:?} cannot be archived: {}", reasons.join("; ")),
        )
        .with_data(json!({ "reasons": reasons })));
    }
    let head = path.last().map_or(crate::model::ROOT, |r| r.id);
    // A node of the path is referenced by this branch alone exactly when it lies below every point
    // where another branch leaves the path. Another branch shares the path down to the lowest common
    // ancestor of the two heads, so only the nodes deeper than the deepest such ancestor are the
    // branch's own: O(branches × depth) instead of a reference count per node.
    let mut shared = 0;
    let branches = tx.branches(tl)?;
    let mut position = 0;
    let mut watermark = head;
    for (i, other) in branches.into_iter().enumerate() {
        if other.name != name {
            shared = shared.max(common_depth(tx, tl, head, other.head)?);
        } else {
            position = i as u64;
            watermark = other.watermark;
        }
    }
    let movable: Vec<u64> = path
        .iter()
        .skip(usize::try_from(shared).unwrap_or(usize::MAX))
        .filter(|r| !r.node.cold && r.node.summary.is_none() && !r.pinned)
        .map(|r| r.id)
        .collect();
    tx.remove_branch(tl, &name)?;
    for &n in &movable {
        tx.change_node(tl, n, NodeChange::Archived)?;
    }
    // What restore-branch needs to bring the branch back where it was.
    tx.push_archived_branch(
        tl,
        &ArchivedBranch {
            name: name.clone(),
            head,
            watermark,
            position,
            nodes: movable.clone(),
        },
    )?;
    let archived: Vec<String> = movable.iter().map(|&n| node_id(n)).collect();
    tx.touch_timeline(tl, ctx.now)?;
    tx.append_audit(
        ctx.now,
        AuditEntry {
            op: "archive".into(),
            timeline: Some(crate::model::timeline_id(tl)),
            branch: Some(name),
            nodes: Some(archived.clone()),
            ..AuditEntry::default()
        },
    )?;
    Ok(Archived { archived })
}

/// Bring back the latest archived branch of that name: its pointer (head, watermark, place in the
/// list of branches) and, to the hot zone, the messages of its path that were hot when it was
/// archived. Those are the cold messages of its path that its own archival moved, or a later one
/// (a message shared with a branch archived after it); a message that was already cold then (the
/// branch was forked from a hot summary over cold history) stays cold. Restoring a branch that
/// exists and has no archived namesake changes nothing.
pub fn restore(tx: &mut dyn Tx, args: &RestoreBranchArgs, ctx: &Ctx) -> Result<Restored> {
    let timeline = timeline_of(tx, args.timeline_id)?;
    let tl = timeline.id;
    let name = &args.branch;
    let records = tx.archived_branches(tl)?;
    let latest = records.iter().rposition(|a| &a.name == name);
    let tl_name = crate::model::timeline_id(tl);
    let live = tx.branch(tl, name)?;
    let index = match (live, latest) {
        (Some(branch), None) => {
            return Ok(Restored {
                branch: name.clone(),
                head: node_id(branch.head),
                restored: Vec::new(),
            });
        }
        (Some(_), Some(_)) => {
            return Err(Error::conflict(
                Message::from(format!(
                    "cannot restore {name:?}: a branch of that name exists, and an archived one too; rename the existing branch first with "
                ))
                .step(
                    Step::new("rename_branch")
                        .timeline(&tl_name)
                        .arg("name", name.clone())
                        .needs("new_name"),
                )
                .text(", then restore again"),
            ));
        }
        (None, None) => {
            let mut names: Vec<&str> = records.iter().map(|a| a.name.as_str()).collect();
            names.sort_unstable();
            names.dedup();
            let listed = if names.is_empty() {
                "none is archived; a branch archived by a version of Timeline without restore-branch was not recorded and cannot be restored, but its messages stay readable by node ID".to_string()
            } else {
                format!("archived branches: {}", names.join(", "))
            };
            return Err(Error::not_found(format!(
                "no archived branch {name:?} in timeline {tl_name} ({listed})"
            )));
        }
        (None, Some(index)) => index,
    };
    let record = records[index].clone();
    // Messages moved by this archival or a later one: hot while the branch existed.
    let moved_since: HashSet<u64> = records[index..]
        .iter()
        .flat_map(|a| a.nodes.iter().copied())
        .collect();
    let restored: Vec<u64> = path_rows(tx, tl, record.head)?
        .into_iter()
        .filter(|r| r.node.cold && moved_since.contains(&r.id))
        .map(|r| r.id)
        .collect();
    for &n in &restored {
        tx.change_node(tl, n, NodeChange::Restored)?;
    }
    tx.remove_archived_branch(tl, name)?;
    tx.insert_branch(
        tl,
        record.position,
        &Branch {
            name: name.clone(),
            head: record.head,
            watermark: record.watermark,
        },
    )?;
    let restored: Vec<String> = restored.iter().map(|&n| node_id(n)).collect();
    tx.append_audit(
        ctx.now,
        AuditEntry {
            op: "restore".into(),
            timeline: Some(tl_name),
            branch: Some(name.clone()),
            nodes: Some(restored.clone()),
            ..AuditEntry::default()
        },
    )?;
    Ok(Restored {
        branch: name.clone(),
        head: node_id(record.head),
        restored,
    })
}
