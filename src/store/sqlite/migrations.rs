//! The schema's numbered forward migrations and applying them.

use super::{APPLICATION_ID, SqliteStore};
use crate::error::Result;
use rusqlite::Connection;

/// Forward migrations, numbered like the files they are in: `migrations/NNNN_name.sql` takes the
/// schema from version NNNN − 1 to NNNN, so `MIGRATIONS[v]` takes it from `v` to `v + 1`. Version 0
/// is an empty file and the schema version of this build is `MIGRATIONS.len()`. A migration, once
/// released, is never edited (the schema check compares a file's objects with what these create,
/// text and all): a change of schema is a new file, appended here.
pub(super) const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_first_schema.sql"),
    include_str!("migrations/0002_archived_branches_and_imports.sql"),
    MIGRATION_SEARCH_INDEX,
    include_str!("migrations/0004_import_provenance.sql"),
    include_str!("migrations/0005_imports_by_digest.sql"),
    include_str!("migrations/0006_nodes_with_newer_parent.sql"),
    include_str!("migrations/0007_search_docs_created_at.sql"),
    MIGRATION_PATH_JUMPS,
    include_str!("migrations/0009_summaries_by_id.sql"),
    include_str!("migrations/0010_search_pending.sql"),
];

/// The migration after which every existing node's path columns are filled (`fill_path_columns`).
pub(super) const MIGRATION_PATH_JUMPS: &str = include_str!("migrations/0008_path_jumps.sql");

/// The migration after which the search index is filled from the messages already written.
pub(super) const MIGRATION_SEARCH_INDEX: &str = include_str!("migrations/0003_search_index.sql");

/// Fill the search index from every searchable message (after the migration of version 3; the one
/// of version 7 adds the creation times, see `REFILL_SEARCH_INDEX`).
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

/// Fill the search index from every searchable message with their creation times (`tl db check
/// --repair`, after emptying it).
pub(super) const REFILL_SEARCH_INDEX: &str = r#"
INSERT INTO search_docs (timeline, node, created_at)
    SELECT timeline, id, created_at FROM nodes
    WHERE id != 0 AND summary_kind IS NOT 'placeholder' AND tl_search_terms(text) != ''
    ORDER BY timeline, id;
INSERT INTO search_index (rowid, terms)
    SELECT d.doc, tl_search_terms(n.text) FROM search_docs d
    JOIN nodes n ON n.timeline = d.timeline AND n.id = d.node
    ORDER BY d.doc;
"#;

/// Give every existing node its path columns (src/store/jumps.rs): one pass over the nodes in
/// insert order, then one update by key per node. O(n), once, when a file reaches schema 8.
fn fill_path_columns(conn: &Connection) -> rusqlite::Result<()> {
    let mut rows: Vec<(i64, i64, i64, i64)> = Vec::new();
    {
        let mut stmt =
            conn.prepare("SELECT timeline, id, parent, tokens FROM nodes ORDER BY timeline, id")?;
        let mut q = stmt.query([])?;
        while let Some(r) = q.next()? {
            rows.push((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?));
        }
    }
    let mut update = conn.prepare(
        "UPDATE nodes SET jump = ?3, path_min_tokens = ?4 WHERE timeline = ?1 AND id = ?2",
    )?;
    for (timeline, id, jump, min) in crate::store::jumps::derive_rows(&rows) {
        update.execute(rusqlite::params![timeline, id, jump, min])?;
    }
    Ok(())
}

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
                if migration == MIGRATION_PATH_JUMPS {
                    fill_path_columns(conn)?;
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

#[cfg(test)]
mod tests {
    use super::MIGRATIONS;

    /// Every file in `migrations/` is in `MIGRATIONS`, at the place its number says, and nothing
    /// else is: a new file that was not added (or a gap in the numbers) fails here.
    #[test]
    fn migrations_are_the_numbered_files_in_order() {
        let dir =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/store/sqlite/migrations");
        let mut files: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        files.sort();
        assert_eq!(files.len(), MIGRATIONS.len(), "{files:?}");
        for (i, name) in files.iter().enumerate() {
            assert!(
                name.starts_with(&format!("{:04}_", i + 1)),
                "{name} is not number {}",
                i + 1
            );
            assert!(name.ends_with(".sql"), "{name}");
            let text = std::fs::read_to_string(dir.join(name)).unwrap();
            assert_eq!(text, MIGRATIONS[i], "{name} is not MIGRATIONS[{i}]");
        }
    }
}
