//! The schema's numbered forward migrations and applying them.

use super::{APPLICATION_ID, SqliteStore};
use crate::error::Result;
use rusqlite::Connection;

/// Forward migrations: `MIGRATIONS[v]` takes the schema from version `v` to `v + 1`. Version 0 is an
/// empty file. The schema version of this build is `MIGRATIONS.len()`. A migration, once released,
/// is never edited: a change of schema is a new migration appended at the end.
pub(super) const MIGRATIONS: &[&str] = &[
    // 0 → 1: the first schema. The lookups by parent and by range start carry the node ID, so that
    // their `ORDER BY id` walks the index instead of the whole timeline's primary key.
    r#"
CREATE TABLE state (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    next_timeline INTEGER NOT NULL
);
INSERT INTO state (id, next_timeline) VALUES (0, 0);
CREATE TABLE timelines (
    id INTEGER PRIMARY KEY,
    next_node INTEGER NOT NULL,
    current_branch TEXT NOT NULL,
    cold_nodes INTEGER NOT NULL DEFAULT 0,
    title TEXT,
    created_at INTEGER,
    updated_at INTEGER
);
CREATE TABLE nodes (
    timeline INTEGER NOT NULL,
    id INTEGER NOT NULL,
    parent INTEGER NOT NULL,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    intent_tag TEXT,
    intent_note TEXT,
    summary_kind TEXT,
    summary_from INTEGER,
    summary_to INTEGER,
    derived_from TEXT,
    supersedes INTEGER,
    version INTEGER,
    request_digest BLOB,
    cold INTEGER NOT NULL DEFAULT 0,
    pinned INTEGER NOT NULL DEFAULT 0,
    prefix_tokens INTEGER NOT NULL,
    depth INTEGER NOT NULL,
    cover_count INTEGER NOT NULL DEFAULT 0,
    stale INTEGER NOT NULL DEFAULT 0,
    superseded_by INTEGER,
    created_at INTEGER,
    PRIMARY KEY (timeline, id)
);
CREATE INDEX nodes_by_parent ON nodes (timeline, parent, id);
CREATE INDEX nodes_by_range_start ON nodes (timeline, summary_from, id) WHERE summary_from IS NOT NULL;
CREATE INDEX nodes_by_request ON nodes (timeline, request_digest) WHERE request_digest IS NOT NULL;
CREATE TABLE summary_sources (
    timeline INTEGER NOT NULL,
    summary INTEGER NOT NULL,
    source INTEGER NOT NULL,
    PRIMARY KEY (timeline, summary, source)
);
CREATE INDEX summary_sources_by_source ON summary_sources (timeline, source, summary);
CREATE TABLE branches (
    seq INTEGER PRIMARY KEY,
    timeline INTEGER NOT NULL,
    name TEXT NOT NULL,
    head INTEGER NOT NULL,
    watermark INTEGER NOT NULL,
    UNIQUE (timeline, name)
);
CREATE TABLE idempotency (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    op TEXT NOT NULL,
    result TEXT NOT NULL,
    ts INTEGER NOT NULL,
    request TEXT,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_by_ts ON idempotency (ts);
CREATE TABLE audit (
    seq INTEGER PRIMARY KEY,
    ts INTEGER NOT NULL,
    entry TEXT NOT NULL
);
"#,
    // 1 → 2, archived branches (restore-branch): what archive-branch removed, so that
    // restore-branch can bring it back. `nodes` is a JSON array of the node numbers the archival
    // moved to the cold zone; `seq` orders the archivals.
    r#"
CREATE TABLE archived_branches (
    seq INTEGER PRIMARY KEY,
    timeline INTEGER NOT NULL,
    name TEXT NOT NULL,
    head INTEGER NOT NULL,
    watermark INTEGER NOT NULL,
    position INTEGER NOT NULL,
    nodes TEXT NOT NULL
);
CREATE INDEX archived_branches_by_name ON archived_branches (timeline, name, seq);
-- Also 1 → 2, imports (tl import, issue 15): one row per conversation brought in. The record column
-- is the ImportRecord as JSON; the other columns are its lookup keys.
CREATE TABLE imports (
    seq INTEGER PRIMARY KEY,
    format TEXT NOT NULL,
    source_key TEXT NOT NULL,
    digest TEXT NOT NULL,
    timeline INTEGER NOT NULL,
    ts INTEGER NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX imports_by_source ON imports (format, source_key, seq);
"#,
    // 2 → 3 (issue 14, full-text search): the search index, filled from the existing messages.
    MIGRATION_SEARCH_INDEX,
    // 3 → 4 (issue 21, item 7): where an imported message came from, in a column only import
    // writes (see `Node::provenance`). Import records written before kept it in the intent note;
    // it moves only for the nodes an import record says that import created, so a caller's
    // look-alike note on any other node stays an ordinary note.
    r#"
ALTER TABLE nodes ADD COLUMN provenance TEXT;
UPDATE nodes SET provenance = intent_note, intent_note = NULL
WHERE intent_note LIKE '{"import":%'
  AND json_valid(intent_note)
  AND json_type(intent_note, '$.import') = 'text'
  AND EXISTS (
    SELECT 1 FROM imports i
    WHERE i.timeline = nodes.timeline
      AND nodes.id >= CAST(substr(json_extract(i.record, '$.first_node'), 2) AS INTEGER)
      AND nodes.id < CAST(substr(json_extract(i.record, '$.first_node'), 2) AS INTEGER)
                     + json_extract(i.record, '$.nodes')
  );
"#,
    // 4 → 5 (issue 21, item 11): an import looks up a conversation's digest by index, not by
    // reading every earlier record of its source key (linear time for many shared source IDs).
    // IF NOT EXISTS: tests that rebuild an older schema by dropping tables keep this index.
    "CREATE INDEX IF NOT EXISTS imports_by_digest ON imports (format, source_key, digest, seq);",
    // 5 → 6 (issue 21, item 6): the rows whose parent is not older than them, which Timeline never
    // writes. A parent cycle always contains one, so every change checks that this index is empty
    // (one lookup) before it writes: nothing is written to a file that claims a cycle anywhere.
    "CREATE INDEX nodes_with_newer_parent ON nodes (timeline, id) WHERE parent >= id AND id != 0;",
];

/// The migration that adds full-text search (issue 14). `search_docs` gives each searchable message a
/// stable document number (an INTEGER PRIMARY KEY survives VACUUM); `search_index` is a contentless
/// FTS5 table over the message's terms as `crate::search` cuts them, joined by spaces, so its `ascii`
/// tokenizer only splits at those spaces. Both are written in the transaction that inserts the node.
/// The terms come from the SQL function `tl_search_terms`, registered on every connection.
pub(super) const MIGRATION_SEARCH_INDEX: &str = r#"
CREATE TABLE search_docs (
    doc INTEGER PRIMARY KEY,
    timeline INTEGER NOT NULL,
    node INTEGER NOT NULL,
    UNIQUE (timeline, node)
);
CREATE VIRTUAL TABLE search_index USING fts5(terms, content = '', tokenize = 'ascii');
"#;

/// Fill the search index from every searchable message (after the migration, and by
/// `tl db check --repair` after emptying it).
pub(super) const FILL_SEARCH_INDEX: &str = r#"
INSERT INTO search_docs (timeline, node)
    SELECT timeline, id FROM nodes
    WHERE id != 0 AND summary_kind IS NOT 'placeholder' AND tl_search_terms(text) != ''
    ORDER BY timeline, id;
INSERT INTO search_index (rowid, terms)
    SELECT d.doc, tl_search_terms(n.text) FROM search_docs d
    JOIN nodes n ON n.timeline = d.timeline AND n.id = d.node
    ORDER BY d.doc;
"#;

/// The schema version this build writes.
pub fn schema_version() -> u64 {
    MIGRATIONS.len() as u64
}

impl SqliteStore {
    /// Apply the migrations from `from` to the current version in one transaction.
    pub(super) fn migrate(&self, conn: &Connection, from: u64) -> Result<()> {
        let run = || -> rusqlite::Result<()> {
            conn.execute_batch("BEGIN IMMEDIATE")?;
            // Another process may have migrated while this one waited for the lock.
            let now: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
            let mut at = u64::try_from(now).unwrap_or(u64::MAX).max(from);
            while at < schema_version() {
                let migration = MIGRATIONS[at as usize];
                conn.execute_batch(migration)?;
                if migration == MIGRATION_SEARCH_INDEX {
                    // The index starts out holding every message written before it existed.
                    conn.execute_batch(FILL_SEARCH_INDEX)?;
                }
                at += 1;
            }
            conn.execute_batch(&format!(
                "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {at}; COMMIT"
            ))
        };
        run().map_err(|e| {
            let _ = conn.execute_batch("ROLLBACK");
            self.failure("cannot set up the schema of", e)
        })
    }
}
