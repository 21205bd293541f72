//! `Tx` over one SQLite transaction.

use super::pending::Pending;
use super::phrase_counts;
use super::rows::{
    NODE_COLUMNS, TIMELINE_COLUMNS, insert_archived, read_node, read_timeline, sql, unsql,
};
use super::schema::newer_parent;
use super::{corrupt, failure};
use crate::error::{ASK_THE_USER_TO_CHECK, Error, Message, Result};
use crate::model::file::{AuditEntry, IdempotencyEntry, ImportRecord};
use crate::model::{ArchivedBranch, Branch, Database, Node, ROOT, Timeline};
use crate::search::{Query, Scorer, Tally};
use crate::store::jumps::PathRow;
use crate::store::{
    Counts, Engine, NewParent, NodeChange, NodeRow, PathFind, Place, SearchHit, SearchScope,
    TimelineRow, Tx, cover,
};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension, params};
use std::path::Path;
use std::sync::LazyLock;

/// A search counts each phrase's messages up to this many first: a phrase in fewer makes the
/// matches few (`SqlTx::search`).
const FEW_MATCHES: i64 = 1024;

/// `Tx` over one SQLite transaction.
pub(super) struct SqlTx<'a> {
    pub(super) conn: &'a Connection,
    pub(super) path: &'a Path,
    /// The path columns `parent_of_new` read for a new child (of its parent and of the two rows
    /// up the parent's jump pointer), as (timeline, node, row), until `insert_nodes` uses them: a
    /// path row never changes once written, and the child's insert needs exactly these.
    prefetched: Vec<(u64, u64, Option<PathRow>)>,
    /// When the messages waiting for the search index are indexed (src/store/sqlite/pending.rs).
    pub(super) pending: &'a Pending,
}

impl<'a> SqlTx<'a> {
    pub(super) fn new(conn: &'a Connection, path: &'a Path, pending: &'a Pending) -> Self {
        SqlTx {
            conn,
            path,
            prefetched: Vec::new(),
            pending,
        }
    }
}

impl SqlTx<'_> {
    pub(super) fn fail(&self, e: rusqlite::Error) -> Error {
        failure(self.path, "cannot use", e)
    }

    /// A parent is written before its children, so it is always older. Refusing any other row
    /// where every walk reads it makes each step up the tree go to a smaller ID: no walk can
    /// circle a parent cycle the file claims, and nothing is written on top of one.
    fn check_place(&self, tl: u64, at: &Place) -> Result<()> {
        if at.id == ROOT && (at.parent != ROOT || at.depth != 0) {
            // Walks end at the root, which is where depth 0 is.
            return Err(corrupt(
                self.path,
                &format!(
                    "timeline tl{tl}: its root n0 claims parent n{} and depth {} (a root has neither)",
                    at.parent, at.depth
                ),
            ));
        }
        if at.id != ROOT && at.parent >= at.id {
            return Err(newer_parent(self.path, tl, at.id, at.parent));
        }
        Ok(())
    }

    pub(super) fn exec(&self, sql: &str, params: impl rusqlite::Params) -> Result<usize> {
        self.conn
            .prepare_cached(sql)
            .and_then(|mut s| s.execute(params))
            .map_err(|e| self.fail(e))
    }

    pub(super) fn ids(&self, sql: &str, params: impl rusqlite::Params) -> Result<Vec<u64>> {
        let mut stmt = self.conn.prepare_cached(sql).map_err(|e| self.fail(e))?;
        let rows = stmt
            .query_map(params, |r| r.get::<_, i64>(0))
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<i64>>>())
            .map_err(|e| self.fail(e))?;
        Ok(rows.into_iter().map(unsql).collect())
    }
}

/// One step of a walk to depth `?3` (a bound parameter or column): the jump pointer when it
/// stays at or below that depth, the parent otherwise; always to an older node.
///
/// Every walk here reads the step's node by its key from the row before (`CROSS JOIN` keeps that
/// order, and `+n.parent` keeps the parent test off the index): SQLite 3.50 otherwise planned this
/// step as a search of `nodes_by_parent` on the timeline alone, a scan of the whole timeline per
/// step, which took a budget at the head of a million messages 50 s.
const JUMP_STEP: &str = "CASE WHEN n.jump < n.id AND j.depth >= {d} THEN n.jump ELSE n.parent END \
     FROM up CROSS JOIN nodes n ON n.timeline = ?1 AND n.id = up.at \
     CROSS JOIN nodes j ON j.timeline = ?1 AND j.id = n.jump \
     WHERE n.depth > {d} AND +n.parent < n.id";

impl SqlTx<'_> {
    /// How many messages of the whole database hold each phrase of `query` (its IDF's count), or
    /// `None` when every phrase is in at least `FEW_MATCHES`: then the search counts them in the
    /// pass that reads the messages (`Tx::search`). Each phrase is counted up to `FEW_MATCHES`
    /// first, so a query of common phrases does not read their postings twice.
    fn phrase_hits(&self, query: &Query) -> Result<Option<Vec<u64>>> {
        let count = |phrase: &crate::search::Phrase, capped: bool| {
            let fts5 = phrase.fts5();
            if capped {
                self.conn
                    .prepare_cached(
                        "SELECT count(*) FROM (SELECT 1 FROM search_index \
                         WHERE search_index MATCH ?1 LIMIT ?2)",
                    )
                    .and_then(|mut s| s.query_row(params![fts5, FEW_MATCHES], |r| r.get(0)))
            } else {
                self.conn
                    .prepare_cached("SELECT count(*) FROM search_index WHERE search_index MATCH ?1")
                    .and_then(|mut s| s.query_row(params![fts5], |r| r.get(0)))
            }
            .map(unsql)
            .map_err(|e| self.fail(e))
        };
        let first = query
            .phrases
            .iter()
            .map(|phrase| count(phrase, true))
            .collect::<Result<Vec<u64>>>()?;
        let few = unsql(FEW_MATCHES);
        if first.iter().all(|&n| n == few) {
            return Ok(None);
        }
        first
            .into_iter()
            .zip(&query.phrases)
            .map(|(n, phrase)| {
                if n == few {
                    count(phrase, false)
                } else {
                    Ok(n)
                }
            })
            .collect::<Result<Vec<u64>>>()
            .map(Some)
    }

    /// The ancestor-or-self of `n` at depth `d`, in O(log n) rows (`None` when there is none).
    fn at_depth(&self, tl: u64, n: u64, d: u64) -> Result<Option<NodeRow>> {
        let step = JUMP_STEP.replace("{d}", "?3");
        let query = format!(
            "WITH RECURSIVE up(at) AS (SELECT ?2 UNION ALL SELECT {step}) \
             SELECT {NODE_COLUMNS} FROM nodes WHERE timeline = ?1 AND depth = ?3 \
               AND id = (SELECT min(at) FROM up)"
        );
        let d = i64::try_from(d).unwrap_or(i64::MAX);
        self.conn
            .prepare_cached(&query)
            .and_then(|mut s| {
                s.query_row(params![sql(tl), sql(n), d], read_node)
                    .optional()
            })
            .map_err(|e| self.fail(e))
    }

    /// (id, jump, path_min_tokens) of every node of timeline `tl`, by ID (`db check`).
    pub(super) fn path_columns(&self, tl: u64) -> Result<Vec<(u64, u64, u64)>> {
        let mut stmt = self
            .conn
            .prepare("SELECT id, jump, path_min_tokens FROM nodes WHERE timeline = ?1 ORDER BY id")
            .map_err(|e| self.fail(e))?;
        stmt.query_map(params![sql(tl)], |r| {
            Ok((unsql(r.get(0)?), unsql(r.get(1)?), unsql(r.get(2)?)))
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| self.fail(e))
    }

    /// The smallest tokens of a message on root→n (stored with `n`).
    fn path_min_tokens(&self, tl: u64, n: u64) -> Result<u64> {
        self.conn
            .prepare_cached("SELECT path_min_tokens FROM nodes WHERE timeline = ?1 AND id = ?2")
            .and_then(|mut s| s.query_row(params![sql(tl), sql(n)], |r| r.get::<_, i64>(0)))
            .map(unsql)
            .map_err(|e| self.fail(e))
    }

    /// A pinned message or the start of a real summary on root→n (`n` at `depth`): every such
    /// node of the timeline no deeper than `n` is a candidate, and each is on the path when the
    /// jump walk from `n` to its depth lands on it. One query; its cost is the candidates times
    /// O(log n), not the path.
    fn pin_or_real_start_on_path(&self, tl: u64, n: u64, depth: u64) -> Result<Option<NodeRow>> {
        let step = JUMP_STEP.replace("{d}", "up.d");
        let query = format!(
            "WITH RECURSIVE cand(c, d) AS ( \
               SELECT id, depth FROM nodes WHERE timeline = ?1 AND pinned = 1 AND id <= ?2 AND depth <= ?3 \
               UNION SELECT f.id, f.depth FROM nodes s JOIN nodes f ON f.timeline = ?1 AND f.id = s.summary_from \
                 WHERE s.timeline = ?1 AND s.summary_kind = 'real' AND s.summary_from <= ?2 AND f.depth <= ?3), \
             up(c, d, at) AS (SELECT c, d, ?2 FROM cand \
               UNION ALL SELECT up.c, up.d, {step}) \
             SELECT {NODE_COLUMNS} FROM nodes WHERE timeline = ?1 AND id = \
               (SELECT c FROM up WHERE at = c ORDER BY c DESC LIMIT 1)"
        );
        self.conn
            .prepare_cached(&query)
            .and_then(|mut s| {
                s.query_row(params![sql(tl), sql(n), sql(depth)], read_node)
                    .optional()
            })
            .map_err(|e| self.fail(e))
    }
}

impl cover::RangeReads for SqlTx<'_> {
    fn node_row(&mut self, tl: u64, n: u64) -> Result<Option<NodeRow>> {
        self.node(tl, n)
    }

    fn ancestor_at(&mut self, tl: u64, n: u64, d: u64) -> Result<Option<NodeRow>> {
        self.at_depth(tl, n, d)
    }

    fn ranges_newer_than(&mut self, tl: u64, id: u64) -> Result<Vec<cover::Range>> {
        // The partial index `nodes_summaries` holds the summaries and placeholders by ID; each
        // range's ends are read by key.
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT s.id, s.depth, s.summary_from, f.depth, s.summary_to, t.depth \
                 FROM nodes s INDEXED BY nodes_summaries \
                 CROSS JOIN nodes f ON f.timeline = ?1 AND f.id = s.summary_from \
                 CROSS JOIN nodes t ON t.timeline = ?1 AND t.id = s.summary_to \
                 WHERE s.timeline = ?1 AND s.id > ?2 AND s.summary_kind IS NOT NULL ORDER BY s.id",
            )
            .map_err(|e| self.fail(e))?;
        stmt.query_map(params![sql(tl), sql(id)], |r| {
            Ok(cover::Range {
                id: unsql(r.get(0)?),
                depth: unsql(r.get(1)?),
                from: unsql(r.get(2)?),
                from_depth: unsql(r.get(3)?),
                to: unsql(r.get(4)?),
                to_depth: unsql(r.get(5)?),
            })
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| self.fail(e))
    }

    fn pins_newer_than(&mut self, tl: u64, id: u64) -> Result<Vec<(u64, u64)>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, depth FROM nodes INDEXED BY nodes_pinned \
                 WHERE timeline = ?1 AND id > ?2 AND pinned = 1 ORDER BY id",
            )
            .map_err(|e| self.fail(e))?;
        stmt.query_map(params![sql(tl), sql(id)], |r| {
            Ok((unsql(r.get(0)?), unsql(r.get(1)?)))
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| self.fail(e))
    }
}

impl Tx for SqlTx<'_> {
    fn engine(&self) -> Engine {
        Engine::Sqlite
    }

    fn next_timeline(&mut self) -> Result<u64> {
        self.conn
            .prepare_cached("SELECT next_timeline FROM state WHERE id = 0")
            .and_then(|mut s| s.query_row([], |r| r.get::<_, i64>(0)))
            .map(unsql)
            .map_err(|e| self.fail(e))
    }

    fn timeline_ids(&mut self, limit: usize) -> Result<Vec<u64>> {
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        self.ids(
            "SELECT id FROM timelines ORDER BY id LIMIT ?1",
            params![limit],
        )
    }

    fn timeline(&mut self, tl: u64) -> Result<Option<TimelineRow>> {
        self.conn
            .prepare_cached(&format!(
                "SELECT {TIMELINE_COLUMNS} FROM timelines WHERE id = ?1"
            ))
            .and_then(|mut s| s.query_row(params![sql(tl)], read_timeline).optional())
            .map_err(|e| self.fail(e))
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
            "INSERT INTO timelines (id, next_node, current_branch, title, created_at, updated_at) VALUES (?1, 0, ?2, ?3, ?4, ?4)",
            params![sql(id), first_branch, title, sql(now)],
        )?;
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
            "UPDATE state SET next_timeline = ?1 WHERE id = 0",
            params![sql(next)],
        )?;
        Ok(())
    }

    fn touch_timeline(&mut self, tl: u64, now: u64) -> Result<()> {
        self.exec(
            "UPDATE timelines SET updated_at = ?2 WHERE id = ?1",
            params![sql(tl), sql(now)],
        )?;
        Ok(())
    }

    fn timeline_list(&mut self) -> Result<Vec<(TimelineRow, u64)>> {
        let query = format!(
            "SELECT {TIMELINE_COLUMNS}, (SELECT count(*) FROM branches b WHERE b.timeline = t.id) FROM timelines t ORDER BY id"
        );
        let mut stmt = self.conn.prepare(&query).map_err(|e| self.fail(e))?;
        stmt.query_map([], |r| Ok((read_timeline(r)?, unsql(r.get(6)?))))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.fail(e))
    }

    fn set_current_branch(&mut self, tl: u64, name: &str) -> Result<()> {
        self.exec(
            "UPDATE timelines SET current_branch = ?2 WHERE id = ?1",
            params![sql(tl), name],
        )?;
        Ok(())
    }

    fn node(&mut self, tl: u64, n: u64) -> Result<Option<NodeRow>> {
        static QUERY: LazyLock<String> = LazyLock::new(|| {
            format!("SELECT {NODE_COLUMNS} FROM nodes WHERE timeline = ?1 AND id = ?2")
        });
        let row = self
            .conn
            .prepare_cached(&QUERY)
            .and_then(|mut s| s.query_row(params![sql(tl), sql(n)], read_node).optional())
            .map_err(|e| self.fail(e))?;
        if let Some(row) = &row {
            self.check_place(tl, &Place::from(row))?;
        }
        Ok(row)
    }

    fn parent_of_new(&mut self, tl: u64, n: u64) -> Result<Option<NewParent>> {
        // One query instead of five: the node's place and its parent's, and the path columns of
        // the node and of the rows up its jump pointer and that row's own, which the child's path
        // columns are derived from (`jumps::Batch`), kept in `prefetched` for `insert_nodes`.
        // SQLite's cost to prepare a statement grows with its result columns, so only these.
        const QUERY: &str = "SELECT n.parent, n.depth, n.prefix_tokens, n.jump, n.path_min_tokens, \
             p.id, p.parent, p.depth, \
             j.id, j.depth, j.jump, j.path_min_tokens, jj.id, jj.depth, jj.jump, jj.path_min_tokens \
             FROM nodes n INDEXED BY sqlite_autoindex_nodes_1 \
             LEFT JOIN nodes p INDEXED BY sqlite_autoindex_nodes_1 ON p.timeline = n.timeline AND p.id = n.parent AND n.id != 0 \
             LEFT JOIN nodes j INDEXED BY sqlite_autoindex_nodes_1 ON j.timeline = n.timeline AND j.id = n.jump \
             LEFT JOIN nodes jj INDEXED BY sqlite_autoindex_nodes_1 ON jj.timeline = n.timeline AND jj.id = j.jump \
             WHERE n.timeline = ?1 AND n.id = ?2";
        let read = |r: &rusqlite::Row| {
            let place = Place {
                id: n,
                parent: unsql(r.get(0)?),
                depth: unsql(r.get(1)?),
            };
            let own: PathRow = (place.depth, unsql(r.get(3)?), unsql(r.get(4)?));
            let grandparent = match r.get::<_, Option<i64>>(5)? {
                Some(id) => Some(Place {
                    id: unsql(id),
                    parent: unsql(r.get(6)?),
                    depth: unsql(r.get(7)?),
                }),
                None => None,
            };
            let path = |k: usize| -> rusqlite::Result<Option<PathRow>> {
                Ok(match r.get::<_, Option<i64>>(k)? {
                    Some(_) => Some((
                        unsql(r.get(k + 1)?),
                        unsql(r.get(k + 2)?),
                        unsql(r.get(k + 3)?),
                    )),
                    None => None,
                })
            };
            let parent = NewParent {
                place,
                prefix_tokens: unsql(r.get(2)?),
                grandparent,
            };
            Ok((parent, own, path(8)?, path(12)?))
        };
        let found = self
            .conn
            .prepare_cached(QUERY)
            .and_then(|mut s| s.query_row(params![sql(tl), sql(n)], read).optional())
            .map_err(|e| self.fail(e))?;
        self.prefetched.clear();
        let Some((parent, own, jump, jump_of_jump)) = found else {
            return Ok(None);
        };
        self.check_place(tl, &parent.place)?;
        if let Some(grandparent) = &parent.grandparent {
            self.check_place(tl, grandparent)?;
        }
        // A jump that names a missing row is remembered as missing, as `path_row` reads it.
        self.prefetched.push((tl, n, Some(own)));
        self.prefetched.push((tl, own.1, jump));
        if let Some((_, jump_of_jump_id, _)) = jump {
            self.prefetched.push((tl, jump_of_jump_id, jump_of_jump));
        }
        Ok(Some(parent))
    }

    fn ancestors(&mut self, tl: u64, n: u64, limit: u64) -> Result<Vec<NodeRow>> {
        // Each step goes to an older node (`parent < id`), so the walk ends even on a file that
        // claims a parent cycle; the caller sees the row where it stopped and names the damage.
        let query = format!(
            "WITH RECURSIVE up(at, k) AS (SELECT ?2, 0 \
               UNION ALL SELECT n.parent, up.k + 1 FROM up CROSS JOIN nodes n \
                 ON n.timeline = ?1 AND n.id = up.at \
                 WHERE up.at <> 0 AND +n.parent < n.id AND up.k + 1 < ?3) \
             SELECT {NODE_COLUMNS} FROM up JOIN nodes ON nodes.timeline = ?1 AND nodes.id = up.at \
             ORDER BY up.k"
        );
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        let rows = self
            .conn
            .prepare_cached(&query)
            .and_then(|mut s| {
                s.query_map(params![sql(tl), sql(n), limit], read_node)?
                    .collect::<rusqlite::Result<Vec<NodeRow>>>()
            })
            .map_err(|e| self.fail(e))?;
        Ok(rows)
    }

    fn budget_window(&mut self, tl: u64, n: u64, max_tokens: u64) -> Result<Vec<NodeRow>> {
        // Go up from a row while the rows from the target down to it hold at most max_tokens: its
        // own prefix sum minus its tokens is what lies above it.
        let query = format!(
            "WITH RECURSIVE top(p) AS (SELECT prefix_tokens FROM nodes WHERE timeline = ?1 AND id = ?2), \
             up(at, k) AS (SELECT ?2, 0 \
               UNION ALL SELECT n.parent, up.k + 1 FROM up CROSS JOIN nodes n \
                 ON n.timeline = ?1 AND n.id = up.at \
                 WHERE up.at <> 0 AND +n.parent < n.id \
                   AND (SELECT p FROM top) - (n.prefix_tokens - n.tokens) <= ?3) \
             SELECT {NODE_COLUMNS} FROM up JOIN nodes ON nodes.timeline = ?1 AND nodes.id = up.at \
             ORDER BY up.k"
        );
        let max = i64::try_from(max_tokens).unwrap_or(i64::MAX);
        self.conn
            .prepare_cached(&query)
            .and_then(|mut s| {
                s.query_map(params![sql(tl), sql(n), max], read_node)?
                    .collect::<rusqlite::Result<Vec<NodeRow>>>()
            })
            .map_err(|e| self.fail(e))
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
        // The walk runs inside the database and reads each node of it once: the step that reads a
        // node also tests it (`hit`) and says whether the walk goes on above it (`go`). A search for
        // the first match stops there; the oldest bare node is the match closest to the root.
        let (go, hit, first_only, value) = match find {
            // (Both are answered above: this walk by parent links is not theirs.)
            PathFind::Depth(d) | PathFind::OldestBare { deeper_than: d } => {
                ("n.depth > ?3", "n.depth = ?3", true, d)
            }
            PathFind::Obstacle { tokens } => (
                "1",
                "n.pinned OR n.tokens <= ?3 OR EXISTS (SELECT 1 FROM nodes s \
                   WHERE s.timeline = ?1 AND s.summary_from = n.id AND s.summary_kind = 'real')",
                true,
                tokens,
            ),
        };
        let until_hit = if first_only { "AND up.hit IS NULL" } else { "" };
        let query = format!(
            "WITH RECURSIVE up(at, go, hit, depth) AS (SELECT ?2, 1, NULL, NULL \
               UNION ALL SELECT n.parent, n.parent < n.id AND {go}, CASE WHEN {hit} THEN n.id END, n.depth \
                 FROM up CROSS JOIN nodes n ON n.timeline = ?1 AND n.id = up.at \
                 WHERE up.at <> 0 AND up.go {until_hit}) \
             SELECT {NODE_COLUMNS} FROM nodes WHERE timeline = ?1 AND id = \
               (SELECT hit FROM up WHERE hit IS NOT NULL ORDER BY depth LIMIT 1)"
        );
        let value = i64::try_from(value).unwrap_or(i64::MAX);
        self.conn
            .prepare_cached(&query)
            .and_then(|mut s| {
                s.query_row(params![sql(tl), sql(n), value], read_node)
                    .optional()
            })
            .map_err(|e| self.fail(e))
    }

    fn children(&mut self, tl: u64, n: u64) -> Result<Vec<u64>> {
        // (Only newer nodes: a child older than its parent is damage, refused when it is read.)
        self.ids(
            "SELECT id FROM nodes WHERE timeline = ?1 AND parent = ?2 AND id > ?2 ORDER BY id",
            params![sql(tl), sql(n)],
        )
    }

    fn summaries_from(&mut self, tl: u64, from: u64) -> Result<Vec<u64>> {
        self.ids(
            "SELECT id FROM nodes WHERE timeline = ?1 AND summary_from = ?2 ORDER BY id",
            params![sql(tl), sql(from)],
        )
    }

    fn summary_by_request(&mut self, tl: u64, digest: &[u8; 32]) -> Result<Option<u64>> {
        Ok(self
            .ids(
                "SELECT id FROM nodes WHERE timeline = ?1 AND request_digest = ?2 ORDER BY id LIMIT 1",
                params![sql(tl), digest.as_slice()],
            )?
            .first()
            .copied())
    }

    fn dependents(&mut self, tl: u64, n: u64) -> Result<Vec<u64>> {
        self.ids(
            "SELECT summary FROM summary_sources WHERE timeline = ?1 AND source = ?2 ORDER BY summary",
            params![sql(tl), sql(n)],
        )
    }

    fn insert_node(&mut self, tl: u64, row: &NodeRow) -> Result<()> {
        // A batch of one: its path columns come from point reads of the rows they need and go in
        // with the plain INSERT, whose plan is far cheaper to prepare than the INSERT that reads
        // them itself (a `tl append` process prepares every statement it runs).
        self.insert_nodes(tl, std::slice::from_ref(row))
    }

    fn insert_nodes(&mut self, tl: u64, rows: &[NodeRow]) -> Result<()> {
        let Some(first) = rows.first().map(|r| r.id) else {
            return Ok(());
        };
        // One node (an append, a summary) waits for the search index; a batch is indexed with it.
        let mut writer = if rows.len() == 1 {
            super::rows::NodeWriter::deferring()
        } else {
            super::rows::NodeWriter::new()
        };
        let mut paths = crate::store::jumps::Batch::new(first, rows.len());
        let mut next = first;
        let mut cold = 0i64;
        for row in rows {
            if row.id != next {
                return Err(Error::internal(format!(
                    "internal error: node n{} inserted where n{next} is next",
                    row.id
                )));
            }
            let key = (row.id, row.node.parent, row.depth, row.node.tokens);
            let prefetched = &self.prefetched;
            let path = paths.next(key, &mut |n| match prefetched
                .iter()
                .find(|(t, id, _)| (*t, *id) == (tl, n))
            {
                Some((_, _, known)) => Ok(*known),
                None => self.path_row(tl, n),
            })?;
            writer.put(self, tl, row, Some(path))?;
            cold += i64::from(row.node.cold);
            next = next.checked_add(1).ok_or_else(Error::overflow)?;
        }
        self.prefetched.clear();
        // The rows must be the timeline's next ones: checked by the update itself (a failed
        // check fails the transaction, so the rows above are not kept).
        let moved = self.exec(
            "UPDATE timelines SET next_node = next_node + ?2, cold_nodes = cold_nodes + ?3 WHERE id = ?1 AND next_node = ?4",
            params![sql(tl), rows.len() as i64, cold, sql(first)],
        )?;
        if moved != 1 {
            return Err(match self.timeline(tl)? {
                None => Error::internal(format!("internal error: no timeline tl{tl}")),
                Some(t) => Error::internal(format!(
                    "internal error: node n{first} inserted where n{} is next",
                    t.next_node
                )),
            });
        }
        Ok(())
    }

    fn cover_path(&mut self, tl: u64, from: u64, to: u64) -> Result<u64> {
        // Nothing is written per message: coverage is derived from the ranges (src/store/cover.rs).
        cover::range_len(self, tl, from, to)
    }

    fn in_a_range(&mut self, tl: u64, n: &NodeRow) -> Result<bool> {
        cover::in_a_range(self, tl, n)
    }

    fn change_node(&mut self, tl: u64, n: u64, change: NodeChange) -> Result<()> {
        let key = params![sql(tl), sql(n)];
        let changed = match change {
            NodeChange::Pin(pinned) => self.exec(
                &format!(
                    "UPDATE nodes SET pinned = {} WHERE timeline = ?1 AND id = ?2",
                    i64::from(pinned)
                ),
                key,
            )?,
            NodeChange::Stale => self.exec(
                "UPDATE nodes SET stale = 1 WHERE timeline = ?1 AND id = ?2",
                key,
            )?,
            NodeChange::SupersededBy(newer) => self.exec(
                "UPDATE nodes SET superseded_by = ?3 WHERE timeline = ?1 AND id = ?2",
                params![sql(tl), sql(n), sql(newer)],
            )?,
            NodeChange::Archived => {
                let moved = self.exec(
                    "UPDATE nodes SET cold = 1 WHERE timeline = ?1 AND id = ?2 AND cold = 0",
                    key,
                )?;
                self.exec(
                    "UPDATE timelines SET cold_nodes = cold_nodes + ?2 WHERE id = ?1",
                    params![sql(tl), moved as i64],
                )?;
                1
            }
            NodeChange::Restored => {
                let moved = self.exec(
                    "UPDATE nodes SET cold = 0 WHERE timeline = ?1 AND id = ?2 AND cold = 1",
                    key,
                )?;
                self.exec(
                    "UPDATE timelines SET cold_nodes = cold_nodes - ?2 WHERE id = ?1",
                    params![sql(tl), moved as i64],
                )?;
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

    fn branches(&mut self, tl: u64) -> Result<Vec<Branch>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT name, head, watermark FROM branches WHERE timeline = ?1 ORDER BY seq",
            )
            .map_err(|e| self.fail(e))?;
        stmt.query_map(params![sql(tl)], |r| {
            Ok(Branch {
                name: r.get(0)?,
                head: unsql(r.get(1)?),
                watermark: unsql(r.get(2)?),
            })
        })
        .and_then(|rows| rows.collect())
        .map_err(|e| self.fail(e))
    }

    fn branch(&mut self, tl: u64, name: &str) -> Result<Option<Branch>> {
        self.conn
            .prepare_cached(
                "SELECT head, watermark FROM branches WHERE timeline = ?1 AND name = ?2",
            )
            .and_then(|mut s| {
                s.query_row(params![sql(tl), name], |r| {
                    Ok(Branch {
                        name: name.to_string(),
                        head: unsql(r.get(0)?),
                        watermark: unsql(r.get(1)?),
                    })
                })
                .optional()
            })
            .map_err(|e| self.fail(e))
    }

    fn put_branch(&mut self, tl: u64, branch: &Branch) -> Result<()> {
        self.exec(
            "INSERT INTO branches (timeline, name, head, watermark) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (timeline, name) DO UPDATE SET head = excluded.head, watermark = excluded.watermark",
            params![
                sql(tl),
                branch.name,
                sql(branch.head),
                sql(branch.watermark)
            ],
        )?;
        Ok(())
    }

    fn remove_branch(&mut self, tl: u64, name: &str) -> Result<()> {
        self.exec(
            "DELETE FROM branches WHERE timeline = ?1 AND name = ?2",
            params![sql(tl), name],
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
        let changed = self.exec(
            "UPDATE branches SET name = ?3 WHERE timeline = ?1 AND name = ?2",
            params![sql(tl), old, new],
        )?;
        if changed != 1 {
            return Err(Error::internal(format!(
                "internal error: no branch {old:?} to rename"
            )));
        }
        Ok(())
    }

    fn archived_branches(&mut self, tl: u64) -> Result<Vec<ArchivedBranch>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT name, head, watermark, position, nodes FROM archived_branches WHERE timeline = ?1 ORDER BY seq",
            )
            .map_err(|e| self.fail(e))?;
        let rows = stmt
            .query_map(params![sql(tl)], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, String>(4)?,
                ))
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.fail(e))?;
        rows.into_iter()
            .map(|(name, head, watermark, position, nodes)| {
                let nodes: Vec<u64> = serde_json::from_str(&nodes).map_err(|e| {
                    Error::damaged(format!(
                        "the database {} has a damaged record of archived branch {name:?} ({e})",
                        self.path.display()
                    ))
                })?;
                Ok(ArchivedBranch {
                    name,
                    head: unsql(head),
                    watermark: unsql(watermark),
                    position: unsql(position),
                    nodes,
                })
            })
            .collect()
    }

    fn push_archived_branch(&mut self, tl: u64, archived: &ArchivedBranch) -> Result<()> {
        insert_archived(self, tl, archived)
    }

    fn remove_archived_branch(&mut self, tl: u64, name: &str) -> Result<()> {
        self.exec(
            "DELETE FROM archived_branches WHERE seq = (SELECT max(seq) FROM archived_branches WHERE timeline = ?1 AND name = ?2)",
            params![sql(tl), name],
        )?;
        Ok(())
    }

    fn idempotency(&mut self, scope: &str, key: &str) -> Result<Option<IdempotencyEntry>> {
        let row = self
            .conn
            .prepare_cached(
                "SELECT op, result, ts, request FROM idempotency WHERE scope = ?1 AND key = ?2",
            )
            .and_then(|mut s| {
                s.query_row(params![scope, key], |r| {
                    Ok((
                        r.get::<_, String>(0)?,
                        r.get::<_, String>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, Option<String>>(3)?,
                    ))
                })
                .optional()
            })
            .map_err(|e| self.fail(e))?;
        row.map(|(op, result, ts, request)| {
            Ok(IdempotencyEntry {
                scope: scope.to_string(),
                key: key.to_string(),
                op,
                result: serde_json::from_str(&result).map_err(|e| {
                    Error::damaged(format!(
                        "the database {} has a damaged idempotency record ({e})",
                        self.path.display()
                    ))
                })?,
                ts: unsql(ts),
                request,
            })
        })
        .transpose()
    }

    fn put_idempotency(&mut self, entry: &IdempotencyEntry) -> Result<()> {
        self.exec(
            "INSERT OR REPLACE INTO idempotency (scope, key, op, result, ts, request) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                entry.scope,
                entry.key,
                entry.op,
                entry.result.to_string(),
                sql(entry.ts),
                entry.request
            ],
        )?;
        Ok(())
    }

    fn purge_idempotency(&mut self, cutoff: u64) -> Result<()> {
        // Timestamps are far below 2^63, so the signed comparison in SQL is the unsigned one.
        self.exec(
            "DELETE FROM idempotency WHERE ts <= ?1",
            params![sql(cutoff)],
        )?;
        Ok(())
    }

    fn append_audit(&mut self, now: u64, mut entry: AuditEntry) -> Result<()> {
        let last = self
            .ids("SELECT ts FROM audit ORDER BY seq DESC LIMIT 1", [])?
            .first()
            .copied()
            .unwrap_or(0);
        entry.ts = now.max(last);
        let json = serde_json::to_string(&entry).map_err(|e| Error::database(e.to_string()))?;
        self.exec(
            "INSERT INTO audit (ts, entry) VALUES (?1, ?2)",
            params![sql(entry.ts), json],
        )?;
        Ok(())
    }

    fn earlier_imports(
        &mut self,
        format: &str,
        source_key: &str,
        digest: &str,
    ) -> Result<crate::model::Earlier> {
        // One row each, through imports_by_digest and imports_by_source.
        let same = self.import_records(
            "SELECT record FROM imports WHERE format = ?1 AND source_key = ?2 AND digest = ?3 ORDER BY seq LIMIT 1",
            params![format, source_key, digest],
        )?;
        let latest = self.import_records(
            "SELECT record FROM imports WHERE format = ?1 AND source_key = ?2 ORDER BY seq DESC LIMIT 1",
            params![format, source_key],
        )?;
        Ok(crate::model::Earlier {
            same: same.into_iter().next(),
            latest: latest.into_iter().next(),
        })
    }

    fn import_digests(&mut self, format: &str) -> Result<Vec<crate::model::KnownImport>> {
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT digest, source_key, timeline, json_extract(record, '$.title') FROM imports WHERE format = ?1 ORDER BY seq",
            )
            .map_err(|e| self.fail(e))?;
        let rows = stmt
            .query_map(params![format], |r| {
                Ok(crate::model::KnownImport {
                    digest: r.get(0)?,
                    source_key: r.get(1)?,
                    timeline: crate::model::timeline_id(unsql(r.get::<_, i64>(2)?)),
                    title: r.get(3)?,
                })
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.fail(e))?;
        Ok(rows)
    }

    fn imports_of(&mut self, format: &str, source_key: &str) -> Result<Vec<ImportRecord>> {
        self.import_records(
            "SELECT record FROM imports WHERE format = ?1 AND source_key = ?2 ORDER BY seq",
            params![format, source_key],
        )
    }

    fn put_import(&mut self, record: &ImportRecord) -> Result<()> {
        self.put_import_row(record)
    }

    fn created_at(&mut self, tl: u64, n: u64) -> Result<Option<u64>> {
        self.conn
            .prepare_cached("SELECT created_at FROM nodes WHERE timeline = ?1 AND id = ?2")
            .and_then(|mut s| {
                s.query_row(params![sql(tl), sql(n)], |r| r.get::<_, Option<i64>>(0))
                    .optional()
            })
            .map(|t| t.flatten().map(unsql))
            .map_err(|e| self.fail(e))
    }

    fn search(&mut self, query: &Query, scope: &SearchScope) -> Result<Vec<SearchHit>> {
        // Each match comes with how often it holds each phrase (tl_phrase_counts), its length
        // (FTS5's size record) and its creation time (kept in search_docs), and is scored by
        // crate::search::Scorer as on every engine, with each phrase's IDF over the whole database
        // (the messages holding it, as FTS5's bm25() counts them). Counting a phrase reads all of
        // its postings, so when every phrase is in many messages the search reads each message
        // holding any of them once instead (OR), counts the phrases there and keeps the messages
        // holding all: a query of words every message holds costs one pass, not two. When some
        // phrase is in few messages the matches are few: the others are counted, and the search
        // reads the matches alone (AND), so one rare word keeps a query cheap.
        let phrases = query.phrases.len();
        let counted = self.phrase_hits(query)?;
        let one_pass = counted.is_none();
        let mut hits = counted.unwrap_or_else(|| vec![0; phrases]);
        // The nodes are joined only to filter by role or zone: a word most messages hold matches
        // most of the index, and each join is one more lookup per match.
        let filter = scope.role.is_some() || scope.cold.is_some();
        let statement = format!(
            "SELECT d.timeline, d.node, d.created_at, s.sz, {counts}(search_index), \
             coalesce({in_scope}, 0) \
             FROM search_index LEFT JOIN search_docs d ON d.doc = search_index.rowid \
             LEFT JOIN search_index_docsize s ON s.id = search_index.rowid {nodes} \
             WHERE search_index MATCH ?1",
            counts = phrase_counts::NAME,
            in_scope = if filter {
                "(?2 IS NULL OR d.timeline = ?2) AND (?3 IS NULL OR n.role = ?3) \
                 AND (?4 IS NULL OR n.cold = ?4)"
            } else {
                "(?2 IS NULL OR d.timeline = ?2) AND ?3 IS NULL AND ?4 IS NULL"
            },
            nodes = if filter {
                "LEFT JOIN nodes n ON n.timeline = d.timeline AND n.id = d.node"
            } else {
                ""
            },
        );

        let mut totals = (0, 0);
        // Each match, and its phrases' occurrences (`phrases` of them per match, in one vector).
        let mut matched = Vec::new();
        let mut freqs = Vec::new();
        let mut damaged = None;
        // The function is registered on a connection's first search, not when it opens: most
        // processes (a `tl append`) never search.
        let mut stmt = match self.conn.prepare_cached(&statement) {
            Err(e) if phrase_counts::is_missing(&e) => phrase_counts::register(self.conn)
                .and_then(|()| self.conn.prepare_cached(&statement)),
            prepared => prepared,
        }
        .map_err(|e| self.fail(e))?;
        let mut rows = stmt
            .query(params![
                if one_pass {
                    query.fts5_any()
                } else {
                    query.fts5_all()
                },
                scope.timeline.map(sql),
                scope.role.map(|r| r.as_str()),
                scope.cold
            ])
            .map_err(|e| self.fail(e))?;
        while let Some(row) = rows.next().map_err(|e| self.fail(e))? {
            let counts = match row.get_ref(4).map_err(|e| self.fail(e))? {
                ValueRef::Blob(counts) => phrase_counts::Counts::read(counts, phrases),
                _ => None,
            };
            let Some(counts) = counts else {
                return Err(Error::internal(format!(
                    "internal error: {} gave a record that is not {phrases} phrases long",
                    phrase_counts::NAME
                )));
            };
            totals = (counts.rows, counts.tokens);
            let mut holds_all = true;
            for (hit, f) in hits.iter_mut().zip(counts.freq()) {
                if one_pass {
                    *hit += u64::from(f > 0);
                }
                holds_all &= f > 0;
            }
            if !holds_all {
                continue;
            }
            // Every index row counts for the phrases' weights, as in `phrase_hits`; one without
            // its message's row (the index is damaged; `db check` says so) is no match, nor one
            // outside the filters.
            let read = || -> rusqlite::Result<_> {
                Ok((
                    row.get::<_, bool>(5)?,
                    row.get::<_, Option<i64>>(0)?.map(unsql),
                    row.get::<_, Option<i64>>(1)?.map(unsql),
                    row.get::<_, Option<i64>>(2)?.map(unsql),
                    match row.get_ref(3)? {
                        ValueRef::Blob(record) => super::check::varint(record),
                        _ => None,
                    },
                ))
            };
            let (in_scope, timeline, node, created_at, length) =
                read().map_err(|e| self.fail(e))?;
            let (true, Some(timeline), Some(node)) = (in_scope, timeline, node) else {
                continue;
            };
            let Some(length) = length else {
                damaged.get_or_insert(format!("tl{timeline} n{node}"));
                continue;
            };
            freqs.extend(counts.freq());
            matched.push((timeline, node, length, created_at));
        }
        if let Some(which) = damaged {
            // The index is derived from the messages, which are intact: rebuilding it recovers.
            return Err(Error::database(
                Message::from(format!(
                    "the search index of the database {} is damaged: it has no readable size record for {which}; nothing was changed; ",
                    self.path.display()
                ))
                .worded(
                    "run tl db check --repair to rebuild the search index",
                    ASK_THE_USER_TO_CHECK,
                ),
            ));
        }
        // The messages waiting for the index (src/store/sqlite/pending.rs), matched as the JSON
        // engine matches every message and counted in the statistics as FTS5 will count them.
        let pending = self.pending_docs()?;
        if !pending.is_empty() {
            let (rows, tokens) = self.index_totals()?;
            let mut tally = Tally { rows, tokens, hits };
            for doc in pending {
                let Some((length, freq)) = tally.add(query, &doc.text) else {
                    continue;
                };
                if scope.admits(doc.timeline, doc.role, doc.cold) {
                    freqs.extend(freq);
                    matched.push((doc.timeline, doc.node, length as u64, doc.created_at));
                }
            }
            (totals, hits) = ((tally.rows, tally.tokens), tally.hits);
        }
        let scorer = Scorer::new(totals.0, totals.1, &hits);
        Ok(matched
            .into_iter()
            .zip(freqs.chunks_exact(phrases.max(1)))
            .map(|((timeline, node, length, created_at), freq)| SearchHit {
                timeline,
                node,
                score: scorer.score(usize::try_from(length).unwrap_or(usize::MAX), freq),
                created_at,
            })
            .collect())
    }

    fn load_timeline(&mut self, tl: u64) -> Result<Timeline> {
        let info = self
            .timeline(tl)?
            .ok_or_else(|| Error::internal(format!("internal error: no timeline tl{tl}")))?;
        let query = format!("SELECT {NODE_COLUMNS} FROM nodes WHERE timeline = ?1 ORDER BY id");
        let mut stmt = self.conn.prepare(&query).map_err(|e| self.fail(e))?;
        let rows: Vec<NodeRow> = stmt
            .query_map(params![sql(tl)], read_node)
            .and_then(|rows| rows.collect())
            .map_err(|e| self.fail(e))?;
        drop(stmt);
        let damaged = |what: String| {
            Error::damaged(format!(
                "the database {} is damaged: timeline tl{tl}: {what}",
                self.path.display()
            ))
        };
        let mut nodes = Vec::with_capacity(rows.len());
        let mut pins = std::collections::BTreeSet::new();
        for (i, row) in rows.into_iter().enumerate() {
            if row.id != i as u64 {
                return Err(damaged(format!("node n{i} is missing")));
            }
            if row.pinned {
                pins.insert(row.id);
            }
            nodes.push(row.node);
        }
        if nodes.len() as u64 != info.next_node {
            return Err(damaged(format!(
                "next_node {} does not match the {} stored nodes",
                info.next_node,
                nodes.len()
            )));
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
        timeline.rebuild().map_err(|e| damaged(e.message))?;
        timeline.check_archived().map_err(|e| damaged(e.message))?;
        Ok(timeline)
    }

    fn load_database(&mut self) -> Result<Database> {
        let ids = self.timeline_ids(usize::MAX)?;
        let mut timelines = Vec::with_capacity(ids.len());
        for id in ids {
            timelines.push(self.load_timeline(id)?);
        }
        let mut stmt = self
            .conn
            .prepare("SELECT scope, key, op, result, ts, request FROM idempotency ORDER BY rowid")
            .map_err(|e| self.fail(e))?;
        let idempotency = stmt
            .query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, String>(3)?,
                    r.get::<_, i64>(4)?,
                    r.get::<_, Option<String>>(5)?,
                ))
            })
            .and_then(|rows| rows.collect::<rusqlite::Result<Vec<_>>>())
            .map_err(|e| self.fail(e))?;
        drop(stmt);
        let idempotency = idempotency
            .into_iter()
            .map(|(scope, key, op, result, ts, request)| IdempotencyEntry {
                scope,
                key,
                op,
                result: serde_json::from_str(&result).unwrap_or(serde_json::Value::Null),
                ts: unsql(ts),
                request,
            })
            .collect();
        let mut stmt = self
            .conn
            .prepare("SELECT entry FROM audit ORDER BY seq")
            .map_err(|e| self.fail(e))?;
        let audit: Vec<String> = stmt
            .query_map([], |r| r.get(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| self.fail(e))?;
        drop(stmt);
        let audit = audit
            .iter()
            .map(|json| {
                serde_json::from_str(json).map_err(|e| {
                    Error::damaged(format!(
                        "the database {} has a damaged audit entry ({e})",
                        self.path.display()
                    ))
                })
            })
            .collect::<Result<Vec<AuditEntry>>>()?;
        let imports = self.import_records("SELECT record FROM imports ORDER BY seq", [])?;
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
        self.conn
            .query_row(
                "SELECT count(*), coalesce(sum(next_node - 1), 0), coalesce(sum(cold_nodes), 0) FROM timelines",
                [],
                |r| {
                    Ok(Counts {
                        timelines: unsql(r.get(0)?),
                        nodes: unsql(r.get(1)?),
                        cold_nodes: unsql(r.get(2)?),
                    })
                },
            )
            .map_err(|e| self.fail(e))
    }
}
