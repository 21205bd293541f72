//! Coverage derived from ranges, for the SQL engines: a message is covered when it is pinned, a
//! summary itself, or on the path of some summary's or placeholder's range (`from` ancestor-or-self
//! of it, it ancestor-or-self of `to`; any version, stale, superseded or cold: what the JSON engine's
//! `cover_count` counts). Nothing is written per covered message: a watermark's question is
//! answered from the summaries and pins newer than the watermark (an index range each), each placed
//! on the path by the O(log n) ancestor-at-depth walk, so its cost is O((ranges + pins) · log n),
//! not the path's length.

use super::NodeRow;
use crate::error::Result;
use crate::model::ROOT;
use std::collections::HashMap;

/// A summary or placeholder row with the depths of its range's ends.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Range {
    /// The summary's own node.
    pub id: u64,
    /// The summary's own depth.
    pub depth: u64,
    /// First covered node and its depth.
    pub from: u64,
    pub from_depth: u64,
    /// Last covered node and its depth.
    pub to: u64,
    pub to_depth: u64,
}

/// The reads coverage is derived from; each SQL engine answers them by index.
pub(crate) trait RangeReads {
    /// A node by key.
    fn node_row(&mut self, tl: u64, n: u64) -> Result<Option<NodeRow>>;
    /// The ancestor-or-self of `n` at depth `d` (O(log n) rows).
    fn ancestor_at(&mut self, tl: u64, n: u64, d: u64) -> Result<Option<NodeRow>>;
    /// Every summary and placeholder of `tl` whose node ID is above `id` (with its range's depths).
    fn ranges_newer_than(&mut self, tl: u64, id: u64) -> Result<Vec<Range>>;
    /// (ID, depth) of every pinned message of `tl` whose ID is above `id`.
    fn pins_newer_than(&mut self, tl: u64, id: u64) -> Result<Vec<(u64, u64)>>;
}

/// The IDs along root→head by depth, read on demand and kept (one walk per depth asked).
struct Path {
    tl: u64,
    head: u64,
    depth: u64,
    at: HashMap<u64, Option<u64>>,
}

impl Path {
    fn id_at(&mut self, r: &mut dyn RangeReads, d: u64) -> Result<Option<u64>> {
        if d == self.depth {
            return Ok(Some(self.head));
        }
        if d > self.depth {
            return Ok(None);
        }
        if let Some(&id) = self.at.get(&d) {
            return Ok(id);
        }
        let id = if d == 0 {
            Some(ROOT)
        } else {
            r.ancestor_at(self.tl, self.head, d)?.map(|row| row.id)
        };
        self.at.insert(d, id);
        Ok(id)
    }

    /// Whether node `id` at depth `d` lies on root→head.
    fn holds(&mut self, r: &mut dyn RangeReads, id: u64, d: u64) -> Result<bool> {
        Ok(self.id_at(r, d)? == Some(id))
    }
}

/// The depths of root→head that `range` covers, clipped to `lo..=head's depth`: `None` when none.
/// The range's `from` must be on the path; its part on the path ends where the path and `to`'s path
/// meet (the deepest depth at which both have the same node, found by halving: O(log² n) for a
/// range that leaves the path, one lookup for one that does not).
fn covered_part(
    r: &mut dyn RangeReads,
    path: &mut Path,
    range: &Range,
    lo: u64,
) -> Result<Option<(u64, u64)>> {
    let cap = range.to_depth.min(path.depth);
    if range.from_depth > range.to_depth || cap < lo.max(range.from_depth) {
        return Ok(None);
    }
    if !path.holds(r, range.from, range.from_depth)? {
        return Ok(None);
    }
    let here = path.id_at(r, cap)?;
    let top = if here.is_some() && here == to_at(r, path.tl, range, cap)? {
        cap
    } else {
        // `from_depth` holds (from is on both paths), `cap` does not: halve between them.
        let (mut good, mut bad) = (range.from_depth, cap);
        while bad - good > 1 {
            let mid = good + (bad - good) / 2;
            if path.id_at(r, mid)? == to_at(r, path.tl, range, mid)? {
                good = mid;
            } else {
                bad = mid;
            }
        }
        good
    };
    let start = lo.max(range.from_depth);
    Ok((start <= top).then_some((start, top)))
}

/// The node of `range.to`'s path at depth `d` (at most `to`'s depth).
fn to_at(r: &mut dyn RangeReads, tl: u64, range: &Range, d: u64) -> Result<Option<u64>> {
    if d == range.to_depth {
        return Ok(Some(range.to));
    }
    Ok(r.ancestor_at(tl, range.to, d)?.map(|row| row.id))
}

/// The bare message closest to the root among those of root→head deeper than `floor` (the depth of
/// the watermark, which lies on the path): `PathFind::OldestBare` for the SQL engines.
pub(crate) fn oldest_bare(
    r: &mut dyn RangeReads,
    tl: u64,
    head: u64,
    floor: u64,
) -> Result<Option<NodeRow>> {
    let Some(head_row) = r.node_row(tl, head)? else {
        return Ok(None);
    };
    if head == ROOT || head_row.depth <= floor {
        return Ok(None);
    }
    let mut path = Path {
        tl,
        head,
        depth: head_row.depth,
        at: HashMap::new(),
    };
    // Whatever covers a message below the watermark was made after it, as was every pin there:
    // their IDs are above the watermark's (a message's ID is above its ancestors').
    let newer_than = path.id_at(r, floor)?.unwrap_or(ROOT);
    let lo = floor + 1;
    let mut spans: Vec<(u64, u64)> = Vec::new();
    for (id, depth) in r.pins_newer_than(tl, newer_than)? {
        if depth >= lo && path.holds(r, id, depth)? {
            spans.push((depth, depth));
        }
    }
    for range in r.ranges_newer_than(tl, newer_than)? {
        if range.depth >= lo && path.holds(r, range.id, range.depth)? {
            spans.push((range.depth, range.depth));
        }
        if let Some(span) = covered_part(r, &mut path, &range, lo)? {
            spans.push(span);
        }
    }
    spans.sort_unstable();
    let mut bare = lo;
    for (start, end) in spans {
        if start > bare {
            break;
        }
        bare = bare.max(end.saturating_add(1));
    }
    if bare > path.depth {
        return Ok(None);
    }
    match path.id_at(r, bare)? {
        Some(id) => r.node_row(tl, id),
        None => Ok(None),
    }
}

/// Whether some summary's or placeholder's range holds message `n` (its pin and its being a
/// summary aside): what unpin's W2 check asks. Only summaries newer than `n` can cover it.
pub(crate) fn in_a_range(r: &mut dyn RangeReads, tl: u64, n: &NodeRow) -> Result<bool> {
    let mut path = Path {
        tl,
        head: n.id,
        depth: n.depth,
        at: HashMap::new(),
    };
    for range in r.ranges_newer_than(tl, n.id)? {
        if range.from_depth > n.depth || range.to_depth < n.depth {
            continue;
        }
        let below = if range.to_depth == n.depth {
            range.to == n.id
        } else {
            r.ancestor_at(tl, range.to, n.depth)?.map(|row| row.id) == Some(n.id)
        };
        if below && path.holds(r, range.from, range.from_depth)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether `from` is an ancestor-or-self of `to`; the number of messages of the range when it is.
pub(crate) fn range_len(r: &mut dyn RangeReads, tl: u64, from: u64, to: u64) -> Result<u64> {
    let (Some(top), Some(bottom)) = (r.node_row(tl, from)?, r.node_row(tl, to)?) else {
        return Ok(0);
    };
    if from == ROOT || top.depth > bottom.depth {
        return Ok(0);
    }
    let at = if top.depth == bottom.depth {
        Some(to)
    } else {
        r.ancestor_at(tl, to, top.depth)?.map(|row| row.id)
    };
    Ok(if at == Some(from) {
        bottom.depth - top.depth + 1
    } else {
        0
    })
}
