//! The budget operation: gathers the path, pins and usable summaries, asks the pure planner for a
//! layout, then creates or reuses the placeholders that layout needs.

use super::walk::{advance_watermarks, cover_range, path_rows};
use super::{ContextBudgetArgs, Ctx, message, message_json, output_cap, timeline_of};
use crate::budget::{self, Candidate, Item, Segment};
use crate::error::{Error, ErrorKind, Result};
use crate::model::file::AuditEntry;
use crate::model::{Node, Role, Summary, SummaryKind, node_id};
use crate::spec::spec;
use crate::store::{NodeRow, Tx};
use serde_json::{Value, json};
use std::collections::HashMap;

/// The path's rows, the planner's items, and the usable summaries with their node IDs.
pub type PlannerInput = (Vec<NodeRow>, Vec<Item>, Vec<(u64, Candidate)>);

/// The planner's input for `target`: the path's rows, its items, and the usable real summaries (with
/// their node IDs) ordered by range start, range end and age. Reads the path and the summaries that
/// start on it, nothing else.
pub fn planner_input(tx: &mut dyn Tx, tl: u64, target: u64) -> Result<PlannerInput> {
    let path = path_rows(tx, tl, target)?;
    let position: HashMap<u64, usize> = path.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
    let items: Vec<Item> = path
        .iter()
        .map(|r| Item {
            tokens: r.node.tokens,
            mandatory: r.id == target || r.pinned,
        })
        .collect();
    let mut candidates = Vec::new();
    // Node IDs grow along a path (a parent is older than its child), so path order is range-start order.
    for (start, row) in path.iter().enumerate() {
        let mut found = Vec::new();
        for s in tx.summaries_from(tl, row.id)? {
            let Some(summary_row) = tx.node(tl, s)? else {
                continue;
            };
            let Some(summary) = summary_row.node.summary.as_ref() else {
                continue;
            };
            let Some(&end) = position.get(&summary.to) else {
                continue;
            };
            if summary.kind == SummaryKind::Real
                && summary_row.is_current_version()
                && !summary_row.node.cold
            {
                found.push((
                    summary.to,
                    s,
                    Candidate {
                        start,
                        end,
                        tokens: summary_row.node.tokens,
                    },
                ));
            }
        }
        found.sort_by_key(|&(to, s, _)| (to, s));
        candidates.extend(found.into_iter().map(|(_, s, c)| (s, c)));
    }
    Ok((path, items, candidates))
}

pub fn budget(tx: &mut dyn Tx, args: &ContextBudgetArgs, ctx: &Ctx) -> Result<Value> {
    let timeline = timeline_of(tx, args.timeline_id)?;
    let tl = timeline.id;
    let reserve = spec().constants.reserve_tokens;
    let target = args.node;
    let max = args.max_tokens;
    message(tx, &timeline, target)?;
    let (path, items, candidates) = planner_input(tx, tl, target)?;
    let plain: Vec<Candidate> = candidates.iter().map(|(_, c)| *c).collect();
    let plan = budget::plan(&items, &plain, reserve, max)
        .map_err(|e| infeasible(e.required_tokens, max))?;
    output_cap(plan.segments.len())?;
    let total = u64::try_from(plan.total_tokens).map_err(|_| Error::overflow())?;

    let mut messages = Vec::with_capacity(plan.segments.len());
    let mut placeholders = Vec::new();
    let mut created = Vec::new();
    let mut next = timeline.next_node;
    for segment in &plan.segments {
        match *segment {
            Segment::Keep(i) => {
                let n = path[i].id;
                let node = &path[i].node;
                messages.push(message_json(
                    n,
                    node.role.as_str(),
                    &node.text,
                    node.tokens,
                    node.intent.as_ref(),
                ));
                // A placeholder can itself lie on the path (the target, or a branch forked from it):
                // it is still a placeholder used in the result.
                if node.is_placeholder() {
                    placeholders.push(node_id(n));
                }
            }
            Segment::Summary(c) => {
                let n = candidates[c].0;
                let row = super::existing(tx, tl, n)?;
                let node = &row.node;
                messages.push(message_json(
                    n,
                    Role::Summary.as_str(),
                    &node.text,
                    node.tokens,
                    node.intent.as_ref(),
                ));
            }
            Segment::Gap { start, end } => {
                let (from, to) = (path[start].id, path[end].id);
                let parent = path[start].node.parent;
                let (n, text) = match existing_placeholder(tx, tl, from, to)? {
                    Some(found) => found,
                    None => {
                        // Prefix sums of one path: the range's tokens are the difference.
                        let omitted = path[end].prefix_tokens
                            - (path[start].prefix_tokens - path[start].node.tokens);
                        let text = placeholder_text(end - start + 1, from, to, omitted);
                        let summary = Summary {
                            kind: SummaryKind::Placeholder,
                            from,
                            to,
                            derived_from: Vec::new(),
                            supersedes: None,
                            version: 1,
                        };
                        let node = Node {
                            parent,
                            role: Role::Summary,
                            text: text.clone(),
                            tokens: reserve,
                            intent: None,
                            summary: Some(summary),
                            cold: false,
                        };
                        let n = next;
                        next += 1;
                        let row = super::walk::new_row(tx, tl, n, node)?;
                        tx.insert_node(tl, &row)?;
                        cover_range(tx, tl, from, to)?;
                        created.push((n, from, to));
                        (n, text)
                    }
                };
                messages.push(message_json(
                    n,
                    Role::Summary.as_str(),
                    &text,
                    reserve,
                    None,
                ));
                placeholders.push(node_id(n));
            }
        }
    }
    if !created.is_empty() {
        advance_watermarks(tx, tl)?;
    }
    let timeline_name = crate::model::timeline_id(tl);
    for (n, from, to) in created {
        tx.append_audit(
            ctx.now,
            AuditEntry {
                op: "placeholder".into(),
                timeline: Some(timeline_name.clone()),
                from: Some(node_id(from)),
                to: Some(node_id(to)),
                node: Some(node_id(n)),
                ..AuditEntry::default()
            },
        )?;
    }
    Ok(json!({ "messages": messages, "total_tokens": total, "summaries_created": placeholders }))
}

/// The text of a new placeholder for `count` messages `from..to` of `omitted` tokens.
pub fn placeholder_text(count: usize, from: u64, to: u64, omitted: u64) -> String {
    format!(
        "[placeholder] {count} message(s) {}..{} ({omitted} tokens) omitted to fit the budget; read them as the context of {} (MCP: timeline_context with node \"{}\"; CLI: tl context --node {})",
        node_id(from),
        node_id(to),
        node_id(to),
        node_id(to),
        node_id(to)
    )
}

/// The error of a budget that no layout meets.
pub fn infeasible(required_tokens: u128, max: u64) -> Error {
    Error::new(ErrorKind::BudgetInfeasible, "budget infeasible")
        .with_data(json!({ "required_tokens": required_tokens, "max_tokens": max }))
}

/// The placeholder of exactly from..to, reused instead of a new one (B1), with its text.
pub fn existing_placeholder(
    tx: &mut dyn Tx,
    tl: u64,
    from: u64,
    to: u64,
) -> Result<Option<(u64, String)>> {
    for s in tx.summaries_from(tl, from)? {
        if let Some(row) = tx.node(tl, s)?
            && row.node.is_placeholder()
            && row.node.summary.as_ref().is_some_and(|p| p.to == to)
        {
            return Ok(Some((s, row.node.text)));
        }
    }
    Ok(None)
}
