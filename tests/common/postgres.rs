//! The PostgreSQL server of the tests: one per test process, started at the first test that needs
//! it and stopped when the process ends; each test gets a schema of its own in its one database.
//!
//! It is a `pg_server::Server` (the one place that runs the server programs: initdb and pg_ctl
//! from Debian's `postgresql` package, as `nobody` through `setpriv` when the tests run as root,
//! because initdb refuses root) listening on a Unix socket only, in its directory under
//! `target/tmp/`, with trust authentication. Where the programs are missing, the PostgreSQL cases
//! print one line saying they did not run and pass; under `CI=true` they fail instead.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

#[cfg(unix)]
pub use super::pg_server::scratch_dir;

/// The test process's running server.
pub struct Server {
    #[cfg(unix)]
    server: super::pg_server::Server,
    socket_dir: PathBuf,
}

static SERVER: OnceLock<Result<Server, String>> = OnceLock::new();

/// The test process's server, started on first use; `None` when it cannot run here, after saying
/// so once (and failing under CI=true).
pub fn server() -> Option<&'static Server> {
    match SERVER.get_or_init(start) {
        Ok(server) => Some(server),
        Err(why) => {
            static SAID: std::sync::Once = std::sync::Once::new();
            SAID.call_once(|| {
                eprintln!(
                    "\n!!! THE POSTGRESQL CASES DID NOT RUN: {why}. Install the server programs (apt-get install postgresql) to run them.\n"
                )
            });
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "the PostgreSQL cases cannot run under CI=true: {why}"
            );
            None
        }
    }
}

/// A connection URI for a new, empty schema of its own on the test server.
pub fn fresh_uri() -> Option<String> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let server = server()?;
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    Some(server.uri(&format!("t{}_{n}", std::process::id())))
}

/// The port of the shared server's socket: PostgreSQL's default, so that a client given only the
/// socket directory finds it (the server listens on no TCP port, so nothing else can clash).
const PORT: u16 = 5432;

impl Server {
    /// The URI of `schema` in the server's `postgres` database.
    pub fn uri(&self, schema: &str) -> String {
        format!(
            "postgresql://{}@:{PORT}/postgres?host={}&schema={schema}",
            SUPERUSER,
            self.socket_dir.display()
        )
    }

    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }

    /// Runs SQL on the `postgres` database as the superuser; psql's output (see `pg_server`).
    #[cfg(unix)]
    pub fn psql(&self, sql: &str) -> String {
        self.server.psql("postgres", sql)
    }
}

/// The database superuser the tests connect as.
#[cfg(unix)]
pub const SUPERUSER: &str = super::pg_server::ADMIN;
#[cfg(not(unix))]
pub const SUPERUSER: &str = "timeline";

/// The version the server programs report (`postgres -V`, without its "postgres (PostgreSQL) "):
/// what `SHOW server_version` gives on the test server.
#[cfg(unix)]
pub fn program_version() -> Option<String> {
    let bin = super::pg_server::programs().ok()?;
    let out = std::process::Command::new(bin.join("postgres"))
        .arg("-V")
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    Some(
        text.trim()
            .strip_prefix("postgres (PostgreSQL) ")?
            .to_string(),
    )
}

#[cfg(not(unix))]
pub fn program_version() -> Option<String> {
    None
}

#[cfg(not(unix))]
fn start() -> Result<Server, String> {
    Err("the test server listens on a Unix socket, which this system does not have".into())
}

#[cfg(unix)]
fn start() -> Result<Server, String> {
    let root = scratch_dir("pg");
    let _ = std::fs::remove_dir_all(&root);
    let server = super::pg_server::Server::start_on(&root, Default::default(), PORT)?;
    Ok(Server {
        socket_dir: server.socket_dir.clone(),
        server,
    })
}

/// Eight `tl append` processes to `tl0` at once: each succeeds with nothing on standard error
/// (else `context()` is shown), they get n1..n8 between them, the database holds 8 nodes in
/// `timelines` timelines, and `db check` is clean.
pub fn eight_appends_to_tl0_land_once(
    db: &super::Db,
    timelines: u64,
    context: &dyn Fn() -> String,
) {
    let runs: Vec<Vec<String>> = (0..8)
        .map(|i| {
            [
                "--timeline",
                "tl0",
                "append",
                "--role",
                "user",
                "--tokens",
                "1",
                "--text",
            ]
            .map(String::from)
            .into_iter()
            .chain([format!("writer {i}")])
            .collect()
        })
        .collect();
    let mut nodes: Vec<u64> = db
        .tl_at_once(&runs)
        .iter()
        .map(|r| {
            assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{}", context());
            r.json()["node"].as_str().unwrap()[1..].parse().unwrap()
        })
        .collect();
    nodes.sort();
    assert_eq!(nodes, (1..=8).collect::<Vec<u64>>());
    let info = db.tl(&["db", "info"]).json();
    assert_eq!(
        (info["nodes"].clone(), info["timelines"].clone()),
        (serde_json::json!(8), serde_json::json!(timelines))
    );
    db.tl(&["db", "check"]).json();
}
