//! What the schema holds: Timeline's own objects against foreign ones (triggers, views, tables
//! another program added), the schema cookie that says when to look again, the parent-cycle guard,
//! and the SQL functions Timeline's statements use.

use super::migrations::MIGRATIONS;
use super::{corrupt, failure};
use crate::error::{Error, Result};
use rusqlite::types::ValueRef;
use rusqlite::{Connection, OptionalExtension};
use std::fmt::Display;
use std::path::Path;

/// One entry of `sqlite_schema`: a table, index, trigger or view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SchemaObject {
    pub(super) kind: String,
    pub(super) name: String,
    pub(super) table: String,
    pub(super) sql: Option<String>,
}

impl SchemaObject {
    /// "trigger t on nodes", "view v", "table nodes (defined otherwise than Timeline defines it)".
    pub(super) fn describe(&self, changed: bool) -> String {
        let mut text = format!("{} {}", self.kind, self.name);
        if matches!(self.kind.as_str(), "trigger" | "index") && self.table != self.name {
            text.push_str(&format!(" on {}", self.table));
        }
        if changed {
            text.push_str(" (defined otherwise than Timeline defines it)");
        }
        text
    }
}

pub(super) fn schema_objects(conn: &Connection) -> rusqlite::Result<Vec<SchemaObject>> {
    let mut stmt =
        conn.prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY rowid")?;
    stmt.query_map([], |r| {
        Ok(SchemaObject {
            kind: r.get(0)?,
            name: r.get(1)?,
            table: r.get(2)?,
            sql: r.get(3)?,
        })
    })?
    .collect()
}

/// Tables SQLite itself creates and manages (AUTOINCREMENT counters, ANALYZE statistics): data the
/// query planner reads, never code.
pub(super) const SQLITE_INTERNAL_TABLES: &[&str] =
    &["sqlite_sequence", "sqlite_stat1", "sqlite_stat4"];

/// The schema objects of the file that Timeline's migrations up to `version` do not create, each
/// with whether it is one of Timeline's names defined otherwise. The expected list is what those
/// migrations create in an empty in-memory database (`reference_objects`; for the current version
/// compiled in): every table, index, FTS5 shadow table and automatic index, exactly, with its SQL
/// text. Reading `sqlite_schema` runs none of the objects.
pub(super) fn foreign_objects(
    conn: &Connection,
    version: u64,
) -> rusqlite::Result<Vec<(SchemaObject, bool)>> {
    let upto = usize::try_from(version).map_or(MIGRATIONS.len(), |v| v.min(MIGRATIONS.len()));
    if upto == MIGRATIONS.len() && schema_is_compiled(conn)? {
        return Ok(Vec::new());
    }
    let found = schema_objects(conn)?;
    // The current schema is compiled in: building it in memory costs more than the rest of a
    // `tl append` process. Older versions (a file to migrate) are built.
    let expected = if upto == MIGRATIONS.len() {
        compiled_objects()
    } else {
        reference_objects(upto)?
    };
    // The shadow tables of a virtual table (search_index_data, ...) are written by SQLite's FTS5
    // module, whose wording of their definition is its own and may differ between SQLite releases;
    // they are matched by name (defensive mode makes them read-only to SQL, and no table is code).
    let virtual_tables: Vec<&str> = expected
        .iter()
        .filter(|e| {
            e.sql
                .as_deref()
                .is_some_and(|sql| sql.starts_with("CREATE VIRTUAL TABLE"))
        })
        .map(|e| e.name.as_str())
        .collect();
    let shadow = |e: &SchemaObject| {
        e.kind == "table"
            && virtual_tables.iter().any(|v| {
                e.name
                    .strip_prefix(v)
                    .is_some_and(|rest| rest.starts_with('_'))
            })
    };
    let expected_here = |o: &SchemaObject| {
        expected.iter().any(|e| {
            (e.kind.as_str(), e.name.as_str(), e.table.as_str())
                == (o.kind.as_str(), o.name.as_str(), o.table.as_str())
                && (e.sql == o.sql || shadow(e))
        })
    };
    Ok(found
        .into_iter()
        .filter(|o| !(o.kind == "table" && SQLITE_INTERNAL_TABLES.contains(&o.name.as_str())))
        .filter(|o| !expected_here(o))
        .map(|o| {
            let changed = expected.iter().any(|e| e.name == o.name);
            (o, changed)
        })
        .collect())
}

/// Whether the file's schema is the compiled one, entry for entry in SQLite's order (what every
/// database this build created or migrated holds): compared as it is read, without copying a row,
/// since every process checks it. Anything else is left to the comparison by name in
/// `foreign_objects`, which also says what differs.
fn schema_is_compiled(conn: &Connection) -> rusqlite::Result<bool> {
    let mut stmt =
        conn.prepare("SELECT type, name, tbl_name, sql FROM sqlite_schema ORDER BY rowid")?;
    let mut rows = stmt.query([])?;
    let mut expected = COMPILED.iter();
    while let Some(row) = rows.next()? {
        let Some(&(kind, name, table, sql)) = expected.next() else {
            return Ok(false);
        };
        // `Some(None)` for NULL; `None`, which matches nothing, for a value that is not text.
        let text = |i: usize| -> rusqlite::Result<Option<Option<&str>>> {
            Ok(match row.get_ref(i)? {
                ValueRef::Null => Some(None),
                ValueRef::Text(t) => std::str::from_utf8(t).ok().map(Some),
                _ => None,
            })
        };
        let same = text(0)? == Some(Some(kind))
            && text(1)? == Some(Some(name))
            && text(2)? == Some(Some(table))
            // A virtual table's shadow tables are the only tables compiled without their text
            // (`reference_objects`): FTS5 words them its own way.
            && (text(3)? == Some(sql) || (sql.is_none() && kind == "table"));
        if !same {
            return Ok(false);
        }
    }
    Ok(expected.next().is_none())
}

/// What the migrations up to `upto` create in an empty in-memory database.
pub(super) fn reference_objects(upto: usize) -> rusqlite::Result<Vec<SchemaObject>> {
    let reference = Connection::open_in_memory()?;
    // One transaction, never committed: the cost is the statements alone.
    reference.execute_batch("BEGIN")?;
    for migration in &MIGRATIONS[..upto] {
        reference.execute_batch(migration)?;
    }
    let mut objects = schema_objects(&reference)?;
    // A virtual table's shadow tables are defined by its module, in its own words, which may differ
    // between SQLite releases; they are matched by name (see `foreign_objects`), so their text is
    // left out.
    let virtual_tables: Vec<String> = objects
        .iter()
        .filter(|e| {
            e.sql
                .as_deref()
                .is_some_and(|sql| sql.starts_with("CREATE VIRTUAL TABLE"))
        })
        .map(|e| e.name.clone())
        .collect();
    for o in &mut objects {
        if o.kind == "table"
            && virtual_tables.iter().any(|v| {
                o.name
                    .strip_prefix(v.as_str())
                    .is_some_and(|rest| rest.starts_with('_'))
            })
        {
            o.sql = None;
        }
    }
    Ok(objects)
}

/// The objects of the schema this build writes, as `reference_objects` gives them, compiled in
/// from `generated/sqlite_schema.rs`.
const COMPILED: &[(&str, &str, &str, Option<&str>)] =
    include!("../../../generated/sqlite_schema.rs");

fn compiled_objects() -> Vec<SchemaObject> {
    COMPILED
        .iter()
        .map(|&(kind, name, table, sql)| SchemaObject {
            kind: kind.into(),
            name: name.into(),
            table: table.into(),
            sql: sql.map(Into::into),
        })
        .collect()
}

/// `generated/sqlite_schema.rs`: the objects the migrations create, as a Rust expression.
pub(crate) fn render_compiled_schema() -> String {
    let objects = reference_objects(MIGRATIONS.len()).expect("the migrations run in memory");
    let mut out = format!(
        "// The SQLite schema of version {}: what its migrations create (see src/store/sqlite/schema.rs).\n// Generated from src/store/sqlite/migrations/; do not edit. Regenerate with: cargo test --test suite generated::\n&[\n",
        MIGRATIONS.len()
    );
    for o in objects {
        out.push_str(&format!(
            "    ({:?}, {:?}, {:?}, {:?}),\n",
            o.kind, o.name, o.table, o.sql
        ));
    }
    out.push_str("]\n");
    out
}

/// The foreign objects of the schema and the schema cookie they were read with, both in one read
/// transaction: a trigger another process adds at that moment either is read or changes the cookie,
/// so it is never taken for verified.
pub(super) fn verify_schema(
    conn: &Connection,
    version: u64,
) -> rusqlite::Result<(i32, Vec<(SchemaObject, bool)>)> {
    conn.execute_batch("BEGIN")?;
    let read = schema_cookie(conn).and_then(|cookie| Ok((cookie, foreign_objects(conn, version)?)));
    let _ = conn.execute_batch("COMMIT");
    read
}

/// The cookie SQLite changes with every change of the schema.
pub(super) fn schema_cookie(conn: &Connection) -> rusqlite::Result<i32> {
    // Cached: every transaction of a session reads it.
    conn.prepare_cached("PRAGMA schema_version")?
        .query_row([], |r| r.get(0))
}

/// Inside a transaction, before anything else: when the schema changed since it was last verified
/// (another program added a trigger while a `tl-mcp` session was open), verify it again. The
/// transaction's snapshot (or its write lock) keeps the schema as verified until it ends.
pub(super) fn guard_schema(
    conn: &Connection,
    path: &Path,
    verified: &mut Option<i32>,
) -> Result<()> {
    let cookie = schema_cookie(conn).map_err(|e| failure(path, "cannot read", e))?;
    if *verified == Some(cookie) {
        return Ok(());
    }
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| failure(path, "cannot read", e))?;
    let version = u64::try_from(version).unwrap_or(u64::MAX);
    let foreign = foreign_objects(conn, version).map_err(|e| failure(path, "cannot read", e))?;
    if !foreign.is_empty() {
        *verified = None;
        return Err(foreign_schema(path, &foreign));
    }
    *verified = Some(cookie);
    Ok(())
}

/// Inside a change, before anything is written: refuse a file with a row whose parent is not older
/// than it (part of any parent cycle), wherever it is. The partial index holds only such rows, so
/// this costs one lookup whatever the size; `INDEXED BY` makes a plan without it an error.
pub(super) fn refuse_newer_parents(conn: &Connection, path: &Path) -> Result<()> {
    // Cached: every change of a session runs it, so it is parsed and planned once per connection.
    let found: Option<(i64, i64, i64)> = conn
        .prepare_cached(
            "SELECT timeline, id, parent FROM nodes INDEXED BY nodes_with_newer_parent WHERE parent >= id AND id != 0 ORDER BY timeline, id LIMIT 1",
        )
        .and_then(|mut s| s.query_row([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?))).optional())
        .map_err(|e| failure(path, "cannot read", e))?;
    match found {
        None => Ok(()),
        Some((tl, id, parent)) => Err(newer_parent(path, tl, id, parent)),
    }
}

/// The damage of a node whose parent is not older than it.
pub(super) fn newer_parent(
    path: &Path,
    tl: impl Display,
    id: impl Display,
    parent: impl Display,
) -> Error {
    corrupt(
        path,
        &format!(
            "timeline tl{tl}: node n{id} has parent n{parent}, which is not older than it (Timeline always writes a parent before its children, so something else changed the file)"
        ),
    )
}

/// The statement that removes a foreign object.
pub(super) fn drop_statement(o: &SchemaObject) -> String {
    format!(
        "DROP {} \"{}\";",
        o.kind.to_uppercase(),
        o.name.replace('"', "\"\"")
    )
}

/// What `db check` reports of foreign schema objects: one problem each, with how to remove it
/// (one of Timeline's own names defined otherwise only a backup gives back).
pub(super) fn foreign_problems(foreign: &[(SchemaObject, bool)]) -> Vec<String> {
    foreign
        .iter()
        .map(|(o, changed)| {
            if *changed {
                format!(
                    "{} is not part of Timeline's schema; restore a backup of the database",
                    o.describe(true)
                )
            } else {
                format!(
                    "{} is not part of Timeline's schema (a database file is data, not code); remove it with the sqlite3 shell ({})",
                    o.describe(false),
                    drop_statement(o)
                )
            }
        })
        .collect()
}

/// The refusal of a database that holds schema objects Timeline did not create.
pub(super) fn foreign_schema(path: &Path, foreign: &[(SchemaObject, bool)]) -> Error {
    let names: Vec<String> = foreign.iter().map(|(o, c)| o.describe(*c)).collect();
    // Triggers and views first: they may name the tables and indexes dropped after them.
    let mut removable: Vec<&SchemaObject> = foreign
        .iter()
        .filter(|(_, changed)| !changed)
        .map(|(o, _)| o)
        .collect();
    removable.sort_by_key(|o| match o.kind.as_str() {
        "trigger" => 0,
        "view" => 1,
        "index" => 2,
        _ => 3,
    });
    let drops: Vec<String> = removable.into_iter().map(drop_statement).collect();
    let remove = if drops.is_empty() {
        String::new()
    } else {
        format!(
            " remove them with the sqlite3 shell ({}), or",
            drops.join(" ")
        )
    };
    Error::database(format!(
        "the database {} holds schema objects that Timeline did not create: {}. A database file is data, not code: a trigger or view can run whenever the database is read or changed, and any object Timeline did not make can change what its queries do, so Timeline does not use this file; nothing was changed. If you added them yourself,{remove} restore a backup of the database you trust; otherwise the file may have been tampered with: keep a copy of it for inspection and restore a backup",
        path.display(),
        names.join(", ")
    ))
}

/// The SQL functions the schema's statements use: `tl_search_terms(text)`, a message's terms as the
/// search index stores them. (The search's FTS5 function is registered by the first search.)
pub(super) fn register_functions(conn: &Connection) -> rusqlite::Result<()> {
    use rusqlite::functions::FunctionFlags;
    conn.create_scalar_function(
        "tl_search_terms",
        1,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let text: String = ctx.get(0)?;
            Ok(crate::search::indexed_text(&text))
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The compiled-in schema is what the migrations create (`cargo test --test suite generated::`
    /// rewrites it after a new migration).
    #[test]
    fn the_compiled_schema_is_what_the_migrations_create() {
        assert_eq!(
            compiled_objects(),
            reference_objects(MIGRATIONS.len()).unwrap()
        );
    }
}
