//! Real summaries: range checks, versions (supersede), derived_from and reuse of identical requests.

use super::results::Summarized;
use super::walk::{advance_watermarks, cover_range, is_ancestor_or_self, new_row};
use super::{Ctx, SummarizeArgs, message, timeline_of};
use crate::error::{Error, Message, Result, Step};
use crate::model::file::AuditEntry;
use crate::model::{
    Node, Role, Summary, SummaryKind, estimate_tokens, node_id, summary_request_digest,
};
use crate::store::{NodeChange, Tx};

pub fn summarize(tx: &mut dyn Tx, args: &SummarizeArgs, ctx: &Ctx) -> Result<Summarized> {
    let timeline = timeline_of(tx, args.timeline_id)?;
    let tl = timeline.id;
    let (from, to) = (args.from, args.to);
    let from_row = message(tx, &timeline, from)?;
    message(tx, &timeline, to)?;
    if !is_ancestor_or_self(tx, tl, from, to)? {
        return Err(Error::invalid(
            Message::from(format!(
                "invalid range {}..{}: the end must be the start itself or a descendant of it; check the order with ",
                node_id(from),
                node_id(to)
            ))
            .step(
                Step::new("context")
                    .timeline(crate::model::timeline_id(tl))
                    .arg("node", node_id(to)),
            ),
        ));
    }
    let text = args.summary.clone();
    let tokens = args.tokens.unwrap_or_else(|| estimate_tokens(&text));
    let derived_from = args.derived_from.clone();
    let supersedes = args.supersede;
    let intent = args.intent.clone();

    let digest = summary_request_digest(
        from,
        to,
        &text,
        tokens,
        &derived_from,
        supersedes,
        intent.as_ref(),
    );
    if let Some(existing) = tx.summary_by_request(tl, &digest)? {
        return Ok(Summarized {
            node: node_id(existing),
        });
    }
    // A summary built from a superseded or stale summary is stale from the start.
    let mut stale = false;
    for (i, &source) in derived_from.iter().enumerate() {
        if derived_from[..i].contains(&source) {
            return Err(Error::invalid(format!(
                "invalid argument derived_from: {} is listed twice; name each source summary once",
                node_id(source)
            )));
        }
        if supersedes == Some(source) {
            return Err(Error::invalid(format!(
                "invalid argument derived_from: {} is the summary this one supersedes; a new version derived from the version it replaces would be stale at once, so leave it out of derived_from",
                node_id(source)
            )));
        }
        let row = message(tx, &timeline, source)?;
        stale |= row.stale || row.superseded_by.is_some();
        let node = &row.node;
        if node.is_placeholder() {
            return Err(Error::invalid(format!(
                "invalid argument derived_from: {} is a placeholder, not a summary written by summarize; list the summaries this one was built from",
                node_id(source)
            )));
        }
        if !node.is_real_summary() {
            return Err(Error::invalid(format!(
                "invalid argument derived_from: {} is not a summary; list the summaries this one was built from",
                node_id(source)
            )));
        }
    }
    let mut version = 1;
    if let Some(old) = supersedes {
        let row = message(tx, &timeline, old)?;
        let Some(summary) = row
            .node
            .summary
            .as_ref()
            .filter(|s| s.kind == SummaryKind::Real)
        else {
            return Err(Error::invalid(format!(
                "invalid argument supersede: {} is not a summary written by summarize",
                node_id(old)
            )));
        };
        if let Some(newer) = row.superseded_by {
            // Name the end of the chain, not just the next version.
            let mut latest = newer;
            while let Some(next) = tx.node(tl, latest)?.and_then(|r| r.superseded_by) {
                latest = next;
            }
            return Err(Error::conflict(format!(
                "{} is already superseded by {}; supersede the latest version {} instead",
                node_id(old),
                node_id(newer),
                node_id(latest)
            )));
        }
        version = summary.version.checked_add(1).ok_or_else(Error::overflow)?;
    }
    let parent = from_row.node.parent;
    let summary = Summary {
        kind: SummaryKind::Real,
        from,
        to,
        derived_from,
        supersedes,
        version,
    };
    let node = Node {
        parent,
        role: Role::Summary,
        text,
        tokens,
        created_at: Some(ctx.now),
        intent,
        provenance: None,
        summary: Some(summary),
        cold: false,
    };
    let n = timeline.next_node;
    let mut row = new_row(tx, tl, n, node)?;
    row.stale = stale;
    tx.insert_node(tl, &row)?;
    cover_range(tx, tl, from, to)?;
    if let Some(old) = supersedes {
        tx.change_node(tl, old, NodeChange::SupersededBy(n))?;
        mark_stale_from(tx, tl, old)?;
    }
    advance_watermarks(tx, tl)?;
    tx.touch_timeline(tl, ctx.now)?;
    let timeline_name = crate::model::timeline_id(tl);
    tx.append_audit(
        ctx.now,
        AuditEntry {
            op: if supersedes.is_some() {
                "supersede".into()
            } else {
                "summarize".into()
            },
            timeline: Some(timeline_name),
            from: Some(node_id(from)),
            to: Some(node_id(to)),
            node: Some(node_id(n)),
            supersedes: supersedes.map(node_id),
            ..AuditEntry::default()
        },
    )?;
    Ok(Summarized { node: node_id(n) })
}

/// Mark stale every summary whose derived_from reaches `source` (Σ4). A summary already stale has had
/// its own dependents marked when it became stale, so the walk stops there.
fn mark_stale_from(tx: &mut dyn Tx, tl: u64, source: u64) -> Result<()> {
    let mut queue = vec![source];
    while let Some(at) = queue.pop() {
        for user in tx.dependents(tl, at)? {
            let already = tx.node(tl, user)?.is_some_and(|r| r.stale);
            if !already {
                tx.change_node(tl, user, NodeChange::Stale)?;
                queue.push(user);
            }
        }
    }
    Ok(())
}
