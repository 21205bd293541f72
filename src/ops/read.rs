//! Read-only operations: context, branches, node. Hot and cold nodes read alike.

use super::results::{BranchInfo, Message, NodeDetail, NodeIntent, NodeSummary, TimelineInfo};
use super::walk::path_rows;
use super::{BranchesArgs, ContextArgs, NodeArgs, message, output_cap, timeline_of};
use crate::error::Result;
use crate::model::node_id;
use crate::store::Tx;
use serde_json::Value;

pub fn context(tx: &mut dyn Tx, args: &ContextArgs) -> Result<Vec<Message>> {
    let timeline = timeline_of(tx, args.timeline_id)?;
    let target = message(tx, &timeline, args.node)?;
    // The depth is the path's length: refuse an oversize result before reading it.
    output_cap(usize::try_from(target.depth).unwrap_or(usize::MAX))?;
    Ok(path_rows(tx, timeline.id, args.node)?
        .iter()
        .map(Message::of)
        .collect())
}

pub fn branches(tx: &mut dyn Tx, args: &BranchesArgs) -> Result<Vec<BranchInfo>> {
    let timeline = timeline_of(tx, args.timeline_id)?;
    Ok(tx
        .branches(timeline.id)?
        .iter()
        .map(|b| BranchInfo {
            name: b.name.clone(),
            head: node_id(b.head),
            current: b.name == timeline.current_branch,
        })
        .collect())
}

pub fn node(tx: &mut dyn Tx, args: &NodeArgs) -> Result<NodeDetail> {
    let timeline = timeline_of(tx, args.timeline_id)?;
    let n = args.node;
    let row = message(tx, &timeline, n)?;
    let node = &row.node;
    let summary = node.summary.as_ref().map(|s| NodeSummary {
        kind: s.kind.as_str().to_string(),
        from: node_id(s.from),
        to: node_id(s.to),
        version: s.version,
        supersedes: s.supersedes.map(node_id),
        superseded_by: row.superseded_by.map(node_id),
        derived_from: s.derived_from.iter().map(|&d| node_id(d)).collect(),
        stale: row.stale,
    });
    let children: Vec<String> = tx
        .children(timeline.id, n)?
        .into_iter()
        .map(node_id)
        .collect();
    Ok(NodeDetail {
        node: node_id(n),
        timeline_id: crate::model::timeline_id(timeline.id),
        role: node.role.as_str().to_string(),
        text: node.text.clone(),
        tokens: node.tokens,
        parent: node_id(node.parent),
        children,
        zone: if node.cold { "cold" } else { "hot" }.to_string(),
        pinned: row.pinned,
        path_tokens: row.prefix_tokens,
        created_at: node.created_at,
        intent: node.intent.as_ref().map(|i| NodeIntent {
            tag: i.tag.clone(),
            note: i.note.clone(),
        }),
        summary,
        // Only imported messages have one; it is left out elsewhere so that results stay as they were.
        provenance: node
            .provenance
            .as_deref()
            .and_then(|p| serde_json::from_str::<Value>(p).ok()),
    })
}

/// Every timeline with what a person or a model needs to pick one.
pub fn timelines(tx: &mut dyn Tx) -> Result<Vec<TimelineInfo>> {
    Ok(tx
        .timeline_list()?
        .into_iter()
        .map(|(t, branches)| TimelineInfo {
            timeline_id: crate::model::timeline_id(t.id),
            title: t.title,
            created_at: t.created_at,
            updated_at: t.updated_at,
            messages: t.next_node.saturating_sub(1),
            branches,
            current_branch: t.current_branch,
        })
        .collect())
}
