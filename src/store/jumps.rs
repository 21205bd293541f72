//! The path columns every stored node gets at insert (schema 8 on SQLite, 3 on PostgreSQL; issue
//! 24), so that a budget at the head of a long path reads O(log n) rows above its window instead
//! of walking the path:
//!
//! - `jump`: a skew-binary jump pointer (Myers 1983). Following `jump` while its depth is at least
//!   the one sought, and `parent` otherwise, reaches the ancestor at any depth in O(log depth)
//!   steps; each step goes to an older node, so a walk ends even on a damaged file.
//! - `path_min_tokens`: the smallest `tokens` of the messages root→node (root excluded), which
//!   says in one row whether any message above a window is small enough to change its layout.
//!
//! Both are fixed at insert (a node's parent never changes), like `prefix_tokens` and `depth`. New
//! rows of the SQL engines get them from `Batch` (SQLite's appends, both engines' batches) or from
//! an INSERT that reads the parent's row itself (PostgreSQL's single append, SQLite's bulk loads);
//! this module also derives them from a timeline's nodes for the migrations that fill existing
//! rows and for `db check`, which compares.

use crate::model::ROOT;

/// The jump pointer of a child of `parent`, from the parent's depth, its jump, and that jump's
/// depth and jump's depth.
pub fn jump_of_child(parent: u64, parent_depth: u64, jp: (u64, u64), jjp_depth: u64) -> u64 {
    let (jp_jump, jp_depth) = jp;
    if parent_depth.wrapping_sub(jp_depth) == jp_depth.wrapping_sub(jjp_depth) {
        jp_jump
    } else {
        parent
    }
}

/// What the path columns of a child need of a stored node: (depth, jump, path_min_tokens).
pub type PathRow = (u64, u64, u64);

/// The path columns of a batch of new nodes numbered from `first` (`Tx::insert_nodes`), each
/// computed as the engines' single INSERT computes it in SQL from its parent's row (a row that is
/// not there counts 0), but from the rows of the batch itself where the parent is one of them, so
/// that what the batch just wrote is not read back. Each stored node is read once per batch: many
/// rows jump to the same few (the root, the batch's first parent and its jump targets), and on a
/// server engine each read is a round trip.
pub struct Batch {
    first: u64,
    rows: Vec<PathRow>,
    stored: std::collections::HashMap<u64, Option<PathRow>>,
}

impl Batch {
    pub fn new(first: u64, len: usize) -> Batch {
        Batch {
            first,
            rows: Vec::with_capacity(len),
            stored: std::collections::HashMap::new(),
        }
    }

    /// (jump, path_min_tokens) of the batch's next node, `id` at `depth` below `parent`;
    /// `stored` reads a node older than the batch (`None` when there is none).
    pub fn next<E>(
        &mut self,
        (id, parent, depth, tokens): (u64, u64, u64, u64),
        stored: &mut dyn FnMut(u64) -> Result<Option<PathRow>, E>,
    ) -> Result<(u64, u64), E> {
        let mut row = |n: u64| match n.checked_sub(self.first) {
            Some(k) if (k as usize) < self.rows.len() => Ok(Some(self.rows[k as usize])),
            _ => match self.stored.get(&n) {
                Some(known) => Ok(*known),
                None => {
                    let found = stored(n)?;
                    self.stored.insert(n, found);
                    Ok(found)
                }
            },
        };
        let cols = if id == ROOT {
            (ROOT, 0)
        } else {
            match row(parent)? {
                None => (ROOT, 0),
                Some((p_depth, p_jump, p_min)) => {
                    let jump = match row(p_jump)? {
                        Some((jp_depth, jp_jump, _)) => match row(jp_jump)? {
                            Some((jjp_depth, _, _)) => {
                                jump_of_child(parent, p_depth, (jp_jump, jp_depth), jjp_depth)
                            }
                            None => ROOT,
                        },
                        None => ROOT,
                    };
                    let min = if parent == ROOT {
                        tokens
                    } else {
                        p_min.min(tokens)
                    };
                    (jump, min)
                }
            }
        };
        self.rows.push((depth, cols.0, cols.1));
        Ok(cols)
    }
}

/// (jump, path_min_tokens) of every node of a timeline whose nodes are numbered 0.. in insert
/// order (each parent older than its child), given each node's parent and tokens. The root gets
/// (0, 0). A parent that is not older (a damaged file) is treated as the root.
pub fn derive(nodes: &[(u64, u64)]) -> Vec<(u64, u64)> {
    let mut depth: Vec<u64> = Vec::with_capacity(nodes.len());
    let mut out: Vec<(u64, u64)> = Vec::with_capacity(nodes.len());
    for (i, &(parent, tokens)) in nodes.iter().enumerate() {
        if i == ROOT as usize || parent as usize >= i {
            depth.push(0);
            out.push((ROOT, 0));
            continue;
        }
        let p = parent as usize;
        let jp = out[p].0 as usize;
        let jjp = out[jp].0 as usize;
        let jump = jump_of_child(parent, depth[p], (out[jp].0, depth[jp]), depth[jjp]);
        let min = if parent == ROOT {
            tokens
        } else {
            out[p].1.min(tokens)
        };
        depth.push(depth[p] + 1);
        out.push((jump, min));
    }
    out
}

/// The path columns of stored rows `(timeline, id, parent, tokens)`, sorted by timeline and ID, as
/// `(timeline, id, jump, path_min_tokens)`: what a migration writes into a database's existing
/// rows. Nodes are numbered 0.. in insert order; past a gap in a timeline's numbering (a damaged
/// database) its rows are left out, keep their defaults, and `db check` names them.
pub fn derive_rows(rows: &[(i64, i64, i64, i64)]) -> Vec<(i64, i64, i64, i64)> {
    let mut out = Vec::with_capacity(rows.len());
    for timeline in rows.chunk_by(|a, b| a.0 == b.0) {
        let nodes: Vec<(u64, u64)> = timeline
            .iter()
            .enumerate()
            .take_while(|(i, r)| u64::try_from(r.1) == Ok(*i as u64))
            .map(|(_, r)| (r.2.max(0) as u64, r.3.max(0) as u64))
            .collect();
        for (r, (jump, min)) in timeline.iter().zip(derive(&nodes)) {
            let stored = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
            out.push((r.0, r.1, stored(jump), stored(min)));
        }
    }
    out
}

/// What `db check` reports when the stored path columns of `timeline` (id, jump,
/// path_min_tokens of each row, by ID) differ from what its nodes give.
pub fn problems(timeline: &crate::model::Timeline, stored: &[(u64, u64, u64)]) -> Vec<String> {
    let nodes: Vec<(u64, u64)> = timeline
        .nodes
        .iter()
        .map(|n| (n.parent, n.tokens))
        .collect();
    let expected = derive(&nodes);
    let mut problems = Vec::new();
    for &(id, jump, min) in stored {
        if expected.get(id as usize) != Some(&(jump, min)) {
            problems.push(format!(
                "timeline tl{}: the stored path columns of n{id} (jump n{jump}, smallest tokens on its path {min}) differ from what its history gives; rebuild the database with tl db convert",
                timeline.id
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A batch gives what `derive` gives, whether a parent is in the batch or stored before it.
    #[test]
    fn a_batch_computes_what_derive_does() {
        // A tree: a chain with side branches, parents always older.
        let nodes: Vec<(u64, u64)> = (0..300u64)
            .map(|i| {
                (
                    if i % 5 == 0 {
                        i / 3
                    } else {
                        i.saturating_sub(1)
                    },
                    10 + i % 13,
                )
            })
            .collect();
        let expected = derive(&nodes);
        let mut depth = vec![0u64];
        for &(p, _) in &nodes[1..] {
            depth.push(depth[p as usize] + 1);
        }
        for split in [0usize, 1, 2, 150, 299] {
            let stored = |n: u64| -> Result<Option<PathRow>, ()> {
                let i = n as usize;
                Ok((i < split).then(|| (depth[i], expected[i].0, expected[i].1)))
            };
            let mut stored = stored;
            let mut batch = Batch::new(split as u64, nodes.len() - split);
            for (i, &(p, tokens)) in nodes.iter().enumerate().skip(split) {
                let got = batch.next((i as u64, p, depth[i], tokens), &mut stored);
                assert_eq!(got, Ok(expected[i]), "node {i}, batch from {split}");
            }
        }
    }

    /// On a chain, the jumps follow the skew-binary pattern and every ancestor is reached in
    /// O(log depth) steps.
    #[test]
    fn jumps_reach_any_depth_in_logarithmic_steps() {
        let n = 5000usize;
        let nodes: Vec<(u64, u64)> = (0..n as u64)
            .map(|i| (i.saturating_sub(1), 1000 - i % 7))
            .collect();
        let d = derive(&nodes);
        assert_eq!(&d[..5], &[(0, 0), (0, 999), (1, 998), (0, 997), (3, 996)]);
        assert_eq!(d[n - 1].1, 994);
        for target in [1u64, 2, 17, 2500, 4998] {
            let (mut at, mut steps) = (n as u64 - 1, 0);
            while at > target {
                let j = d[at as usize].0;
                at = if j >= target { j } else { at - 1 };
                steps += 1;
            }
            assert_eq!(at, target);
            assert!(steps <= 3 * 13, "{steps} steps to depth {target}");
        }
    }
}
