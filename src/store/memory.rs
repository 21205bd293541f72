//! `Tx` over the in-memory model: what the JSON engine loads from its snapshot, and what a read of a
//! database that does not exist yet sees (an empty one).

use super::{
    Counts, Engine, NodeChange, NodeRow, PathFind, SearchHit, SearchScope, TimelineRow, Tx,
};
use crate::error::{Error, Result};
use crate::model::file::{AuditEntry, IdempotencyEntry, ImportRecord};
use crate::model::{ArchivedBranch, Branch, Database, ROOT, SummaryKind, Timeline};
use crate::search::{Query, Scorer, Tally};

/// A transaction over an in-memory `Database` (the JSON engine's, or an empty one).
pub struct MemTx<'a> {
    /// The database the transaction reads and changes.
    pub db: &'a mut Database,
    /// The engine reported to operations.
    pub engine: Engine,
}

impl MemTx<'_> {
    fn find(&self, tl: u64) -> Option<usize> {
        self.db.timelines.binary_search_by_key(&tl, |t| t.id).ok()
    }

    fn get(&mut self, tl: u64) -> Result<&mut Timeline> {
        match self.find(tl) {
            Some(i) => Ok(&mut self.db.timelines[i]),
            None => Err(Error::internal(format!(
                "internal error: timeline tl{tl} is not in the database"
            ))),
        }
    }
}

fn timeline_row(t: &Timeline) -> TimelineRow {
    TimelineRow {
        id: t.id,
        next_node: t.nodes.len() as u64,
        current_branch: t.current_branch.clone(),
        title: t.title.clone(),
        created_at: t.created_at,
        updated_at: t.updated_at,
    }
}

/// Node `n` of an in-memory timeline with its derived state.
pub(super) fn node_row(t: &Timeline, n: u64) -> Option<NodeRow> {
    let i = usize::try_from(n).ok()?;
    let node = t.nodes.get(i)?;
    Some(NodeRow {
        id: n,
        node: node.clone(),
        prefix_tokens: t.derived.prefix_tokens[i],
        depth: t.derived.depth[i],
        pinned: t.pins.contains(&n),
        stale: t.derived.stale[i],
        superseded_by: t.derived.superseded_by.get(&n).copied(),
    })
}

impl Tx for MemTx<'_> {
    fn engine(&self) -> Engine {
        self.engine
    }

    fn next_timeline(&mut self) -> Result<u64> {
        Ok(self.db.next_timeline)
    }

    fn timeline_ids(&mut self, limit: usize) -> Result<Vec<u64>> {
        Ok(self.db.timelines.iter().take(limit).map(|t| t.id).collect())
    }

    fn timeline(&mut self, tl: u64) -> Result<Option<TimelineRow>> {
        Ok(self.find(tl).map(|i| {
            let t = &self.db.timelines[i];
            timeline_row(t)
        }))
    }

    fn create_timeline(
        &mut self,
        id: u64,
        first_branch: &str,
        title: Option<&str>,
        now: u64,
    ) -> Result<()> {
        let next = id.checked_add(1).ok_or_else(Error::overflow)?;
        let at = self.db.timelines.partition_point(|t| t.id < id);
        let mut timeline = Timeline::new(id, first_branch);
        timeline.title = title.map(str::to_string);
        timeline.created_at = Some(now);
        timeline.updated_at = Some(now);
        self.db.timelines.insert(at, timeline);
        self.db.next_timeline = next;
        Ok(())
    }

    fn touch_timeline(&mut self, tl: u64, now: u64) -> Result<()> {
        self.get(tl)?.updated_at = Some(now);
        Ok(())
    }

    fn timeline_list(&mut self) -> Result<Vec<(TimelineRow, u64)>> {
        Ok(self
            .db
            .timelines
            .iter()
            .map(|t| (timeline_row(t), t.branches.len() as u64))
            .collect())
    }

    fn set_current_branch(&mut self, tl: u64, name: &str) -> Result<()> {
        self.get(tl)?.current_branch = name.to_string();
        Ok(())
    }

    fn node(&mut self, tl: u64, n: u64) -> Result<Option<NodeRow>> {
        Ok(self
            .find(tl)
            .and_then(|i| node_row(&self.db.timelines[i], n)))
    }

    fn ancestors(&mut self, tl: u64, n: u64, limit: u64) -> Result<Vec<NodeRow>> {
        Ok(self.walk_up(tl, n, |rows, _| (rows.len() as u64) < limit))
    }

    fn budget_window(&mut self, tl: u64, n: u64, max_tokens: u64) -> Result<Vec<NodeRow>> {
        let mut top = None;
        Ok(self.walk_up(tl, n, |rows, row| {
            // Go on while the rows read so far hold at most max_tokens.
            let target = *top.get_or_insert(row.prefix_tokens);
            !rows.last().is_some_and(|last: &NodeRow| {
                let above = last.prefix_tokens.saturating_sub(last.node.tokens);
                target.saturating_sub(above) > max_tokens
            })
        }))
    }

    fn find_on_path(&mut self, tl: u64, n: u64, find: PathFind) -> Result<Option<NodeRow>> {
        let Some(i) = self.find(tl) else {
            return Ok(None);
        };
        let t = &self.db.timelines[i];
        let mut at = n;
        let mut oldest = None;
        while at != ROOT {
            let Some(row) = node_row(t, at) else { break };
            let found = match find {
                PathFind::Depth(d) => row.depth == d,
                PathFind::OldestBare { deeper_than } => {
                    if row.depth <= deeper_than {
                        break;
                    }
                    if !t.is_covered(at) {
                        oldest = Some(row.clone());
                    }
                    false
                }
                PathFind::Obstacle { tokens } => {
                    row.pinned
                        || row.node.tokens <= tokens
                        || t.derived.summaries_from.get(&at).is_some_and(|s| {
                            s.iter().any(|&s| {
                                t.nodes.get(s as usize).is_some_and(|s| {
                                    s.summary
                                        .as_ref()
                                        .is_some_and(|s| s.kind == SummaryKind::Real)
                                })
                            })
                        })
                }
            };
            if found {
                return Ok(Some(row));
            }
            if row.node.parent >= at {
                break;
            }
            at = row.node.parent;
        }
        Ok(oldest)
    }

    fn children(&mut self, tl: u64, n: u64) -> Result<Vec<u64>> {
        let t = self.get(tl)?;
        Ok(t.derived
            .children
            .get(n as usize)
            .cloned()
            .unwrap_or_default())
    }

    fn summaries_from(&mut self, tl: u64, from: u64) -> Result<Vec<u64>> {
        let t = self.get(tl)?;
        Ok(t.derived
            .summaries_from
            .get(&from)
            .cloned()
            .unwrap_or_default())
    }

    fn summary_by_request(&mut self, tl: u64, digest: &[u8; 32]) -> Result<Option<u64>> {
        Ok(self.get(tl)?.derived.summary_requests.get(digest).copied())
    }

    fn dependents(&mut self, tl: u64, n: u64) -> Result<Vec<u64>> {
        let t = self.get(tl)?;
        Ok(t.derived.dependents.get(&n).cloned().unwrap_or_default())
    }

    fn insert_node(&mut self, tl: u64, row: &NodeRow) -> Result<()> {
        let t = self.get(tl)?;
        let n = t.nodes.len() as u64;
        if row.id != n {
            return Err(Error::internal(format!(
                "internal error: node n{} inserted where n{n} is next",
                row.id
            )));
        }
        t.nodes.push(row.node.clone());
        t.derived.prefix_tokens.push(row.prefix_tokens);
        t.derived.depth.push(row.depth);
        t.derived.children.push(Vec::new());
        t.derived.children[row.node.parent as usize].push(n);
        // (A new node is covered by no range yet: `cover_path` counts the ranges made after it.)
        t.derived.cover_count.push(0);
        t.derived.stale.push(row.stale);
        if row.pinned {
            t.pins.insert(n);
        }
        t.index_summary_keys(n);
        Ok(())
    }

    fn insert_nodes(&mut self, tl: u64, rows: &[NodeRow]) -> Result<()> {
        // In memory one row costs what a batch's row would: nothing to save by batching.
        rows.iter().try_for_each(|row| self.insert_node(tl, row))
    }

    fn cover_path(&mut self, tl: u64, from: u64, to: u64) -> Result<u64> {
        let t = self.get(tl)?;
        let mut covered = 0;
        let mut at = to;
        while at != ROOT && (at as usize) < t.nodes.len() {
            t.derived.cover_count[at as usize] += 1;
            covered += 1;
            let parent = t.nodes[at as usize].parent;
            if at == from || parent >= at {
                break;
            }
            at = parent;
        }
        Ok(covered)
    }

    fn in_a_range(&mut self, tl: u64, n: &NodeRow) -> Result<bool> {
        let t = self.get(tl)?;
        Ok(t.derived
            .cover_count
            .get(n.id as usize)
            .is_some_and(|&c| c > 0))
    }

    fn change_node(&mut self, tl: u64, n: u64, change: NodeChange) -> Result<()> {
        let t = self.get(tl)?;
        let i = n as usize;
        if n == ROOT || i >= t.nodes.len() {
            return Err(Error::internal(format!(
                "internal error: no message n{n} to change"
            )));
        }
        match change {
            NodeChange::Pin(true) => {
                t.pins.insert(n);
            }
            NodeChange::Pin(false) => {
                t.pins.remove(&n);
            }
            NodeChange::Stale => t.derived.stale[i] = true,
            NodeChange::SupersededBy(newer) => {
                t.derived.superseded_by.insert(n, newer);
            }
            NodeChange::Archived => t.nodes[i].cold = true,
            NodeChange::Restored => t.nodes[i].cold = false,
        }
        Ok(())
    }

    fn branches(&mut self, tl: u64) -> Result<Vec<Branch>> {
        Ok(self.get(tl)?.branches.clone())
    }

    fn branch(&mut self, tl: u64, name: &str) -> Result<Option<Branch>> {
        Ok(self
            .get(tl)?
            .branches
            .iter()
            .find(|b| b.name == name)
            .cloned())
    }

    fn put_branch(&mut self, tl: u64, branch: &Branch) -> Result<()> {
        let t = self.get(tl)?;
        match t.branches.iter_mut().find(|b| b.name == branch.name) {
            Some(existing) => *existing = branch.clone(),
            None => t.branches.push(branch.clone()),
        }
        Ok(())
    }

    fn remove_branch(&mut self, tl: u64, name: &str) -> Result<()> {
        self.get(tl)?.branches.retain(|b| b.name != name);
        Ok(())
    }

    fn insert_branch(&mut self, tl: u64, index: u64, branch: &Branch) -> Result<()> {
        let t = self.get(tl)?;
        let at = usize::try_from(index)
            .unwrap_or(usize::MAX)
            .min(t.branches.len());
        t.branches.insert(at, branch.clone());
        Ok(())
    }

    fn rename_branch(&mut self, tl: u64, old: &str, new: &str) -> Result<()> {
        let t = self.get(tl)?;
        match t.branches.iter_mut().find(|b| b.name == old) {
            Some(branch) => {
                branch.name = new.to_string();
                Ok(())
            }
            None => Err(Error::internal(format!(
                "internal error: no branch {old:?} to rename"
            ))),
        }
    }

    fn archived_branches(&mut self, tl: u64) -> Result<Vec<ArchivedBranch>> {
        Ok(self.get(tl)?.archived.clone())
    }

    fn push_archived_branch(&mut self, tl: u64, archived: &ArchivedBranch) -> Result<()> {
        self.get(tl)?.archived.push(archived.clone());
        Ok(())
    }

    fn remove_archived_branch(&mut self, tl: u64, name: &str) -> Result<()> {
        let t = self.get(tl)?;
        if let Some(i) = t.archived.iter().rposition(|a| a.name == name) {
            t.archived.remove(i);
        }
        Ok(())
    }

    fn idempotency(&mut self, scope: &str, key: &str) -> Result<Option<IdempotencyEntry>> {
        Ok(self
            .db
            .idempotency
            .iter()
            .rev()
            .find(|e| e.scope == scope && e.key == key)
            .cloned())
    }

    fn put_idempotency(&mut self, entry: &IdempotencyEntry) -> Result<()> {
        self.db
            .idempotency
            .retain(|e| !(e.scope == entry.scope && e.key == entry.key));
        self.db.idempotency.push(entry.clone());
        Ok(())
    }

    fn purge_idempotency(&mut self, cutoff: u64) -> Result<()> {
        self.db.idempotency.retain(|e| e.ts > cutoff);
        Ok(())
    }

    fn append_audit(&mut self, now: u64, entry: AuditEntry) -> Result<()> {
        self.db.audit(now, entry);
        Ok(())
    }

    fn earlier_imports(
        &mut self,
        format: &str,
        source_key: &str,
        digest: &str,
    ) -> Result<crate::model::Earlier> {
        Ok(self.db.earlier_imports(format, source_key, digest))
    }

    fn import_digests(&mut self, format: &str) -> Result<Vec<crate::model::KnownImport>> {
        Ok(self
            .db
            .imports
            .iter()
            .filter(|r| r.format == format)
            .map(|r| crate::model::KnownImport {
                digest: r.digest.clone(),
                source_key: r.source_key.clone(),
                timeline: r.timeline.clone(),
                title: r.title.clone(),
            })
            .collect())
    }

    fn imports_of(&mut self, format: &str, source_key: &str) -> Result<Vec<ImportRecord>> {
        Ok(self.db.imports_of(format, source_key))
    }

    fn put_import(&mut self, record: &ImportRecord) -> Result<()> {
        self.db.add_import(record.clone());
        Ok(())
    }

    fn created_at(&mut self, tl: u64, n: u64) -> Result<Option<u64>> {
        Ok(self
            .find(tl)
            .and_then(|i| self.db.timelines[i].nodes.get(n as usize))
            .and_then(|node| node.created_at))
    }

    fn search(&mut self, query: &Query, scope: &SearchScope) -> Result<Vec<SearchHit>> {
        // A scan with the rules of the SQLite engine's index: the statistics BM25 needs (searchable
        // messages, their terms, messages holding each phrase) cover the whole database, whatever
        // the scope, exactly as FTS5 computes them over its whole table.
        let mut tally = Tally {
            rows: 0,
            tokens: 0,
            hits: vec![0; query.phrases.len()],
        };
        // Each match with its length in terms and the occurrences of each phrase, scored below.
        let mut matched: Vec<(SearchHit, usize, Vec<usize>)> = Vec::new();
        for t in &self.db.timelines {
            for (i, node) in t.nodes.iter().enumerate() {
                let n = i as u64;
                if !super::searchable(n, node) {
                    continue;
                }
                let Some((length, freq)) = tally.add(query, &node.text) else {
                    continue;
                };
                if scope.admits(t.id, Some(node.role), node.cold) {
                    let hit = SearchHit {
                        timeline: t.id,
                        node: n,
                        score: 0.0,
                        created_at: node.created_at,
                    };
                    matched.push((hit, length, freq));
                }
            }
        }
        let scorer = Scorer::new(tally.rows, tally.tokens, &tally.hits);
        Ok(matched
            .into_iter()
            .map(|(hit, length, freq)| SearchHit {
                score: scorer.score(length, &freq),
                ..hit
            })
            .collect())
    }

    fn load_timeline(&mut self, tl: u64) -> Result<Timeline> {
        Ok(self.get(tl)?.clone())
    }

    fn load_database(&mut self) -> Result<Database> {
        Ok(self.db.clone())
    }

    fn counts(&mut self) -> Result<Counts> {
        let mut counts = Counts {
            timelines: self.db.timelines.len() as u64,
            ..Counts::default()
        };
        for t in &self.db.timelines {
            counts.nodes += t.nodes.len() as u64 - 1;
            counts.cold_nodes += t.nodes.iter().filter(|n| n.cold).count() as u64;
        }
        Ok(counts)
    }
}

impl MemTx<'_> {
    /// Node `n` and its ancestors, newest first, while `more(rows so far, next row)` says so, and
    /// never past the root or a parent that is not older (a damaged file).
    fn walk_up(
        &self,
        tl: u64,
        n: u64,
        mut more: impl FnMut(&[NodeRow], &NodeRow) -> bool,
    ) -> Vec<NodeRow> {
        let Some(i) = self.find(tl) else {
            return Vec::new();
        };
        let t = &self.db.timelines[i];
        let mut rows = Vec::new();
        let mut at = n;
        while let Some(row) = node_row(t, at) {
            if !more(&rows, &row) {
                break;
            }
            let parent = row.node.parent;
            let last = row.id == ROOT || parent >= row.id;
            rows.push(row);
            if last {
                break;
            }
            at = parent;
        }
        rows
    }
}
