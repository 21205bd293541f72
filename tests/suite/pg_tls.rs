//! TLS to a PostgreSQL server (issue 25, item 5): sslmode and sslrootcert through the real `tl`,
//! against the TLS server of `common::pg_tls` (a private CA; TCP clients must use TLS and a password).
//! Every case has a schema of its own in the server's one database.

use crate::common::{Run, TL, TempDir, pg_tls};
use std::process::Command;

/// `tl ARGS` with `PGPASSWORD` as given, no password file and a home without `~/.postgresql`.
fn tl(home: &TempDir, password: Option<&str>, args: &[&str]) -> Run {
    let mut cmd = Command::new(TL);
    cmd.args(args)
        .env_remove("TIMELINE_DB")
        .env_remove("PGPASSFILE")
        .env_remove("PGPASSWORD")
        .env("HOME", home.path())
        .env("TIMELINE_NOW", crate::common::CLOCK);
    if let Some(p) = password {
        cmd.env("PGPASSWORD", p);
    }
    Run::from(crate::common::output_of(&mut cmd))
}

/// `db info` of a database with one empty timeline, as the JSON line `tl` prints, for `uri` shown
/// as `shown`; the server's version (the line's one part that depends on the machine) as `version`.
fn info(shown: &str, version: &str) -> String {
    let schema = timeline::store::postgres_schema_version();
    format!(
        r#"{{"engine":"postgres","path":"{shown}","exists":true,"format_version":{schema},"file_bytes":0,"timelines":1,"nodes":0,"cold_nodes":0,"server_version":"{version}"}}"#
    )
}

/// The server version `db info` printed, checked to be PostgreSQL's.
fn version_of(run: &Run) -> String {
    let v = run.json()["server_version"].as_str().unwrap().to_string();
    assert!(v.chars().next().is_some_and(|c| c.is_ascii_digit()), "{v}");
    v
}

#[test]
fn pg_tls_require_and_verify_full_with_the_private_ca_connect() {
    let Some(s) = pg_tls::server() else { return };
    let home = TempDir::new();
    let ca = s.ca();
    // (host, query): require with the CA (checked as verify-ca), require without one (encrypted,
    // unchecked), verify-full by name and by address, verify-ca at an address the certificate does
    // not name (verify-ca checks only the chain).
    let cases = [
        (
            "127.0.0.1",
            format!("sslmode=require&sslrootcert={ca}&schema=tls_require"),
        ),
        (
            "127.0.0.1",
            "sslmode=require&schema=tls_require_no_ca".to_string(),
        ),
        (
            "localhost",
            format!("sslmode=verify-full&sslrootcert={ca}&schema=tls_full_name"),
        ),
        (
            "127.0.0.1",
            format!("sslmode=verify-full&sslrootcert={ca}&schema=tls_full_ip"),
        ),
        (
            "127.0.0.2",
            format!("sslmode=verify-ca&sslrootcert={ca}&schema=tls_ca_other_ip"),
        ),
    ];
    for (host, query) in cases {
        let uri = s.uri(host, &query);
        tl(&home, Some(pg_tls::PASSWORD), &["--db", &uri, "create"]).ok(r#"{"timeline_id":"tl0"}"#);
        let run = tl(&home, Some(pg_tls::PASSWORD), &["--db", &uri, "db", "info"]);
        run.ok(&info(&uri, &version_of(&run)));
    }
}

#[test]
fn pg_tls_plain_text_to_the_tls_only_server_is_refused() {
    // The server takes TCP clients over TLS only, so the cases above did use TLS.
    let Some(s) = pg_tls::server() else { return };
    let home = TempDir::new();
    let uri = s.uri("127.0.0.1", "sslmode=disable&schema=tls_plain");
    tl(&home, Some(pg_tls::PASSWORD), &["--db", &uri, "db", "info"]).err(
        3,
        &format!(
            r#"{{"error":"cannot connect to the PostgreSQL database {uri}: the server refused the connection (pg_hba.conf rejects connection for host \"127.0.0.1\", user \"tl_user\", database \"team\", no encryption): check the user name, and whether the server requires TLS (sslmode) or accepts this user from this host; nothing was read or written"}}"#
        ),
    );
}

#[test]
fn pg_tls_verify_full_refuses_a_certificate_for_another_host() {
    let Some(s) = pg_tls::server() else { return };
    let home = TempDir::new();
    let uri = s.uri(
        "127.0.0.2",
        &format!(
            "sslmode=verify-full&sslrootcert={}&schema=tls_wrong_host",
            s.ca()
        ),
    );
    tl(&home, Some(pg_tls::PASSWORD), &["--db", &uri, "create"]).err(
        3,
        &format!(
            r#"{{"error":"cannot connect to the PostgreSQL database {uri}: the server's certificate is not issued for the host name 127.0.0.2 (sslmode=verify-full checks that it is): connect with a host name the certificate names, or use sslmode=verify-ca to check only that the CA signed it; nothing was read or written"}}"#
        ),
    );
}

#[test]
fn pg_tls_verify_full_refuses_a_server_another_ca_signed() {
    let Some(s) = pg_tls::server() else { return };
    let home = TempDir::new();
    let other = s.other_ca.display().to_string();
    for mode in ["verify-full", "verify-ca", "require"] {
        let uri = s.uri(
            "localhost",
            &format!("sslmode={mode}&sslrootcert={other}&schema=tls_other_ca"),
        );
        tl(&home, Some(pg_tls::PASSWORD), &["--db", &uri, "db", "info"]).err(
            3,
            &format!(
                r#"{{"error":"cannot connect to the PostgreSQL database {uri}: the server's certificate is not signed by the CA in sslrootcert: name the CA certificate that signed the server's certificate with sslrootcert=/path/to/ca.crt; nothing was read or written"}}"#
            ),
        );
    }
}

#[test]
fn pg_tls_verify_full_without_a_ca_is_refused_before_connecting() {
    let Some(s) = pg_tls::server() else { return };
    let home = TempDir::new();
    for mode in ["verify-full", "verify-ca"] {
        let uri = s.uri("localhost", &format!("sslmode={mode}&schema=tls_no_ca"));
        tl(&home, Some(pg_tls::PASSWORD), &["--db", &uri, "create"]).err(
            3,
            &format!(
                r#"{{"error":"cannot connect to the PostgreSQL database {uri}: sslmode={mode} checks the server's certificate, but the URI names no CA certificate to check it with; nothing was read or written. Add sslrootcert=/path/to/ca.crt (the PEM file of the CA that signed the server's certificate) to the URI, or put that file at ~/.postgresql/root.crt"}}"#
            ),
        );
    }
    // libpq's default CA file counts as sslrootcert.
    std::fs::create_dir(home.path().join(".postgresql")).unwrap();
    std::fs::copy(&s.ca, home.path().join(".postgresql/root.crt")).unwrap();
    let uri = s.uri("localhost", "sslmode=verify-full&schema=tls_home_ca");
    tl(&home, Some(pg_tls::PASSWORD), &["--db", &uri, "create"]).ok(r#"{"timeline_id":"tl0"}"#);
}

#[test]
fn pg_tls_an_unusable_ca_file_is_named() {
    let Some(s) = pg_tls::server() else { return };
    let home = TempDir::new();
    let not_pem = home.path().join("not-a-cert.txt");
    std::fs::write(&not_pem, "hello\n").unwrap();
    let missing = home.path().join("missing.crt");
    for (file, why) in [
        (
            not_pem.display().to_string(),
            "it holds no PEM certificate".to_string(),
        ),
        (
            missing.display().to_string(),
            "it cannot be read (No such file or directory (os error 2))".to_string(),
        ),
    ] {
        let uri = s.uri(
            "localhost",
            &format!("sslmode=verify-full&sslrootcert={file}&schema=tls_bad_ca"),
        );
        let run = tl(&home, Some(pg_tls::PASSWORD), &["--db", &uri, "db", "info"]);
        run.err(
            3,
            &format!(
                r#"{{"error":"cannot connect to the PostgreSQL database {uri}: the CA certificate file {file} (sslrootcert) cannot be used: {why}; nothing was read or written. Name a PEM file that holds the certificate of the CA that signed the server's certificate"}}"#
            ),
        );
    }
}

#[test]
fn pg_tls_no_output_ever_shows_the_password() {
    let Some(s) = pg_tls::server() else { return };
    let home = TempDir::new();
    let ca = s.ca();
    let good = format!("sslmode=verify-full&sslrootcert={ca}&schema=tls_secret");
    // The password in the URI, then in PGPASSWORD; successes and failures alike.
    let runs = [
        tl(
            &home,
            None,
            &["--db", &s.uri_with_password("localhost", &good), "create"],
        ),
        tl(
            &home,
            None,
            &[
                "--db",
                &s.uri_with_password("localhost", &good),
                "db",
                "info",
            ],
        ),
        tl(
            &home,
            None,
            &[
                "--db",
                &s.uri_with_password("127.0.0.2", &good),
                "db",
                "info",
            ],
        ),
        tl(
            &home,
            None,
            &[
                "--db",
                &s.uri_with_password("localhost", "sslmode=verify-full&schema=x"),
                "db",
                "info",
            ],
        ),
        tl(
            &home,
            Some(pg_tls::PASSWORD),
            &["--db", &s.uri("localhost", &good), "db", "info"],
        ),
        tl(
            &home,
            Some(pg_tls::PASSWORD),
            &["--db", &s.uri("127.0.0.2", &good), "log"],
        ),
        tl(
            &home,
            Some(pg_tls::PASSWORD),
            &["--db", &s.uri("127.0.0.1", "sslmode=disable"), "log"],
        ),
    ];
    assert_eq!(
        runs.iter().map(|r| r.code).collect::<Vec<_>>(),
        [0, 0, 3, 3, 0, 3, 3]
    );
    for run in &runs {
        assert!(
            !run.stdout.contains(pg_tls::PASSWORD) && !run.stderr.contains(pg_tls::PASSWORD),
            "{run:?}"
        );
    }
    // A wrong password is refused without being shown either.
    let uri = s.uri("localhost", &good);
    tl(&home, Some("Wrong-pw-4711"), &["--db", &uri, "db", "info"]).err(
        3,
        &format!(
            r#"{{"error":"cannot connect to the PostgreSQL database {uri}: the server refused the login: check the user name and the password (in the URI, PGPASSWORD or the password file); nothing was read or written"}}"#
        ),
    );
    let with_password = s.uri_with_password("localhost", &good);
    let run = tl(&home, None, &["--db", &with_password, "db", "info"]);
    run.ok(&info(&uri, &version_of(&run)));
}

/// The privileges README lists: a role with CONNECT on the database and USAGE and CREATE on a
/// schema an administrator made for it (and no CREATE on the database) can use Timeline there.
#[test]
fn pg_tls_a_role_with_usage_and_create_on_its_schema_is_enough() {
    let Some(s) = pg_tls::server() else { return };
    let home = TempDir::new();
    s.server.psql(
        "team",
        "CREATE ROLE tl_limited LOGIN PASSWORD 'Limited-pw-9'",
    );
    s.server.psql("team", "CREATE SCHEMA limited");
    s.server.psql(
        "team",
        "GRANT USAGE, CREATE ON SCHEMA limited TO tl_limited",
    );
    let uri = format!(
        "postgresql://tl_limited@localhost:{}/{}?sslmode=verify-full&sslrootcert={}&schema=limited",
        s.server.port,
        pg_tls::DB,
        s.ca()
    );
    tl(&home, Some("Limited-pw-9"), &["--db", &uri, "create"]).ok(r#"{"timeline_id":"tl0"}"#);
    let run = tl(&home, Some("Limited-pw-9"), &["--db", &uri, "db", "info"]);
    run.ok(&info(&uri, &version_of(&run)));
    // Without CREATE on the database, another schema cannot be made.
    let other = uri.replace("schema=limited", "schema=elsewhere");
    tl(&home, Some("Limited-pw-9"), &["--db", &other, "create"]).err(
        3,
        &format!(
            r#"{{"error":"cannot set up the schema of the database {other}: permission denied for database team; the database role may not do this: grant it the privileges docs/storage.md lists"}}"#
        ),
    );
}
