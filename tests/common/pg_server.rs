//! The one place that runs PostgreSQL's server programs for tests and the benchmark: initdb into a
//! directory of its own, started with pg_ctl as an unprivileged user (initdb refuses root), stopped
//! on drop and, should the process die first, by a watchdog shell that waits for it. The shared
//! server of a test process (`postgres.rs`), the private ones of the fault and TLS tests and the
//! benchmark's are all this. Depends on nothing else in tests/common, so the benchmark includes it
//! with `#[path]`.
#![allow(dead_code)]

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The superuser initdb makes; the tests connect as it over the socket (trust) unless they say so.
pub const ADMIN: &str = "timeline";

/// Where the server listens besides its Unix socket, and with which certificate.
#[derive(Default, Clone)]
pub struct Options {
    /// TCP addresses (`listen_addresses`), e.g. `127.0.0.1`; empty: the Unix socket only.
    pub tcp: Vec<String>,
    /// `ssl=on` with this certificate and key (PEM files); TCP clients must then use TLS and a password.
    pub tls: Option<(PathBuf, PathBuf)>,
    /// fsync as a production server does (the benchmark); tests run without it, for speed.
    pub durable: bool,
}

/// A running server; stopped (`-m immediate`) and its directory removed on drop.
pub struct Server {
    pub root: PathBuf,
    pub data: PathBuf,
    pub socket_dir: PathBuf,
    pub port: u16,
    bin: PathBuf,
    options: Options,
}

/// The directory of initdb, pg_ctl and psql: `TIMELINE_PG_BIN`, else the newest
/// /usr/lib/postgresql/N/bin (Debian), else the directory of an `initdb` on PATH. `Err` says why not.
pub fn programs() -> Result<PathBuf, String> {
    let has_all = |d: &Path| {
        ["initdb", "pg_ctl", "postgres", "psql"]
            .iter()
            .all(|p| d.join(p).is_file())
    };
    if let Some(dir) = std::env::var_os("TIMELINE_PG_BIN") {
        let dir = PathBuf::from(dir);
        return if has_all(&dir) {
            Ok(dir)
        } else {
            Err(format!(
                "TIMELINE_PG_BIN={} lacks initdb, pg_ctl, postgres or psql",
                dir.display()
            ))
        };
    }
    let mut debian: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
        .filter(|(_, d)| has_all(d))
        .collect();
    debian.sort();
    if let Some((_, dir)) = debian.pop() {
        return Ok(dir);
    }
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
        .unwrap_or_default();
    on_path.into_iter().find(|d| has_all(d)).ok_or_else(|| {
        "PostgreSQL's server programs (initdb, pg_ctl, postgres, psql) are not installed"
            .to_string()
    })
}

/// Where a private server of this process lives: `name-<pid>` under target/tmp, or under the
/// system's temporary directory when the unprivileged user the server runs as (`nobody`, as root)
/// could not enter target/tmp, as in a checkout inside /root.
pub fn scratch_dir(name: &str) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let searchable =
        |dir: &Path| std::fs::metadata(dir).is_ok_and(|m| m.permissions().mode() & 0o001 != 0);
    let base = if unprivileged().is_none() || target.ancestors().all(searchable) {
        target.to_path_buf()
    } else {
        std::env::temp_dir()
    };
    base.join(format!("{name}-{}", std::process::id()))
}

/// A free TCP port on 127.0.0.1 (free when asked; the server takes it a moment later).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The user the server runs as: the current one, or `nobody` when that is root.
fn unprivileged() -> Option<(u32, u32)> {
    // SAFETY: getuid has no preconditions and cannot fail.
    let root = unsafe { libc::getuid() } == 0;
    root.then_some((65534, 65534))
}

impl Server {
    /// initdb and start a server under `root` (created; must not exist yet).
    pub fn start(root: &Path, options: Options) -> Result<Server, String> {
        Server::start_on(root, options, free_port())
    }

    /// `start` with the port of its socket (and of TCP, if any) chosen by the caller.
    pub fn start_on(root: &Path, options: Options, port: u16) -> Result<Server, String> {
        let bin = programs()?;
        let data = root.join("data");
        let socket_dir = root.join("sock");
        std::fs::create_dir_all(&socket_dir)
            .map_err(|e| format!("{}: {e}", socket_dir.display()))?;
        let server = Server {
            root: root.to_path_buf(),
            data,
            socket_dir,
            port,
            bin,
            options,
        };
        server.chown(root);
        server.watchdog();
        let out = server
            .as_server_user(&server.bin.join("initdb"))
            .args([
                "--auth=trust",
                "--no-sync",
                "--encoding=UTF8",
                "--locale=C",
                "-U",
                ADMIN,
                "-D",
            ])
            .arg(&server.data)
            .output()
            .map_err(|e| format!("initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        server.write_hba()?;
        server.pg_ctl_start()?;
        Ok(server)
    }

    /// A command that runs `program` as the server's user (with the C locale's messages, and no
    /// PGDATA of the caller's).
    fn as_server_user(&self, program: &Path) -> Command {
        let mut cmd = self.as_server_user_in_env(program);
        cmd.env_remove("PGDATA").env("LC_ALL", "C");
        cmd
    }

    fn as_server_user_in_env(&self, program: &Path) -> Command {
        match unprivileged() {
            Some((uid, gid)) => {
                let mut cmd = Command::new("setpriv");
                cmd.args([
                    format!("--reuid={uid}"),
                    format!("--regid={gid}"),
                    "--clear-groups".to_string(),
                ])
                .arg(program);
                // nobody's home does not exist; keep the server programs away from root's.
                cmd.env("HOME", &self.root);
                cmd
            }
            None => Command::new(program),
        }
    }

    fn chown(&self, path: &Path) {
        if let Some((uid, gid)) = unprivileged() {
            let _ = Command::new("chown")
                .args(["-R", &format!("{uid}:{gid}")])
                .arg(path)
                .status();
        }
    }

    /// Stops the server and removes `root` once this process has ended, however it ends.
    fn watchdog(&self) {
        let pid = std::process::id();
        let stop = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 1; done; {} -D '{}' stop -m immediate >/dev/null 2>&1; rm -rf '{}'",
            self.shell_as_server_user(&self.bin.join("pg_ctl")),
            self.data.display(),
            self.root.display()
        );
        let _ = Command::new("sh")
            .args(["-c", &stop])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
    }

    fn shell_as_server_user(&self, program: &Path) -> String {
        match unprivileged() {
            Some((uid, gid)) => format!(
                "setpriv --reuid={uid} --regid={gid} --clear-groups '{}'",
                program.display()
            ),
            None => format!("'{}'", program.display()),
        }
    }

    fn write_hba(&self) -> Result<(), String> {
        // The socket is trusted (the tests' own user); TCP needs TLS and a password when TLS is on,
        // so a plain-text connection that reaches the server is refused rather than served.
        let tcp = if self.options.tls.is_some() {
            "hostssl all all 127.0.0.0/8 scram-sha-256\nhostnossl all all 127.0.0.0/8 reject\n"
        } else {
            "host all all 127.0.0.0/8 scram-sha-256\n"
        };
        let hba = format!("local all all trust\n{tcp}");
        let file = self.data.join("pg_hba.conf");
        std::fs::write(&file, hba).map_err(|e| format!("{}: {e}", file.display()))
    }

    fn pg_ctl_start(&self) -> Result<(), String> {
        // Without durability, also no full-page images in the WAL: less to write, and a server
        // that is only stopped (never an OS crash) loses nothing by it. 200 connections: a test
        // process runs many tests, each with its own `tl-mcp` sessions, at once.
        let durable = if self.options.durable {
            "-c fsync=on"
        } else {
            "-c fsync=off -c full_page_writes=off"
        };
        let mut settings = format!(
            "-p {} -c listen_addresses='{}' -c unix_socket_directories='{}' {durable} -c max_connections=200",
            self.port,
            self.options.tcp.join(","),
            self.socket_dir.display(),
        );
        if let Some((cert, key)) = &self.options.tls {
            settings.push_str(&format!(
                " -c ssl=on -c ssl_cert_file='{}' -c ssl_key_file='{}'",
                cert.display(),
                key.display()
            ));
        }
        let log = self.root.join("server.log");
        let out = self
            .as_server_user(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(&self.data)
            .arg("-l")
            .arg(&log)
            .args(["-w", "-t", "60", "-o", &settings, "start"])
            .stdin(Stdio::null())
            .output()
            .map_err(|e| format!("pg_ctl: {e}"))?;
        if !out.status.success() {
            let log = std::fs::read_to_string(&log).unwrap_or_default();
            return Err(format!(
                "pg_ctl start failed: {}{}\n{log}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        Ok(())
    }

    /// Stops the server at once (as a crash would) and starts it again on the same port.
    pub fn restart(&self) {
        self.stop();
        self.pg_ctl_start().unwrap();
    }

    /// Stops the server at once, as a crash would.
    pub fn stop(&self) {
        let _ = self
            .as_server_user(&self.bin.join("pg_ctl"))
            .arg("-D")
            .arg(&self.data)
            .args(["-w", "stop", "-m", "immediate"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }

    /// Runs SQL as the superuser over the socket; its output (unaligned, tuples only), or a panic
    /// with psql's error.
    pub fn psql(&self, db: &str, sql: &str) -> String {
        let out = Command::new(self.psql_program())
            .args(self.psql_args(db))
            .arg("-c")
            .arg(sql)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    pub fn psql_program(&self) -> PathBuf {
        self.bin.join("psql")
    }

    /// psql's arguments for `db` as the superuser over the socket, quiet, unaligned, tuples only.
    pub fn psql_args(&self, db: &str) -> Vec<String> {
        let socket = self.socket_dir.display().to_string();
        let port = self.port.to_string();
        [
            "-h",
            &socket,
            "-p",
            &port,
            "-U",
            ADMIN,
            "-d",
            db,
            "-v",
            "ON_ERROR_STOP=1",
            "-qAt",
        ]
        .map(String::from)
        .to_vec()
    }

    /// A URI for `db` over the Unix socket, as the superuser.
    pub fn socket_uri(&self, db: &str) -> String {
        format!(
            "postgresql://{ADMIN}@/{db}?host={}&port={}",
            self.socket_dir.display(),
            self.port
        )
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// What a missing server program means for the cases of `area`: under CI=true (where .ci/run installs
/// the programs) a panic; elsewhere one loud line on the real standard error, once per `area`, after
/// which the case returns without running.
pub fn missing(area: &'static str, why: &str) {
    let message = format!(
        "POSTGRESQL {area} CASES DID NOT RUN: {why}; install Debian's postgresql and openssl packages (apt-get install postgresql openssl), as .ci/run does"
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{message}");
    }
    use std::io::Write;
    static SAID: std::sync::Mutex<Vec<&'static str>> = std::sync::Mutex::new(Vec::new());
    let mut said = SAID.lock().unwrap_or_else(|p| p.into_inner());
    if !said.contains(&area) {
        said.push(area);
        let _ = writeln!(std::io::stderr(), "\n{message}\n");
    }
}
