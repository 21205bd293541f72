//! Growing the tree and moving branch pointers: create, append, fork, switch, drop-branch, pin, unpin.

use super::{intent_of, timeline_of};
use crate::error::{Error, ErrorKind, Result};
use crate::model::{Branch, Database, Node, Role, Timeline, estimate_tokens, node_id};
use crate::spec::spec;
use crate::spec::validate::Args;
use serde_json::{Value, json};

pub fn create(db: &mut Database) -> Result<Value> {
    let id = db.next_timeline;
    db.next_timeline = id.checked_add(1).ok_or_else(Error::overflow)?;
    db.timelines
        .push(Timeline::new(id, &spec().constants.first_branch));
    Ok(json!({ "timeline_id": crate::model::timeline_id(id) }))
}

pub fn append(db: &mut Database, args: &Args) -> Result<Value> {
    let tl = timeline_of(db, args)?;
    let timeline = db.timeline_mut(tl)?;
    let text = args.str("text").unwrap_or_default().to_string();
    let tokens = args.u64("tokens").unwrap_or_else(|| estimate_tokens(&text));
    let role = Role::parse(args.str("role").unwrap_or_default())
        .ok_or_else(|| Error::invalid("invalid role"))?;
    let parent = timeline.current().head;
    let node = Node {
        parent,
        role,
        text,
        tokens,
        intent: intent_of(args),
        summary: None,
        cold: false,
    };
    let n = timeline.push_node(node)?;
    let current = timeline.current_branch.clone();
    let index = timeline.branch_index(&current)?;
    timeline.branches[index].head = n;
    Ok(json!({ "node": node_id(n) }))
}

pub fn fork(db: &mut Database, args: &Args) -> Result<Value> {
    let tl = timeline_of(db, args)?;
    let timeline = db.timeline_mut(tl)?;
    let n = args.id("node").unwrap_or_default();
    let name = args.str("name").unwrap_or_default().to_string();
    // The root is a valid fork point: a branch that starts a fresh conversation in the same timeline.
    if n != crate::model::ROOT {
        let node = timeline.message(n)?;
        if node.cold {
            return Err(Error::new(
                ErrorKind::Archived,
                format!(
                    "cannot fork from {}: it is archived (cold); fork from a hot node instead, such as a summary that covers it",
                    node_id(n)
                ),
            ));
        }
    }
    if timeline.branches.iter().any(|b| b.name == name) {
        return Err(Error::conflict(format!(
            "branch {name:?} already exists; choose another name or drop it first"
        )));
    }
    timeline.branches.push(Branch {
        name: name.clone(),
        head: n,
        watermark: crate::model::ROOT,
    });
    Ok(json!({ "branch": name, "head": node_id(n) }))
}

pub fn switch(db: &mut Database, args: &Args) -> Result<Value> {
    let tl = timeline_of(db, args)?;
    let timeline = db.timeline_mut(tl)?;
    let name = args.str("name").unwrap_or_default();
    timeline.branch(name)?;
    timeline.current_branch = name.to_string();
    Ok(json!({ "current_branch": name }))
}

pub fn drop_branch(db: &mut Database, args: &Args) -> Result<Value> {
    let tl = timeline_of(db, args)?;
    let timeline = db.timeline_mut(tl)?;
    let name = args.str("name").unwrap_or_default();
    let index = timeline.branch_index(name)?;
    if timeline.current_branch == name {
        return Err(Error::conflict(format!(
            "cannot drop {name:?}: it is the current branch; switch to another branch first"
        )));
    }
    timeline.branches.remove(index);
    Ok(json!({ "dropped": name }))
}

pub fn pin(db: &mut Database, args: &Args) -> Result<Value> {
    let tl = timeline_of(db, args)?;
    let timeline = db.timeline_mut(tl)?;
    let n = args.id("node").unwrap_or_default();
    if timeline.message(n)?.cold {
        return Err(Error::new(
            ErrorKind::Archived,
            format!(
                "cannot pin {}: it is archived (cold); pins are for messages still in use",
                node_id(n)
            ),
        ));
    }
    timeline.pins.insert(n);
    Ok(json!({ "pinned": node_id(n) }))
}

pub fn unpin(db: &mut Database, args: &Args) -> Result<Value> {
    let tl = timeline_of(db, args)?;
    let timeline = db.timeline_mut(tl)?;
    let n = args.id("node").unwrap_or_default();
    timeline.message(n)?;
    if timeline.pins.contains(&n) {
        let bare = timeline.nodes[n as usize].summary.is_none()
            && timeline.derived.cover_count[n as usize] == 0;
        if bare {
            for branch in &timeline.branches {
                if branch.watermark != crate::model::ROOT
                    && timeline.is_ancestor_or_self(n, branch.watermark)
                {
                    return Err(Error::conflict(format!(
                        "cannot unpin {}: it lies inside the watermark of branch {:?} and no summary covers it; summarise it first (tl summarize --from {} --to {} ...)",
                        node_id(n),
                        branch.name,
                        node_id(n),
                        node_id(n)
                    )));
                }
            }
        }
        timeline.pins.remove(&n);
    }
    Ok(json!({ "unpinned": node_id(n) }))
}
