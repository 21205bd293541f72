//! One request, from either front-end: validate against the spec, apply idempotency, run the operation
//! inside a store transaction, and hand back its JSON.

use crate::error::{Error, Result};
use crate::model::file::{AuditEntry, IdempotencyEntry};
use crate::ops::results::{DbBackedUp, DbCheck, DbConverted, DbInfo};
use crate::ops::{self, Ctx};
use crate::spec::Origin;
use crate::spec::validate::{Args, validate};
use crate::spec::{KeyUse, Operation, spec};
use crate::store::{Outcome, Store, Tx};
use serde_json::{Map, Value, json};
use std::ffi::OsString;
use std::path::PathBuf;

pub use crate::ops::Output;

/// One call of an operation as a front-end received it, before validation.
pub struct Request<'a> {
    /// The operation of the spec to run (see `spec::spec().operation(name)`).
    pub op: &'a Operation,
    /// The operation's arguments under their MCP names, exactly as an MCP client sends them.
    pub args: Map<String, Value>,
    /// An idempotency key: a repeated request with the same key returns the first result.
    pub idempotency_key: Option<String>,
    /// Which front-end sent it; decides how errors name parameters.
    pub origin: Origin,
}

/// The current time in Unix seconds. `TIMELINE_NOW` overrides it so tests can cross the 7-day
/// idempotency window; it is read per request and never stored as configuration.
pub fn now() -> u64 {
    if let Some(fake) = std::env::var("TIMELINE_NOW")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return fake;
    }
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The database path: `--db` > a non-empty `TIMELINE_DB` > `~/.timeline.json` when it exists (users
/// of the original tool) > `timeline/timeline.db` in the platform's data directory, whose missing
/// directories are created owner-only.
pub fn resolve_db_path(flag: Option<OsString>) -> Result<PathBuf> {
    let path = locate_db_path(flag)?;
    if let DbPath::Default(path) = &path
        && let Some(dir) = path.parent()
    {
        create_private_dirs(dir)?;
    }
    Ok(path.into_path())
}

/// The path `resolve_db_path` would use, without creating any directory: shell completion reads the
/// database only when it exists and must leave the disk as it was.
pub fn db_path_for_reading(flag: Option<OsString>) -> Result<PathBuf> {
    Ok(locate_db_path(flag)?.into_path())
}

/// Before a change to the database at `path`: when `path` is the default database and its directory is
/// missing, create it (owner-only). A read never creates anything, and a directory that `--db` or
/// `TIMELINE_DB` names is never created (a typo must not make folders).
pub fn before_change(path: &std::path::Path) -> Result<()> {
    // Only the default database (`.../timeline/timeline.db`) has a directory to create: any other
    // path is left without looking up the default, which costs a `tl-mcp` session two file-system
    // calls on every change.
    let named_as_default = path.file_name() == Some("timeline.db".as_ref())
        && path.parent().and_then(|dir| dir.file_name()) == Some("timeline".as_ref());
    if named_as_default
        && let Ok(DbPath::Default(default)) = locate_db_path(None)
        && default == path
        && let Some(dir) = path.parent()
        && !dir.is_dir()
    {
        create_private_dirs(dir)?;
    }
    Ok(())
}

/// Where the database path came from: the default in the data directory is the only one whose
/// directory Timeline creates.
enum DbPath {
    /// `--db`, `TIMELINE_DB` or the existing `~/.timeline.json`.
    Given(PathBuf),
    /// `timeline/timeline.db` in the data directory.
    Default(PathBuf),
}

impl DbPath {
    fn into_path(self) -> PathBuf {
        match self {
            DbPath::Given(path) | DbPath::Default(path) => path,
        }
    }
}

fn locate_db_path(flag: Option<OsString>) -> Result<DbPath> {
    if let Some(path) = flag {
        // An empty --db is a mistake (often an unset shell variable), never a request for the default.
        if path.is_empty() {
            return Err(Error::invalid(
                "invalid argument --db: must not be empty; pass the path of the database file, or leave --db out to use TIMELINE_DB or the default database",
            ));
        }
        return Ok(DbPath::Given(PathBuf::from(path)));
    }
    if let Some(path) = std::env::var_os("TIMELINE_DB").filter(|p| !p.is_empty()) {
        return Ok(DbPath::Given(PathBuf::from(path)));
    }
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
    let home_vars: &[&str] = if cfg!(windows) {
        &["USERPROFILE", "HOME"]
    } else {
        &["HOME"]
    };
    let home = home_vars.iter().find_map(|v| var(v)).map(PathBuf::from);
    if let Some(home) = &home {
        let legacy = home.join(".timeline.json");
        if legacy.exists() {
            return Ok(DbPath::Given(legacy));
        }
    }
    let data_dir = if cfg!(windows) {
        // APPDATA is USERPROFILE\AppData\Roaming unless moved; a process started without it (a
        // service, a scrubbed environment) still has the profile.
        var("APPDATA")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join("AppData").join("Roaming")))
    } else if cfg!(target_os = "macos") {
        home.as_ref()
            .map(|h| h.join("Library").join("Application Support"))
    } else {
        var("XDG_DATA_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| home.as_ref().map(|h| h.join(".local").join("share")))
    };
    let Some(data_dir) = data_dir else {
        return Err(Error::database(format!(
            "cannot find your home directory ({} is not set); pass --db PATH or set TIMELINE_DB",
            home_vars.join(" or ")
        )));
    };
    Ok(DbPath::Default(
        data_dir.join("timeline").join("timeline.db"),
    ))
}

/// Create `dir` and its missing parents, owner-only (0700 on Unix).
fn create_private_dirs(dir: &std::path::Path) -> Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir).map_err(|e| {
        Error::database(format!(
            "cannot create the data directory {}: {e}; create it yourself, or pass --db PATH or set TIMELINE_DB",
            dir.display()
        ))
    })
}

/// A request that passed the argument check: its typed form, and the checked arguments that its
/// idempotency digest is taken from.
pub struct Checked<'a> {
    /// The operation of the spec.
    pub op: &'a Operation,
    /// The typed request, grouped by where it runs.
    pub request: ops::Request,
    /// The checked arguments (under their MCP names).
    pub args: Args,
    /// The idempotency key, checked against the operation's rules.
    pub idempotency_key: Option<String>,
    /// Which front-end sent it.
    pub origin: Origin,
}

/// Check a request: its idempotency key, then its arguments against the spec (the one validation
/// path of both front-ends), into its typed form.
pub fn check(request: Request<'_>) -> Result<Checked<'_>> {
    let Request {
        op,
        args,
        idempotency_key,
        origin,
    } = request;
    crate::spec::validate::check_idempotency_key(op, idempotency_key.as_deref(), origin)?;
    let args = validate(op, &args, origin)?;
    let request = ops::Request::from_checked(op, &args)?;
    Ok(Checked {
        op,
        request,
        args,
        idempotency_key,
        origin,
    })
}

/// Run one request against an open store (the CLI opens one per run, `tl-mcp` one per session).
pub fn execute(store: &mut Store, request: Request) -> Result<Output> {
    run(store, check(request)?)
}

/// Run a checked request against an open store.
pub fn run(store: &mut Store, checked: Checked<'_>) -> Result<Output> {
    let Checked {
        op,
        request,
        args,
        idempotency_key,
        origin,
    } = checked;
    let ctx = Ctx { now: now(), origin };
    match request {
        ops::Request::Tx(request) => {
            // A dry-run budget is a read of a mutating operation: an idempotency key has no effect.
            if !op.mutating || ops::reads_only(&request) {
                store.read(|tx| ops::run(tx, &request, &ctx))
            } else {
                // Run again from the start if a server engine's transaction lost a conflict.
                store.write_retrying(|tx| {
                    keyed_write(tx, op, &request, &args, idempotency_key.clone(), &ctx)
                })
            }
            .map(Output::Json)
        }
        ops::Request::Database(request) => match request {
            ops::DatabaseRequest::DbInfo(_) => ops::json(db_info(store)),
            ops::DatabaseRequest::DbCheck(check) => ops::json(db_check(store, check.repair)),
            ops::DatabaseRequest::DbConvert(convert) => ops::json(db_convert(store, &convert.to)),
            ops::DatabaseRequest::DbBackup(backup) => ops::json(db_backup(store, &backup.to)),
            ops::DatabaseRequest::Import(import) => {
                import_in_steps(store, op, &import, &args, idempotency_key, &ctx)
            }
        }
        .map(Output::Json),
        ops::Request::Export(export) => store.read(|tx| crate::export::run(tx, &export)),
        ops::Request::Local(local) => Err(Error::invalid(format!(
            "{} is a command of tl itself and does not run on a database; run tl {}",
            local.name(),
            op.cli
        ))),
    }
}

/// A change with its idempotency bookkeeping (I1–I4), inside the store's write transaction.
fn keyed_write(
    tx: &mut dyn Tx,
    op: &Operation,
    typed: &ops::TxRequest,
    args: &Args,
    idempotency_key: Option<String>,
    ctx: &Ctx,
) -> Result<Outcome<Value>> {
    let scope = match op.idempotency {
        KeyUse::Database => "database".to_string(),
        _ => crate::model::timeline_id(ops::timeline_of(tx, typed.timeline_id())?.id),
    };
    let request = idempotency_key.as_ref().map(|_| request_digest(op, args));
    if let Some(first) = first_result(tx, op, &scope, idempotency_key.as_deref(), &request, ctx)? {
        return Ok(Outcome::Unchanged(first));
    }
    let result = ops::run(tx, typed, ctx)?;
    record_key(tx, op, scope, idempotency_key, request, &result, ctx)?;
    Ok(Outcome::Commit(result))
}

/// An import: a series of short transactions (see `ops::import`), then one that records its
/// idempotency key. A replayed key is looked up before anything is read.
fn import_in_steps(
    store: &mut Store,
    op: &Operation,
    import: &ops::ImportArgs,
    args: &Args,
    idempotency_key: Option<String>,
    ctx: &Ctx,
) -> Result<Value> {
    let scope = "database".to_string();
    let request = idempotency_key.as_ref().map(|_| request_digest(op, args));
    let key = idempotency_key.as_deref();
    if key.is_some()
        && let Some(first) = store.read(|tx| first_result(tx, op, &scope, key, &request, ctx))?
    {
        return Ok(first);
    }
    let result = ops::json(ops::import(store, import, ctx))?;
    if idempotency_key.is_some() {
        store.write(|tx| {
            record_key(tx, op, scope, idempotency_key, request, &result, ctx)?;
            Ok(Outcome::Commit(()))
        })?;
    }
    Ok(result)
}

/// The first result of a key used within the window for the same request; a conflict when it was
/// used for another.
fn first_result(
    tx: &mut dyn Tx,
    op: &Operation,
    scope: &str,
    key: Option<&str>,
    request: &Option<String>,
    ctx: &Ctx,
) -> Result<Option<Value>> {
    let window = spec().constants.idempotency_window_seconds;
    if let Some(key) = key
        && let Some(entry) = tx.idempotency(scope, key)?
        && ctx.now.saturating_sub(entry.ts) < window
    {
        let same = entry.op == op.name && (entry.request.is_none() || &entry.request == request);
        if !same {
            return Err(Error::conflict(format!(
                "the idempotency key {key:?} was already used on {scope} for another request ({} with other arguments) within the last 7 days; nothing was written. Use a new key for a new request",
                entry.op
            ))
            .with_data(json!({ "idempotency_key": key, "first_operation": entry.op })));
        }
        return Ok(Some(replay(tx, &entry)?));
    }
    Ok(None)
}

/// After a change: purge keys older than the window, and record the request's key with its result.
fn record_key(
    tx: &mut dyn Tx,
    op: &Operation,
    scope: String,
    idempotency_key: Option<String>,
    request: Option<String>,
    result: &Value,
    ctx: &Ctx,
) -> Result<()> {
    let window = spec().constants.idempotency_window_seconds;
    if ctx.now >= window {
        tx.purge_idempotency(ctx.now - window)?;
    }
    if let Some(key) = idempotency_key {
        let stored = audit_form(result);
        tx.put_idempotency(&IdempotencyEntry {
            scope: scope.clone(),
            key: key.clone(),
            op: op.name.clone(),
            result: stored.clone(),
            ts: ctx.now,
            request,
        })?;
        let timeline = (op.idempotency != KeyUse::Database).then(|| scope.clone());
        tx.append_audit(
            ctx.now,
            AuditEntry {
                op: "idempotency".into(),
                timeline,
                scope: Some(scope),
                key: Some(key),
                result: Some(stored),
                ..AuditEntry::default()
            },
        )?;
    }
    Ok(())
}

/// The digest of an operation and its validated arguments: what a replayed key must match.
fn request_digest(op: &Operation, args: &Args) -> String {
    use sha2::{Digest, Sha256};
    // serde_json keeps keys in insertion order; sort them so the same arguments give the same digest
    // whichever front-end (or argument order) they came from.
    // The timeline is the key's scope already, whether it was named or defaulted, so it is left out.
    let sorted: std::collections::BTreeMap<&String, &Value> = args
        .as_map()
        .iter()
        .filter(|(name, _)| name.as_str() != "timeline_id")
        .collect();
    let canonical = json!([op.name, sorted]).to_string();
    crate::ops::hex(&Sha256::digest(canonical.as_bytes()))
}

/// The first result of a key, as it was returned: a budget's messages are stored by node ID and read
/// back from their nodes, which never change.
fn replay(tx: &mut dyn Tx, entry: &IdempotencyEntry) -> Result<Value> {
    let mut result = entry.result.clone();
    let tl = crate::model::parse_timeline_id(&entry.scope);
    if let (Some(tl), Some(messages)) =
        (tl, result.get_mut("messages").and_then(Value::as_array_mut))
    {
        for message in messages.iter_mut() {
            if let Some(n) = message.as_str().and_then(crate::model::parse_node_id) {
                let row = ops::existing(tx, tl, n)?;
                *message = ops::message_of(&row);
            }
        }
    }
    Ok(result)
}

fn file_bytes(path: &std::path::Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

fn db_info(store: &mut Store) -> Result<DbInfo> {
    let path = store.path().to_path_buf();
    let server = store.engine() == crate::store::Engine::Postgres;
    let version = store.format_version()?;
    // A server database exists once its tables do; it has no file whose size says anything.
    let (exists, bytes) = if server {
        (version.is_some(), 0)
    } else {
        (path.exists(), file_bytes(&path))
    };
    let server_version = store.server_version()?;
    let sqlite_log = store.sqlite_log()?;
    let counts = store.read(|tx| tx.counts())?;
    Ok(DbInfo {
        engine: store.engine().as_str().to_string(),
        path: path.display().to_string(),
        exists,
        format_version: version,
        file_bytes: bytes,
        timelines: counts.timelines,
        nodes: counts.nodes,
        cold_nodes: counts.cold_nodes,
        server_version,
        sqlite_log: sqlite_log.map(|log| log.as_str().to_string()),
        sqlite_version: sqlite_log.map(|_| crate::store::sqlite_version().to_string()),
    })
}

fn db_check(store: &mut Store, repair: bool) -> Result<DbCheck> {
    let rebuilt = if repair { Some(store.repair()?) } else { None };
    let problems = store.check()?;
    if problems.is_empty() {
        Ok(DbCheck {
            ok: true,
            engine: store.engine().as_str().to_string(),
            path: store.path().display().to_string(),
            problems,
            rebuilt,
        })
    } else {
        Err(Error::database(format!(
            "the database {} has {} problem(s): {}. Nothing was changed; see docs/storage.md for recovery",
            store.path().display(),
            problems.len(),
            problems.join("; ")
        ))
        .with_data(json!({ "problems": problems })))
    }
}

fn db_convert(store: &mut Store, to: &str) -> Result<DbConverted> {
    let target = PathBuf::from(to);
    let to = &crate::store::shown(to);
    let db = store.read(|tx| tx.load_database())?;
    let engine = Store::create_from(&target, &db)?;
    // What was written must open as it would later (the same checks and load): a copy that cannot
    // be opened is removed rather than reported as a success.
    let reopened = Store::open(target.clone()).and_then(|mut written| {
        let problems = written.check()?;
        if !problems.is_empty() {
            return Err(Error::database(problems.join("; ")));
        }
        written.read(|tx| tx.load_database()).map(|_| ())
    });
    if let Err(e) = reopened {
        // (A server database that was written stays for the user to inspect; it is named below.)
        for suffix in ["", "-wal", "-shm", "-journal", ".lock"] {
            let mut name = target.clone().into_os_string();
            name.push(suffix);
            let _ = std::fs::remove_file(PathBuf::from(name));
        }
        return Err(Error::database(format!(
            "db convert wrote {to}, but the copy does not open as a Timeline database ({}), so it was removed; {} is unchanged. Run db check on it and see docs/storage.md for recovery",
            e.message,
            store.path().display()
        )));
    }
    let nodes: u64 = db.timelines.iter().map(|t| t.nodes.len() as u64 - 1).sum();
    Ok(DbConverted {
        from: store.path().display().to_string(),
        to: to.to_string(),
        engine: engine.as_str().to_string(),
        timelines: db.timelines.len() as u64,
        nodes,
    })
}

fn db_backup(store: &mut Store, to: &str) -> Result<DbBackedUp> {
    let target = PathBuf::from(to);
    let engine = store.engine();
    if engine == crate::store::Engine::Postgres {
        // A snapshot of a server database is a file of either file engine.
        let written = store.backup(&target)?;
        return Ok(DbBackedUp {
            from: store.path().display().to_string(),
            to: to.to_string(),
            engine: written.as_str().to_string(),
            file_bytes: file_bytes(&target),
        });
    }
    if crate::store::Engine::for_new_path(&target) != engine {
        return Err(Error::invalid(format!(
            "invalid argument --to: {} names a {} file, but this database uses the {} engine and a backup is an exact copy; choose a name {}, or use db convert to change the engine",
            crate::store::shown(to),
            crate::store::Engine::for_new_path(&target).as_str(),
            engine.as_str(),
            if engine == crate::store::Engine::Json {
                "ending in .json"
            } else {
                "not ending in .json"
            }
        )));
    }
    store.backup(&target)?;
    Ok(DbBackedUp {
        from: store.path().display().to_string(),
        to: to.to_string(),
        engine: engine.as_str().to_string(),
        file_bytes: file_bytes(&target),
    })
}

/// The form of a result kept for ever in the audit. A budget result names its messages by node ID: the
/// audit stays small, and every text is still one `node` call away. Other results are kept whole.
fn audit_form(result: &Value) -> Value {
    let mut compact = result.clone();
    if let Some(messages) = compact.get_mut("messages").and_then(Value::as_array_mut) {
        for message in messages.iter_mut() {
            if let Some(node) = message.get("node").cloned() {
                *message = node;
            }
        }
    }
    compact
}
