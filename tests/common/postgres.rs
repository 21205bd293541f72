//! The PostgreSQL server of the tests: one per test process, started at the first test that needs
//! it and stopped when the process ends; each test gets a schema of its own in its one database.
//!
//! It needs the server programs (`initdb`, `pg_ctl`: Debian's `postgresql` package). The server
//! listens on a Unix socket only, in its directory under `target/tmp/`, with trust authentication.
//! `initdb` refuses to run as root, so a test process running as root runs the server programs as
//! the user `nobody` (through `setpriv`). Where the programs are missing, the PostgreSQL cases
//! print one line saying they did not run and pass; under `CI=true` they fail instead.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};

/// The database superuser `initdb` creates (the server's programs may run as another system user).
const SUPERUSER: &str = "timeline";

/// A running server: the directory of its socket.
pub struct Server {
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

impl Server {
    /// The URI of `schema` in the server's `postgres` database.
    pub fn uri(&self, schema: &str) -> String {
        format!(
            "postgresql://{SUPERUSER}@:5432/postgres?host={}&schema={schema}",
            self.socket_dir.display()
        )
    }

    pub fn socket_dir(&self) -> &Path {
        &self.socket_dir
    }
}

/// The version the server programs report (`postgres -V`, without its "postgres (PostgreSQL) "):
/// what `SHOW server_version` gives on the test server.
pub fn program_version() -> Option<String> {
    let out = Command::new(programs()?.join("postgres"))
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

/// The directory holding `initdb` and `pg_ctl`: the search path's, else Debian's newest.
fn programs() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .find(|dir| dir.join("initdb").is_file() && dir.join("pg_ctl").is_file())
    });
    on_path.or_else(|| {
        let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path().join("bin")))
            .filter(|bin| bin.join("initdb").is_file())
            .collect();
        versions.sort();
        versions.pop()
    })
}

#[cfg(not(unix))]
fn start() -> Result<Server, String> {
    Err("the test server listens on a Unix socket, which this system does not have".into())
}

/// Where a private server of this test process lives: `name-<pid>` under target/tmp, or under the
/// system's temporary directory when the unprivileged user the server runs as (`nobody`, as root)
/// could not enter target/tmp, as in a checkout inside /root.
#[cfg(unix)]
pub fn scratch_dir(name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    // SAFETY: geteuid has no preconditions and cannot fail.
    let as_root = unsafe { libc::geteuid() } == 0;
    let searchable =
        |dir: &Path| std::fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o001 != 0);
    let base = if !as_root || target.ancestors().all(searchable) {
        target.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    base.join(format!("{name}-{}", std::process::id()))
}

#[cfg(unix)]
fn start() -> Result<Server, String> {
    let bin = programs()
        .ok_or("initdb and pg_ctl were not found (on PATH or in /usr/lib/postgresql/*/bin)")?;
    let root = unsafe { libc::geteuid() } == 0;
    let base = scratch_dir("pg");
    let _ = std::fs::remove_dir_all(&base);
    std::fs::create_dir_all(&base).map_err(|e| format!("cannot create {}: {e}", base.display()))?;
    // As root: the programs run as nobody, who must own the directory.
    let as_user = |program: &Path| -> Command {
        let mut cmd;
        if root {
            cmd = Command::new("setpriv");
            cmd.args(["--reuid=nobody", "--regid=nogroup", "--clear-groups", "--"]);
            cmd.arg(program);
        } else {
            cmd = Command::new(program);
        }
        cmd.env_remove("PGDATA").env("LC_ALL", "C");
        cmd
    };
    if root {
        let status = Command::new("chown")
            .args(["nobody:nogroup"])
            .arg(&base)
            .status()
            .map_err(|e| format!("cannot run chown: {e}"))?;
        if !status.success() {
            return Err(format!("chown nobody:nogroup {} failed", base.display()));
        }
    }
    let data = base.join("data");
    let log = base.join("log");
    let run = |cmd: &mut Command, what: &str| -> Result<(), String> {
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run {what}: {e}"))?;
        if out.status.success() {
            return Ok(());
        }
        Err(format!(
            "{what} failed: {}{} (server log: {})",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
            std::fs::read_to_string(&log).unwrap_or_default()
        ))
    };
    run(
        as_user(&bin.join("initdb")).arg("-D").arg(&data).args([
            "--auth=trust",
            "--no-sync",
            "-E",
            "UTF8",
            "--locale=C",
            "-U",
            SUPERUSER,
        ]),
        "initdb",
    )?;
    // A test server: durability is not what is tested, speed is welcome; many tests run at once.
    let options = format!(
        "-c listen_addresses='' -k {} -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200",
        base.display()
    );
    run(
        as_user(&bin.join("pg_ctl"))
            .arg("-D")
            .arg(&data)
            .args(["-o", &options, "-l"])
            .arg(&log)
            .args(["-w", "-t", "60", "start"]),
        "pg_ctl start",
    )?;
    // The watchdog: once this process has gone, stop the server and remove its directory.
    let pg_ctl = as_user(&bin.join("pg_ctl"));
    let mut stop: Vec<String> = std::iter::once(pg_ctl.get_program())
        .chain(pg_ctl.get_args())
        .map(|a| shell_quote(&a.to_string_lossy()))
        .collect();
    stop.extend([
        "-D".into(),
        shell_quote(&data.to_string_lossy()),
        "-m".into(),
        "immediate".into(),
        "stop".into(),
    ]);
    let script = format!(
        "while kill -0 {pid} 2>/dev/null; do sleep 1; done; {stop} >/dev/null 2>&1; rm -rf {base}",
        pid = std::process::id(),
        stop = stop.join(" "),
        base = shell_quote(&base.to_string_lossy())
    );
    Command::new("sh")
        .args(["-c", &script])
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map_err(|e| format!("cannot start the watchdog: {e}"))?;
    Ok(Server { socket_dir: base })
}

fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}
