//! Real summaries: range checks, versions (supersede), derived_from and reuse of identical requests.

use super::{Ctx, intent_of, timeline_of};
use crate::error::{Error, Result};
use crate::model::file::AuditEntry;
use crate::model::{
    Database, Node, Role, Summary, SummaryKind, estimate_tokens, node_id, summary_request_digest,
};
use crate::spec::validate::Args;
use serde_json::{Value, json};

pub fn summarize(db: &mut Database, args: &Args, ctx: &Ctx) -> Result<Value> {
    let tl = timeline_of(db, args)?;
    let timeline = db.timeline_mut(tl)?;
    let from = args.id("from").unwrap_or_default();
    let to = args.id("to").unwrap_or_default();
    timeline.message(from)?;
    timeline.message(to)?;
    if !timeline.is_ancestor_or_self(from, to) {
        return Err(Error::invalid(format!(
            "invalid range {}..{}: the end must be the start itself or a descendant of it; check the order with `tl context --node {}`",
            node_id(from),
            node_id(to),
            node_id(to)
        )));
    }
    let text = args.str("summary").unwrap_or_default().to_string();
    let tokens = args.u64("tokens").unwrap_or_else(|| estimate_tokens(&text));
    let derived_from = args.ids("derived_from");
    let supersedes = args.id("supersede");
    let intent = intent_of(args);

    let digest = summary_request_digest(
        from,
        to,
        &text,
        tokens,
        &derived_from,
        supersedes,
        intent.as_ref(),
    );
    if let Some(&existing) = timeline.derived.summary_requests.get(&digest) {
        return Ok(json!({ "node": node_id(existing) }));
    }
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
        let node = timeline.message(source)?;
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
        let node = timeline.message(old)?;
        let Some(summary) = node
            .summary
            .as_ref()
            .filter(|s| s.kind == SummaryKind::Real)
        else {
            return Err(Error::invalid(format!(
                "invalid argument supersede: {} is not a summary written by summarize",
                node_id(old)
            )));
        };
        if let Some(&newer) = timeline.derived.superseded_by.get(&old) {
            // Name the end of the chain, not just the next version.
            let mut latest = newer;
            while let Some(&next) = timeline.derived.superseded_by.get(&latest) {
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
    let parent = timeline.nodes[from as usize].parent;
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
        intent,
        summary: Some(summary),
        cold: false,
    };
    let n = timeline.push_node(node)?;
    timeline.advance_watermarks();
    let timeline_name = timeline.id_str();
    db.audit(
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
    );
    Ok(json!({ "node": node_id(n) }))
}
