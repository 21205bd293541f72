//! Which PostgreSQL server, database and schema a `--db` URI names, and the password to log in with.
//!
//! The URI is libpq's (`postgresql://` or `postgres://`, `user:password@host:port/dbname?key=value`,
//! a Unix-socket directory as `host=/dir`), parsed here rather than by the client crate so that every
//! error, log line and `db info` shows one form of it: `redacted()`, which never holds the password.
//! Timeline adds one query parameter of its own, `schema` (default `timeline`), and strips it before
//! connecting: it names the schema that holds Timeline's tables.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The schema Timeline's tables live in unless the URI names another with `?schema=`.
pub const DEFAULT_SCHEMA: &str = "timeline";

/// How long a connection attempt may take unless the URI says otherwise (libpq has no default; ten
/// seconds makes a server that is down fail quickly).
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Whether `text` is a PostgreSQL connection URI (and not a file path).
pub fn is_uri(text: &str) -> bool {
    text.starts_with("postgresql://") || text.starts_with("postgres://")
}

/// Where the server is: a TCP host name or address, or the directory of its Unix socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Tcp(String),
    Socket(PathBuf),
}

/// libpq's `sslmode` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Allow,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

impl SslMode {
    fn parse(value: &str) -> Option<SslMode> {
        Some(match value {
            "disable" => SslMode::Disable,
            "allow" => SslMode::Allow,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Allow => "allow",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// A parsed connection URI.
#[derive(Clone, PartialEq, Eq)]
pub struct PgTarget {
    pub host: Host,
    pub port: u16,
    pub user: String,
    pub dbname: String,
    /// The password the URI itself gives (`PGPASSWORD` and the password file are read at connection
    /// time, see `password`).
    uri_password: Option<String>,
    /// `None` when the URI does not name one (libpq's default, `prefer`).
    pub sslmode: Option<SslMode>,
    pub sslrootcert: Option<PathBuf>,
    pub connect_timeout: Duration,
    pub application_name: Option<String>,
    /// The schema of Timeline's tables: a plain lower-case SQL identifier, so it can be written into
    /// statements as it is.
    pub schema: String,
}

/// Never shows the password, even in a `{:?}` of a structure that holds a target.
impl std::fmt::Debug for PgTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.redacted())
    }
}

impl PgTarget {
    /// Parse a `postgresql://` or `postgres://` URI.
    pub fn parse(uri: &str) -> Result<PgTarget> {
        let rest = uri
            .strip_prefix("postgresql://")
            .or_else(|| uri.strip_prefix("postgres://"))
            .ok_or_else(|| bad(uri, "it does not start with postgresql:// or postgres://"))?;
        let (main, query) = match rest.split_once('?') {
            Some((main, query)) => (main, Some(query)),
            None => (rest, None),
        };
        let (authority, dbname) = match main.split_once('/') {
            Some((authority, db)) => (authority, Some(db)),
            None => (main, None),
        };
        // An @ where none belongs is a password typed or cut wrongly; it is refused rather than
        // taken for a user or database name, which errors and logs would show.
        if authority.matches('@').count() > 1 {
            return Err(bad(
                uri,
                "it holds more than one @ before the host; an @ inside a user name or password must be written %40, and a : (not an @) separates the user from the password",
            ));
        }
        let stray_at = |part: &str| part.contains('@');
        if dbname.is_some_and(stray_at)
            || query.is_some_and(|q| {
                q.split('&')
                    .any(|pair| stray_at(pair.split_once('=').map_or(pair, |(k, _)| k)))
            })
        {
            return Err(bad(
                uri,
                "an @ comes after the host (in the database name or a query parameter's name), which happens when a password holds a /, ? or # that is not percent-encoded: write them as %2F, %3F and %23 (and an @ as %40)",
            ));
        }
        let dbname = dbname.map(|db| decode(uri, db)).transpose()?;
        let (userinfo, hostport) = match authority.rsplit_once('@') {
            Some((userinfo, hostport)) => (Some(userinfo), hostport),
            None => (None, authority),
        };
        let (mut user, mut password) = (None, None);
        if let Some(userinfo) = userinfo {
            match userinfo.split_once(':') {
                Some((u, p)) => {
                    user = Some(decode(uri, u)?);
                    password = Some(decode(uri, p)?);
                }
                None => user = Some(decode(uri, userinfo)?),
            }
        }
        if hostport.contains(',') {
            return Err(bad(
                uri,
                "it names several hosts, and Timeline connects to one server; name one host",
            ));
        }
        let (host_text, port_text) = if let Some(inner) = hostport.strip_prefix('[') {
            // An IPv6 address in brackets, maybe followed by :port.
            let (addr, after) = inner
                .split_once(']')
                .ok_or_else(|| bad(uri, "an IPv6 address opened with [ is not closed with ]"))?;
            (Some(addr.to_string()), after.strip_prefix(':'))
        } else {
            match hostport.rsplit_once(':') {
                Some((h, p)) => (Some(decode(uri, h)?), Some(p)),
                None => (Some(decode(uri, hostport)?), None),
            }
        };
        let mut host = host_text.filter(|h| !h.is_empty());
        let mut port = port_text.filter(|p| !p.is_empty()).map(str::to_string);
        let mut dbname = dbname.filter(|d| !d.is_empty());
        let (mut sslmode, mut sslrootcert, mut timeout, mut app, mut schema) =
            (None, None, None, None, None);
        for pair in query.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').ok_or_else(|| {
                bad(
                    uri,
                    &format!("its query parameter {pair:?} has no value (write key=value)"),
                )
            })?;
            let value = decode(uri, value)?;
            match key {
                "host" => host = Some(value),
                "port" => port = Some(value),
                "user" => user = Some(value),
                "password" => password = Some(value),
                "dbname" => dbname = Some(value),
                "sslmode" => {
                    sslmode = Some(SslMode::parse(&value).ok_or_else(|| {
                        bad(
                            uri,
                            &format!(
                                "sslmode={value} is not one of disable, allow, prefer, require, verify-ca, verify-full"
                            ),
                        )
                    })?)
                }
                "sslrootcert" => sslrootcert = Some(PathBuf::from(value)),
                "connect_timeout" => {
                    let seconds: u64 = value.parse().map_err(|_| {
                        bad(
                            uri,
                            &format!("connect_timeout={value} is not a whole number of seconds"),
                        )
                    })?;
                    // libpq: 0 means wait for ever; Timeline never waits for ever, so it means the
                    // default. (libpq also raises 1 to 2 seconds.)
                    timeout = Some(match seconds {
                        0 => DEFAULT_CONNECT_TIMEOUT,
                        s => Duration::from_secs(s.max(2)),
                    });
                }
                "application_name" => app = Some(value),
                "schema" => schema = Some(value),
                other => {
                    return Err(bad(
                        uri,
                        &format!(
                            "its query parameter {other:?} is not one Timeline uses (host, port, user, password, dbname, sslmode, sslrootcert, connect_timeout, application_name, schema)"
                        ),
                    ));
                }
            }
        }
        let port =
            match port {
                None => 5432,
                Some(p) => p.parse::<u16>().ok().filter(|&p| p != 0).ok_or_else(|| {
                    bad(uri, &format!("port {p:?} is not a number from 1 to 65535"))
                })?,
            };
        let host = match host {
            Some(h) if h.starts_with('/') => Host::Socket(PathBuf::from(h)),
            Some(h) => Host::Tcp(h),
            // libpq's default: the server's Unix socket in its usual directory (Debian's).
            None => Host::Socket(PathBuf::from("/var/run/postgresql")),
        };
        let user = match user.filter(|u| !u.is_empty()) {
            Some(u) => u,
            None => os_user().ok_or_else(|| {
                bad(
                    uri,
                    "it names no user and the name of the system user is unknown; add user@ before the host",
                )
            })?,
        };
        let schema = schema.unwrap_or_else(|| DEFAULT_SCHEMA.to_string());
        if !valid_schema(&schema) {
            return Err(bad(
                uri,
                &format!(
                    "schema={schema} is not a schema name Timeline accepts: 1 to 63 lower-case ASCII letters, digits and _, not starting with a digit nor with pg_"
                ),
            ));
        }
        Ok(PgTarget {
            host,
            port,
            dbname: dbname.unwrap_or_else(|| user.clone()),
            user,
            uri_password: password,
            sslmode,
            sslrootcert,
            connect_timeout: timeout.unwrap_or(DEFAULT_CONNECT_TIMEOUT),
            application_name: app,
            schema,
        })
    }

    /// The URI without its password: the only form shown in errors, logs and `db info`.
    pub fn redacted(&self) -> String {
        let host = match &self.host {
            Host::Tcp(h) if h.contains(':') => format!("[{h}]"),
            Host::Tcp(h) => h.clone(),
            Host::Socket(_) => String::new(),
        };
        let mut out = format!(
            "postgresql://{}@{host}:{}/{}",
            encode(&self.user),
            self.port,
            encode(&self.dbname)
        );
        let mut query = Vec::new();
        if let Host::Socket(dir) = &self.host {
            query.push(format!("host={}", encode(&dir.display().to_string())));
        }
        if let Some(mode) = self.sslmode {
            query.push(format!("sslmode={}", mode.as_str()));
        }
        if let Some(cert) = &self.sslrootcert {
            query.push(format!(
                "sslrootcert={}",
                encode(&cert.display().to_string())
            ));
        }
        if self.connect_timeout != DEFAULT_CONNECT_TIMEOUT {
            query.push(format!(
                "connect_timeout={}",
                self.connect_timeout.as_secs()
            ));
        }
        if let Some(app) = &self.application_name {
            query.push(format!("application_name={}", encode(app)));
        }
        if self.schema != DEFAULT_SCHEMA {
            query.push(format!("schema={}", self.schema));
        }
        if !query.is_empty() {
            out.push('?');
            out.push_str(&query.join("&"));
        }
        out
    }

    /// The password to log in with: the URI's, else `PGPASSWORD`, else the password file's line for
    /// this host, port, database and user (`PGPASSFILE`, else `~/.pgpass`; on Unix only when no one
    /// but its owner may read it, as libpq requires). `None`: log in without one (trust, peer).
    pub fn password(&self) -> Option<String> {
        self.password_looked_up().0
    }

    /// `password`, with what became of the password file when it gave none (for the error of a
    /// server that asks for a password).
    pub(crate) fn password_looked_up(&self) -> (Option<String>, PasswordFile) {
        if let Some(p) = &self.uri_password {
            return (Some(p.clone()), PasswordFile::NotRead);
        }
        if let Some(p) = std::env::var("PGPASSWORD").ok().filter(|p| !p.is_empty()) {
            return (Some(p), PasswordFile::NotRead);
        }
        let file = std::env::var_os("PGPASSFILE")
            .filter(|f| !f.is_empty())
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".pgpass")));
        let Some(file) = file else {
            return (None, PasswordFile::NotRead);
        };
        match self.password_from_file(&file) {
            Ok(Some(p)) => (Some(p), PasswordFile::NotRead),
            Ok(None) => (None, PasswordFile::NoLine(file)),
            Err(why) => (None, why),
        }
    }

    /// The first matching line of a libpq password file (`host:port:database:user:password`, `*`
    /// for any value, `\:` and `\\` escaped); `Err` says why the file was not read.
    fn password_from_file(&self, file: &Path) -> std::result::Result<Option<String>, PasswordFile> {
        let missing = || PasswordFile::Missing(file.to_path_buf());
        let meta = std::fs::metadata(file).map_err(|_| missing())?;
        if !meta.is_file() {
            return Err(missing());
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // libpq ignores a password file that others may read (it warns); so does Timeline,
            // and the error of a login that then lacks a password says so.
            let mode = meta.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(PasswordFile::Ignored(file.to_path_buf(), mode));
            }
        }
        let Ok(text) = std::fs::read_to_string(file) else {
            return Err(PasswordFile::Unreadable(file.to_path_buf()));
        };
        let host = match &self.host {
            Host::Tcp(h) => h.clone(),
            // libpq matches a socket in the default directory as "localhost".
            Host::Socket(dir)
                if dir == Path::new("/var/run/postgresql") || dir == Path::new("/tmp") =>
            {
                "localhost".to_string()
            }
            Host::Socket(dir) => dir.display().to_string(),
        };
        let port = self.port.to_string();
        let wanted = [host.as_str(), &port, &self.dbname, &self.user];
        Ok(text
            .lines()
            .filter(|line| !line.starts_with('#'))
            .find_map(|line| {
                let fields = split_pgpass(line);
                if fields.len() < 5 {
                    return None;
                }
                let matches = wanted
                    .iter()
                    .zip(&fields)
                    .all(|(want, have)| have == "*" || have == want);
                matches.then(|| fields[4..].join(":"))
            }))
    }
}

/// What became of the password file when it gave no password.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum PasswordFile {
    /// Not needed (a password came from elsewhere), or no file to look at (no home directory).
    NotRead,
    /// There is no such file.
    Missing(PathBuf),
    /// Others may read it (its mode), so it was not used, as libpq does not use it. Only Unix
    /// has such modes (libpq checks none on Windows).
    #[cfg_attr(not(unix), allow(dead_code))]
    Ignored(PathBuf, u32),
    /// It could not be read.
    Unreadable(PathBuf),
    /// It has no line for this host, port, database and user.
    NoLine(PathBuf),
}

impl PasswordFile {
    /// The end of the sentence "no password was given: none in the URI, PGPASSWORD is not set,
    /// and ...".
    pub(crate) fn explain(&self) -> String {
        match self {
            PasswordFile::NotRead => {
                "no password file was looked at (HOME is not set): set PGPASSFILE or PGPASSWORD"
                    .to_string()
            }
            PasswordFile::Missing(file) => format!(
                "there is no password file {}: put a line host:port:database:user:password there (chmod 600), or set PGPASSWORD",
                file.display()
            ),
            PasswordFile::Ignored(file, mode) => format!(
                "the password file {} was ignored because others may read it (mode {mode:04o}; libpq ignores it too): make it private with chmod 600 {}",
                file.display(),
                file.display()
            ),
            PasswordFile::Unreadable(file) => format!(
                "the password file {} cannot be read: check that you own it and may read it",
                file.display()
            ),
            PasswordFile::NoLine(file) => format!(
                "the password file {} has no line for this host, port, database and user: add one (host:port:database:user:password)",
                file.display()
            ),
        }
    }
}

/// A line of the password file cut at its unescaped colons, with `\x` turned into `x`.
fn split_pgpass(line: &str) -> Vec<String> {
    let mut fields = vec![String::new()];
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(next) = chars.next() {
                    fields.last_mut().expect("never empty").push(next);
                }
            }
            ':' => fields.push(String::new()),
            c => fields.last_mut().expect("never empty").push(c),
        }
    }
    fields
}

fn os_user() -> Option<String> {
    ["USER", "LOGNAME", "USERNAME"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|u| !u.is_empty()))
}

fn valid_schema(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    first_ok
        && name.len() <= 63
        && !name.starts_with("pg_")
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

/// A URI that cannot be used. The URI itself is not repeated: it may hold a password.
fn bad(uri: &str, why: &str) -> Error {
    let _ = uri;
    Error::invalid(format!(
        "invalid argument --db: the PostgreSQL connection URI cannot be used: {why}. Write it as postgresql://user@host:port/dbname (a Unix socket as postgresql:///dbname?host=/socket/dir)"
    ))
}

/// `%XX` escapes decoded (as libpq does in every part of a URI).
fn decode(uri: &str, text: &str) -> Result<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| bad(uri, "a % is not followed by two hexadecimal digits"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| bad(uri, "a %-escape does not decode to UTF-8 text"))
}

/// The characters of a URI part that must be escaped to read back as they are.
fn encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(b as char)
            }
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_uri_parses_and_its_redacted_form_has_no_password() {
        let t = PgTarget::parse(
            "postgresql://ann:s%3Acret@db.example:6543/team?sslmode=require&application_name=tl&schema=agents&connect_timeout=3",
        )
        .unwrap();
        assert_eq!(t.host, Host::Tcp("db.example".into()));
        assert_eq!(
            (t.port, t.user.as_str(), t.dbname.as_str()),
            (6543, "ann", "team")
        );
        assert_eq!(t.uri_password.as_deref(), Some("s:cret"));
        assert_eq!(t.password().as_deref(), Some("s:cret"));
        assert_eq!(t.sslmode, Some(SslMode::Require));
        assert_eq!(t.connect_timeout, Duration::from_secs(3));
        assert_eq!(t.schema, "agents");
        assert_eq!(
            t.redacted(),
            "postgresql://ann@db.example:6543/team?sslmode=require&connect_timeout=3&application_name=tl&schema=agents"
        );
        assert!(!format!("{t:?}").contains("cret"));
    }

    #[test]
    fn a_socket_directory_and_the_defaults() {
        let t = PgTarget::parse("postgres://bob@/notes?host=%2Ftmp%2Fpg").unwrap();
        assert_eq!(t.host, Host::Socket("/tmp/pg".into()));
        assert_eq!((t.port, t.dbname.as_str()), (5432, "notes"));
        assert_eq!(
            (t.schema.as_str(), t.connect_timeout.as_secs()),
            ("timeline", 10)
        );
        assert_eq!(t.redacted(), "postgresql://bob@:5432/notes?host=/tmp/pg");
        // No database named: the user's name, as libpq does.
        let bare = PgTarget::parse("postgresql://bob@db.example").unwrap();
        assert_eq!((bare.dbname.as_str(), bare.port), ("bob", 5432));
        let v6 = PgTarget::parse("postgresql://u@[::1]:5000/d").unwrap();
        assert_eq!((v6.host, v6.port), (Host::Tcp("::1".into()), 5000));
    }

    #[test]
    fn bad_uris_are_refused_without_echoing_them() {
        for (uri, why) in [
            (
                "postgresql://u:pw@h/d?schema=Bad",
                "schema=Bad is not a schema name",
            ),
            (
                "postgresql://u:pw@h:99999/d",
                "port \"99999\" is not a number",
            ),
            (
                "postgresql://u:pw@h/d?sslmode=maybe",
                "sslmode=maybe is not one of",
            ),
            (
                "postgresql://u:pw@h/d?colour=red",
                "\"colour\" is not one Timeline uses",
            ),
            ("postgresql://u:pw@a,b/d", "several hosts"),
            (
                "postgresql://u:pw@h/d?connect_timeout=soon",
                "not a whole number",
            ),
            ("postgresql://u@pw@h/d", "more than one @ before the host"),
            ("postgresql://u:p/w@h/d", "an @ comes after the host"),
            ("postgresql://u:p?w@h/d", "an @ comes after the host"),
        ] {
            let e = PgTarget::parse(uri).unwrap_err();
            assert!(e.message.contains(why), "{uri}: {}", e.message);
            assert!(!e.message.contains("pw"), "{}", e.message);
        }
    }

    #[cfg(unix)]
    #[test]
    fn the_password_file_is_read_only_when_private() {
        use std::os::unix::fs::PermissionsExt;
        let file =
            std::env::temp_dir().join(format!("timeline-unit-pgpass-{}", std::process::id()));
        std::fs::write(
            &file,
            "# comment\nother:5432:*:ann:no\ndb.example:6543:team:ann:pa\\:ss\n",
        )
        .unwrap();
        let t = PgTarget::parse("postgresql://ann@db.example:6543/team").unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        assert_eq!(t.password_from_file(&file), Ok(Some("pa:ss".to_string())));
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(
            t.password_from_file(&file),
            Err(PasswordFile::Ignored(file.clone(), 0o644))
        );
        let _ = std::fs::remove_file(&file);
    }
}
