//! Messages waiting for the search index.
//!
//! FTS5 writes a new segment, its structure record, the segment's index entry and a size record for
//! every transaction that adds a document, and the search document takes a row and a unique-index
//! entry: seven of the thirteen pages an append wrote, and about a third of a `timeline_append`
//! call's time. So a change that writes one node (an append, a summary, an edit's new version)
//! notes it in `search_pending`, one small row, in its own transaction; the change that brings the
//! waiting messages to `PENDING_LIMIT` indexes them all in one segment. A `tl-mcp` session lets
//! more wait and indexes them while its client is quiet (`SESSION_PENDING_LIMIT`). Batches
//! (imports, bulk loads) index their nodes directly, as before.
//!
//! A search reads the waiting messages beside the index and matches them with the rules the JSON
//! engine uses (`crate::search`), counting them in BM25's statistics as FTS5 would: its results
//! are the same whether a message waits or is indexed, and a search never writes (a reader may
//! not be allowed to). `db check` counts a waiting message as indexed; `db check --repair`
//! indexes everything and empties the table.

use super::rows::{sql, unsql};
use super::tx::SqlTx;
use crate::error::{ASK_THE_USER_TO_CHECK, Error, Message, Result};
use crate::model::Role;
use rusqlite::{OptionalExtension, params};
use std::cell::Cell;

/// A store's rule for messages waiting for the index, and what its last change left waiting.
#[derive(Debug)]
pub(super) struct Pending {
    /// The number of waiting messages that a change indexes (`PENDING_LIMIT`, or
    /// `SESSION_PENDING_LIMIT` in a session that indexes while idle).
    pub(super) limit: i64,
    /// How many messages the store's last change left waiting, as far as it knows (a change
    /// that writes no single node leaves it as it was).
    pub(super) waiting: Cell<i64>,
}

impl Default for Pending {
    fn default() -> Self {
        Pending {
            limit: PENDING_LIMIT,
            waiting: Cell::new(0),
        }
    }
}

/// How many messages may wait for the index: the change that brings them to this many indexes
/// them. A search reads at most this many messages besides the index.
pub(super) const PENDING_LIMIT: i64 = 64;

/// The same limit in a `tl-mcp` session, which indexes the waiting messages while its client is
/// quiet (`SqliteStore::index_while_idle`) once `IDLE_INDEX_FROM` wait: a burst of changes is not
/// slowed by indexing, and a search still reads at most this many messages besides the index.
pub(super) const SESSION_PENDING_LIMIT: i64 = 256;

/// How many waiting messages a session indexes while its client is quiet: fewer are not worth a
/// transaction of their own.
pub(super) const IDLE_INDEX_FROM: i64 = 32;

/// A message waiting for the index, as a search reads it.
pub(super) struct PendingDoc {
    pub(super) timeline: u64,
    pub(super) node: u64,
    pub(super) role: Option<Role>,
    pub(super) cold: bool,
    pub(super) created_at: Option<u64>,
    pub(super) text: String,
}

impl SqlTx<'_> {
    /// Note node `node` of timeline `tl` (written in this transaction) for the index, and index
    /// every waiting message once there are `PENDING_LIMIT` of them.
    pub(super) fn defer_index(&self, tl: u64, node: u64) -> Result<()> {
        self.exec(
            "INSERT INTO search_pending (timeline, node) VALUES (?1, ?2)",
            params![sql(tl), sql(node)],
        )?;
        let waiting = self.waiting_count()?;
        if waiting >= self.pending.limit {
            self.index_pending()?;
            self.pending.waiting.set(0);
        } else {
            self.pending.waiting.set(waiting);
        }
        Ok(())
    }

    /// How many messages wait for the index.
    pub(super) fn waiting_count(&self) -> Result<i64> {
        self.conn
            .prepare_cached("SELECT count(*) FROM search_pending")
            .and_then(|mut s| s.query_row([], |r| r.get(0)))
            .map_err(|e| self.fail(e))
    }

    /// Index every waiting message (in timeline and node order, one FTS5 segment) and empty
    /// `search_pending`.
    pub(super) fn index_pending(&self) -> Result<()> {
        let mut writer = super::rows::NodeWriter::new();
        for doc in self.pending_docs()? {
            writer.index_text(self, doc.timeline, doc.node, doc.created_at, &doc.text)?;
        }
        self.exec("DELETE FROM search_pending", [])?;
        Ok(())
    }

    /// The messages waiting for the index, with what a search filters and matches them by.
    pub(super) fn pending_docs(&self) -> Result<Vec<PendingDoc>> {
        self.conn
            .prepare_cached(
                "SELECT p.timeline, p.node, n.role, n.cold, n.created_at, n.text FROM search_pending p \
                 JOIN nodes n ON n.timeline = p.timeline AND n.id = p.node \
                 ORDER BY p.timeline, p.node",
            )
            .and_then(|mut s| {
                s.query_map([], |r| {
                    Ok(PendingDoc {
                        timeline: unsql(r.get(0)?),
                        node: unsql(r.get(1)?),
                        role: Role::parse(&r.get::<_, String>(2)?),
                        cold: r.get(3)?,
                        created_at: r.get::<_, Option<i64>>(4)?.map(unsql),
                        text: r.get(5)?,
                    })
                })?
                .collect()
            })
            .map_err(|e| self.fail(e))
    }

    /// The messages (waiting or not) noted for the index, in timeline and node order (`db check`).
    pub(super) fn pending_keys(&self) -> Result<Vec<(u64, u64)>> {
        self.conn
            .prepare("SELECT timeline, node FROM search_pending ORDER BY timeline, node")
            .and_then(|mut s| {
                s.query_map([], |r| Ok((unsql(r.get(0)?), unsql(r.get(1)?))))?
                    .collect()
            })
            .map_err(|e| self.fail(e))
    }

    /// FTS5's totals over the indexed messages: how many, and their terms in all (its averages
    /// record: two varints). (0, 0) for an index that never held a message.
    pub(super) fn index_totals(&self) -> Result<(u64, u64)> {
        let record: Option<Vec<u8>> = self
            .conn
            .prepare_cached("SELECT block FROM search_index_data WHERE id = 1")
            .and_then(|mut s| s.query_row([], |r| r.get(0)).optional())
            .map_err(|e| self.fail(e))?;
        // FTS5 writes the record empty when its table is made, and reads an empty one as zeros.
        let Some(record) = record.filter(|r| !r.is_empty()) else {
            return Ok((0, 0));
        };
        let totals = super::check::varint_at(&record, 0).and_then(|(rows, used)| {
            super::check::varint_at(&record, used).map(|(tokens, _)| (rows, tokens))
        });
        totals.ok_or_else(|| {
            Error::database(
                Message::from(format!(
                    "the search index of the database {} is damaged: its totals record cannot be read; nothing was changed; ",
                    self.path.display()
                ))
                .worded(
                    "run tl db check --repair to rebuild the search index",
                    ASK_THE_USER_TO_CHECK,
                ),
            )
        })
    }
}
