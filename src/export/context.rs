//! Export of one context (`--format openai|anthropic|markdown --node N [--max M]`): the messages of
//! root→N, or with `--max` the layout a budget of M tokens gives, computed by the same planner on
//! the same input as `budget` but without writing anything. A placeholder such a layout needs is
//! taken as stored when the budget already created it for exactly that range, else rendered with
//! the text `budget` would give it and marked as not stored.

use crate::budget::{self, Segment};
use crate::error::{Error, Result};
use crate::interchange::{self, Entry, EntryKind};
use crate::model::{SummaryKind, node_id, timeline_id};
use crate::ops::results::Exported;
use crate::ops::{self, ExportArgs};
use crate::spec::spec;
use crate::store::{NodeRow, Tx};
use serde_json::Value;

/// The formats that export a context rather than a whole timeline.
pub fn is_context_format(format: &str) -> bool {
    matches!(format, "openai" | "anthropic" | "markdown")
}

/// A context read from the database, ready to render.
pub struct Context {
    /// The timeline number.
    pub timeline: u64,
    /// The node the context ends at.
    pub target: u64,
    /// The context's entries, oldest first.
    pub entries: Vec<Entry>,
}

fn entry_of(row: &NodeRow) -> Entry {
    let node = &row.node;
    let kind = match &node.summary {
        Some(s) if s.kind == SummaryKind::Placeholder => EntryKind::Placeholder {
            from: s.from,
            to: s.to,
        },
        Some(s) => EntryKind::Summary {
            from: s.from,
            to: s.to,
        },
        None => EntryKind::Message,
    };
    Entry {
        node: Some(row.id),
        role: node.role,
        text: node.text.clone(),
        tokens: node.tokens,
        intent: node.intent.clone(),
        provenance: node.provenance.clone(),
        kind,
    }
}

/// Read the context the export asks for (inside the store's read transaction).
pub fn gather(tx: &mut dyn Tx, args: &ExportArgs) -> Result<Context> {
    let timeline = ops::timeline_of(tx, args.timeline_id)?;
    let tl = timeline.id;
    let Some(target) = args.node else {
        return Err(Error::invalid(format!(
            "invalid argument --node: --format {} exports the context of a message; pass --node with its ID (for example --node n4)",
            args.format
        )));
    };
    let row = ops::message(tx, &timeline, target)?;
    let Some(max) = args.max_tokens else {
        ops::output_cap(usize::try_from(row.depth).unwrap_or(usize::MAX))?;
        let entries = ops::path_rows(tx, tl, target)?
            .iter()
            .map(entry_of)
            .collect();
        return Ok(Context {
            timeline: tl,
            target,
            entries,
        });
    };
    let reserve = spec().constants.reserve_tokens;
    let (path, items, candidates) = ops::planner_input(tx, tl, target)?;
    let plain: Vec<budget::Candidate> = candidates.iter().map(|(_, c)| *c).collect();
    let plan = budget::plan(&items, &plain, reserve, max)
        .map_err(|e| ops::infeasible(e.required_tokens, max))?;
    ops::output_cap(plan.segments.len())?;
    let mut entries = Vec::with_capacity(plan.segments.len());
    for segment in &plan.segments {
        match *segment {
            Segment::Keep(i) => entries.push(entry_of(&path[i])),
            Segment::Summary(c) => {
                let row = ops::existing(tx, tl, candidates[c].0)?;
                entries.push(entry_of(&row));
            }
            Segment::Gap { start, end } => {
                let (from, to) = (path[start].id, path[end].id);
                let (node, text) = match ops::existing_placeholder(tx, tl, from, to)? {
                    Some((n, text)) => (Some(n), text),
                    None => {
                        let omitted = path[end].prefix_tokens
                            - (path[start].prefix_tokens - path[start].node.tokens);
                        (
                            None,
                            ops::placeholder_text(end - start + 1, from, to, omitted),
                        )
                    }
                };
                entries.push(Entry {
                    node,
                    role: crate::model::Role::Summary,
                    text,
                    tokens: reserve,
                    intent: None,
                    provenance: None,
                    kind: EntryKind::Placeholder { from, to },
                });
            }
        }
    }
    Ok(Context {
        timeline: tl,
        target,
        entries,
    })
}

/// The exported document and how many messages it holds.
pub fn render(context: &Context, args: &ExportArgs) -> (String, usize) {
    match args.format.as_str() {
        "openai" => {
            let messages = interchange::openai::render(&context.entries);
            let count = messages.len();
            (pretty(&Value::Array(messages)), count)
        }
        "anthropic" => {
            let body = interchange::anthropic::render(&context.entries);
            let count = body["messages"].as_array().map_or(0, Vec::len);
            (pretty(&body), count)
        }
        _ => {
            let text = interchange::markdown::render(
                &timeline_id(context.timeline),
                context.target,
                args.max_tokens,
                &context.entries,
            );
            (text, interchange::joined(&context.entries).len())
        }
    }
}

/// Indented JSON with a final newline, characters that act on terminals escaped as `\uXXXX` (the
/// same value: serde_json writes C0 controls inside strings escaped already, so a raw newline is
/// layout and every other such character is inside a string).
fn pretty(value: &Value) -> String {
    let text = serde_json::to_string_pretty(value).unwrap_or_default();
    let mut out = String::with_capacity(text.len() + 1);
    for c in text.chars() {
        if c != '\n' && crate::terminal::needs_escape(c) {
            out.push_str(&format!("\\u{:04x}", c as u32));
        } else {
            out.push(c);
        }
    }
    out.push('\n');
    out
}

/// The JSON result of an export written to `output`.
pub fn result(context: &Context, args: &ExportArgs, output: &str, messages: usize) -> Exported {
    Exported {
        format: args.format.clone(),
        timeline_id: timeline_id(context.timeline),
        output: output.to_string(),
        nodes: context.entries.len() as u64,
        edges: None,
        node: Some(node_id(context.target)),
        messages: Some(messages as u64),
    }
}
