//! `Tx` over one PostgreSQL transaction. The path windows are one recursive statement each (one
//! round trip, whatever the window's length), as in SQLite. A write transaction locks the row of
//! every timeline it reads (`FOR UPDATE`), and the state row when it allocates a timeline ID, so
//! changes to one timeline are serialised and changes to different timelines are not.

use super::rows::{
    NODE_COLUMNS, TIMELINE_COLUMNS, from_pg_text, get, read_node, read_timeline, sql, to_pg_text,
    unsql,
};
use super::{failure, newer_parent};
use crate::error::{Error, Result};
use crate::model::file::{AuditEntry, IdempotencyEntry, ImportRecord};
use crate::model::{ArchivedBranch, Branch, Database, Node, ROOT, Timeline};
use crate::search::Query;
use crate::store::{
    Counts, Engine, NodeChange, NodeRow, PathFind, SearchHit, SearchScope, TimelineRow, Tx, cover,
};
use std::cell::Cell;
use std::collections::HashMap;

/// `Tx` over one PostgreSQL transaction.
pub(super) struct PgTx<'a, 'c> {
    pub(super) tx: &'a mut postgres::Transaction<'c>,
    pub(super) cache: &'a mut HashMap<String, postgres::Statement>,
    /// The database's redacted URI, for errors.
    pub(super) name: &'a str,
    /// Whether this is a write transaction (which takes row locks).
    pub(super) writing: bool,
    /// Set when a statement failed with a serialization failure or deadlock: the caller may run
    /// the whole transaction again.
    pub(super) retryable: &'a Cell<bool>,
    /// Counts every statement sent (`PgTx::round_trip`).
    pub(super) sent: &'a super::Sent,
    /// The timelines whose rows this transaction has locked.
    pub(super) locked: Vec<u64>,
    /// Counters of timeline rows this transaction has added to but not yet written (`flush`):
    /// PostgreSQL keeps every version of a row a transaction updates, and an update finds the row
    /// through them all, so one update per message of a long import or conversion would make the
    /// transaction quadratic. Written once per timeline instead.
    pub(super) pending: std::collections::BTreeMap<u64, Pending>,
}

/// What a transaction added to one timeline's counters.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Pending {
    pub(super) nodes: i64,
    pub(super) cold: i64,
    pub(super) search_docs: i64,
    pub(super) search_terms: i64,
}

impl PgTx<'_, '_> {
    pub(super) fn fail(&self, e: postgres::Error) -> Error {
        if let Some(code) = e.code()
            && matches!(code.code(), "40001" | "40P01")
        {
            self.retryable.set(true);
        }
        failure(self.name, "cannot use", e)
    }

    fn bad_row(&self, tl: u64, why: String) -> Error {
        Error::damaged(format!(
            "the database {} is damaged: timeline tl{tl}: {why}",
            self.name
        ))
    }

    fn node_rows(
        &mut self,
        tl: u64,
        text: &str,
        params: super::rows::Params,
    ) -> Result<Vec<NodeRow>> {
        let rows = self.query(text, params)?;
        rows.iter()
            .map(|r| read_node(r).map_err(|why| self.bad_row(tl, why)))
            .collect()
    }

    /// In a write transaction, lock timeline `tl`'s row until the transaction ends (once).
    fn lock_timeline(&mut self, tl: u64) -> Result<()> {
        if self.writing && !self.locked.contains(&tl) {
            self.query(
                "SELECT 1 FROM timelines WHERE id = $1 FOR UPDATE",
                &[&sql(tl)],
            )?;
            // A parent cycle anywhere in the timeline, even far above what this change reads, is
            // refused before anything is written (one lookup in a partial index, mostly empty).
            let damaged = self.query_opt(
                "SELECT id, parent FROM nodes WHERE timeline = $1 AND parent >= id AND id != 0 ORDER BY id LIMIT 1",
                &[&sql(tl)],
            )?;
            if let Some(row) = damaged {
                let (n, parent): (i64, i64) = (
                    get(&row, 0).map_err(|e| self.fail(e))?,
                    get(&row, 1).map_err(|e| self.fail(e))?,
                );
                return Err(newer_parent(self.name, tl, unsql(n), unsql(parent)));
            }
            self.locked.push(tl);
        }
        Ok(())
    }
}

/// One step of a walk to depth `{d}` (a parameter or column): the jump pointer when it stays at
/// or below that depth, the parent otherwise; always to an older node.
const JUMP_STEP: &str = "CASE WHEN n.jump < n.id AND j.depth >= {d} THEN n.jump ELSE n.parent END \
     FROM up JOIN nodes n ON n.timeline = $1 AND n.id = up.at \
     JOIN nodes j ON j.timeline = $1 AND j.id = n.jump \
     WHERE n.depth > {d} AND n.parent < n.id";

impl PgTx<'_, '_> {
    /// The ancestor-or-self of `n` at depth `d`, in O(log n) rows (`None` when there is none).
    fn at_depth(&mut self, tl: u64, n: u64, d: u64) -> Result<Option<NodeRow>> {
        let step = JUMP_STEP.replace("{d}", "$3");
        let text = format!(
            "WITH RECURSIVE up(at) AS (SELECT $2::bigint UNION ALL SELECT {step}) \
             SELECT {NODE_COLUMNS} FROM nodes WHERE nodes.timeline = $1 AND nodes.depth = $3 \
               AND nodes.id = (SELECT min(at) FROM up)"
        );
        let d = i64::try_from(d).unwrap_or(i64::MAX);
        Ok(self.node_rows(tl, &text, &[&sql(tl), &sql(n), &d])?.pop())
    }

    /// (id, jump, path_min_tokens) of every node of timeline `tl`, by ID (`db check`).
    pub(super) fn path_columns(&mut self, tl: u64) -> Result<Vec<(u64, u64, u64)>> {
        let rows = self.query(
            "SELECT id, jump, path_min_tokens FROM nodes WHERE timeline = $1 ORDER BY id",
            &[&sql(tl)],
        )?;
        rows.iter()
            .map(|r| {
                Ok((
                    unsql(r.try_get::<_, i64>(0)?),
                    unsql(r.try_get::<_, i64>(1)?),
                    unsql(r.try_get::<_, i64>(2)?),
                ))
            })
            .collect::<std::result::Result<_, postgres::Error>>()
            .map_err(|e| self.fail(e))
    }

    /// The smallest tokens of a message on root→n (stored with `n`).
    fn path_min_tokens(&mut self, tl: u64, n: u64) -> Result<u64> {
        let ids = self.ids(
            "SELECT path_min_tokens FROM nodes WHERE timeline = $1 AND id = $2",
            &[&sql(tl), &sql(n)],
        )?;
        Ok(ids.first().copied().unwrap_or(0))
    }

    /// A pinned message or the start of a real summary on root→n (`n` at `depth`): every such
    /// node of the timeline no deeper than `n` is a candidate, and each is on the path when the
    /// jump walk from `n` to its depth lands on it. One query; its cost is the candidates times
    /// O(log n), not the path.
    fn pin_or_real_start_on_path(
        &mut self,
        tl: u64,
        n: u64,
        depth: u64,
    ) -> Result<Option<NodeRow>> {
        let step = JUMP_STEP.replace("{d}", "up.d");
        let text = format!(
            "WITH RECURSIVE cand(c, d) AS ( \
               SELECT id, depth FROM nodes WHERE timeline = $1 AND pinned AND id <= $2 AND depth <= $3 \
               UNION SELECT f.id, f.depth FROM nodes s JOIN nodes f ON f.timeline = $1 AND f.id = s.summary_from \
                 WHERE s.timeline = $1 AND s.summary_kind = 'real' AND s.summary_from <= $2 AND f.depth <= $3), \
             up(c, d, at) AS (SELECT c, d, $2::bigint FROM cand \
               UNION ALL SELECT up.c, up.d, {step}) \
             SELECT {NODE_COLUMNS} FROM nodes WHERE nodes.timeline = $1 AND nodes.id = \
               (SELECT c FROM up WHERE at = c ORDER BY c DESC LIMIT 1)"
        );
        Ok(self
            .node_rows(tl, &text, &[&sql(tl), &sql(n), &sql(depth)])?
            .pop())
    }
}

impl cover::RangeReads for PgTx<'_, '_> {
    fn node_row(&mut self, tl: u64, n: u64) -> Result<Option<NodeRow>> {
        self.node(tl, n)
    }

    fn ancestor_at(&mut self, tl: u64, n: u64, d: u64) -> Result<Option<NodeRow>> {
        self.at_depth(tl, n, d)
    }

    fn ranges_newer_than(&mut self, tl: u64, id: u64) -> Result<Vec<cover::Range>> {
        // The partial index `nodes_summaries` holds the summaries and placeholders by ID; each
        // range's ends are read by key. One round trip.
        let rows = self.query(
            "SELECT s.id, s.depth, s.summary_from, f.depth, s.summary_to, t.depth \
             FROM nodes s JOIN nodes f ON f.timeline = $1 AND f.id = s.summary_from \
             JOIN nodes t ON t.timeline = $1 AND t.id = s.summary_to \
             WHERE s.timeline = $1 AND s.id > $2 AND s.summary_kind IS NOT NULL ORDER BY s.id",
            &[&sql(tl), &sql(id)],
        )?;
        rows.iter()
            .map(|r| {
                Ok(cover::Range {
                    id: unsql(get(r, 0)?),
                    depth: unsql(get(r, 1)?),
                    from: unsql(get(r, 2)?),
                    from_depth: unsql(get(r, 3)?),
                    to: unsql(get(r, 4)?),
                    to_depth: unsql(get(r, 5)?),
                })
            })
            .collect::<std::result::Result<_, postgres::Error>>()
            .map_err(|e| self.fail(e))
    }

    fn pins_newer_than(&mut self, tl: u64, id: u64) -> Result<Vec<(u64, u64)>> {
        let rows = self.query(
            "SELECT id, depth FROM nodes WHERE timeline = $1 AND id > $2 AND pinned ORDER BY id",
            &[&sql(tl), &sql(id)],
        )?;
        rows.iter()
            .map(|r| Ok((unsql(get(r, 0)?), unsql(get(r, 1)?))))
            .collect::<std::result::Result<_, postgres::Error>>()
            .map_err(|e| self.fail(e))
    }
}

impl Tx for PgTx<'_, '_> {
    fn engine(&self) -> Engine {
        Engine::Postgres
    }

    fn next_timeline(&mut self) -> Result<u64> {
        // A writer that allocates an ID holds the state row until it commits: two creations never
        // get the same ID (and only creations wait for each other).
        let text = if self.writing {
            "SELECT next_timeline FROM state WHERE id = 0 FOR UPDATE"
        } else {
            "SELECT next_timeline FROM state WHERE id = 0"
        };
        let row = self.query_opt(text, &[])?.ok_or_else(|| {
            Error::damaged(format!(
                "the database {} is damaged: its state row is missing",
                self.name
            ))
        })?;
        get::<i64>(&row, 0).map(unsql).map_err(|e| self.fail(e))
    }

    fn timeline_ids(&mut self, limit: usize) -> Result<Vec<u64>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.ids("SELECT id FROM timelines ORDER BY id LIMIT $1", &[&limit])
    }

    fn timeline(&mut self, tl: u64) -> Result<Option<TimelineRow>> {
        // Locked before it is read, so what a writer reads is what the previous writer committed.
        self.lock_timeline(tl)?;
        let text = format!("SELECT {TIMELINE_COLUMNS} FROM timelines WHERE id = $1");
        let row = self.query_opt(&text, &[&sql(tl)])?;
        let mut row = row
            .map(|r| read_timeline(&r).map_err(|e| self.fail(e)))
            .transpose()?;
        if let (Some(row), Some(p)) = (&mut row, self.pending.get(&tl)) {
            row.next_node = row.next_node.wrapping_add(p.nodes as u64);
        }
        Ok(row)
    }

    fn create_timeline(
        &mut self,
        id: u64,
        first_branch: &str,
        title: Option<&str>,
        now: u64,
    ) -> Result<()> {
        let next = id.checked_add(1).ok_or_else(Error::overflow)?;
        self.exec(
            "INSERT INTO timelines (id, next_node, current_branch, title, created_at, updated_at) VALUES ($1, 0, $2, $3, $4, $4)",
            &[&sql(id), &first_branch, &title.map(to_pg_text), &sql(now)],
        )?;
        self.locked.push(id);
        self.insert_node(
            id,
            &NodeRow {
                id: ROOT,
                node: Node::root(),
                prefix_tokens: 0,
                depth: 0,
                pinned: false,
                stale: false,
                superseded_by: None,
            },
        )?;
        self.put_branch(
            id,
            &Branch {
                name: first_branch.to_string(),
                head: ROOT,
                watermark: ROOT,
            },
        )?;
        self.exec(
            "UPDATE state SET next_timeline = $1 WHERE id = 0",
            &[&sql(next)],
        )?;
        Ok(())
    }

    fn touch_timeline(&mut self, tl: u64, now: u64) -> Result<()> {
        self.lock_timeline(tl)?;
        self.exec(
            "UPDATE timelines SET updated_at = $2 WHERE id = $1",
            &[&sql(tl), &sql(now)],
        )?;
        Ok(())
    }

    fn timeline_list(&mut self) -> Result<Vec<(TimelineRow, u64)>> {
        self.flush()?;
        let text = format!(
            "SELECT {TIMELINE_COLUMNS}, (SELECT count(*) FROM branches b WHERE b.timeline = t.id) FROM timelines t ORDER BY id"
        );
        let rows = self.query(&text, &[])?;
        rows.iter()
            .map(|r| Ok((read_timeline(r)?, unsql(get(r, 6)?))))
            .collect::<std::result::Result<_, postgres::Error>>()
            .map_err(|e| self.fail(e))
    }

    fn set_current_branch(&mut self, tl: u64, name: &str) -> Result<()> {
        self.lock_timeline(tl)?;
        self.exec(
            "UPDATE timelines SET current_branch = $2 WHERE id = $1",
            &[&sql(tl), &name],
        )?;
        Ok(())
    }

    fn node(&mut self, tl: u64, n: u64) -> Result<Option<NodeRow>> {
        let text = format!("SELECT {NODE_COLUMNS} FROM nodes WHERE timeline = $1 AND id = $2");
        let row = self.node_rows(tl, &text, &[&sql(tl), &sql(n)])?.pop();
        // As in SQLite: refusing a root with a parent, or a node whose parent is not older, where
        // every walk reads it, makes each step up the tree go to a smaller ID.
        if let Some(row) = &row
            && row.id == ROOT
            && (row.node.parent != ROOT || row.depth != 0)
        {
            return Err(self.bad_row(
                tl,
                format!(
                    "its root n0 claims parent n{} and depth {} (a root has neither)",
                    row.node.parent, row.depth
                ),
            ));
        }
        if let Some(row) = &row
            && row.id != ROOT
            && row.node.parent >= row.id
        {
            return Err(newer_parent(self.name, tl, row.id, row.node.parent));
        }
        Ok(row)
    }

    fn ancestors(&mut self, tl: u64, n: u64, limit: u64) -> Result<Vec<NodeRow>> {
        // Each step goes to an older node (`parent < id`), so the walk ends even on a database that
        // claims a parent cycle.
        let text = format!(
            "WITH RECURSIVE up(at, k) AS (SELECT $2::bigint, 0::bigint \
               UNION ALL SELECT n.parent, up.k + 1 FROM up JOIN nodes n \
                 ON n.timeline = $1 AND n.id = up.at \
                 WHERE up.at <> 0 AND n.parent < n.id AND up.k + 1 < $3) \
             SELECT {NODE_COLUMNS} FROM up JOIN nodes ON nodes.timeline = $1 AND nodes.id = up.at \
             ORDER BY up.k"
        );
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.node_rows(tl, &text, &[&sql(tl), &sql(n), &limit])
    }

    fn budget_window(&mut self, tl: u64, n: u64, max_tokens: u64) -> Result<Vec<NodeRow>> {
        let text = format!(
            "WITH RECURSIVE top(p) AS (SELECT prefix_tokens FROM nodes WHERE timeline = $1 AND id = $2), \
             up(at, k) AS (SELECT $2::bigint, 0::bigint \
               UNION ALL SELECT n.parent, up.k + 1 FROM up JOIN nodes n \
                 ON n.timeline = $1 AND n.id = up.at \
                 WHERE up.at <> 0 AND n.parent < n.id \
                   AND (SELECT p FROM top) - (n.prefix_tokens - n.tokens) <= $3) \
             SELECT {NODE_COLUMNS} FROM up JOIN nodes ON nodes.timeline = $1 AND nodes.id = up.at \
             ORDER BY up.k"
        );
        let max = i64::try_from(max_tokens).unwrap_or(i64::MAX);
        self.node_rows(tl, &text, &[&sql(tl), &sql(n), &max])
    }

    fn find_on_path(&mut self, tl: u64, n: u64, find: PathFind) -> Result<Option<NodeRow>> {
        // Depth and obstacles follow the jump pointers (src/store/jumps.rs): O(log n) rows each,
        // where a walk up the parent links read the whole path above a budget's window.
        match find {
            // (The root is never on "root→n, root excluded".)
            PathFind::Depth(0) => return Ok(None),
            PathFind::Depth(d) => return self.at_depth(tl, n, d),
            PathFind::OldestBare { deeper_than } => {
                return cover::oldest_bare(self, tl, n, deeper_than);
            }
            PathFind::Obstacle { tokens } if n != ROOT => {
                let Some(row) = self.node(tl, n)? else {
                    return Ok(None);
                };
                if self.path_min_tokens(tl, n)? > tokens {
                    return self.pin_or_real_start_on_path(tl, n, row.depth);
                }
                // Some message is small enough: the walk below finds one (the caller then plans
                // on the whole path, which reads all of it anyway).
            }
            _ => {}
        }
        let (stop, matches, value) = match find {
            // (Both are answered above: this walk by parent links is not theirs.)
            PathFind::Depth(d) | PathFind::OldestBare { deeper_than: d } => {
                ("AND n.depth > $3", "nodes.depth = $3", d)
            }
            PathFind::Obstacle { tokens } => (
                "",
                "(nodes.pinned OR nodes.tokens <= $3 OR EXISTS (SELECT 1 FROM nodes s \
                   WHERE s.timeline = $1 AND s.summary_from = nodes.id AND s.summary_kind = 'real'))",
                tokens,
            ),
        };
        let text = format!(
            "WITH RECURSIVE up(at) AS (SELECT $2::bigint \
               UNION ALL SELECT n.parent FROM up JOIN nodes n ON n.timeline = $1 AND n.id = up.at \
                 WHERE up.at <> 0 AND n.parent < n.id {stop}) \
             SELECT {NODE_COLUMNS} FROM up JOIN nodes ON nodes.timeline = $1 AND nodes.id = up.at \
             WHERE nodes.id <> 0 AND {matches} LIMIT 1"
        );
        let value = i64::try_from(value).unwrap_or(i64::MAX);
        Ok(self
            .node_rows(tl, &text, &[&sql(tl), &sql(n), &value])?
            .pop())
    }

    fn children(&mut self, tl: u64, n: u64) -> Result<Vec<u64>> {
        self.ids(
            "SELECT id FROM nodes WHERE timeline = $1 AND parent = $2 AND id > $2 ORDER BY id",
            &[&sql(tl), &sql(n)],
        )
    }

    fn summaries_from(&mut self, tl: u64, from: u64) -> Result<Vec<u64>> {
        self.ids(
            "SELECT id FROM nodes WHERE timeline = $1 AND summary_from = $2 ORDER BY id",
            &[&sql(tl), &sql(from)],
        )
    }

    fn summary_by_request(&mut self, tl: u64, digest: &[u8; 32]) -> Result<Option<u64>> {
        Ok(self
            .ids(
                "SELECT id FROM nodes WHERE timeline = $1 AND request_digest = $2 ORDER BY id LIMIT 1",
                &[&sql(tl), &digest.as_slice()],
            )?
            .first()
            .copied())
    }

    fn dependents(&mut self, tl: u64, n: u64) -> Result<Vec<u64>> {
        self.ids(
            "SELECT summary FROM summary_sources WHERE timeline = $1 AND source = $2 ORDER BY summary",
            &[&sql(tl), &sql(n)],
        )
    }

    fn insert_node(&mut self, tl: u64, row: &NodeRow) -> Result<()> {
        self.insert_nodes(tl, std::slice::from_ref(row))
    }

    fn insert_nodes(&mut self, tl: u64, rows: &[NodeRow]) -> Result<()> {
        if rows.is_empty() {
            return Ok(());
        }
        // The timeline is locked and read once; its counters wait in `pending` as for one node.
        let mut next = self
            .timeline(tl)?
            .map(|t| t.next_node)
            .ok_or_else(|| Error::internal(format!("internal error: no timeline tl{tl}")))?;
        let mut paths = crate::store::jumps::Batch::new(next, rows.len());
        let mut columns = Vec::with_capacity(rows.len());
        for row in rows {
            if row.id != next {
                return Err(Error::internal(format!(
                    "internal error: node n{} inserted where n{next} is next",
                    row.id
                )));
            }
            if rows.len() > 1 {
                let key = (row.id, row.node.parent, row.depth, row.node.tokens);
                columns.push(paths.next(key, &mut |n| self.path_row(tl, n))?);
            }
            let pending = self.pending.entry(tl).or_default();
            pending.nodes += 1;
            pending.cold += i64::from(row.node.cold);
            next = next.checked_add(1).ok_or_else(Error::overflow)?;
        }
        // One row (an append) computes its path columns in its INSERT, from the parent's row; a
        // batch (an import) computes them here, reading each stored node they reach once, and is
        // written in three statements (and one per summary with sources) whatever its length.
        match rows {
            [row] => self.put_node(tl, row),
            _ => self.put_nodes(tl, rows, &columns),
        }
    }

    fn change_node(&mut self, tl: u64, n: u64, change: NodeChange) -> Result<()> {
        self.lock_timeline(tl)?;
        let key: [&(dyn postgres::types::ToSql + Sync); 2] = [&sql(tl), &sql(n)];
        let changed = match change {
            NodeChange::Pin(pinned) => self.exec(
                "UPDATE nodes SET pinned = $3 WHERE timeline = $1 AND id = $2",
                &[&sql(tl), &sql(n), &pinned],
            )?,
            NodeChange::Stale => self.exec(
                "UPDATE nodes SET stale = TRUE WHERE timeline = $1 AND id = $2",
                &key,
            )?,
            NodeChange::SupersededBy(newer) => self.exec(
                "UPDATE nodes SET superseded_by = $3 WHERE timeline = $1 AND id = $2",
                &[&sql(tl), &sql(n), &sql(newer)],
            )?,
            NodeChange::Archived | NodeChange::Restored => {
                let cold = change == NodeChange::Archived;
                let moved = self.exec(
                    "UPDATE nodes SET cold = $3 WHERE timeline = $1 AND id = $2 AND cold <> $3",
                    &[&sql(tl), &sql(n), &cold],
                )?;
                let delta = if cold { moved as i64 } else { -(moved as i64) };
                self.pending.entry(tl).or_default().cold += delta;
                1
            }
        };
        if changed != 1 || n == ROOT {
            return Err(Error::internal(format!(
                "internal error: no message n{n} to change"
            )));
        }
        Ok(())
    }

    fn cover_path(&mut self, tl: u64, from: u64, to: u64) -> Result<u64> {
        // Nothing is written per message: coverage is derived from the ranges (src/store/cover.rs).
        self.lock_timeline(tl)?;
        cover::range_len(self, tl, from, to)
    }

    fn in_a_range(&mut self, tl: u64, n: &NodeRow) -> Result<bool> {
        cover::in_a_range(self, tl, n)
    }

    fn branches(&mut self, tl: u64) -> Result<Vec<Branch>> {
        let rows = self.query(
            "SELECT name, head, watermark FROM branches WHERE timeline = $1 ORDER BY seq",
            &[&sql(tl)],
        )?;
        rows.iter()
            .map(|r| {
                Ok(Branch {
                    name: get(r, 0)?,
                    head: unsql(get(r, 1)?),
                    watermark: unsql(get(r, 2)?),
                })
            })
            .collect::<std::result::Result<_, postgres::Error>>()
            .map_err(|e| self.fail(e))
    }

    fn branch(&mut self, tl: u64, name: &str) -> Result<Option<Branch>> {
        let row = self.query_opt(
            "SELECT head, watermark FROM branches WHERE timeline = $1 AND name = $2",
            &[&sql(tl), &name],
        )?;
        row.map(|r| {
            Ok(Branch {
                name: name.to_string(),
                head: unsql(get(&r, 0)?),
                watermark: unsql(get(&r, 1)?),
            })
        })
        .transpose()
        .map_err(|e: postgres::Error| self.fail(e))
    }

    fn put_branch(&mut self, tl: u64, branch: &Branch) -> Result<()> {
        self.lock_timeline(tl)?;
        self.exec(
            "INSERT INTO branches (timeline, name, head, watermark) VALUES ($1, $2, $3, $4) ON CONFLICT (timeline, name) DO UPDATE SET head = excluded.head, watermark = excluded.watermark",
            &[&sql(tl), &branch.name, &sql(branch.head), &sql(branch.watermark)],
        )?;
        Ok(())
    }

    fn remove_branch(&mut self, tl: u64, name: &str) -> Result<()> {
        self.lock_timeline(tl)?;
        self.exec(
            "DELETE FROM branches WHERE timeline = $1 AND name = $2",
            &[&sql(tl), &name],
        )?;
        Ok(())
    }

    fn insert_branch(&mut self, tl: u64, index: u64, branch: &Branch) -> Result<()> {
        // Branches are listed in row order: the ones after the place are taken out and added again
        // behind the new one (a new row always comes after every existing one).
        let index = usize::try_from(index).unwrap_or(usize::MAX);
        let later: Vec<Branch> = self.branches(tl)?.into_iter().skip(index).collect();
        for b in &later {
            self.remove_branch(tl, &b.name)?;
        }
        self.put_branch(tl, branch)?;
        for b in &later {
            self.put_branch(tl, b)?;
        }
        Ok(())
    }

    fn rename_branch(&mut self, tl: u64, old: &str, new: &str) -> Result<()> {
        self.lock_timeline(tl)?;
        let changed = self.exec(
            "UPDATE branches SET name = $3 WHERE timeline = $1 AND name = $2",
            &[&sql(tl), &old, &new],
        )?;
        if changed != 1 {
            return Err(Error::internal(format!(
                "internal error: no branch {old:?} to rename"
            )));
        }
        Ok(())
    }

    fn archived_branches(&mut self, tl: u64) -> Result<Vec<ArchivedBranch>> {
        let rows = self.query(
            "SELECT name, head, watermark, position, nodes FROM archived_branches WHERE timeline = $1 ORDER BY seq",
            &[&sql(tl)],
        )?;
        let mut out = Vec::with_capacity(rows.len());
        for r in &rows {
            let read = || -> std::result::Result<_, postgres::Error> {
                Ok((
                    get::<String>(r, 0)?,
                    get::<i64>(r, 1)?,
                    get::<i64>(r, 2)?,
                    get::<i64>(r, 3)?,
                    get::<String>(r, 4)?,
                ))
            };
            let (name, head, watermark, position, nodes) = read().map_err(|e| self.fail(e))?;
            let nodes: Vec<u64> =
                self.json(&format!("record of archived branch {name:?}"), &nodes)?;
            out.push(ArchivedBranch {
                name,
                head: unsql(head),
                watermark: unsql(watermark),
                position: unsql(position),
                nodes,
            });
        }
        Ok(out)
    }

    fn push_archived_branch(&mut self, tl: u64, archived: &ArchivedBranch) -> Result<()> {
        self.lock_timeline(tl)?;
        self.insert_archived(tl, archived)
    }

    fn remove_archived_branch(&mut self, tl: u64, name: &str) -> Result<()> {
        self.lock_timeline(tl)?;
        self.exec(
            "DELETE FROM archived_branches WHERE seq = (SELECT max(seq) FROM archived_branches WHERE timeline = $1 AND name = $2)",
            &[&sql(tl), &name],
        )?;
        Ok(())
    }

    fn idempotency(&mut self, scope: &str, key: &str) -> Result<Option<IdempotencyEntry>> {
        if self.writing {
            // Two writers with one key take turns: the second reads what the first recorded (and
            // replays it) instead of doing the change again.
            self.query(
                "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
                &[&format!("{scope}\u{1f}{key}")],
            )?;
        }
        let row = self.query_opt(
            "SELECT op, result, ts, request FROM idempotency WHERE scope = $1 AND key = $2",
            &[&scope, &key],
        )?;
        let Some(r) = row else { return Ok(None) };
        let read = || -> std::result::Result<_, postgres::Error> {
            Ok((
                get::<String>(&r, 0)?,
                get::<String>(&r, 1)?,
                get::<i64>(&r, 2)?,
                get::<Option<String>>(&r, 3)?,
            ))
        };
        let (op, result, ts, request) = read().map_err(|e| self.fail(e))?;
        Ok(Some(IdempotencyEntry {
            scope: scope.to_string(),
            key: key.to_string(),
            op,
            result: self.json("idempotency record", &result)?,
            ts: unsql(ts),
            request,
        }))
    }

    fn put_idempotency(&mut self, entry: &IdempotencyEntry) -> Result<()> {
        // Delete and insert (SQLite's INSERT OR REPLACE): a replaced entry moves to the end of the
        // order the snapshot lists them in.
        self.exec(
            "DELETE FROM idempotency WHERE scope = $1 AND key = $2",
            &[&entry.scope, &entry.key],
        )?;
        self.exec(
            "INSERT INTO idempotency (scope, key, op, result, ts, request) VALUES ($1, $2, $3, $4, $5, $6)",
            &[
                &entry.scope,
                &entry.key,
                &entry.op,
                &entry.result.to_string(),
                &sql(entry.ts),
                &entry.request,
            ],
        )?;
        Ok(())
    }

    fn purge_idempotency(&mut self, cutoff: u64) -> Result<()> {
        self.exec("DELETE FROM idempotency WHERE ts <= $1", &[&sql(cutoff)])?;
        Ok(())
    }

    fn append_audit(&mut self, now: u64, mut entry: AuditEntry) -> Result<()> {
        let last = self
            .ids("SELECT ts FROM audit ORDER BY seq DESC LIMIT 1", &[])?
            .first()
            .copied()
            .unwrap_or(0);
        entry.ts = now.max(last);
        let json = serde_json::to_string(&entry).map_err(|e| Error::database(e.to_string()))?;
        self.exec(
            "INSERT INTO audit (ts, entry) VALUES ($1, $2)",
            &[&sql(entry.ts), &json],
        )?;
        Ok(())
    }

    fn earlier_imports(
        &mut self,
        format: &str,
        source_key: &str,
        digest: &str,
    ) -> Result<crate::model::Earlier> {
        let same = self.import_records(
            "SELECT record FROM imports WHERE format = $1 AND source_key = $2 AND digest = $3 ORDER BY seq LIMIT 1",
            &[&format, &source_key, &digest],
        )?;
        let latest = self.import_records(
            "SELECT record FROM imports WHERE format = $1 AND source_key = $2 ORDER BY seq DESC LIMIT 1",
            &[&format, &source_key],
        )?;
        Ok(crate::model::Earlier {
            same: same.into_iter().next(),
            latest: latest.into_iter().next(),
        })
    }

    fn import_digests(&mut self, format: &str) -> Result<Vec<crate::model::KnownImport>> {
        let rows = self.query(
            "SELECT digest, source_key, timeline, title FROM imports WHERE format = $1 ORDER BY seq",
            &[&format],
        )?;
        rows.iter()
            .map(|r| {
                Ok(crate::model::KnownImport {
                    digest: get(r, 0)?,
                    source_key: get(r, 1)?,
                    timeline: crate::model::timeline_id(unsql(get(r, 2)?)),
                    title: get::<Option<String>>(r, 3)?.map(from_pg_text),
                })
            })
            .collect::<std::result::Result<_, postgres::Error>>()
            .map_err(|e| self.fail(e))
    }

    fn imports_of(&mut self, format: &str, source_key: &str) -> Result<Vec<ImportRecord>> {
        self.import_records(
            "SELECT record FROM imports WHERE format = $1 AND source_key = $2 ORDER BY seq",
            &[&format, &source_key],
        )
    }

    fn put_import(&mut self, record: &ImportRecord) -> Result<()> {
        self.put_import_row(record)
    }

    fn created_at(&mut self, tl: u64, n: u64) -> Result<Option<u64>> {
        let row = self.query_opt(
            "SELECT created_at FROM nodes WHERE timeline = $1 AND id = $2",
            &[&sql(tl), &sql(n)],
        )?;
        row.map(|r| get::<Option<i64>>(&r, 0))
            .transpose()
            .map(|t| t.flatten().map(unsql))
            .map_err(|e| self.fail(e))
    }

    fn search(&mut self, query: &Query, scope: &SearchScope) -> Result<Vec<SearchHit>> {
        super::search::search(self, query, scope)
    }

    fn load_timeline(&mut self, tl: u64) -> Result<Timeline> {
        let info = self
            .timeline(tl)?
            .ok_or_else(|| Error::internal(format!("internal error: no timeline tl{tl}")))?;
        let text = format!("SELECT {NODE_COLUMNS} FROM nodes WHERE timeline = $1 ORDER BY id");
        let rows = self.node_rows(tl, &text, &[&sql(tl)])?;
        let mut nodes = Vec::with_capacity(rows.len());
        let mut pins = std::collections::BTreeSet::new();
        for (i, row) in rows.into_iter().enumerate() {
            if row.id != i as u64 {
                return Err(self.bad_row(tl, format!("node n{i} is missing")));
            }
            if row.pinned {
                pins.insert(row.id);
            }
            nodes.push(row.node);
        }
        if nodes.len() as u64 != info.next_node {
            return Err(self.bad_row(
                tl,
                format!(
                    "next_node {} does not match the {} stored nodes",
                    info.next_node,
                    nodes.len()
                ),
            ));
        }
        let mut timeline = Timeline {
            id: tl,
            title: info.title,
            created_at: info.created_at,
            updated_at: info.updated_at,
            nodes,
            branches: self.branches(tl)?,
            current_branch: info.current_branch,
            pins,
            archived: self.archived_branches(tl)?,
            derived: Default::default(),
        };
        timeline
            .rebuild()
            .map_err(|e| self.bad_row(tl, e.message.to_string()))?;
        timeline
            .check_archived()
            .map_err(|e| self.bad_row(tl, e.message.to_string()))?;
        Ok(timeline)
    }

    fn load_database(&mut self) -> Result<Database> {
        let ids = self.timeline_ids(usize::MAX)?;
        let mut timelines = Vec::with_capacity(ids.len());
        for id in ids {
            timelines.push(self.load_timeline(id)?);
        }
        let rows = self.query(
            "SELECT scope, key, op, result, ts, request FROM idempotency ORDER BY seq",
            &[],
        )?;
        let mut idempotency = Vec::with_capacity(rows.len());
        for r in &rows {
            let read = || -> std::result::Result<_, postgres::Error> {
                Ok(IdempotencyEntry {
                    scope: get(r, 0)?,
                    key: get(r, 1)?,
                    op: get(r, 2)?,
                    result: serde_json::from_str(get::<&str>(r, 3)?)
                        .unwrap_or(serde_json::Value::Null),
                    ts: unsql(get(r, 4)?),
                    request: get(r, 5)?,
                })
            };
            idempotency.push(read().map_err(|e| self.fail(e))?);
        }
        let rows = self.query("SELECT entry FROM audit ORDER BY seq", &[])?;
        let mut audit = Vec::with_capacity(rows.len());
        for r in &rows {
            let json: &str = get(r, 0).map_err(|e| self.fail(e))?;
            audit.push(self.json::<AuditEntry>("audit entry", json)?);
        }
        let imports = self.import_records("SELECT record FROM imports ORDER BY seq", &[])?;
        let mut db = Database {
            next_timeline: self.next_timeline()?,
            timelines,
            idempotency,
            audit,
            imports,
            import_index: Default::default(),
        };
        db.index_imports();
        Ok(db)
    }

    fn counts(&mut self) -> Result<Counts> {
        self.flush()?;
        let row = self.query_opt(
            "SELECT count(*), coalesce(sum(next_node - 1), 0)::bigint, coalesce(sum(cold_nodes), 0)::bigint FROM timelines",
            &[],
        )?;
        let Some(r) = row else {
            return Ok(Counts::default());
        };
        let read = || -> std::result::Result<_, postgres::Error> {
            Ok(Counts {
                timelines: unsql(get(&r, 0)?),
                nodes: unsql(get(&r, 1)?),
                cold_nodes: unsql(get(&r, 2)?),
            })
        };
        read().map_err(|e| self.fail(e))
    }
}
