//! The budget operation: gathers the path, pins and usable summaries, asks the pure planner for a
//! layout, then creates or reuses the placeholders that layout needs.

use super::{Ctx, message_json, output_cap, timeline_of};
use crate::budget::{self, Candidate, Item, Segment};
use crate::error::{Error, ErrorKind, Result};
use crate::model::file::AuditEntry;
use crate::model::{Database, Node, Role, Summary, SummaryKind, Timeline, node_id};
use crate::spec::spec;
use crate::spec::validate::Args;
use serde_json::{Value, json};
use std::collections::HashMap;

/// The planner's input for `target`: path items and usable real summaries (with their node IDs).
pub fn planner_input(
    timeline: &Timeline,
    target: u64,
) -> (Vec<u64>, Vec<Item>, Vec<(u64, Candidate)>) {
    let path = timeline.path(target);
    let position: HashMap<u64, usize> = path.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    let items: Vec<Item> = path
        .iter()
        .map(|&n| Item {
            tokens: timeline.nodes[n as usize].tokens,
            mandatory: n == target || timeline.pins.contains(&n),
        })
        .collect();
    let mut candidates = Vec::new();
    let mut ranges: Vec<(&(u64, u64), &Vec<u64>)> = timeline.derived.real_by_range.iter().collect();
    ranges.sort();
    for (&(from, to), summaries) in ranges {
        let (Some(&start), Some(&end)) = (position.get(&from), position.get(&to)) else {
            continue;
        };
        for &s in summaries {
            if timeline.is_current_version(s) && !timeline.nodes[s as usize].cold {
                candidates.push((
                    s,
                    Candidate {
                        start,
                        end,
                        tokens: timeline.nodes[s as usize].tokens,
                    },
                ));
            }
        }
    }
    (path, items, candidates)
}

pub fn budget(db: &mut Database, args: &Args, ctx: &Ctx) -> Result<Value> {
    let tl = timeline_of(db, args)?;
    let reserve = spec().constants.reserve_tokens;
    let timeline = db.timeline_mut(tl)?;
    let target = args.id("node").unwrap_or_default();
    let max = args.u64("max_tokens").unwrap_or_default();
    timeline.message(target)?;
    let (path, items, candidates) = planner_input(timeline, target);
    let plain: Vec<Candidate> = candidates.iter().map(|(_, c)| *c).collect();
    let plan = budget::plan(&items, &plain, reserve, max).map_err(|infeasible| {
        Error::new(ErrorKind::BudgetInfeasible, "budget infeasible")
            .with_data(json!({ "required_tokens": infeasible.required_tokens, "max_tokens": max }))
    })?;
    output_cap(plan.segments.len())?;
    let total = u64::try_from(plan.total_tokens).map_err(|_| Error::overflow())?;

    let mut messages = Vec::with_capacity(plan.segments.len());
    let mut placeholders = Vec::new();
    let mut created = Vec::new();
    for segment in &plan.segments {
        match *segment {
            Segment::Keep(i) => {
                let n = path[i];
                let node = &timeline.nodes[n as usize];
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
                let node = &timeline.nodes[n as usize];
                messages.push(message_json(
                    n,
                    Role::Summary.as_str(),
                    &node.text,
                    node.tokens,
                    node.intent.as_ref(),
                ));
            }
            Segment::Gap { start, end } => {
                let (from, to) = (path[start], path[end]);
                let parent = timeline.nodes[from as usize].parent;
                let n = match timeline.derived.placeholders.get(&(parent, from, to)) {
                    Some(&existing) => existing,
                    None => {
                        let omitted = timeline.derived.prefix_tokens[to as usize]
                            - timeline.derived.prefix_tokens[parent as usize];
                        let text = format!(
                            "[placeholder] {} message(s) {}..{} ({} tokens) omitted to fit the budget; read them with `tl context --node {}`",
                            end - start + 1,
                            node_id(from),
                            node_id(to),
                            omitted,
                            node_id(to)
                        );
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
                            text,
                            tokens: reserve,
                            intent: None,
                            summary: Some(summary),
                            cold: false,
                        };
                        let n = timeline.push_node(node)?;
                        created.push((n, from, to));
                        n
                    }
                };
                let node = &timeline.nodes[n as usize];
                messages.push(message_json(
                    n,
                    Role::Summary.as_str(),
                    &node.text,
                    node.tokens,
                    None,
                ));
                placeholders.push(node_id(n));
            }
        }
    }
    if !created.is_empty() {
        timeline.advance_watermarks();
    }
    let timeline_name = timeline.id_str();
    for (n, from, to) in created {
        db.audit(
            ctx.now,
            AuditEntry {
                op: "placeholder".into(),
                timeline: Some(timeline_name.clone()),
                from: Some(node_id(from)),
                to: Some(node_id(to)),
                node: Some(node_id(n)),
                ..AuditEntry::default()
            },
        );
    }
    Ok(json!({ "messages": messages, "total_tokens": total, "summaries_created": placeholders }))
}
