//! `db check` (and `--repair`), `db backup` and the target side of `db convert` for a PostgreSQL
//! database.

use super::PgStore;
use super::rows::{sql, to_pg_text, unsql};
use super::tx::PgTx;
use crate::error::{Error, Result};
use crate::model::Database;
use crate::store::{Outcome, Tx};
use std::collections::BTreeMap;
use std::path::Path;

/// The error of an administrative command on a schema that holds no Timeline tables.
fn missing(store: &PgStore) -> Error {
    Error::database(format!(
        "the database {} does not exist yet (its schema {} holds no Timeline tables); create it with the first change (for example create), or pass --db with the URI of an existing database",
        store.label(),
        store.target.schema
    ))
}

/// Every row checked against a fresh derivation (the loader's checks), then the search tables
/// against the messages. Changes nothing.
pub(super) fn check(store: &mut PgStore) -> Result<Vec<String>> {
    // Objects Timeline did not make are listed, not refused (and nothing else is checked while
    // they are there: the checks below read the tables they may hang on).
    let (version, foreign) = store.probe()?;
    if !foreign.is_empty() {
        return Ok(super::schema::foreign_problems(
            &store.target.schema,
            &foreign,
        ));
    }
    if version.is_none() {
        return Err(missing(store));
    }
    store.in_transaction(false, |tx| {
        let mut problems = Vec::new();
        match tx.load_database() {
            Err(e) => problems.push(e.message.to_string()),
            Ok(db) => {
                for timeline in &db.timelines {
                    for n in 0..timeline.nodes.len() as u64 {
                        let stored = tx.node(timeline.id, n)?;
                        if stored != crate::store::memory::node_row(timeline, n) {
                            problems.push(format!(
                                "timeline tl{}: the stored state of n{n} differs from what its history gives",
                                timeline.id
                            ));
                        }
                    }
                }
                for timeline in &db.timelines {
                    let stored = tx.path_columns(timeline.id)?;
                    problems.extend(crate::store::jumps::problems(timeline, &stored));
                }
                problems.extend(search_problems(tx, &db)?);
                if let Err(problem) = crate::store::json::decode(&crate::store::json::encode(&db)) {
                    problems.push(problem.to_string());
                }
            }
        }
        Ok(Outcome::Unchanged(problems))
    })
}

/// What is wrong with the search tables: a searchable message missing or with other terms, an
/// entry for a message that is not searchable, postings or statistics that do not match.
fn search_problems(tx: &mut PgTx, db: &Database) -> Result<Vec<String>> {
    let advice = "; run tl db check --repair to rebuild the search index";
    let mut want: BTreeMap<(u64, u64), String> = BTreeMap::new();
    let mut per_timeline: BTreeMap<u64, (i64, i64)> = BTreeMap::new();
    let mut postings = 0i64;
    for t in &db.timelines {
        let stats = per_timeline.entry(t.id).or_default();
        for (i, node) in t.nodes.iter().enumerate() {
            if !crate::store::searchable(i as u64, node) {
                continue;
            }
            let terms: Vec<String> = crate::search::terms(&node.text)
                .into_iter()
                .map(|t| t.text)
                .collect();
            if terms.is_empty() {
                continue;
            }
            stats.0 += 1;
            stats.1 += terms.len() as i64;
            let mut distinct = terms.clone();
            distinct.sort_unstable();
            distinct.dedup();
            postings += distinct.len() as i64;
            want.insert((t.id, i as u64), terms.join(" "));
        }
    }
    let mut problems = Vec::new();
    let rows = tx.query(
        "SELECT timeline, node, terms FROM search_docs ORDER BY timeline, node",
        &[],
    )?;
    let mut have = BTreeMap::new();
    for r in &rows {
        let read = || -> std::result::Result<_, postgres::Error> {
            Ok((
                unsql(r.try_get::<_, i64>(0)?),
                unsql(r.try_get::<_, i64>(1)?),
                r.try_get::<_, String>(2)?,
            ))
        };
        let (tl, n, terms) = read().map_err(|e| tx.fail(e))?;
        have.insert((tl, n), terms);
    }
    for ((tl, n), terms) in &want {
        match have.get(&(*tl, *n)) {
            None => problems.push(format!(
                "timeline tl{tl}: message n{n} is missing from the search index{advice}"
            )),
            Some(stored) if stored != terms => problems.push(format!(
                "timeline tl{tl}: message n{n} has other terms in the search index than its text gives{advice}"
            )),
            Some(_) => {}
        }
    }
    for (tl, n) in have.keys() {
        if !want.contains_key(&(*tl, *n)) {
            problems.push(format!(
                "timeline tl{tl}: the search index has an entry for n{n}, which is not a searchable message{advice}"
            ));
        }
    }
    let stored_postings = tx.query("SELECT count(*) FROM search_postings", &[])?;
    let stored_postings: i64 = stored_postings
        .first()
        .map(|r| r.try_get(0))
        .transpose()
        .map_err(|e| tx.fail(e))?
        .unwrap_or(0);
    if stored_postings != postings {
        problems.push(format!(
            "the search index holds {stored_postings} term entries where the messages give {postings}{advice}"
        ));
    }
    let rows = tx.query(
        "SELECT id, search_docs, search_terms FROM timelines ORDER BY id",
        &[],
    )?;
    for r in &rows {
        let read = || -> std::result::Result<_, postgres::Error> {
            Ok((
                unsql(r.try_get::<_, i64>(0)?),
                r.try_get::<_, i64>(1)?,
                r.try_get::<_, i64>(2)?,
            ))
        };
        let (tl, docs, terms) = read().map_err(|e| tx.fail(e))?;
        if per_timeline.get(&tl).copied().unwrap_or_default() != (docs, terms) {
            problems.push(format!(
                "timeline tl{tl}: the search statistics (messages and terms) do not match its messages{advice}"
            ));
        }
    }
    Ok(problems)
}

/// Empty the search tables and fill them again from the messages, in one transaction that keeps
/// every writer out meanwhile.
pub(super) fn repair(store: &mut PgStore) -> Result<Vec<String>> {
    if store.stored_version()?.is_none() {
        return Err(missing(store));
    }
    store.refuse_change_if_read_only()?;
    store.in_transaction(true, |tx| {
        tx.round_trip(|t| {
            t.batch_execute(
                "LOCK TABLE timelines, search_docs, search_postings IN EXCLUSIVE MODE; \
                 DELETE FROM search_docs; DELETE FROM search_postings; \
                 UPDATE timelines SET search_docs = 0, search_terms = 0",
            )
        })?;
        for id in tx.timeline_ids(usize::MAX)? {
            let timeline = tx.load_timeline(id)?;
            for n in 0..timeline.nodes.len() as u64 {
                if let Some(row) = crate::store::memory::node_row(&timeline, n) {
                    tx.index_node(id, &row)?;
                }
            }
        }
        Ok(Outcome::Commit(vec!["search index".to_string()]))
    })
}

/// A consistent snapshot of the database (one `REPEATABLE READ` transaction, while others keep
/// writing) in a new file at `target`, of the engine its name gives (`.json`: a JSON snapshot, else
/// SQLite).
pub(super) fn backup(store: &mut PgStore, target: &Path) -> Result<crate::store::Engine> {
    if super::is_uri(&target.to_string_lossy()) {
        return Err(Error::invalid(
            "invalid argument --to: a backup of a PostgreSQL database is a file; pass a file name (ending in .json for a JSON snapshot, anything else for SQLite), or use db convert to copy it into another PostgreSQL database",
        ));
    }
    crate::store::refuse_existing(target)?;
    if store.stored_version()?.is_none() {
        return Err(missing(store));
    }
    let db = store.read(|tx| tx.load_database())?;
    crate::store::Store::create_from(target, &db)
}

/// Write `db` into `store`'s schema, which must hold no Timeline tables yet, in one transaction.
pub(super) fn create_from(store: &mut PgStore, db: &Database) -> Result<()> {
    if store.stored_version()?.is_some() {
        return Err(Error::new(
            crate::error::ErrorKind::Output,
            format!(
                "{} already holds a Timeline database (schema {}); nothing was written. Name another schema with ?schema=NAME (Timeline never writes over a database)",
                store.label(),
                store.target.schema
            ),
        ));
    }
    store.ensure_schema()?;
    store.in_transaction(true, |t| {
        // Another converter may have filled it meanwhile: the state row is the turn.
        let next = t.next_timeline()?;
        let count = t.counts()?;
        if next != 0 || count.timelines != 0 {
            return Err(Error::database(format!(
                "{} was filled by another process at the same moment; nothing was written",
                t.name
            )));
        }
        for timeline in &db.timelines {
            let cold = timeline.nodes.iter().filter(|n| n.cold).count() as i64;
            t.exec(
                "INSERT INTO timelines (id, next_node, current_branch, cold_nodes, title, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                &[
                    &sql(timeline.id),
                    &sql(timeline.nodes.len() as u64),
                    &timeline.current_branch,
                    &cold,
                    &timeline.title.as_deref().map(to_pg_text),
                    &timeline.created_at.map(sql),
                    &timeline.updated_at.map(sql),
                ],
            )?;
            for n in 0..timeline.nodes.len() as u64 {
                if let Some(row) = crate::store::memory::node_row(timeline, n) {
                    t.put_node(timeline.id, &row)?;
                }
            }
            for branch in &timeline.branches {
                t.put_branch(timeline.id, branch)?;
            }
            for archived in &timeline.archived {
                t.insert_archived(timeline.id, archived)?;
            }
        }
        t.exec(
            "UPDATE state SET next_timeline = $1 WHERE id = 0",
            &[&sql(db.next_timeline)],
        )?;
        for entry in &db.idempotency {
            t.put_idempotency(entry)?;
        }
        for entry in &db.audit {
            t.append_audit(entry.ts, entry.clone())?;
        }
        for record in &db.imports {
            t.put_import_row(record)?;
        }
        Ok(Outcome::Commit(()))
    })
}
