//! A PgBouncer in transaction pooling mode in front of the test process's server (`postgres.rs`):
//! the mode most deployments use, where a client's server session may change between any two
//! transactions. One per test process, started at the first test that needs it, with fewer server
//! connections (3) than the tests open clients, so that clients do share sessions.
//!
//! It runs Debian's `pgbouncer` program (which refuses to run as root: as `nobody` through
//! `setpriv` then, as the server does), listening on a Unix socket only, in its directory under
//! `target/tmp/`, with trust authentication, and is stopped when the test process ends. Where the
//! program is missing, the cases print one loud line saying they did not run and pass; under
//! `CI=true` they fail instead.

use super::pg_server::{missing, scratch_dir};
use super::postgres;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// The port of the pooler's socket (its own directory, so nothing else clashes).
const PORT: u16 = 6432;

pub struct Pooler {
    dir: PathBuf,
}

static POOLER: OnceLock<Result<Pooler, String>> = OnceLock::new();

/// The test process's pooler, started on first use; `None` (after one loud line, or a failure
/// under CI=true) when it cannot run here.
pub fn pooler() -> Option<&'static Pooler> {
    postgres::server()?;
    match POOLER.get_or_init(start) {
        Ok(pooler) => Some(pooler),
        Err(why) => {
            missing(
                "POOLER (PGBOUNCER)",
                &format!("{why}; install pgbouncer too (apt-get install pgbouncer)"),
            );
            None
        }
    }
}

/// A URI for a new, empty schema of its own, through the pooler.
pub fn fresh_uri() -> Option<String> {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let pooler = pooler()?;
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    Some(pooler.uri(&format!("b{}_{n}", std::process::id())))
}

impl Pooler {
    pub fn uri(&self, schema: &str) -> String {
        format!(
            "postgresql://{}@:{PORT}/postgres?host={}&schema={schema}",
            postgres::SUPERUSER,
            self.dir.display()
        )
    }
}

fn program() -> Result<PathBuf, String> {
    ["/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .ok_or_else(|| "the pgbouncer program is not installed".to_string())
}

fn start() -> Result<Pooler, String> {
    let bin = program()?;
    let server = postgres::server().ok_or("no test server")?;
    let dir = scratch_dir("pgbouncer");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let write = |name: &str, text: String| {
        let file = dir.join(name);
        std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))
    };
    write("users.txt", format!("\"{}\" \"\"\n", postgres::SUPERUSER))?;
    // No `ignore_startup_parameters`: a client that sends `options` is refused, as in production.
    write(
        "pgbouncer.ini",
        format!(
            "[databases]\n* = host={} port=5432\n\n[pgbouncer]\nlisten_addr =\nlisten_port = {PORT}\nunix_socket_dir = {}\n\
             auth_type = trust\nauth_file = {}\npool_mode = transaction\ndefault_pool_size = 3\n\
             max_client_conn = 400\nlogfile = {}\npidfile = {}\n",
            server.socket_dir().display(),
            dir.display(),
            dir.join("users.txt").display(),
            dir.join("pgbouncer.log").display(),
            dir.join("pgbouncer.pid").display(),
        ),
    )?;
    let root = unsafe { libc::getuid() } == 0;
    if root {
        let _ = Command::new("chown")
            .args(["-R", "65534:65534"])
            .arg(&dir)
            .status();
    }
    // Run until this test process ends, however it ends (the shell outlives it and stops it).
    let run = if root {
        format!(
            "setpriv --reuid=65534 --regid=65534 --clear-groups '{}' '{}'",
            bin.display(),
            dir.join("pgbouncer.ini").display()
        )
    } else {
        format!(
            "'{}' '{}'",
            bin.display(),
            dir.join("pgbouncer.ini").display()
        )
    };
    let script = format!(
        "{run} & child=$!; while kill -0 {} 2>/dev/null && kill -0 $child 2>/dev/null; do sleep 1; done; kill $child 2>/dev/null; rm -rf '{}'",
        std::process::id(),
        dir.display()
    );
    Command::new("sh")
        .args(["-c", &script])
        .env("HOME", &dir)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("pgbouncer: {e}"))?;
    let socket = dir.join(format!(".s.PGSQL.{PORT}"));
    let started = Instant::now();
    while !socket.exists() {
        if started.elapsed() > Duration::from_secs(15) {
            let log = std::fs::read_to_string(dir.join("pgbouncer.log")).unwrap_or_default();
            return Err(format!("pgbouncer did not start within 15 seconds: {log}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Ok(Pooler { dir })
}

/// The pooler's log so far (what a failed test shows).
pub fn log() -> String {
    POOLER
        .get()
        .and_then(|p| p.as_ref().ok())
        .map(|p| std::fs::read_to_string(p.dir.join("pgbouncer.log")).unwrap_or_default())
        .unwrap_or_default()
}
