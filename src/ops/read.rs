//! Read-only operations: context, branches, node. Hot and cold nodes read alike.

use super::{message_json, output_cap, timeline_of};
use crate::error::Result;
use crate::model::{Database, node_id};
use crate::spec::validate::Args;
use serde_json::{Value, json};

pub fn context(db: &mut Database, args: &Args) -> Result<Value> {
    let timeline = db.timeline(timeline_of(db, args)?)?;
    let n = args.id("node").unwrap_or_default();
    timeline.message(n)?;
    let path = timeline.path(n);
    output_cap(path.len())?;
    let messages: Vec<Value> = path
        .iter()
        .map(|&p| {
            let node = &timeline.nodes[p as usize];
            message_json(
                p,
                node.role.as_str(),
                &node.text,
                node.tokens,
                node.intent.as_ref(),
            )
        })
        .collect();
    Ok(Value::Array(messages))
}

pub fn branches(db: &mut Database, args: &Args) -> Result<Value> {
    let timeline = db.timeline(timeline_of(db, args)?)?;
    let list: Vec<Value> = timeline
        .branches
        .iter()
        .map(|b| json!({ "name": b.name, "head": node_id(b.head), "current": b.name == timeline.current_branch }))
        .collect();
    Ok(Value::Array(list))
}

pub fn node(db: &mut Database, args: &Args) -> Result<Value> {
    let timeline = db.timeline(timeline_of(db, args)?)?;
    let n = args.id("node").unwrap_or_default();
    let node = timeline.message(n)?;
    let summary = node.summary.as_ref().map(|s| {
        json!({
            "kind": s.kind.as_str(),
            "from": node_id(s.from),
            "to": node_id(s.to),
            "version": s.version,
            "supersedes": s.supersedes.map(node_id),
            "superseded_by": timeline.derived.superseded_by.get(&n).copied().map(node_id),
            "derived_from": s.derived_from.iter().map(|&d| node_id(d)).collect::<Vec<_>>(),
            "stale": timeline.derived.stale[n as usize],
        })
    });
    Ok(json!({
        "node": node_id(n),
        "timeline_id": timeline.id_str(),
        "role": node.role.as_str(),
        "text": node.text,
        "tokens": node.tokens,
        "parent": node_id(node.parent),
        "children": timeline.derived.children[n as usize].iter().map(|&c| node_id(c)).collect::<Vec<_>>(),
        "zone": if node.cold { "cold" } else { "hot" },
        "pinned": timeline.pins.contains(&n),
        "path_tokens": timeline.derived.prefix_tokens[n as usize],
        "intent": node.intent.as_ref().map(|i| {
            let mut intent = json!({ "tag": i.tag });
            if let Some(note) = &i.note {
                intent["note"] = json!(note);
            }
            intent
        }),
        "summary": summary,
    }))
}
