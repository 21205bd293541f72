//! Opening a connection to the server a target names: the one place that knows how (TLS is added
//! here and nowhere else).

use super::target::{Host, PgTarget, SslMode};
use crate::error::{Error, Result};

/// How long one statement may run before the server cancels it, so that nothing waits for ever
/// (a lock held by a stuck client, a runaway query).
pub(crate) const STATEMENT_TIMEOUT_MS: u64 = 60_000;

/// A connection to `target`'s database, with the session set up for Timeline: its schema first on
/// the search path, statements bounded by `STATEMENT_TIMEOUT_MS`.
pub(crate) fn connect(target: &PgTarget) -> Result<postgres::Client> {
    if let Some(mode @ (SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull)) =
        target.sslmode
    {
        return Err(Error::database(format!(
            "cannot connect to {}: sslmode={} asks for TLS, which this build of Timeline does not speak yet; nothing was read or written. Connect over a Unix socket or a trusted network with sslmode=disable",
            target.redacted(),
            mode.as_str()
        )));
    }
    let mut config = postgres::Config::new();
    match &target.host {
        Host::Tcp(host) => {
            config.host(host);
        }
        #[cfg(unix)]
        Host::Socket(dir) => {
            config.host_path(dir);
        }
        #[cfg(not(unix))]
        Host::Socket(dir) => {
            return Err(Error::database(format!(
                "cannot connect to {}: {} is a Unix-socket directory, and this system has no Unix sockets; name the server's host name instead",
                target.redacted(),
                dir.display()
            )));
        }
    }
    config
        .port(target.port)
        .user(&target.user)
        .dbname(&target.dbname)
        .connect_timeout(target.connect_timeout)
        .ssl_mode(postgres::config::SslMode::Disable)
        // The session's settings travel with the startup packet: no extra round trip.
        .options(&format!(
            "-c search_path={} -c statement_timeout={STATEMENT_TIMEOUT_MS}",
            target.schema
        ))
        .application_name(target.application_name.as_deref().unwrap_or("timeline"));
    if let Some(password) = target.password() {
        config.password(password);
    }
    config
        .connect(postgres::NoTls)
        .map_err(|e| connect_failure(target, e))
}

/// A connection that failed, naming the server by its redacted URI and saying what to check.
fn connect_failure(target: &PgTarget, e: postgres::Error) -> Error {
    let code = e.code().map(|c| c.code().to_string());
    let hint = match code.as_deref() {
        Some("3D000") => format!(
            "the database {:?} does not exist on that server; Timeline creates its tables but not the database: create it (createdb {}) or name another",
            target.dbname, target.dbname
        ),
        Some("28P01" | "28000") => {
            "the server refused the login: check the user name and the password (in the URI, PGPASSWORD or the password file)".to_string()
        }
        _ => {
            let text = e.to_string();
            let detail = std::error::Error::source(&e)
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            format!(
                "{text}{detail}; check that the server is running and reachable at that address (Timeline waited at most {} seconds: connect_timeout)",
                target.connect_timeout.as_secs()
            )
        }
    };
    Error::database(format!(
        "cannot connect to the PostgreSQL database {}: {hint}; nothing was read or written",
        target.redacted()
    ))
    .with_source(e)
}
