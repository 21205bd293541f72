//! Opening a connection to the server a target names: the one place that knows how (TLS is added
//! here and nowhere else).

use super::target::{Host, PasswordFile, PgTarget, SslMode};
use super::tls;
use crate::error::{Error, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// How long one statement may run before the server cancels it, so that nothing waits for ever
/// (a lock held by a stuck client, a runaway query).
pub(crate) const STATEMENT_TIMEOUT_MS: u64 = 60_000;

/// A connection to `target`'s database. Nothing is set for the session (a pooler may share it):
/// each transaction sets what it needs (`schema::pin_search_path`).
pub(crate) fn connect(target: &PgTarget) -> Result<postgres::Client> {
    let uri = target.redacted();
    // TLS as libpq does it (`tls`): settled before anything is sent, so a missing CA file fails first.
    let tls = tls::plan(
        target.sslmode.unwrap_or(SslMode::Prefer),
        target.sslrootcert.as_deref(),
        tls::default_rootcert().as_deref(),
        matches!(target.host, Host::Socket(_)),
        &uri,
    )?;
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
        // No `options` start-up parameter (PgBouncer refuses it): the session's settings are
        // set per transaction (`schema::session_settings`).
        .application_name(target.application_name.as_deref().unwrap_or("timeline"));
    let (password, password_file) = target.password_looked_up();
    if let Some(password) = password {
        config.password(password);
    }
    let timeout = target.connect_timeout;
    let opened = within_deadline(timeout + LOGIN_GRACE, &uri, move |uri| {
        tls::connect(&mut config, &tls, uri)
    })?;
    opened.map_err(|e| connect_failure(target, &password_file, e))
}

/// What the login may take beyond `connect_timeout`, which the client crate applies to opening
/// the socket only: the socket's own timeout fires first, and this ends a server that accepted the
/// socket but never finished TLS or the login (libpq bounds the whole connection attempt).
const LOGIN_GRACE: Duration = Duration::from_secs(1);

/// At most this many connection attempts are left waiting for a server that stopped answering;
/// beyond that a new attempt fails at once instead of adding a thread.
const STALLED_MAX: usize = 4;

/// Connection attempts still running on their own threads.
static RUNNING: AtomicUsize = AtomicUsize::new(0);

/// `open(uri)` on a thread of its own, given up on after `deadline`. The client crate has no bound
/// on the login, and a thread that waits is the one way to stop waiting for it; the thread ends
/// when the server answers or closes, or with the process.
fn within_deadline<T: Send + 'static>(
    deadline: Duration,
    uri: &str,
    open: impl FnOnce(&str) -> Result<T> + Send + 'static,
) -> Result<T> {
    let stalled = || {
        Error::database(format!(
            "cannot connect to the PostgreSQL database {uri}: the server took the connection but did not finish TLS and the login within {} seconds (connect_timeout, and one more second); check that this address is a PostgreSQL server and that it is not overloaded; nothing was read or written",
            deadline.saturating_sub(LOGIN_GRACE).as_secs()
        ))
    };
    if RUNNING.load(Ordering::SeqCst) > STALLED_MAX {
        return Err(stalled());
    }
    let (sender, receiver) = mpsc::channel();
    let owned = uri.to_string();
    RUNNING.fetch_add(1, Ordering::SeqCst);
    let spawned = std::thread::Builder::new()
        .name("postgres-connect".into())
        .spawn(move || {
            let _ = sender.send(open(&owned));
            RUNNING.fetch_sub(1, Ordering::SeqCst);
        });
    if let Err(e) = spawned {
        RUNNING.fetch_sub(1, Ordering::SeqCst);
        return Err(Error::database(format!(
            "cannot connect to the PostgreSQL database {uri}: no thread could be started for it ({e}); nothing was read or written"
        )));
    }
    match receiver.recv_timeout(deadline) {
        Ok(result) => result,
        Err(mpsc::RecvTimeoutError::Timeout) => Err(stalled()),
        Err(mpsc::RecvTimeoutError::Disconnected) => Err(Error::internal(format!(
            "the connection attempt to {uri} ended without an answer"
        ))),
    }
}

/// A connection that failed, naming the server by its redacted URI and saying what to check.
fn connect_failure(target: &PgTarget, password_file: &PasswordFile, e: postgres::Error) -> Error {
    let code = e.code().map(|c| c.code().to_string());
    // The client crate's own error when the server asks for a password and none was given.
    let no_password = code.is_none()
        && std::error::Error::source(&e).is_some_and(|s| s.to_string() == "password missing");
    let hint = match code.as_deref() {
        _ if no_password => format!(
            "the server asks for a password and none was given: there is none in the URI, PGPASSWORD is not set, and {}",
            password_file.explain()
        ),
        Some("3D000") => format!(
            "the database {:?} does not exist on that server; Timeline creates its tables but not the database: create it (createdb {}) or name another",
            target.dbname, target.dbname
        ),
        Some("28P01") => {
            "the server refused the login: check the user name and the password (in the URI, PGPASSWORD or the password file)".to_string()
        }
        // pg_hba.conf said no: its reason names what to change (often TLS, or the user's host).
        Some("28000") => format!(
            "the server refused the connection ({}): check the user name, and whether the server requires TLS (sslmode) or accepts this user from this host",
            e.as_db_error().map_or("no reason given", |d| d.message())
        ),
        _ => match tls::explain(&e, &host_name(target)) {
            Some(why) => why,
            None => {
            let text = e.to_string();
            let detail = std::error::Error::source(&e)
                .map(|s| format!(" ({s})"))
                .unwrap_or_default();
            format!(
                "{text}{detail}; check that the server is running and reachable at that address (Timeline waited at most {} seconds: connect_timeout)",
                target.connect_timeout.as_secs()
            )
            }
        },
    };
    Error::database(format!(
        "cannot connect to the PostgreSQL database {}: {hint}; nothing was read or written",
        target.redacted()
    ))
    .with_source(e)
}

/// The host as the URI names it, for messages about its certificate.
fn host_name(target: &PgTarget) -> String {
    match &target.host {
        Host::Tcp(host) => host.clone(),
        Host::Socket(dir) => dir.display().to_string(),
    }
}
