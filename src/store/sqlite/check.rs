//! `db check` and `db check --repair`: SQLite's integrity check, every row against a fresh
//! derivation, and the search index against the messages.

use super::migrations::REFILL_SEARCH_INDEX;
use super::rows::unsql;
use super::schema::{foreign_problems, guard_schema};
use super::tx::SqlTx;
use super::{SqliteStore, failure, missing};
use crate::error::Result;
use crate::model::Database;
use crate::store::Tx;
use rusqlite::TransactionBehavior;

impl SqliteStore {
    /// SQLite's integrity check, then every row checked against what a fresh derivation gives.
    pub fn check(&mut self) -> Result<Vec<String>> {
        // Foreign schema objects are listed, not refused (and nothing else is checked while they
        // are there: the checks below read the tables they may hang on).
        if self.conn.is_none() {
            self.foreign = Some(Vec::new());
        }
        let opened = self.connection(false).map(|c| c.is_some());
        let foreign = self.foreign.take().unwrap_or_default();
        opened?;
        if !foreign.is_empty() {
            self.conn = None;
            self.immutable_since = None;
            return Ok(foreign_problems(&foreign));
        }
        let problems = self.check_open();
        // A file that changed under an immutable connection is reported as that, not as damage.
        self.end_immutable_read()?;
        problems
    }

    pub(super) fn check_open(&mut self) -> Result<Vec<String>> {
        let path = self.path.clone();
        if self.connection(false)?.is_none() {
            return Err(missing(&path));
        }
        let read_only = self.read_only.is_some();
        let conn = self.conn.as_mut().expect("opened above");
        let mut problems = Vec::new();
        let mut stmt = conn
            .prepare("PRAGMA integrity_check")
            .map_err(|e| failure(&path, "cannot check", e))?;
        let rows: Vec<String> = stmt
            .query_map([], |r| r.get::<_, String>(0))
            .and_then(|rows| rows.collect())
            .map_err(|e| failure(&path, "cannot check", e))?;
        drop(stmt);
        problems.extend(rows.into_iter().filter(|r| r != "ok"));
        if !problems.is_empty() {
            return Ok(problems);
        }
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Deferred)
            .map_err(|e| failure(&path, "cannot read", e))?;
        let mut sql_tx = SqlTx::new(&tx, &path, &self.pending);
        match sql_tx.load_database() {
            Err(e) => problems.push(e.message),
            Ok(db) => {
                for timeline in &db.timelines {
                    for n in 0..timeline.nodes.len() as u64 {
                        let stored = sql_tx.node(timeline.id, n)?;
                        let expected = crate::store::memory::node_row(timeline, n);
                        if stored != expected {
                            problems.push(format!(
                                "timeline tl{}: the stored state of n{n} differs from what its history gives",
                                timeline.id
                            ));
                        }
                    }
                }
                for timeline in &db.timelines {
                    let stored = sql_tx.path_columns(timeline.id)?;
                    problems.extend(crate::store::jumps::problems(timeline, &stored));
                }
                problems.extend(sql_tx.check_search_index(&db, read_only)?);
                // The values themselves, by the checks a snapshot's load applies (a non-empty
                // intent tag, ...): what db convert could not write otherwise.
                if let Err(problem) = crate::store::json::decode(&crate::store::json::encode(&db)) {
                    let problem = problem.to_string();
                    problems.push(problem);
                }
            }
        }
        let _ = tx.rollback();
        Ok(problems)
    }

    /// Empty the search index and fill it again from the messages, in one transaction.
    pub fn repair(&mut self) -> Result<Vec<String>> {
        let path = self.path.clone();
        if self.connection(false)?.is_none() {
            return Err(missing(&path));
        }
        self.refuse_change_if_read_only()?;
        let conn = self.conn.as_mut().expect("opened above");
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| failure(&path, "cannot start a change of", e))?;
        guard_schema(&tx, &path, &mut self.verified_schema)?;
        tx.execute_batch(&format!(
            "DELETE FROM search_pending; DELETE FROM search_docs; INSERT INTO search_index (search_index) VALUES ('delete-all'); {REFILL_SEARCH_INDEX}"
        ))
        .map_err(|e| failure(&path, "cannot rebuild the search index of", e))?;
        tx.commit()
            .map_err(|e| failure(&path, "cannot commit the change to", e))?;
        Ok(vec!["search index".to_string()])
    }
}

impl SqlTx<'_> {
    /// Problems of the search index: a searchable message missing from it or indexed with another
    /// number of terms, an entry for a message that is not searchable, FTS5's own integrity check.
    /// `read_only`: FTS5 runs its own integrity check as a write, which a read-only connection
    /// refuses; the row-by-row comparison below still runs.
    pub(super) fn check_search_index(&self, db: &Database, read_only: bool) -> Result<Vec<String>> {
        let advice = "; run tl db check --repair to rebuild the search index";
        let mut problems = Vec::new();
        if !read_only
            && let Err(e) = self.conn.execute(
                "INSERT INTO search_index (search_index, rank) VALUES ('integrity-check', 0)",
                [],
            )
        {
            problems.push(format!("the search index is damaged ({e}){advice}"));
            return Ok(problems);
        }
        let mut stmt = self
            .conn
            .prepare(
                "SELECT d.timeline, d.node, s.sz, d.created_at FROM search_docs d \
                 LEFT JOIN search_index_docsize s ON s.id = d.doc ORDER BY d.timeline, d.node",
            )
            .map_err(|e| self.fail(e))?;
        // (timeline, node, FTS5's size record, creation time) of each indexed message.
        type Indexed = (u64, u64, Option<Vec<u8>>, Option<u64>);
        let indexed: Vec<Indexed> = stmt
            .query_map([], |r| {
                Ok((
                    unsql(r.get(0)?),
                    unsql(r.get(1)?),
                    r.get::<_, Option<Vec<u8>>>(2)?,
                    r.get::<_, Option<i64>>(3)?.map(unsql),
                ))
            })
            .and_then(|rows| rows.collect())
            .map_err(|e| self.fail(e))?;
        drop(stmt);
        let mut indexed = indexed.into_iter().peekable();
        // Messages waiting for the index (src/store/sqlite/pending.rs) count as indexed.
        let mut pending = self.pending_keys()?.into_iter().peekable();
        let mut missing = 0usize;
        let mut wrong = 0usize;
        let mut extra = 0usize;
        let mut timed = 0usize;
        for timeline in &db.timelines {
            for (i, node) in timeline.nodes.iter().enumerate() {
                let n = i as u64;
                let terms = if crate::store::searchable(n, node) {
                    crate::search::terms(&node.text).len()
                } else {
                    0
                };
                while indexed
                    .peek()
                    .is_some_and(|(t, m, _, _)| (*t, *m) < (timeline.id, n))
                {
                    indexed.next();
                    extra += 1;
                }
                let entry = indexed
                    .next_if(|(t, m, _, _)| (*t, *m) == (timeline.id, n))
                    .map(|(_, _, size, created_at)| {
                        if created_at != node.created_at {
                            timed += 1;
                        }
                        size
                    });
                while pending.peek().is_some_and(|key| *key < (timeline.id, n)) {
                    pending.next();
                    extra += 1;
                }
                if pending.next_if(|key| *key == (timeline.id, n)).is_some() {
                    // Waiting for the index: wrong for a node that is not searchable, or twice.
                    extra += usize::from(!crate::store::searchable(n, node));
                    extra += usize::from(entry.is_some());
                    continue;
                }
                match (terms, entry) {
                    (0, None) => {}
                    (0, Some(_)) => extra += 1,
                    (_, None | Some(None)) => missing += 1,
                    (terms, Some(Some(size))) => {
                        if varint(&size) != Some(terms as u64) {
                            wrong += 1;
                        }
                    }
                }
            }
        }
        extra += indexed.count() + pending.count();
        for (count, what) in [
            (
                missing,
                "searchable message(s) missing from the search index",
            ),
            (
                wrong,
                "message(s) indexed with other terms than their text has",
            ),
            (extra, "search index entries for no searchable message"),
            (
                timed,
                "search index entries with another creation time than their message",
            ),
        ] {
            if count > 0 {
                problems.push(format!("{count} {what}{advice}"));
            }
        }
        Ok(problems)
    }
}

/// An SQLite variable-length integer (as FTS5 stores a message's term count in `_docsize`).
pub(super) fn varint(bytes: &[u8]) -> Option<u64> {
    varint_at(bytes, 0).map(|(value, _)| value)
}

/// The SQLite variable-length integer at `at` in `bytes`, and the offset after it.
pub(super) fn varint_at(bytes: &[u8], at: usize) -> Option<(u64, usize)> {
    let mut value = 0u64;
    for (i, &b) in bytes.get(at..)?.iter().enumerate().take(9) {
        if i == 8 {
            return Some(((value << 8) | u64::from(b), at + 9));
        }
        value = (value << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            return Some((value, at + i + 1));
        }
    }
    None
}
