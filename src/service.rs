//! One request, from either front-end: validate against the spec, apply idempotency, run the operation
//! inside a store transaction, and hand back its JSON.

use crate::error::{Error, Result};
use crate::model::file::{AuditEntry, IdempotencyEntry};
use crate::ops::{self, Ctx};
use crate::spec::validate::{Origin, validate};
use crate::spec::{KeyUse, Operation, spec};
use crate::store::{FileStore, Outcome, Store};
use serde_json::{Map, Value};
use std::ffi::OsString;
use std::path::PathBuf;

/// What a request produced: JSON for every operation, plain text for an ASCII export to stdout.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    Json(Value),
    Text(String),
}

pub struct Request<'a> {
    pub op: &'a Operation,
    /// The operation's arguments under their MCP names, exactly as an MCP client sends them.
    pub args: Map<String, Value>,
    pub idempotency_key: Option<String>,
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

/// The database path: `--db` > a non-empty `TIMELINE_DB` > `.timeline.json` in the home directory.
pub fn resolve_db_path(flag: Option<OsString>) -> Result<PathBuf> {
    if let Some(path) = flag {
        // An empty --db is a mistake (often an unset shell variable), never a request for the default.
        if path.is_empty() {
            return Err(Error::invalid(
                "invalid argument --db: must not be empty; pass the path of the database file, or leave --db out to use TIMELINE_DB or .timeline.json in your home directory",
            ));
        }
        return Ok(PathBuf::from(path));
    }
    if let Some(path) = std::env::var_os("TIMELINE_DB").filter(|p| !p.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    let home_vars: &[&str] = if cfg!(windows) {
        &["USERPROFILE", "HOME"]
    } else {
        &["HOME"]
    };
    for var in home_vars {
        if let Some(home) = std::env::var_os(var).filter(|h| !h.is_empty()) {
            return Ok(PathBuf::from(home).join(".timeline.json"));
        }
    }
    Err(Error::database(format!(
        "cannot find your home directory ({} is not set); pass --db PATH or set TIMELINE_DB",
        home_vars.join(" or ")
    )))
}

fn check_key(op: &Operation, key: Option<&str>, origin: Origin) -> Result<()> {
    let Some(key) = key else { return Ok(()) };
    let name = match origin {
        Origin::Cli => "--idempotency-key",
        Origin::Mcp => "idempotency_key",
    };
    if op.idempotency == KeyUse::Rejected {
        return Err(Error::invalid(format!(
            "invalid argument {name}: {} does not take an idempotency key; it changes nothing in the database, so it is always safe to run again",
            op.cli
        )));
    }
    let limit = spec().constants.max_idempotency_key_bytes;
    if key.is_empty() || key.len() > limit {
        return Err(Error::invalid(format!(
            "invalid argument {name}: must be 1 to {limit} bytes, such as request-001"
        )));
    }
    Ok(())
}

/// Run one request against the database at `db_path`.
pub fn execute(db_path: PathBuf, request: Request) -> Result<Output> {
    let Request {
        op,
        args,
        idempotency_key,
        origin,
    } = request;
    check_key(op, idempotency_key.as_deref(), origin)?;
    let args = validate(op, &args, origin)?;
    let store = FileStore::open(db_path)?;
    let ctx = Ctx { now: now() };
    if op.name == "export" {
        return store.read(|db| crate::export::run(db, &args));
    }
    if !op.mutating {
        return store
            .read(|db| ops::run(db, &op.name, &args, &ctx))
            .map(Output::Json);
    }
    let window = spec().constants.idempotency_window_seconds;
    store
        .write(|db| {
            let scope = match op.idempotency {
                KeyUse::Database => "database".to_string(),
                _ => crate::model::timeline_id(ops::timeline_of(db, &args)?),
            };
            let live = |entry: &IdempotencyEntry| ctx.now.saturating_sub(entry.ts) < window;
            if let Some(key) = &idempotency_key
                && let Some(entry) = db
                    .idempotency
                    .iter()
                    .find(|e| e.scope == scope && &e.key == key && live(e))
            {
                return Ok(Outcome::Unchanged(entry.result.clone()));
            }
            let result = ops::run(db, &op.name, &args, &ctx)?;
            db.idempotency.retain(|e| live(e));
            if let Some(key) = idempotency_key {
                db.idempotency.push(IdempotencyEntry {
                    scope: scope.clone(),
                    key: key.clone(),
                    op: op.name.clone(),
                    result: result.clone(),
                    ts: ctx.now,
                });
                let timeline = (op.idempotency != KeyUse::Database).then(|| scope.clone());
                db.audit(
                    ctx.now,
                    AuditEntry {
                        op: "idempotency".into(),
                        timeline,
                        scope: Some(scope),
                        key: Some(key),
                        result: Some(audit_form(&result)),
                        ..AuditEntry::default()
                    },
                );
            }
            Ok(Outcome::Commit(result))
        })
        .map(Output::Json)
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
