//! Growing the tree and moving branch pointers: create, append, fork, switch, drop-branch,
//! rename-branch, pin, unpin.

use super::results::{Appended, Created, Dropped, Forked, Pinned, Renamed, Switched, Unpinned};
use super::walk::{is_ancestor_or_self, new_row};
use super::{
    AppendArgs, CreateArgs, Ctx, DropBranchArgs, ForkArgs, PinArgs, RenameBranchArgs, SwitchArgs,
    UnpinArgs, branch_named, message, timeline_of,
};
use crate::error::{Error, ErrorKind, Message, Result, Step};
use crate::model::{Branch, Node, ROOT, Role, estimate_tokens, node_id};
use crate::spec::spec;
use crate::store::{NodeChange, Tx};
use serde_json::json;

pub fn create(tx: &mut dyn Tx, args: &CreateArgs, ctx: &Ctx) -> Result<Created> {
    let id = tx.next_timeline()?;
    if id == u64::MAX {
        return Err(Error::new(
            ErrorKind::LimitExceeded,
            format!(
                "this database has used every timeline ID (the next one would be tl{id}, the largest there is); nothing was created. Keep new timelines in a new database (--db)"
            ),
        ));
    }
    tx.create_timeline(
        id,
        &spec().constants.first_branch,
        args.title.as_deref(),
        ctx.now,
    )?;
    Ok(Created {
        timeline_id: crate::model::timeline_id(id),
    })
}

pub fn append(tx: &mut dyn Tx, args: &AppendArgs, ctx: &Ctx) -> Result<Appended> {
    let timeline = timeline_of(tx, args.timeline_id)?;
    let tokens = args.tokens.unwrap_or_else(|| estimate_tokens(&args.text));
    let role = Role::parse(&args.role).ok_or_else(|| Error::invalid("invalid role"))?;
    let name = args.branch.as_deref().unwrap_or(&timeline.current_branch);
    let mut branch = branch_named(tx, &timeline, name)?;
    // Compare-and-set: another writer may have moved the head since the caller looked.
    if let Some(expected) = args.expect_head
        && expected != branch.head
    {
        return Err(Error::conflict(format!(
            "the head of branch {:?} is {}, not {} as expected: another change moved it; nothing was written. Read the branch again and decide whether to append after {}",
            branch.name,
            node_id(branch.head),
            node_id(expected),
            node_id(branch.head)
        ))
        .with_data(json!({ "branch": branch.name, "head": node_id(branch.head) })));
    }
    let n = timeline.next_node;
    let node = Node {
        parent: branch.head,
        role,
        text: args.text.clone(),
        tokens,
        created_at: Some(ctx.now),
        intent: args.intent.clone(),
        provenance: None,
        summary: None,
        cold: false,
    };
    let row = new_row(tx, timeline.id, n, node)?;
    tx.insert_node(timeline.id, &row)?;
    branch.head = n;
    tx.put_branch(timeline.id, &branch)?;
    tx.touch_timeline(timeline.id, ctx.now)?;
    Ok(Appended { node: node_id(n) })
}

pub fn fork(tx: &mut dyn Tx, args: &ForkArgs, ctx: &Ctx) -> Result<Forked> {
    let timeline = timeline_of(tx, args.timeline_id)?;
    let n = args.node;
    // The root is a valid fork point: a branch that starts a fresh conversation in the same timeline.
    if n != ROOT && message(tx, &timeline, n)?.node.cold {
        return Err(Error::new(
            ErrorKind::Archived,
            format!(
                "cannot fork from {}: it is archived (cold); fork from a hot node instead, such as a summary that covers it",
                node_id(n)
            ),
        ));
    }
    if tx.branch(timeline.id, &args.name)?.is_some() {
        return Err(Error::conflict(format!(
            "branch {:?} already exists; choose another name or drop it first",
            args.name
        )));
    }
    tx.put_branch(
        timeline.id,
        &Branch {
            name: args.name.clone(),
            head: n,
            watermark: ROOT,
        },
    )?;
    tx.touch_timeline(timeline.id, ctx.now)?;
    Ok(Forked {
        branch: args.name.clone(),
        head: node_id(n),
    })
}

pub fn switch(tx: &mut dyn Tx, args: &SwitchArgs, ctx: &Ctx) -> Result<Switched> {
    let timeline = timeline_of(tx, args.timeline_id)?;
    branch_named(tx, &timeline, &args.name)?;
    // Switching to the current branch changes nothing, so nothing is written.
    if timeline.current_branch != args.name {
        tx.set_current_branch(timeline.id, &args.name)?;
        tx.touch_timeline(timeline.id, ctx.now)?;
    }
    Ok(Switched {
        current_branch: args.name.clone(),
    })
}

/// Rename a branch in place: its head, watermark and place in the list stay, and the current-branch
/// marker follows it. The new name obeys the rules of fork (checked by the spec) and must be free.
pub fn rename_branch(tx: &mut dyn Tx, args: &RenameBranchArgs, ctx: &Ctx) -> Result<Renamed> {
    let timeline = timeline_of(tx, args.timeline_id)?;
    let (old, new) = (&args.name, &args.new_name);
    branch_named(tx, &timeline, old)?;
    if old != new {
        if tx.branch(timeline.id, new)?.is_some() {
            return Err(Error::conflict(format!(
                "branch {new:?} already exists; choose another name or drop it first"
            )));
        }
        tx.rename_branch(timeline.id, old, new)?;
        if &timeline.current_branch == old {
            tx.set_current_branch(timeline.id, new)?;
        }
        tx.touch_timeline(timeline.id, ctx.now)?;
    }
    Ok(Renamed {
        renamed: old.to_string(),
        to: new.to_string(),
    })
}

pub fn drop_branch(tx: &mut dyn Tx, args: &DropBranchArgs, ctx: &Ctx) -> Result<Dropped> {
    let timeline = timeline_of(tx, args.timeline_id)?;
    let name = &args.name;
    branch_named(tx, &timeline, name)?;
    if &timeline.current_branch == name {
        return Err(Error::conflict(format!(
            "cannot drop {name:?}: it is the current branch; switch to another branch first"
        )));
    }
    tx.remove_branch(timeline.id, name)?;
    tx.touch_timeline(timeline.id, ctx.now)?;
    Ok(Dropped {
        dropped: name.to_string(),
    })
}

pub fn pin(tx: &mut dyn Tx, args: &PinArgs, ctx: &Ctx) -> Result<Pinned> {
    let timeline = timeline_of(tx, args.timeline_id)?;
    let n = args.node;
    let row = message(tx, &timeline, n)?;
    if row.node.cold {
        return Err(Error::new(
            ErrorKind::Archived,
            format!(
                "cannot pin {}: it is archived (cold); pins are for messages still in use",
                node_id(n)
            ),
        ));
    }
    if !row.pinned {
        tx.change_node(timeline.id, n, NodeChange::Pin(true))?;
        tx.touch_timeline(timeline.id, ctx.now)?;
    }
    Ok(Pinned { pinned: node_id(n) })
}

pub fn unpin(tx: &mut dyn Tx, args: &UnpinArgs, ctx: &Ctx) -> Result<Unpinned> {
    let timeline = timeline_of(tx, args.timeline_id)?;
    let n = args.node;
    let row = message(tx, &timeline, n)?;
    if row.pinned {
        let bare = row.node.summary.is_none() && !tx.in_a_range(timeline.id, &row)?;
        if bare {
            for branch in tx.branches(timeline.id)? {
                if branch.watermark != ROOT
                    && is_ancestor_or_self(tx, timeline.id, n, branch.watermark)?
                {
                    return Err(Error::conflict(
                        Message::from(format!(
                            "cannot unpin {}: it lies inside the watermark of branch {:?} and no summary covers it; summarise it first with ",
                            node_id(n),
                            branch.name
                        ))
                        .step(
                            Step::new("summarize")
                                .timeline(crate::model::timeline_id(timeline.id))
                                .arg("from", node_id(n))
                                .arg("to", node_id(n))
                                .needs("summary"),
                        ),
                    ));
                }
            }
        }
        tx.change_node(timeline.id, n, NodeChange::Pin(false))?;
        tx.touch_timeline(timeline.id, ctx.now)?;
    }
    Ok(Unpinned {
        unpinned: node_id(n),
    })
}
