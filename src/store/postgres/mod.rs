//! The PostgreSQL engine: the SQLite engine's rows in a schema of their own on a server, so that
//! people and agents on many machines share one database.
//!
//! One connection per store (a `tl` run or a whole `tl-mcp` session), opened at the first use and
//! again after it broke. A read is one `REPEATABLE READ READ ONLY` transaction (one snapshot for all
//! its statements); a change is one `READ COMMITTED` transaction that locks the rows of the timelines
//! it touches (`tx`), so changes to one timeline take turns and changes to different timelines run
//! in parallel. Tables are created by the first change, under a transaction-scoped advisory lock, by
//! the numbered migrations in `migrations/`; a schema newer than this build is refused untouched, and
//! a database without Timeline's tables reads as empty, like a missing file.
//!
//! `target` parses the URI, `connect` opens connections, `tx` is the `Tx` implementation, `rows`
//! maps values and rows, `admin` holds `db check`, repair, backup and convert.

use super::jumps;
use super::memory::MemTx;
use super::{Engine, Outcome, Tx};
use crate::error::{Error, Message, Result};
use crate::model::Database;
use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

mod admin;
pub(crate) mod connect;
mod rows;
mod schema;
mod search;
pub(crate) mod target;
mod tls;
mod tx;

pub use target::{PgTarget, is_uri};
use tx::PgTx;

/// Forward migrations, numbered like their files: `MIGRATIONS[v]` takes the schema from version `v`
/// to `v + 1`; the schema version of this build is `MIGRATIONS.len()`. A released migration is
/// never edited: a change of schema is a new file, appended here.
const MIGRATIONS: &[&str] = &[
    include_str!("migrations/0001_first_schema.sql"),
    include_str!("migrations/0002_nodes_with_newer_parent.sql"),
    MIGRATION_PATH_JUMPS,
    include_str!("migrations/0004_summaries_by_id.sql"),
];

/// The migration after which every existing node's path columns are filled (`fill_path_columns`).
const MIGRATION_PATH_JUMPS: &str = include_str!("migrations/0003_path_jumps.sql");

/// Give every existing node its path columns (src/store/jumps.rs): one read of the nodes in insert
/// order, then updates from arrays of 50,000 rows. O(n), once, when a schema reaches version 3.
fn fill_path_columns(tx: &mut postgres::Transaction) -> std::result::Result<(), postgres::Error> {
    let rows = tx.query(
        "SELECT timeline, id, parent, tokens FROM nodes ORDER BY timeline, id",
        &[],
    )?;
    let rows: Vec<(i64, i64, i64, i64)> = rows
        .iter()
        .map(|r| Ok((r.try_get(0)?, r.try_get(1)?, r.try_get(2)?, r.try_get(3)?)))
        .collect::<std::result::Result<_, postgres::Error>>()?;
    let derived = jumps::derive_rows(&rows);
    // In slices, so that a large database is not sent as one statement of arrays.
    for part in derived.chunks(50_000) {
        let column =
            |pick: fn(&(i64, i64, i64, i64)) -> i64| part.iter().map(pick).collect::<Vec<i64>>();
        tx.execute(
            "UPDATE nodes SET jump = u.j, path_min_tokens = u.m \
             FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[]) AS u(tl, id, j, m) \
             WHERE nodes.timeline = u.tl AND nodes.id = u.id",
            &[&column(|r| r.0), &column(|r| r.1), &column(|r| r.2), &column(|r| r.3)],
        )?;
    }
    Ok(())
}

/// The schema version this build writes.
pub fn schema_version() -> u64 {
    MIGRATIONS.len() as u64
}

/// The advisory lock (one number for every Timeline schema of a server) that migrations hold, so
/// that processes starting together migrate once ("TLmigrat" in ASCII).
const MIGRATION_LOCK: i64 = 0x544c_6d69_6772_6174;

/// How many times a change that failed with a serialization failure or a deadlock is run again.
const RETRIES: u32 = 5;

pub struct PgStore {
    target: PgTarget,
    /// `target.redacted()`, as a path: what `Store::path` shows for this database.
    name: PathBuf,
    client: Option<postgres::Client>,
    /// Statements prepared in the current transaction (emptied before it ends: see `end_statements`).
    cache: HashMap<String, postgres::Statement>,
    /// The server's version, read once per connection.
    server_version: Option<String>,
    reads_only: bool,
    retryable: Cell<bool>,
    /// Statements sent since the current read or change began (`TIMELINE_COUNT_READS=1`).
    sent: Sent,
}

/// The count of statements sent to the server (queries, executes, prepares, BEGIN and COMMIT: one
/// round trip each), which `TIMELINE_COUNT_READS=1` prints after every read and change so that
/// tests can show an operation's round trips do not grow with the database. Every statement of a
/// transaction passes through `PgTx::round_trip`, which counts it; the few the store sends itself
/// (the schema probe, BEGIN, COMMIT) are counted where they are sent.
#[derive(Default)]
pub(super) struct Sent(Cell<u64>);

impl Sent {
    pub(super) fn one(&self) {
        self.0.set(self.0.get().saturating_add(1));
    }
}

impl PgStore {
    pub fn new(target: PgTarget) -> PgStore {
        PgStore {
            name: PathBuf::from(target.redacted()),
            target,
            client: None,
            cache: HashMap::new(),
            server_version: None,
            reads_only: false,
            retryable: Cell::new(false),
            sent: Sent::default(),
        }
    }

    /// A store that refuses every change (shell completion).
    pub fn reading_only(self) -> PgStore {
        PgStore {
            reads_only: true,
            ..self
        }
    }

    /// The redacted URI, as a path.
    pub fn path(&self) -> &Path {
        &self.name
    }

    fn label(&self) -> String {
        self.name.display().to_string()
    }

    /// The open connection; a connection that broke (a server restart) is opened again.
    fn client(&mut self) -> Result<&mut postgres::Client> {
        if self.client.as_ref().is_some_and(|c| c.is_closed()) {
            self.client = None;
        }
        if self.client.is_none() {
            let client = connect::connect(&self.target)?;
            // Prepared statements belong to the connection that prepared them.
            self.cache.clear();
            self.client = Some(client);
        }
        Ok(self.client.as_mut().expect("opened above"))
    }

    /// The schema version of Timeline's tables, `None` when the schema holds none. A version newer
    /// than this build's is refused, and so is a schema holding objects Timeline did not make.
    fn stored_version(&mut self) -> Result<Option<u64>> {
        let (version, foreign) = self.probe()?;
        if !foreign.is_empty() {
            return Err(schema::foreign_schema(
                &self.label(),
                &self.target.schema,
                &foreign,
            ));
        }
        Ok(version)
    }

    /// What the schema holds: the version of Timeline's tables (`None`: none there) and the
    /// objects Timeline did not make. The catalogs are read first, in one statement, and the
    /// version (a read of the `state` table) only when nothing foreign is there.
    fn probe(&mut self) -> Result<(Option<u64>, Vec<schema::Foreign>)> {
        let label = self.label();
        let schema = self.target.schema.clone();
        // Sent as one simple query, with no prepared statement: behind a pooler in transaction
        // mode a statement prepared outside a transaction may be gone (or another client's) when
        // it is run. Its own `SET LOCAL` bounds it, as every transaction is bounded (`schema.rs`).
        let text = format!(
            "{}; {}",
            schema::session_settings(),
            schema::foreign_query(&schema)
        );
        let probe = |store: &mut PgStore| -> std::result::Result<_, postgres::Error> {
            let client = store.client.as_mut().expect("connected before");
            store.sent.one();
            Ok(client
                .simple_query(&text)?
                .iter()
                .filter_map(|m| match m {
                    postgres::SimpleQueryMessage::Row(row) => Some(schema::Foreign {
                        kind: row.get(0).unwrap_or_default().to_string(),
                        name: row.get(1).unwrap_or_default().to_string(),
                        table: row.get(2).map(str::to_string),
                    }),
                    _ => None,
                })
                .collect::<Vec<_>>())
        };
        // The first statement of every read and change: a connection that the server closed since
        // the last call (a restart) is only seen here, so it is opened again once, and nothing was
        // sent yet that could have been written.
        self.client()?;
        let mut found = match probe(self) {
            Err(e) if connection_broke(&e) => {
                self.client = None;
                self.client()?;
                probe(self)
            }
            other => other,
        }
        .map_err(|e| failure(&label, "cannot read", e))?;
        // The query's first row, when the schema has Timeline's `state` table, says so.
        let exists = found.first().is_some_and(|f| f.kind == schema::STATE_ROW);
        if exists {
            found.remove(0);
        }
        if !exists || !found.is_empty() {
            return Ok((None, found));
        }
        self.sent.one();
        let client = self.client()?;
        // Outside a transaction, so the table is named with its schema (no search path is set).
        // A simple query, for the reason the probe is one.
        let version = simple_value(
            client,
            &format!(
                "{}; SELECT schema_version FROM {schema}.state WHERE id = 0",
                schema::session_settings()
            ),
        )
        .map_err(|e| failure(&label, "cannot read", e))?;
        let version = version
            .as_deref()
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(u64::MAX);
        if version > schema_version() {
            return Err(newer_schema(&label, version));
        }
        Ok((Some(version), Vec::new()))
    }

    /// Create or migrate the schema, once, however many processes start together (see `migrate`),
    /// in a transaction of its own.
    fn ensure_schema(&mut self) -> Result<()> {
        if self.stored_version()? == Some(schema_version()) {
            return Ok(());
        }
        let label = self.label();
        let schema = self.target.schema.clone();
        let client = self.client()?;
        let run = |client: &mut postgres::Client| -> std::result::Result<u64, postgres::Error> {
            let mut tx = client.transaction()?;
            let at = migrate_schema(&mut tx, &schema)?;
            tx.commit()?;
            Ok(at)
        };
        run(client).map_err(|e| failure(&label, "cannot set up the schema of", e))?;
        // A newer version written meanwhile is refused here, as at any other start.
        self.stored_version().map(|_| ())
    }

    pub fn schema_version(&mut self) -> Result<Option<u64>> {
        self.stored_version()
    }

    /// The server's version (`SHOW server_version`), for `db info`.
    pub fn server_version(&mut self) -> Result<String> {
        if let Some(v) = &self.server_version {
            return Ok(v.clone());
        }
        let label = self.label();
        let v = simple_value(self.client()?, "SHOW server_version")
            .map_err(|e| failure(&label, "cannot read", e))?
            .unwrap_or_default();
        self.server_version = Some(v.clone());
        Ok(v)
    }

    pub fn read<R>(&mut self, f: impl FnOnce(&mut dyn Tx) -> Result<R>) -> Result<R> {
        self.counting(|store| {
            match store.stored_version()? {
                None => {
                    // No tables yet: read as an empty database, as a missing file reads.
                    return f(&mut MemTx {
                        db: &mut Database::default(),
                        engine: Engine::Postgres,
                    });
                }
                // An older schema is migrated first, as SQLite migrates an older file when it opens
                // it: this build's queries need its columns. (Reading only, it is read as it is.)
                Some(v) if v < schema_version() && !store.reads_only => store.ensure_schema()?,
                Some(_) => {}
            }
            store.in_transaction(false, |tx| f(tx).map(Outcome::Unchanged))
        })
    }

    pub fn write<R>(&mut self, f: impl FnOnce(&mut dyn Tx) -> Result<Outcome<R>>) -> Result<R> {
        self.counting(|store| {
            store.refuse_change_if_read_only()?;
            let migrate = store.stored_version()? != Some(schema_version());
            store.in_transaction_migrating(true, migrate, |tx| f(tx))
        })
    }

    /// Run one read or change, printing the statements it sent when `TIMELINE_COUNT_READS=1`
    /// (after the rows line of `count::run`, as `storage statements sent: N`).
    fn counting<R>(&mut self, f: impl FnOnce(&mut Self) -> Result<R>) -> Result<R> {
        self.sent.0.set(0);
        let result = f(self);
        if super::count::enabled() {
            super::count::print_statements(self.sent.0.get());
        }
        result
    }

    /// `write` for a change that may be run again: one that fails with a serialization failure or
    /// a deadlock (SQLSTATE 40001, 40P01; nothing of it was kept) is retried up to `RETRIES` times,
    /// after a pause that doubles each time with random jitter (10 ms to 320 ms at most).
    pub fn write_retrying<R>(
        &mut self,
        mut f: impl FnMut(&mut dyn Tx) -> Result<Outcome<R>>,
    ) -> Result<R> {
        self.counting(|store| {
            store.refuse_change_if_read_only()?;
            let mut attempt = 0;
            loop {
                store.retryable.set(false);
                let migrate = store.stored_version()? != Some(schema_version());
                match store.in_transaction_migrating(true, migrate, |tx| f(tx)) {
                    Err(_) if store.retryable.get() && attempt < RETRIES => {
                        attempt += 1;
                        std::thread::sleep(backoff(attempt));
                    }
                    other => return other,
                }
            }
        })
    }

    /// Run `f` in one transaction (see the module's comment) and commit what it says to commit.
    fn in_transaction<R>(
        &mut self,
        writing: bool,
        f: impl FnOnce(&mut PgTx) -> Result<Outcome<R>>,
    ) -> Result<R> {
        self.in_transaction_migrating(writing, false, f)
    }

    /// `in_transaction`, creating or migrating the schema first in the same transaction when
    /// `migrate`: a first change that fails (a refused import) leaves no tables behind, as it
    /// leaves no file on the file engines.
    fn in_transaction_migrating<R>(
        &mut self,
        writing: bool,
        migrate: bool,
        f: impl FnOnce(&mut PgTx) -> Result<Outcome<R>>,
    ) -> Result<R> {
        let result = self.in_transaction_inner(writing, migrate, f);
        if migrate && result.is_err() {
            // Statements prepared on tables the rollback removed must not be used again.
            self.cache.clear();
        }
        result
    }

    fn in_transaction_inner<R>(
        &mut self,
        writing: bool,
        migrate: bool,
        f: impl FnOnce(&mut PgTx) -> Result<Outcome<R>>,
    ) -> Result<R> {
        let label = self.label();
        let schema = self.target.schema.clone();
        self.client()?;
        let client = self.client.as_mut().expect("connected above");
        self.sent.one();
        let begin = if writing {
            client.build_transaction().start()
        } else {
            client
                .build_transaction()
                .isolation_level(postgres::IsolationLevel::RepeatableRead)
                .read_only(true)
                .start()
        };
        let mut tx = begin.map_err(|e| failure(&label, "cannot start a transaction on", e))?;
        // Every transaction pins its search path itself (`schema::pin_search_path`), so that it
        // holds behind a pooler that shares server sessions between clients.
        self.sent.one();
        tx.batch_execute(&schema::pin_search_path(&schema))
            .map_err(|e| failure(&label, "cannot start a transaction on", e))?;
        if migrate {
            let found = migrate_schema(&mut tx, &schema)
                .map_err(|e| failure(&label, "cannot set up the schema of", e))?;
            if found > schema_version() {
                // Another Timeline wrote a newer schema meanwhile: refused as at any other start.
                return Err(newer_schema(&label, found));
            }
        }
        let mut pg = PgTx {
            tx: &mut tx,
            cache: &mut self.cache,
            name: &label,
            writing,
            retryable: &self.retryable,
            sent: &self.sent,
            locked: Vec::new(),
            pending: Default::default(),
        };
        let outcome = match f(&mut pg) {
            Ok(Outcome::Commit(result)) => pg.flush().map(|()| Outcome::Commit(result)),
            other => other,
        };
        drop(pg);
        // Prepared statements are closed while the transaction still holds its server session:
        // behind a pooler in transaction mode, one left open would stay on a session another
        // client gets next, whose statement of the same name would then be refused.
        self.cache.clear();
        // COMMIT or ROLLBACK.
        self.sent.one();
        match outcome {
            Ok(Outcome::Commit(result)) => {
                tx.commit().map_err(|e| {
                    // A commit whose answer never came may or may not have happened.
                    if connection_broke(&e) {
                        Error::database(format!(
                            "the connection to {label} broke while the change was being committed, so whether it was written is unknown; run it again with the same idempotency key, which is safe"
                        ))
                        .with_source(e)
                    } else {
                        failure(&label, "cannot commit the change to", e)
                    }
                })?;
                Ok(result)
            }
            // Nothing to keep: ending the transaction either way releases its locks and snapshot.
            Ok(Outcome::Unchanged(result)) => {
                let _ = tx.rollback();
                Ok(result)
            }
            Err(e) => {
                let _ = tx.rollback();
                Err(e)
            }
        }
    }

    fn refuse_change_if_read_only(&self) -> Result<()> {
        if self.reads_only {
            return Err(Error::database(format!(
                "cannot change the database {}: it was opened for reading only",
                self.label()
            )));
        }
        Ok(())
    }

    pub fn backup(&mut self, target: &Path) -> Result<super::Engine> {
        admin::backup(self, target)
    }

    pub fn check(&mut self) -> Result<Vec<String>> {
        admin::check(self)
    }

    pub fn repair(&mut self) -> Result<Vec<String>> {
        admin::repair(self)
    }

    /// Write `db` as a new database at `target`, whose schema must hold no Timeline tables.
    pub fn create_from(target: &PgTarget, db: &Database) -> Result<()> {
        admin::create_from(&mut PgStore::new(target.clone()), db)
    }
}

fn newer_schema(label: &str, version: u64) -> Error {
    Error::database(format!(
        "the database {label} has schema version {version}, newer than this version of Timeline reads ({}); nothing was changed. Use the release of Timeline that wrote it, or a newer one",
        schema_version()
    ))
}

/// Create the schema and its tables or migrate them to this build's version, in `tx`: under an
/// advisory lock held to the end of the transaction, the version is read again and only what is
/// missing runs. The version found (newer than this build's when another Timeline wrote it).
fn migrate_schema(
    tx: &mut postgres::Transaction,
    schema: &str,
) -> std::result::Result<u64, postgres::Error> {
    tx.batch_execute(&schema::pin_search_path(schema))?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    // CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the schema is there; a
    // role given only USAGE and CREATE on a schema made for it must not need that.
    let made: bool = tx
        .query_one(
            "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)",
            &[&schema],
        )?
        .try_get(0)?;
    if !made {
        tx.batch_execute(&format!("CREATE SCHEMA {schema}"))?;
    }
    let exists: bool = tx
        .query_one(
            "SELECT to_regclass(quote_ident($1) || '.state') IS NOT NULL",
            &[&schema],
        )?
        .try_get(0)?;
    let found = if exists {
        let v: i64 = tx
            .query_one("SELECT schema_version FROM state WHERE id = 0", &[])?
            .try_get(0)?;
        u64::try_from(v).unwrap_or(u64::MAX)
    } else {
        0
    };
    let mut at = found;
    while at < schema_version() {
        // New tables go to the first schema of the search path: Timeline's, while they are made.
        tx.batch_execute(&format!(
            "{};\n{}\n;{};",
            schema::migration_search_path(schema),
            MIGRATIONS[at as usize],
            schema::pin_search_path(schema)
        ))?;
        if MIGRATIONS[at as usize] == MIGRATION_PATH_JUMPS {
            fill_path_columns(tx)?;
        }
        at += 1;
    }
    tx.execute(
        "UPDATE state SET schema_version = $1 WHERE id = 0 AND schema_version < $1",
        &[&(at as i64)],
    )?;
    Ok(found.max(at))
}

/// The pause before retry `attempt` (1, 2, ...): 10 ms doubled each time, plus up to as much again
/// at random so that writers that collided do not collide again.
fn backoff(attempt: u32) -> Duration {
    let base = 10u64 << attempt.min(5);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let jitter = (u64::from(nanos) ^ u64::from(std::process::id())) % base;
    Duration::from_millis(base + jitter)
}

/// Whether `e` says the connection itself is gone (closed, or its socket failed), not a statement.
/// The server ending the session (SQLSTATE class 57P: terminated by an administrator, a crash or a
/// shutdown) counts as that too.
fn connection_broke(e: &postgres::Error) -> bool {
    e.is_closed()
        || matches!(
            e.code().map(|c| c.code()),
            Some("57P01" | "57P02" | "57P03")
        )
        || std::error::Error::source(e)
            .is_some_and(|s| s.downcast_ref::<std::io::Error>().is_some())
}

/// A PostgreSQL error as a database error that names the database by its redacted URI.
fn failure(label: &str, what: &str, e: postgres::Error) -> Error {
    let code = e.code().map(|c| c.code().to_string());
    let hint = match code.as_deref() {
        Some("40001" | "40P01") => {
            "; it collided with other writers (a serialization failure or deadlock) and nothing was written: run it again"
        }
        Some("57014") => {
            "; a statement ran longer than the statement timeout (another client may hold a lock for long): nothing was written, try again"
        }
        Some("42501") => {
            "; the database role may not do this: grant it the privileges docs/storage.md lists"
        }
        Some("53100") => "; the server's disk is full: nothing was written",
        // Undefined table, column or function, a wrong type: Timeline's statements match the
        // tables its migrations make, so someone else changed them.
        Some("42P01" | "42703" | "42883" | "42804") => {
            let message = Message::from(format!(
                "{what} the database {label}: {}; the schema's tables are not as Timeline made them (someone else altered them), so Timeline does not use them and nothing was written. ",
                detail(&e)
            ))
            .worded(
                "Restore the schema from a backup (tl db backup, or the server's own), or convert a backup into a new schema (tl db convert)",
                RESTORE_BY_THE_USER,
            );
            return Error::database(message).with_source(e);
        }
        _ if connection_broke(&e) => {
            "; the connection to the server broke (it restarted or the network failed); nothing of this transaction was written, and the next call connects again"
        }
        _ => "",
    };
    Error::database(format!("{what} the database {label}: {}{hint}", detail(&e))).with_source(e)
}

/// What the server said (its message), or the client's own error.
fn detail(e: &postgres::Error) -> String {
    e.as_db_error()
        .map(|d| d.message().to_string())
        .unwrap_or_else(|| e.to_string())
}

/// Over MCP, where a damaged or altered schema is said to be: no MCP tool checks or restores a
/// database.
const RESTORE_BY_THE_USER: &str = "No MCP tool checks, repairs or restores a database: stop and tell the user that it needs checking and restoring from a backup";

/// A node whose parent is not older than it: damage Timeline never writes (see the SQLite engine's
/// `newer_parent`).
fn newer_parent(label: &str, tl: u64, n: u64, parent: u64) -> Error {
    Error::database(
        Message::from(format!(
            "the database {label} is damaged: timeline tl{tl}: node n{n} claims parent n{parent}, which is not older than it; nothing was changed. "
        ))
        .worded(
            "Run tl db check, and restore a backup",
            RESTORE_BY_THE_USER,
        ),
    )
}

/// The first column of the last row a simple query returned (`None`: no row, or NULL).
fn simple_value(
    client: &mut postgres::Client,
    text: &str,
) -> std::result::Result<Option<String>, postgres::Error> {
    Ok(client
        .simple_query(text)?
        .iter()
        .filter_map(|m| match m {
            postgres::SimpleQueryMessage::Row(row) => Some(row.get(0).map(str::to_string)),
            _ => None,
        })
        .last()
        .flatten())
}
