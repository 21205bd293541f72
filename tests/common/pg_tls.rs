//! A PostgreSQL server that speaks TLS, for the tests of sslmode and sslrootcert: a private CA and a
//! server certificate for localhost and 127.0.0.1, made with the `openssl` command at test time; the
//! server listens on 127.0.0.1 and 127.0.0.2 (the second address is one the certificate does not
//! name) and accepts TCP clients only over TLS, with a password. One per test process.
#![allow(dead_code)]

use super::pg_server::{Options, Server, missing};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The role the tests connect as over TCP, its password and its database.
pub const USER: &str = "tl_user";
pub const PASSWORD: &str = "Tl-s3cret-pw";
pub const DB: &str = "team";

pub struct TlsServer {
    pub server: Server,
    /// The CA that signed the server's certificate.
    pub ca: PathBuf,
    /// A CA that signed nothing the server has.
    pub other_ca: PathBuf,
}

/// The TLS server of this test process, started on first use; `None` (after one loud line, or a
/// panic under CI=true) when the server programs or `openssl` are missing.
pub fn server() -> Option<&'static TlsServer> {
    static SERVER: OnceLock<Result<TlsServer, String>> = OnceLock::new();
    match SERVER.get_or_init(start) {
        Ok(server) => Some(server),
        Err(why) => {
            missing("TLS", why);
            None
        }
    }
}

fn start() -> Result<TlsServer, String> {
    super::pg_server::programs()?;
    let root = super::postgres::scratch_dir("pg-tls");
    let _ = std::fs::remove_dir_all(&root);
    let certs = root.join("certs");
    std::fs::create_dir_all(&certs).map_err(|e| format!("{}: {e}", certs.display()))?;
    make_ca(&certs, "ca")?;
    make_ca(&certs, "other-ca")?;
    make_server_cert(&certs)?;
    let options = Options {
        tcp: vec!["127.0.0.1".into(), "127.0.0.2".into()],
        tls: Some((certs.join("server.crt"), certs.join("server.key"))),
        durable: false,
    };
    let server = Server::start(&root, options)?;
    server.psql(
        "postgres",
        &format!("CREATE ROLE {USER} LOGIN PASSWORD '{PASSWORD}'"),
    );
    server.psql("postgres", &format!("CREATE DATABASE {DB} OWNER {USER}"));
    Ok(TlsServer {
        server,
        ca: certs.join("ca.crt"),
        other_ca: certs.join("other-ca.crt"),
    })
}

fn openssl(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("the openssl command cannot be run ({e})"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "openssl {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// A self-signed CA, `<name>.crt` and `<name>.key`, valid for two days.
fn make_ca(dir: &Path, name: &str) -> Result<(), String> {
    let (crt, key) = (format!("{name}.crt"), format!("{name}.key"));
    let subject = format!("/CN=Timeline test {name}");
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "2",
            "-subj",
            &subject,
            "-keyout",
            &key,
            "-out",
            &crt,
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
    )
}

/// server.crt / server.key, signed by `ca`, for localhost and 127.0.0.1 only.
fn make_server_cert(dir: &Path) -> Result<(), String> {
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
        ],
    )?;
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n",
    )
    .map_err(|e| e.to_string())?;
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            "server.ext",
            "-out",
            "server.crt",
        ],
    )?;
    // The server refuses a key that others can read.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        dir.join("server.key"),
        std::fs::Permissions::from_mode(0o600),
    )
    .map_err(|e| e.to_string())
}

impl TlsServer {
    /// `postgresql://tl_user@HOST:PORT/team?QUERY`, without the password.
    pub fn uri(&self, host: &str, query: &str) -> String {
        format!(
            "postgresql://{USER}@{host}:{}/{DB}?{query}",
            self.server.port
        )
    }

    /// The same URI with the password in it.
    pub fn uri_with_password(&self, host: &str, query: &str) -> String {
        format!(
            "postgresql://{USER}:{PASSWORD}@{host}:{}/{DB}?{query}",
            self.server.port
        )
    }

    pub fn ca(&self) -> &str {
        self.ca.to_str().unwrap()
    }
}
