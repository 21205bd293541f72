//! The budget operation: gathers the path, pins and usable summaries, asks the pure planner for a
//! layout, then creates or reuses the placeholders that layout needs.

use super::results::{BudgetLayout, Explained, LayoutMessage, Message, WouldCreate};
use super::walk::{advance_watermarks, cover_range, path_rows};
use super::{ContextBudgetArgs, Ctx, message, output_cap, timeline_of};
use crate::budget::{self, Candidate, Infeasible, Item, Plan, Reason, Segment};
use crate::error::{Error, ErrorKind, Result};
use crate::model::file::AuditEntry;
use crate::model::{Node, ROOT, Role, Summary, SummaryKind, node_id};
use crate::spec::spec;
use crate::store::{NodeRow, PathFind, Tx};
use serde_json::json;
use std::collections::HashMap;

/// The path's rows, the planner's items, and the usable summaries with their node IDs.
pub type PlannerInput = (Vec<NodeRow>, Vec<Item>, Vec<(u64, Candidate)>);

/// The planner's input for `target` from the whole path (the full scan): the path's rows, its
/// items, and the usable real summaries (with their node IDs) ordered by range start, range end
/// and age. Reads the path and the summaries that start on it, nothing else.
pub fn planner_input(tx: &mut dyn Tx, tl: u64, target: u64) -> Result<PlannerInput> {
    let path = path_rows(tx, tl, target)?;
    input_of(tx, tl, target, path)
}

/// The items and candidates of `path` (root→target, or a window whose first row stands for the
/// part of the path above it).
fn input_of(tx: &mut dyn Tx, tl: u64, target: u64, path: Vec<NodeRow>) -> Result<PlannerInput> {
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

/// A planner input and the planner's answer for it.
pub struct Planned {
    /// The path (or window) the planner saw, its items and candidates.
    pub input: PlannerInput,
    /// The layout, or what the cheapest one needs.
    pub plan: std::result::Result<Plan, Infeasible>,
    /// The path's first message: the start of a placeholder from position 0, which in a window
    /// stands for every message above it (its row is the last of them).
    pub first: u64,
}

/// What a placeholder for path positions start..=end stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// Its first and last message.
    pub from: u64,
    /// Its last message.
    pub to: u64,
    /// How many messages it leaves out.
    pub count: u64,
    /// How many tokens they hold.
    pub omitted: u64,
    /// The parent of `from`, which a new placeholder gets.
    pub parent: u64,
}

/// The span of path positions start..=end, counted by depth and prefix sums, so that position 0 of
/// a window (all the messages above it) counts as what it stands for.
pub fn span(path: &[NodeRow], first: u64, start: usize, end: usize) -> Span {
    let (from, parent, depth, before) = if start == 0 {
        (first, ROOT, 1, 0)
    } else {
        let a = &path[start];
        (
            a.id,
            a.node.parent,
            a.depth,
            a.prefix_tokens - a.node.tokens,
        )
    };
    let b = &path[end];
    Span {
        from,
        to: b.id,
        count: b.depth - depth + 1,
        omitted: b.prefix_tokens - before,
        parent,
    }
}

/// The planner on the whole path: what a budget computed before path windows, kept for tests
/// (the property that the window gives the same layout) and for `explain`, which shows every
/// message of the path.
pub fn plan_full_scan(tx: &mut dyn Tx, tl: u64, target: u64, max: u64) -> Result<Planned> {
    let input = planner_input(tx, tl, target)?;
    Ok(planned(input, max, None))
}

/// Plan `input`; `first` is the path's first message when `input` is a window.
fn planned(input: PlannerInput, max: u64, first: Option<u64>) -> Planned {
    let plain: Vec<Candidate> = input.2.iter().map(|(_, c)| *c).collect();
    let plan = budget::plan(&input.1, &plain, spec().constants.reserve_tokens, max);
    let first = first.unwrap_or_else(|| input.0.first().map_or(ROOT, |r| r.id));
    Planned { input, plan, first }
}

/// The planner's layout for `target`: from a path window when that gives the full scan's layout
/// (`plan_window`), from the whole path otherwise.
pub fn plan_path(tx: &mut dyn Tx, tl: u64, target: u64, max: u64) -> Result<Planned> {
    match plan_window(tx, tl, target, max)? {
        Some(planned) => Ok(planned),
        None => plan_full_scan(tx, tl, target, max),
    }
}

/// The planner on a window of the path (issue 24, spec/NOTES.md): the newest messages back from
/// the target until they hold more than the budget (`Tx::budget_window`), and the part above them
/// as one item P whose tokens are a prefix sum, standing at the path's first message. `None` when
/// the full scan might lay the path out differently, which holds unless every message of P is
/// unpinned, starts no real summary, and has more tokens than the plan leaves unspent (so the
/// message step keeps none of them), P holds more than a placeholder's tokens (so the cheapest
/// layout leaves all of P out as one placeholder), and the plan leaves P out. One query checks P
/// (`Tx::find_on_path`), returning at most one row.
pub fn plan_window(tx: &mut dyn Tx, tl: u64, target: u64, max: u64) -> Result<Option<Planned>> {
    let reserve = spec().constants.reserve_tokens;
    let mut window = tx.budget_window(tl, target, max)?;
    let sound = window.first().is_some_and(|t| t.id == target)
        && window
            .windows(2)
            .all(|w| w[0].node.parent == w[1].id && w[1].depth.checked_add(1) == Some(w[0].depth));
    if !sound {
        // A damaged path, which the full scan names.
        return Ok(None);
    }
    if window.last().is_some_and(|r| r.id == ROOT) {
        window.pop();
    }
    let Some(top) = window.last().cloned() else {
        return Ok(None);
    };
    window.reverse();
    if top.node.parent == ROOT {
        // The window reached the path's first message: it is the whole path.
        if top.depth != 1 {
            return Ok(None);
        }
        let input = input_of(tx, tl, target, window)?;
        return Ok(Some(planned(input, max, None)));
    }
    // (A damaged file's sums may not subtract: the full scan names the damage.)
    let Some(above) = top.prefix_tokens.checked_sub(top.node.tokens) else {
        return Ok(None);
    };
    if above <= reserve {
        return Ok(None);
    }
    let Some(first) = tx.find_on_path(tl, top.node.parent, PathFind::Depth(1))? else {
        return Ok(None);
    };
    let Some(last) = tx.node(tl, top.node.parent)? else {
        return Ok(None);
    };
    // P: the row of its last message, holding the tokens of all of them.
    let p = NodeRow {
        node: Node {
            tokens: above,
            ..last.node
        },
        pinned: false,
        ..last
    };
    let mut path = Vec::with_capacity(window.len() + 1);
    path.push(p);
    path.extend(window);
    let input = input_of(tx, tl, target, path)?;
    let planned = planned(input, max, Some(first.id));
    let unspent = match &planned.plan {
        Ok(plan) => {
            if !matches!(plan.segments.first(), Some(Segment::Gap { start: 0, .. })) {
                return Ok(None);
            }
            u128::from(max) - plan.total_tokens
        }
        // No message step: only the cheapest layout, which needs every message of P above 0.
        Err(_) => 0,
    };
    let Ok(unspent) = u64::try_from(unspent) else {
        return Ok(None);
    };
    let obstacle = PathFind::Obstacle { tokens: unspent };
    if tx.find_on_path(tl, top.node.parent, obstacle)?.is_some() {
        return Ok(None);
    }
    Ok(Some(planned))
}

pub fn budget(tx: &mut dyn Tx, args: &ContextBudgetArgs, ctx: &Ctx) -> Result<BudgetLayout> {
    let timeline = timeline_of(tx, args.timeline_id)?;
    let tl = timeline.id;
    let target = args.node;
    let max = args.max_tokens;
    message(tx, &timeline, target)?;
    // An explanation shows every message of the path: it is planned on the whole path.
    let Planned {
        input: (path, _, candidates),
        plan,
        first,
    } = if args.explain {
        plan_full_scan(tx, tl, target, max)?
    } else {
        plan_path(tx, tl, target, max)?
    };
    let plan = match plan {
        Ok(plan) => plan,
        Err(infeasible) => {
            let mut data =
                json!({ "required_tokens": infeasible.required_tokens, "max_tokens": max });
            if args.explain {
                // The cheapest layout, shown as a dry run would show it: it is what the request needs.
                output_cap(infeasible.segments.len())?;
                let layout = Layout {
                    path: &path,
                    first,
                    candidates: &candidates,
                    segments: &infeasible.segments,
                    reasons: &infeasible.reasons,
                    target,
                    max,
                };
                let shown = layout.show(tx, tl, None)?;
                let messages: Vec<&LayoutMessage> = shown.iter().map(|s| &s.message).collect();
                data["messages"] = json!(messages);
                data["explanation"] = json!(layout.explain(&shown)?);
            }
            return Err(
                Error::new(ErrorKind::BudgetInfeasible, "budget infeasible").with_data(data)
            );
        }
    };
    output_cap(plan.segments.len())?;
    let total = u64::try_from(plan.total_tokens).map_err(|_| Error::overflow())?;
    let layout = Layout {
        path: &path,
        first,
        candidates: &candidates,
        segments: &plan.segments,
        reasons: &plan.reasons,
        target,
        max,
    };
    let mut created = Vec::new();
    let writer = (!args.dry_run).then_some(Writer {
        next: timeline.next_node,
        now: ctx.now,
        created: &mut created,
    });
    let shown = layout.show(tx, tl, writer)?;
    if !created.is_empty() {
        advance_watermarks(tx, tl)?;
        tx.touch_timeline(tl, ctx.now)?;
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
    let placeholders: Vec<String> = shown
        .iter()
        .filter_map(|s| s.placeholder.map(node_id))
        .collect();
    let explanation = if args.explain {
        Some(layout.explain(&shown)?)
    } else {
        None
    };
    Ok(BudgetLayout {
        messages: shown.into_iter().map(|s| s.message).collect(),
        total_tokens: total,
        summaries_created: placeholders,
        explanation,
    })
}

/// Creates the placeholders a layout needs (absent in a dry run and for an infeasible request).
struct Writer<'a> {
    /// The number the next node gets.
    next: u64,
    /// The creation time of new placeholders.
    now: u64,
    /// (placeholder, from, to) of each placeholder created.
    created: &'a mut Vec<(u64, u64, u64)>,
}

/// What one segment of a layout shows.
struct Shown {
    /// The message as the result prints it.
    message: LayoutMessage,
    /// The summary or placeholder standing for the segment; `None` for a kept message and for a
    /// placeholder that was not created.
    by: Option<u64>,
    /// The placeholder node shown, also one that lies on the path itself (summaries_created).
    placeholder: Option<u64>,
}

/// A layout of the planner with everything needed to show and explain it.
struct Layout<'a> {
    path: &'a [NodeRow],
    /// The path's first message (see `Planned::first`).
    first: u64,
    candidates: &'a [(u64, Candidate)],
    segments: &'a [Segment],
    reasons: &'a [Reason],
    target: u64,
    max: u64,
}

impl Layout<'_> {
    /// One shown message per segment. With a `writer`, each gap gets its placeholder (reused or
    /// created); without one, a gap without a placeholder is shown with node null and its range.
    fn show(&self, tx: &mut dyn Tx, tl: u64, mut writer: Option<Writer>) -> Result<Vec<Shown>> {
        let reserve = spec().constants.reserve_tokens;
        let path = self.path;
        let mut shown = Vec::with_capacity(self.segments.len());
        for segment in self.segments {
            shown.push(match *segment {
                Segment::Keep(i) => {
                    let n = path[i].id;
                    let node = &path[i].node;
                    Shown {
                        message: LayoutMessage::Node(Message::of(&path[i])),
                        by: None,
                        // A placeholder can itself lie on the path (the target, or a branch forked
                        // from it): it is still a placeholder used in the result.
                        placeholder: node.is_placeholder().then_some(n),
                    }
                }
                Segment::Summary(c) => {
                    let n = self.candidates[c].0;
                    let row = super::existing(tx, tl, n)?;
                    let node = &row.node;
                    Shown {
                        message: LayoutMessage::Node(Message::new(
                            n,
                            Role::Summary.as_str(),
                            &node.text,
                            node.tokens,
                            node.intent.as_ref().map(|i| i.tag.as_str()),
                        )),
                        by: Some(n),
                        placeholder: None,
                    }
                }
                Segment::Gap { start, end } => {
                    let span = span(path, self.first, start, end);
                    let (from, to) = (span.from, span.to);
                    let found = match existing_placeholder(tx, tl, from, to)? {
                        Some(found) => Some(found),
                        None => match writer.as_mut() {
                            Some(writer) => {
                                let text = span_text(span);
                                let n = create_placeholder(
                                    tx,
                                    tl,
                                    (writer.next, writer.now),
                                    span,
                                    &text,
                                )?;
                                writer.next += 1;
                                writer.created.push((n, from, to));
                                Some((n, text))
                            }
                            None => None,
                        },
                    };
                    match found {
                        Some((n, text)) => Shown {
                            message: LayoutMessage::Node(Message::new(
                                n,
                                Role::Summary.as_str(),
                                &text,
                                reserve,
                                None,
                            )),
                            by: Some(n),
                            placeholder: Some(n),
                        },
                        None => Shown {
                            message: LayoutMessage::WouldCreate(WouldCreate {
                                node: (),
                                role: Role::Summary.as_str().to_string(),
                                text: span_text(span),
                                tokens: reserve,
                                from: node_id(from),
                                to: node_id(to),
                            }),
                            by: None,
                            placeholder: None,
                        },
                    }
                }
            });
        }
        Ok(shown)
    }

    /// For every message of the path, in order: what shows it and why, worded from the reason the
    /// planner recorded when it decided.
    fn explain(&self, shown: &[Shown]) -> Result<Vec<Explained>> {
        let reserve = spec().constants.reserve_tokens;
        let path = self.path;
        let max = self.max;
        let mut entries = Vec::with_capacity(path.len());
        for (k, segment) in self.segments.iter().enumerate() {
            let (outcome, range) = match *segment {
                Segment::Keep(i) => ("kept", (i, i)),
                Segment::Summary(c) => {
                    let cand = self.candidates[c].1;
                    ("summary", (cand.start, cand.end))
                }
                Segment::Gap { start, end } => ("placeholder", (start, end)),
            };
            let (first, last) = range;
            let range_text = format!("{}..{}", node_id(path[first].id), node_id(path[last].id));
            for i in first..=last {
                let row = &path[i];
                let (why, reason) = match (*segment, self.reasons[i]) {
                    (Segment::Keep(_), Reason::Mandatory) if row.id == self.target => (
                        "target",
                        "the target of the budget: always kept verbatim".to_string(),
                    ),
                    (Segment::Keep(_), Reason::Mandatory) => (
                        "pinned",
                        "pinned: pinned messages are always kept verbatim".to_string(),
                    ),
                    (Segment::Keep(_), Reason::Cheapest) => (
                        "cheapest",
                        "kept by the cheapest layout: leaving it out would cost at least as much"
                            .to_string(),
                    ),
                    (Segment::Keep(_), Reason::Newest { total }) => (
                        "newest_first",
                        format!(
                            "kept: messages are added newest first while they fit; with it the total came to {total}, within the budget of {max}"
                        ),
                    ),
                    (Segment::Keep(_), Reason::Run { first, last, total }) => {
                        let run =
                            format!("{}..{}", node_id(path[first].id), node_id(path[last].id));
                        let newest = node_id(path[last].id);
                        (
                            "with_run",
                            if i == last {
                                format!(
                                    "kept together with the older messages of its gap ({run}): alone it did not fit, together they brought the total to {total}, within the budget of {max}"
                                )
                            } else {
                                format!(
                                    "kept together with {newest}, the newest message of its gap ({run}): {newest} alone did not fit, together they brought the total to {total}, within the budget of {max}"
                                )
                            },
                        )
                    }
                    (
                        Segment::Summary(c),
                        Reason::SummaryCheapest | Reason::SummaryFirst { .. },
                    ) => {
                        let summary = format!(
                            "covered by summary {} ({range_text}, {} tokens)",
                            node_id(self.candidates[c].0),
                            self.candidates[c].1.tokens
                        );
                        let usable = "usable because it is the latest version, not stale, and its range lies on the path and holds neither the target nor a pin";
                        match self.reasons[i] {
                            Reason::SummaryFirst { total } => (
                                "summary_first",
                                format!(
                                    "{summary}: summaries come before older messages and it fit, bringing the total to {total}, within the budget of {max}; {usable}"
                                ),
                            ),
                            _ => (
                                "summary_cheapest",
                                format!("{summary}, which the cheapest layout uses; {usable}"),
                            ),
                        }
                    }
                    (Segment::Gap { .. }, Reason::DidNotFit { total }) => (
                        "did_not_fit",
                        format!(
                            "covered by {}: keeping it would have brought the total to {total}, over the budget of {max}",
                            placeholder_name(shown[k].by, &range_text)
                        ),
                    ),
                    (Segment::Gap { .. }, Reason::GapCheapest) => (
                        "placeholder_cheapest",
                        format!(
                            "left out by the cheapest layout: covered by {}, which costs {reserve} tokens",
                            placeholder_name(shown[k].by, &range_text)
                        ),
                    ),
                    (segment, reason) => {
                        return Err(Error::internal(format!(
                            "internal error: the planner gave {} the reason {reason:?} in {segment:?}",
                            node_id(row.id)
                        )));
                    }
                };
                entries.push(Explained {
                    node: node_id(row.id),
                    tokens: row.node.tokens,
                    outcome: outcome.to_string(),
                    shown_at: k,
                    why: why.to_string(),
                    reason,
                });
            }
        }
        Ok(entries)
    }
}

/// A placeholder as an explanation names it: by ID, or by its range when it was not created.
fn placeholder_name(by: Option<u64>, range: &str) -> String {
    match by {
        Some(n) => format!("placeholder {} ({range})", node_id(n)),
        None => format!("a placeholder for {range} (not created)"),
    }
}

/// The text of a new placeholder for `span`.
fn span_text(span: Span) -> String {
    let count = usize::try_from(span.count).unwrap_or(usize::MAX);
    placeholder_text(count, span.from, span.to, span.omitted)
}

/// Store placeholder `n` for `span` and count its coverage.
fn create_placeholder(
    tx: &mut dyn Tx,
    tl: u64,
    (n, now): (u64, u64),
    span: Span,
    text: &str,
) -> Result<u64> {
    let (from, to) = (span.from, span.to);
    let summary = Summary {
        kind: SummaryKind::Placeholder,
        from,
        to,
        derived_from: Vec::new(),
        supersedes: None,
        version: 1,
    };
    let node = Node {
        parent: span.parent,
        role: Role::Summary,
        text: text.to_string(),
        tokens: spec().constants.reserve_tokens,
        created_at: Some(now),
        intent: None,
        provenance: None,
        summary: Some(summary),
        cold: false,
    };
    let row = super::walk::new_row(tx, tl, n, node)?;
    tx.insert_node(tl, &row)?;
    cover_range(tx, tl, from, to)?;
    Ok(n)
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
