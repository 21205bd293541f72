//! TLS to a PostgreSQL server: what `sslmode` and `sslrootcert` mean (libpq's table), and the rustls
//! connector that carries it out.
//!
//! rustls with the ring provider is compiled in (feature `postgres-tls`, on by default), so the release
//! archives need no OpenSSL on the target machine. Without the feature a mode that needs TLS is refused
//! before anything is sent to the server, and `prefer` connects in plain text, which it allows.

use super::target::SslMode;
use crate::error::Error;
use std::path::{Path, PathBuf};

/// How one connection is to be secured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Plan {
    /// No TLS: `disable`, or a Unix socket (libpq ignores sslmode there too).
    Plain,
    /// TLS if the server offers it, plain text if not; no certificate check.
    Opportunistic,
    /// TLS or fail, with the server's certificate checked as `check` says.
    Required(Check),
}

/// What is checked of the server's certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Check {
    /// Nothing but the handshake's own signature (`require` with no CA file): encrypted, but open to
    /// whoever can pose as the server.
    Nothing,
    /// The chain leads to a CA in this file.
    Chain(PathBuf),
    /// The chain, and that the certificate names the host.
    ChainAndHost(PathBuf),
}

/// The plan for a connection: `mode` and `rootcert` as the URI gave them (`None`: not given),
/// `default_rootcert` libpq's fallback file (`~/.postgresql/root.crt`) when it exists.
///
/// An error when a verifying mode has no CA file to verify with; `uri` is the redacted URI.
pub(crate) fn plan(
    mode: SslMode,
    rootcert: Option<&Path>,
    default_rootcert: Option<&Path>,
    over_socket: bool,
    uri: &str,
) -> Result<Plan, Error> {
    if over_socket || mode == SslMode::Disable {
        return Ok(Plan::Plain);
    }
    let ca = rootcert.or(default_rootcert).map(Path::to_path_buf);
    Ok(match (mode, ca) {
        (SslMode::Disable, _) => Plan::Plain,
        (SslMode::Allow | SslMode::Prefer, _) => Plan::Opportunistic,
        (SslMode::Require, None) => Plan::Required(Check::Nothing),
        (SslMode::Require | SslMode::VerifyCa, Some(ca)) => Plan::Required(Check::Chain(ca)),
        (SslMode::VerifyFull, Some(ca)) => Plan::Required(Check::ChainAndHost(ca)),
        (SslMode::VerifyCa | SslMode::VerifyFull, None) => {
            return Err(Error::database(format!(
                "cannot connect to the PostgreSQL database {uri}: sslmode={} checks the server's \
                 certificate, but the URI names no CA certificate to check it with; nothing was read or \
                 written. Add sslrootcert=/path/to/ca.crt (the PEM file of the CA that signed the \
                 server's certificate) to the URI, or put that file at ~/.postgresql/root.crt",
                mode.as_str()
            )));
        }
    })
}

/// libpq's default CA file, `~/.postgresql/root.crt` (`%APPDATA%\postgresql\root.crt` on Windows),
/// when it exists.
pub(crate) fn default_rootcert() -> Option<PathBuf> {
    #[cfg(windows)]
    let dir = std::env::var_os("APPDATA").map(|d| PathBuf::from(d).join("postgresql"));
    #[cfg(not(windows))]
    let dir = std::env::var_os("HOME").map(|d| PathBuf::from(d).join(".postgresql"));
    dir.map(|d| d.join("root.crt")).filter(|f| f.is_file())
}

/// Opens a connection with `config` as `plan` says; `uri` (redacted) and `host` name the server in
/// errors. A setup error (an unreadable CA file, TLS left out of this build) comes before anything is
/// sent; a failure to connect is the client crate's error, which [`explain`] describes.
pub(crate) fn connect(
    config: &mut postgres::Config,
    plan: &Plan,
    uri: &str,
) -> Result<Result<postgres::Client, postgres::Error>, Error> {
    use postgres::config::SslMode as Wire;
    match plan {
        Plan::Plain => {
            config.ssl_mode(Wire::Disable);
            Ok(config.connect(postgres::NoTls))
        }
        Plan::Opportunistic => {
            config.ssl_mode(Wire::Prefer);
            opportunistic(config, uri)
        }
        Plan::Required(check) => {
            config.ssl_mode(Wire::Require);
            required(config, check, uri)
        }
    }
}

#[cfg(feature = "postgres-tls")]
fn opportunistic(
    config: &postgres::Config,
    uri: &str,
) -> Result<Result<postgres::Client, postgres::Error>, Error> {
    let tls = rustls_tls::connector(&Check::Nothing, uri)?;
    Ok(config.connect(tls))
}

/// Without TLS compiled in, `prefer` is plain text, which it permits.
#[cfg(not(feature = "postgres-tls"))]
fn opportunistic(
    config: &mut postgres::Config,
    _uri: &str,
) -> Result<Result<postgres::Client, postgres::Error>, Error> {
    config.ssl_mode(postgres::config::SslMode::Disable);
    Ok(config.connect(postgres::NoTls))
}

#[cfg(feature = "postgres-tls")]
fn required(
    config: &postgres::Config,
    check: &Check,
    uri: &str,
) -> Result<Result<postgres::Client, postgres::Error>, Error> {
    let tls = rustls_tls::connector(check, uri)?;
    Ok(config.connect(tls))
}

#[cfg(not(feature = "postgres-tls"))]
fn required(
    _config: &postgres::Config,
    _check: &Check,
    uri: &str,
) -> Result<Result<postgres::Client, postgres::Error>, Error> {
    Err(Error::database(format!(
        "cannot connect to the PostgreSQL database {uri}: its sslmode needs TLS, which this build of \
         Timeline leaves out (it was built without the cargo feature postgres-tls); nothing was read \
         or written. Use a release build, or build with the default features"
    )))
}

/// A sentence on why a connection failed in its TLS handshake, for the error message; `None` when the
/// failure was not about TLS. `host` is the host connected to.
pub(crate) fn explain(error: &postgres::Error, host: &str) -> Option<String> {
    #[cfg(feature = "postgres-tls")]
    if let Some(why) = rustls_tls::explain(error, host) {
        return Some(why);
    }
    let text = error.to_string();
    if text.contains("server does not support TLS") {
        return Some(
            "the server does not accept TLS connections, and the URI's sslmode requires TLS: turn on \
             ssl in the server's configuration, or use sslmode=prefer or disable if plain text is \
             acceptable on this network"
                .to_string(),
        );
    }
    let _ = host;
    None
}

#[cfg(feature = "postgres-tls")]
mod rustls_tls {
    //! The rustls side: the certificate checks of each plan and the connector for the client crate.

    use super::Check;
    use crate::error::Error;
    use rustls::client::WebPkiServerVerifier;
    use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
    use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
    use rustls::pki_types::pem::PemObject;
    use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
    use rustls::{
        CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
    };
    use std::path::Path;
    use std::sync::Arc;
    use tokio_postgres_rustls::MakeRustlsConnect;

    fn provider() -> Arc<CryptoProvider> {
        Arc::new(rustls::crypto::ring::default_provider())
    }

    pub(super) fn connector(check: &Check, uri: &str) -> Result<MakeRustlsConnect, Error> {
        let provider = provider();
        let verifier: Arc<dyn ServerCertVerifier> = match check {
            Check::Nothing => Arc::new(NoCheck(provider.signature_verification_algorithms)),
            Check::Chain(ca) => Arc::new(ChainOnly(webpki(ca, &provider, uri)?)),
            Check::ChainAndHost(ca) => webpki(ca, &provider, uri)?,
        };
        let config = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| {
                Error::internal(format!(
                    "rustls refused its own default protocol versions: {e}"
                ))
            })?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        Ok(MakeRustlsConnect::new(config))
    }

    /// The standard check (chain and host name) against the CAs of the file `ca`.
    fn webpki(
        ca: &Path,
        provider: &Arc<CryptoProvider>,
        uri: &str,
    ) -> Result<Arc<WebPkiServerVerifier>, Error> {
        let unreadable = |why: String| {
            Error::database(format!(
                "cannot connect to the PostgreSQL database {uri}: the CA certificate file {} \
                 (sslrootcert) cannot be used: {why}; nothing was read or written. Name a PEM file \
                 that holds the certificate of the CA that signed the server's certificate",
                ca.display()
            ))
        };
        let mut roots = RootCertStore::empty();
        let pem = std::fs::read(ca).map_err(|e| unreadable(format!("it cannot be read ({e})")))?;
        for cert in CertificateDer::pem_slice_iter(&pem) {
            let cert = cert.map_err(|e| unreadable(e.to_string()))?;
            roots
                .add(cert)
                .map_err(|e| unreadable(format!("a certificate in it is not valid: {e}")))?;
        }
        if roots.is_empty() {
            return Err(unreadable("it holds no PEM certificate".to_string()));
        }
        WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
            .build()
            .map_err(|e| unreadable(e.to_string()))
    }

    /// `verify-ca`: the chain must lead to the CA; a certificate for another host name is accepted, as
    /// libpq does. webpki checks the chain before the name, so a name error means the chain passed.
    #[derive(Debug)]
    struct ChainOnly(Arc<WebPkiServerVerifier>);

    impl ServerCertVerifier for ChainOnly {
        fn verify_server_cert(
            &self,
            end_entity: &CertificateDer<'_>,
            intermediates: &[CertificateDer<'_>],
            server_name: &ServerName<'_>,
            ocsp_response: &[u8],
            now: UnixTime,
        ) -> Result<ServerCertVerified, rustls::Error> {
            match self.0.verify_server_cert(
                end_entity,
                intermediates,
                server_name,
                ocsp_response,
                now,
            ) {
                Err(rustls::Error::InvalidCertificate(
                    CertificateError::NotValidForName
                    | CertificateError::NotValidForNameContext { .. },
                )) => Ok(ServerCertVerified::assertion()),
                other => other,
            }
        }

        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            self.0.verify_tls12_signature(message, cert, dss)
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            self.0.verify_tls13_signature(message, cert, dss)
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.0.supported_verify_schemes()
        }
    }

    /// `prefer` and `require` without a CA: any certificate, as libpq; the handshake's signature is
    /// still checked, so the session key belongs to whoever holds the certificate's key.
    #[derive(Debug)]
    struct NoCheck(WebPkiSupportedAlgorithms);

    impl ServerCertVerifier for NoCheck {
        fn verify_server_cert(
            &self,
            _end_entity: &CertificateDer<'_>,
            _intermediates: &[CertificateDer<'_>],
            _server_name: &ServerName<'_>,
            _ocsp_response: &[u8],
            _now: UnixTime,
        ) -> Result<ServerCertVerified, rustls::Error> {
            Ok(ServerCertVerified::assertion())
        }

        fn verify_tls12_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0)
        }

        fn verify_tls13_signature(
            &self,
            message: &[u8],
            cert: &CertificateDer<'_>,
            dss: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0)
        }

        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            self.0.supported_schemes()
        }
    }

    /// The rustls error somewhere in the chain of causes of `error`.
    fn rustls_cause(error: &postgres::Error) -> Option<&rustls::Error> {
        let mut cause: Option<&(dyn std::error::Error + 'static)> =
            std::error::Error::source(error);
        while let Some(e) = cause {
            if let Some(found) = e.downcast_ref::<rustls::Error>() {
                return Some(found);
            }
            if let Some(io) = e.downcast_ref::<std::io::Error>()
                && let Some(found) = io
                    .get_ref()
                    .and_then(|inner| inner.downcast_ref::<rustls::Error>())
            {
                return Some(found);
            }
            cause = e.source();
        }
        None
    }

    pub(super) fn explain(error: &postgres::Error, host: &str) -> Option<String> {
        let found = rustls_cause(error)?;
        Some(match found {
            rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            ) => format!(
                "the server's certificate is not issued for the host name {host} (sslmode=verify-full \
                 checks that it is): connect with a host name the certificate names, or use \
                 sslmode=verify-ca to check only that the CA signed it"
            ),
            rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
                "the server's certificate is not signed by the CA in sslrootcert: name the CA \
                 certificate that signed the server's certificate with sslrootcert=/path/to/ca.crt"
                    .to_string()
            }
            rustls::Error::InvalidCertificate(
                CertificateError::Expired | CertificateError::ExpiredContext { .. },
            ) => "the server's certificate has expired: the server needs a new one".to_string(),
            other => format!("the TLS handshake with the server failed: {other}"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MODES: [SslMode; 6] = [
        SslMode::Disable,
        SslMode::Allow,
        SslMode::Prefer,
        SslMode::Require,
        SslMode::VerifyCa,
        SslMode::VerifyFull,
    ];

    fn planned(mode: SslMode, rootcert: Option<&str>, default: Option<&str>, socket: bool) -> Plan {
        plan(
            mode,
            rootcert.map(Path::new),
            default.map(Path::new),
            socket,
            "postgresql://h/db",
        )
        .unwrap()
    }

    #[test]
    fn the_modes_follow_libpq() {
        use SslMode::*;
        let ca = |p: &str| Plan::Required(Check::Chain(PathBuf::from(p)));
        assert_eq!(planned(Disable, Some("/ca"), None, false), Plan::Plain);
        assert_eq!(
            planned(Prefer, Some("/ca"), None, false),
            Plan::Opportunistic
        );
        assert_eq!(planned(Allow, None, None, false), Plan::Opportunistic);
        assert_eq!(
            planned(Require, None, None, false),
            Plan::Required(Check::Nothing)
        );
        // libpq: require with a CA file present verifies the chain, as verify-ca.
        assert_eq!(planned(Require, Some("/ca"), None, false), ca("/ca"));
        assert_eq!(
            planned(Require, None, Some("/home/ca"), false),
            ca("/home/ca")
        );
        assert_eq!(
            planned(VerifyCa, Some("/ca"), Some("/home/ca"), false),
            ca("/ca")
        );
        assert_eq!(
            planned(VerifyFull, None, Some("/home/ca"), false),
            Plan::Required(Check::ChainAndHost(PathBuf::from("/home/ca")))
        );
    }

    #[test]
    fn a_unix_socket_never_uses_tls() {
        for mode in MODES {
            assert_eq!(planned(mode, None, None, true), Plan::Plain, "{mode:?}");
        }
    }

    #[test]
    fn verifying_without_a_ca_is_refused_naming_the_uri() {
        for mode in [SslMode::VerifyCa, SslMode::VerifyFull] {
            let e = plan(
                mode,
                None,
                None,
                false,
                "postgresql://tl@db.example:5432/team",
            )
            .unwrap_err();
            assert_eq!(
                e.to_string(),
                format!(
                    "cannot connect to the PostgreSQL database postgresql://tl@db.example:5432/team: \
                     sslmode={} checks the server's certificate, but the URI names no CA certificate \
                     to check it with; nothing was read or written. Add sslrootcert=/path/to/ca.crt \
                     (the PEM file of the CA that signed the server's certificate) to the URI, or put \
                     that file at ~/.postgresql/root.crt",
                    mode.as_str()
                )
            );
        }
    }
}
