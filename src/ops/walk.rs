//! Walks over the tree through the storage interface, each costing the nodes it visits: paths,
//! ancestry, coverage of a new summary's range, and watermarks.

use super::{existing, missing};
use crate::error::{Error, Result};
use crate::model::{Branch, Node, ROOT, node_id, timeline_id};
use crate::store::{NodeRow, PathFind, Place, Tx};

/// The rows of root→n, root excluded, oldest first, from one path-window read (`Tx::ancestors`:
/// one query, not one per node). IDs fall strictly along the window, so it holds at most n + 1 rows.
/// A window that is not a sound path (a damaged file) is walked again node by node, which names
/// the damage exactly.
pub fn path_rows(tx: &mut dyn Tx, tl: u64, n: u64) -> Result<Vec<NodeRow>> {
    let mut rows = tx.ancestors(tl, n, n.saturating_add(1))?;
    let sound = rows
        .last()
        .is_some_and(|root| root.id == ROOT && root.node.parent == ROOT && root.depth == 0)
        && rows
            .windows(2)
            .all(|w| w[0].node.parent == w[1].id && w[1].depth.checked_add(1) == Some(w[0].depth));
    if !sound {
        return path_rows_by_node(tx, tl, n);
    }
    rows.pop();
    rows.reverse();
    Ok(rows)
}

/// `path_rows` one node at a time. The walk is bounded by the depth `n` claims: each step must go
/// one level up (and, as the store refuses any other parent, to an older node), so a damaged file
/// makes it fail after at most that many steps instead of circling for ever.
fn path_rows_by_node(tx: &mut dyn Tx, tl: u64, n: u64) -> Result<Vec<NodeRow>> {
    let mut at = existing(tx, tl, n)?;
    // (The depth is the file's claim: it sizes nothing beyond the nodes there are.)
    let mut rows = Vec::with_capacity(at.depth.min(n) as usize);
    while at.id != ROOT {
        let parent = existing(tx, tl, at.node.parent)?;
        check_level(tl, &Place::from(&at), &Place::from(&parent))?;
        rows.push(std::mem::replace(&mut at, parent));
    }
    rows.reverse();
    Ok(rows)
}

/// A node is one level below its parent: what bounds every walk up the tree by the node's depth.
fn check_level(tl: u64, child: &Place, parent: &Place) -> Result<()> {
    if parent.depth.checked_add(1) == Some(child.depth) {
        return Ok(());
    }
    Err(Error::database(format!(
        "the database is damaged: node {} of {} is at depth {} but its parent {} at depth {} (Timeline always writes a node one level below its parent, so something else changed the file); nothing was changed. Restore a backup of the database",
        node_id(child.id),
        timeline_id(tl),
        child.depth,
        node_id(parent.id),
        parent.depth
    )))
}

/// The node IDs of root→n, root excluded, oldest first.
pub fn path(tx: &mut dyn Tx, tl: u64, n: u64) -> Result<Vec<u64>> {
    Ok(path_rows(tx, tl, n)?.into_iter().map(|r| r.id).collect())
}

/// Whether `ancestor` is `n` or lies on root→n. Walks from `n` up to `ancestor`'s depth.
pub fn is_ancestor_or_self(tx: &mut dyn Tx, tl: u64, ancestor: u64, n: u64) -> Result<bool> {
    let target_depth = existing(tx, tl, ancestor)?.depth;
    let mut at = existing(tx, tl, n)?;
    while at.depth > target_depth {
        at = existing(tx, tl, at.node.parent)?;
    }
    Ok(at.id == ancestor)
}

/// The tokens of the path root→new node: those `above` it and its own, refused past the spec's
/// `max_path_tokens` (2^53 - 1). Every stored prefix sum stays under it, so no later sum of prefix
/// sums and token counts (each at most 2^32 - 1) can overflow 64 bits.
pub fn path_tokens(above: u64, tokens: u64) -> Result<u64> {
    above
        .checked_add(tokens)
        .filter(|&sum| sum <= crate::spec::spec().constants.max_path_tokens)
        .ok_or_else(|| Error::path_tokens(above, tokens))
}

/// The row of a new child of `parent`: its place in the tree and token sum follow from the parent.
pub fn new_row(tx: &mut dyn Tx, tl: u64, id: u64, node: Node) -> Result<NodeRow> {
    // What a write touches must be sound: the parent's own place in the tree (its parent older and
    // one level up) is read before anything is written below it.
    let parent = tx
        .parent_of_new(tl, node.parent)?
        .ok_or_else(|| missing(tl, node.parent))?;
    if parent.place.id != ROOT {
        let grandparent = parent
            .grandparent
            .ok_or_else(|| missing(tl, parent.place.parent))?;
        check_level(tl, &parent.place, &grandparent)?;
    }
    let prefix_tokens = path_tokens(parent.prefix_tokens, node.tokens)?;
    Ok(NodeRow {
        id,
        node,
        prefix_tokens,
        depth: parent.place.depth + 1,
        pinned: false,
        stale: false,
        superseded_by: None,
    })
}

/// Record that a new summary or placeholder covers from..to (to's path up to from): `Tx::cover_path`
/// checks the ends (the JSON engine also counts the cover per message; the SQL engines derive
/// coverage from the ranges), whatever the range.
pub fn cover_range(tx: &mut dyn Tx, tl: u64, from: u64, to: u64) -> Result<()> {
    let (top, bottom) = (existing(tx, tl, from)?, existing(tx, tl, to)?);
    let expected = bottom.depth.checked_sub(top.depth).map(|d| d + 1);
    let covered = tx.cover_path(tl, from, to)?;
    if Some(covered) != expected {
        return Err(Error::internal(format!(
            "internal error: covering {}..{} of {} reached {covered} message(s), not the {} between them",
            node_id(from),
            node_id(to),
            timeline_id(tl),
            expected.map_or_else(|| "none".to_string(), |e| e.to_string())
        )));
    }
    Ok(())
}

/// Advance every branch's watermark as far as complete coverage allows; never move it back (W1).
/// Everything above a watermark is covered already, so only the part of each path below its watermark
/// is looked at: the new watermark stops just above the highest node there that is still bare. One
/// `PathFind::OldestBare` per branch finds that node, costing the summaries and pins made below
/// the watermark (src/store/cover.rs), not the path.
pub fn advance_watermarks(tx: &mut dyn Tx, tl: u64) -> Result<()> {
    for branch in tx.branches(tl)? {
        if branch.watermark == branch.head {
            continue;
        }
        let floor = existing(tx, tl, branch.watermark)?.depth;
        let bare = tx.find_on_path(tl, branch.head, PathFind::OldestBare { deeper_than: floor })?;
        let watermark = match bare {
            None => branch.head,
            Some(row) => row.node.parent,
        };
        if watermark != branch.watermark {
            tx.put_branch(
                tl,
                &Branch {
                    watermark,
                    ..branch
                },
            )?;
        }
    }
    Ok(())
}
