//! Issue 42 on PostgreSQL, through the real `tl` and `tl-mcp`: no password given in a URI,
//! `PGPASSWORD` or the password file is ever printed (item 1); a schema holding objects Timeline
//! did not make (another role's trigger, a view in place of a table, row-level security, a
//! function or operator) is refused and named by `db check`, and every transaction pins its search
//! path (item 2); a password file others may read and an `@` typed for `:` are explained (item 9).
// The servers listen on a Unix socket (and 127.0.0.1), so these are Unix tests.
#![cfg(unix)]

use crate::common::pg_server::{self, Options, Server};
use crate::common::{self, McpSession, Run, TL, TL_MCP, TempDir, postgres};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

const PASSWORD: &str = "S3cr3tPa55";

/// A private server that also listens on 127.0.0.1 (scram-sha-256 there), with the role `ann`
/// (password `PASSWORD`) owning the database `team`; `None` without the server programs.
fn password_server() -> Option<Server> {
    static N: AtomicUsize = AtomicUsize::new(0);
    if let Err(why) = pg_server::programs() {
        pg_server::missing("SECURITY", &why);
        return None;
    }
    let root = postgres::scratch_dir(&format!("pg-sec-{}", N.fetch_add(1, Ordering::Relaxed)));
    let _ = std::fs::remove_dir_all(&root);
    let options = Options {
        tcp: vec!["127.0.0.1".into()],
        ..Options::default()
    };
    let server = Server::start(&root, options).unwrap();
    server.psql(
        "postgres",
        &format!("CREATE ROLE ann LOGIN PASSWORD '{PASSWORD}'"),
    );
    server.psql("postgres", "CREATE DATABASE team OWNER ann");
    Some(server)
}

/// `BIN ARGS` with `env` set, no Timeline or libpq variables of the caller's, and `home` as HOME.
fn run(bin: &str, home: &Path, env: &[(&str, &str)], args: &[&str]) -> Run {
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .env_remove("TIMELINE_DB")
        .env_remove("PGPASSWORD")
        .env_remove("PGPASSFILE")
        .env("HOME", home)
        .env("TIMELINE_NOW", common::CLOCK)
        .stdin(Stdio::null());
    for (k, v) in env {
        cmd.env(k, v);
    }
    Run::from(common::output_of(&mut cmd))
}

fn tl(home: &Path, env: &[(&str, &str)], args: &[&str]) -> Run {
    run(TL, home, env, args)
}

/// A `tl-mcp` session with `env` and `args` (and no other Timeline or libpq settings).
fn mcp(home: &Path, env: &[(&str, &str)], args: &[&str]) -> McpSession {
    let mut cmd = Command::new(TL_MCP);
    cmd.args(args)
        .env_remove("TIMELINE_DB")
        .env_remove("PGPASSWORD")
        .env_remove("PGPASSFILE")
        .env("HOME", home)
        .env("TIMELINE_NOW", common::CLOCK);
    for (k, v) in env {
        cmd.env(k, v);
    }
    McpSession::spawn(cmd)
}

#[track_caller]
fn assert_hidden(what: &str, text: &str, secrets: &[&str]) {
    for secret in secrets {
        assert!(!text.contains(secret), "{what} shows {secret}: {text}");
    }
}

#[test]
fn pg_security_no_output_of_either_binary_shows_a_password() {
    let Some(server) = password_server() else {
        return;
    };
    let home = TempDir::new();
    let port = server.port;
    let shown = format!("postgresql://ann@127.0.0.1:{port}/team");
    let with = format!("postgresql://ann:{PASSWORD}@127.0.0.1:{port}/team");
    let wrong_password = "Wr0ngPa55word";
    let wrong = format!("postgresql://ann:{wrong_password}@127.0.0.1:{port}/team");
    let down = format!("postgresql://ann:{PASSWORD}@127.0.0.1:1/team?connect_timeout=2");
    let secrets = [PASSWORD, wrong_password];

    // tl-mcp's start-up line names the database without the password, from --db and TIMELINE_DB.
    for (env, args) in [
        (vec![], vec!["--db", with.as_str()]),
        (vec![("TIMELINE_DB", with.as_str())], vec![]),
        (vec![], vec![&format!("--db={with}")[..]]),
    ] {
        let mut session = mcp(home.path(), &env, &args);
        let created = session.call("timeline_create", json!({}));
        assert!(created.is_ok(), "{created:?}");
        let failed = session
            .call(
                "timeline_append",
                json!({"timeline_id": "tl9", "role": "user", "text": "x"}),
            )
            .unwrap_err();
        assert_hidden("a tool error", &failed.to_string(), &secrets);
        let (code, stdout, stderr) = session.finish();
        assert_eq!(code, 0);
        assert_hidden("tl-mcp's output", &stdout, &secrets);
        assert_eq!(
            stderr.lines().next(),
            Some(
                format!(
                    "tl-mcp: version {} serving {shown} on standard input/output",
                    env!("CARGO_PKG_VERSION")
                )
                .as_str()
            ),
            "{stderr}"
        );
        assert_hidden("tl-mcp's log", &stderr, &secrets);
    }
    // tl-mcp with a server that is down, a wrong password and a URI without --db.
    for args in [vec!["--db", down.as_str()], vec!["--db", wrong.as_str()]] {
        let mut session = mcp(home.path(), &[], &args);
        let failed = session.call("timeline_list", json!({})).unwrap_err();
        assert_hidden("a tool error", &failed.to_string(), &secrets);
        let (_, stdout, stderr) = session.finish();
        assert_hidden("tl-mcp's output", &(stdout + &stderr), &secrets);
    }
    let mut cmd = Command::new(TL_MCP);
    let lone = cmd.arg(&with).env_remove("TIMELINE_DB").output().unwrap();
    assert_eq!(lone.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&lone.stderr).lines().next(),
        Some(format!("tl-mcp: unknown argument {shown}").as_str())
    );

    // tl: successes and every kind of failure, with the password in the URI.
    let sqlite = home.path().join("local.db");
    let sqlite = sqlite.to_str().unwrap();
    tl(home.path(), &[], &["--db", sqlite, "create"]).json();
    let copy = format!("{with}?schema=copy");
    let runs = [
        tl(
            home.path(),
            &[],
            &["--db", &with, "log", "--timeline", "tl0"],
        ),
        tl(home.path(), &[], &["--db", &with, "db", "info"]),
        tl(home.path(), &[], &["--db", &with, "db", "check"]),
        tl(home.path(), &[], &["--db", &with, "node", "--node", "n99"]),
        tl(home.path(), &[], &[&format!("--db={with}"), "timelines"]),
        tl(home.path(), &[], &["--db", &with, "lgo"]),
        tl(home.path(), &[], &[&with, "log"]),
        tl(home.path(), &[], &["--db", &with, "pin", "n1", "extra"]),
        tl(home.path(), &[], &["--db", &down, "timelines"]),
        tl(home.path(), &[], &["--db", &wrong, "timelines"]),
        tl(
            home.path(),
            &[],
            &["--db", &format!("{with}?colour=red"), "timelines"],
        ),
        tl(
            home.path(),
            &[],
            &["--db", &format!("{with}x"), "timelines"],
        ),
        tl(
            home.path(),
            &[],
            &["--db", sqlite, "db", "backup", "--to", &with],
        ),
        tl(
            home.path(),
            &[],
            &["--db", sqlite, "db", "convert", "--to", &copy],
        ),
        tl(
            home.path(),
            &[],
            &["--db", sqlite, "db", "convert", "--to", &copy],
        ),
        tl(home.path(), &[], &["demo", "--db", &with]),
    ];
    let codes: Vec<i32> = runs.iter().map(|r| r.code).collect();
    assert_eq!(
        codes,
        [0, 0, 0, 1, 0, 2, 2, 2, 3, 3, 2, 3, 2, 0, 1, 1],
        "{runs:#?}"
    );
    for run in &runs {
        assert_hidden("tl", &format!("{}{}", run.stdout, run.stderr), &secrets);
    }
    // The server's reason is given, with the URI as shown.
    runs[9].err(3, &json!({"error": format!("cannot connect to the PostgreSQL database {shown}: the server refused the login: check the user name and the password (in the URI, PGPASSWORD or the password file); nothing was read or written")}).to_string());
    runs[12].err(2, &json!({"error": format!("invalid argument --to: {shown} names a postgres file, but this database uses the sqlite engine and a backup is an exact copy; choose a name not ending in .json, or use db convert to change the engine")}).to_string());
    runs[15].err(1, r#"{"error":"the demo writes a new database file and an HTML page beside it, not a PostgreSQL database: pass --db with the path of a file that does not exist yet, or leave --db out to use a new temporary directory"}"#);

    // The password from PGPASSWORD and from the password file: never shown either.
    let plain = format!("postgresql://ann@127.0.0.1:{port}/team");
    let pgpass = home.path().join("pgpass");
    std::fs::write(&pgpass, format!("127.0.0.1:{port}:team:ann:{PASSWORD}\n")).unwrap();
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    let file = pgpass.to_str().unwrap();
    let runs = [
        tl(
            home.path(),
            &[("PGPASSWORD", PASSWORD)],
            &["--db", &plain, "db", "info"],
        ),
        tl(
            home.path(),
            &[("PGPASSWORD", wrong_password)],
            &["--db", &plain, "db", "info"],
        ),
        tl(
            home.path(),
            &[("PGPASSFILE", file)],
            &["--db", &plain, "db", "info"],
        ),
        tl(
            home.path(),
            &[("PGPASSFILE", file)],
            &[
                "--db",
                &format!("{plain}?schema=other&sslmode=require"),
                "log",
            ],
        ),
        tl(
            home.path(),
            &[("PGPASSWORD", PASSWORD)],
            &["--db", &format!("{plain}?sslmode=require"), "log"],
        ),
    ];
    let codes: Vec<i32> = runs.iter().map(|r| r.code).collect();
    assert_eq!(codes, [0, 3, 0, 3, 3], "{runs:#?}");
    for run in &runs {
        assert_hidden("tl", &format!("{}{}", run.stdout, run.stderr), &secrets);
    }
    for (env, args) in [
        (vec![("PGPASSWORD", PASSWORD)], vec!["--db", plain.as_str()]),
        (vec![("PGPASSFILE", file)], vec!["--db", plain.as_str()]),
    ] {
        let mut session = mcp(home.path(), &env, &args);
        session.ok("timeline_list", json!({}));
        let (_, stdout, stderr) = session.finish();
        assert_hidden("tl-mcp's output", &(stdout + &stderr), &secrets);
    }
}

#[test]
fn pg_security_a_password_file_others_may_read_is_named_as_ignored() {
    let Some(server) = password_server() else {
        return;
    };
    let home = TempDir::new();
    let port = server.port;
    let uri = format!("postgresql://ann@127.0.0.1:{port}/team");
    let pgpass = home.path().join(".pgpass");
    std::fs::write(&pgpass, format!("127.0.0.1:{port}:team:ann:{PASSWORD}\n")).unwrap();
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o644)).unwrap();
    let file = pgpass.display();
    let refused = json!({"error": format!("cannot connect to the PostgreSQL database {uri}: the server asks for a password and none was given: there is none in the URI, PGPASSWORD is not set, and the password file {file} was ignored because others may read it (mode 0644; libpq ignores it too): make it private with chmod 600 {file}; nothing was read or written")});
    tl(home.path(), &[], &["--db", &uri, "timelines"]).err(3, &refused.to_string());
    let mut session = mcp(home.path(), &[], &["--db", &uri]);
    let failed = session.call("timeline_list", json!({})).unwrap_err();
    assert_eq!(failed["error"], refused["error"], "{failed}");
    session.close();
    // No password file at all, and one without a line for this server: said as such.
    std::fs::remove_file(&pgpass).unwrap();
    tl(home.path(), &[], &["--db", &uri, "timelines"]).err(3, &json!({"error": format!("cannot connect to the PostgreSQL database {uri}: the server asks for a password and none was given: there is none in the URI, PGPASSWORD is not set, and there is no password file {file}: put a line host:port:database:user:password there (chmod 600), or set PGPASSWORD; nothing was read or written")}).to_string());
    std::fs::write(&pgpass, "db.example:5432:team:ann:other\n").unwrap();
    std::fs::set_permissions(&pgpass, std::fs::Permissions::from_mode(0o600)).unwrap();
    tl(home.path(), &[], &["--db", &uri, "timelines"]).err(3, &json!({"error": format!("cannot connect to the PostgreSQL database {uri}: the server asks for a password and none was given: there is none in the URI, PGPASSWORD is not set, and the password file {file} has no line for this host, port, database and user: add one (host:port:database:user:password); nothing was read or written")}).to_string());
    // Made private, with its line, it is used.
    std::fs::write(&pgpass, format!("127.0.0.1:{port}:team:ann:{PASSWORD}\n")).unwrap();
    tl(home.path(), &[], &["--db", &uri, "timelines"]).ok("[]");
}

#[test]
fn pg_security_an_at_sign_typed_for_a_colon_is_refused_without_echoing_it() {
    let home = TempDir::new();
    let refused = r#"{"error":"invalid argument --db: the PostgreSQL connection URI cannot be used: it holds more than one @ before the host; an @ inside a user name or password must be written %40, and a : (not an @) separates the user from the password. Write it as postgresql://user@host:port/dbname (a Unix socket as postgresql:///dbname?host=/socket/dir)"}"#;
    let uri = "postgresql://ann@Secret99@127.0.0.1:1/db";
    tl(home.path(), &[], &["--db", uri, "timelines"]).err(2, refused);
    let mut session = mcp(home.path(), &[], &["--db", uri]);
    let failed = session.call("timeline_list", json!({})).unwrap_err();
    assert_eq!(
        failed["error"].as_str(),
        serde_json::from_str::<Value>(refused).unwrap()["error"].as_str()
    );
    let (_, stdout, stderr) = session.finish();
    assert_hidden("tl-mcp", &(stdout + &stderr), &["Secret99"]);
    // A URI that is not UTF-8 is refused, not taken for a file path (whose errors would show it).
    use std::os::unix::ffi::OsStrExt;
    let mut cmd = Command::new(TL);
    cmd.arg("--db")
        .arg(std::ffi::OsStr::from_bytes(
            b"postgresql://ann:Secret99@127.0.0.1:1/db\xff",
        ))
        .arg("timelines")
        .env_remove("TIMELINE_DB")
        .env("HOME", home.path())
        .stdin(Stdio::null());
    Run::from(common::output_of(&mut cmd)).err(2, r#"{"error":"invalid argument --db: the PostgreSQL connection URI cannot be used: it is not valid UTF-8 text; percent-encode any other bytes (%XX)"}"#);
    // A / or ? in a password that is not percent-encoded moves the @ after the host.
    for uri in [
        "postgresql://ann:Sec/ret99@127.0.0.1:1/db",
        "postgresql://ann:Sec?ret99@127.0.0.1:1/db",
    ] {
        let run = tl(home.path(), &[], &["--db", uri, "timelines"]);
        run.err(2, r#"{"error":"invalid argument --db: the PostgreSQL connection URI cannot be used: an @ comes after the host (in the database name or a query parameter's name), which happens when a password holds a /, ? or # that is not percent-encoded: write them as %2F, %3F and %23 (and an @ as %40). Write it as postgresql://user@host:port/dbname (a Unix socket as postgresql:///dbname?host=/socket/dir)"}"#);
    }
}

/// Roles and a schema of their own on the shared test server: `owner` (Timeline's role, which owns
/// the schema) and `other` (another role that may create in it). The URI is the owner's.
struct Shared {
    server: &'static postgres::Server,
    schema: String,
    owner: String,
    other: String,
    uri: String,
}

fn shared(name: &str) -> Option<Shared> {
    let server = postgres::server()?;
    let schema = format!("sec_{name}_{}", std::process::id());
    let (owner, other) = (format!("{schema}_tl"), format!("{schema}_other"));
    server.psql(&format!(
        "CREATE ROLE {owner} LOGIN; CREATE ROLE {other} LOGIN; \
         CREATE SCHEMA {schema} AUTHORIZATION {owner}; \
         GRANT USAGE, CREATE ON SCHEMA {schema} TO {other}"
    ));
    let uri = format!(
        "postgresql://{owner}@:5432/postgres?host={}&schema={schema}",
        server.socket_dir().display()
    );
    Some(Shared {
        server,
        schema,
        owner,
        other,
        uri,
    })
}

impl Shared {
    fn tl(&self, args: &[&str]) -> Run {
        let mut cmd = Command::new(TL);
        cmd.arg("--db")
            .arg(&self.uri)
            .args(args)
            .env_remove("TIMELINE_DB")
            .env("TIMELINE_NOW", common::CLOCK)
            .stdin(Stdio::null());
        Run::from(common::output_of(&mut cmd))
    }

    fn mcp(&self) -> McpSession {
        let mut cmd = Command::new(TL_MCP);
        cmd.arg("--db")
            .arg(&self.uri)
            .env_remove("TIMELINE_DB")
            .env("TIMELINE_NOW", common::CLOCK);
        McpSession::spawn(cmd)
    }

    /// SQL run as the other role.
    fn as_other(&self, sql: &str) -> String {
        self.server.psql(&format!("SET ROLE {}; {sql}", self.other))
    }

    /// Every message's text, as stored.
    fn texts(&self) -> String {
        self.server.psql(&format!(
            "SELECT string_agg(text, '|' ORDER BY timeline, id) FROM {}.nodes",
            self.schema
        ))
    }

    fn refusal(&self, objects: &str, drops: &str) -> String {
        format!(
            "the database {} holds objects in its schema {} that Timeline did not create: {objects}. A database is data, not code: a trigger, rule, view or row-level security policy runs whenever the database is read or changed, and any object Timeline did not make can change what its statements do, so Timeline does not use this schema; nothing was read or written. If you added them yourself,{drops} restore a backup of the database you trust (an administrator may add only indexes on columns of Timeline's tables, and grants: see docs/storage.md); otherwise the schema may have been tampered with: keep a copy of it for inspection (pg_dump) and restore a backup",
            self.shown(),
            self.schema
        )
    }

    /// The URI as Timeline shows it.
    fn shown(&self) -> String {
        format!(
            "postgresql://{}@:5432/postgres?host={}&schema={}",
            self.owner,
            self.server.socket_dir().display(),
            self.schema
        )
    }
}

#[test]
fn pg_security_another_roles_trigger_is_refused_and_named() {
    let Some(db) = shared("trigger") else { return };
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    db.tl(&["append", "--role", "user", "--text", "before"])
        .ok(r#"{"node":"n1"}"#);
    // Another role that can create in the schema, and was granted TRIGGER on nodes, copies every
    // new message into its own table and rewrites the text.
    let s = &db.schema;
    db.server
        .psql(&format!("GRANT TRIGGER ON {s}.nodes TO {}", db.other));
    db.as_other(&format!(
        "CREATE TABLE {s}.loot (text text); GRANT INSERT ON {s}.loot TO PUBLIC; \
         CREATE FUNCTION {s}.copy_texts() RETURNS trigger LANGUAGE plpgsql AS \
         $$BEGIN INSERT INTO {s}.loot VALUES (NEW.text); NEW.text := 'rewritten'; RETURN NEW; END$$; \
         CREATE TRIGGER copy_texts BEFORE INSERT ON {s}.nodes FOR EACH ROW EXECUTE FUNCTION {s}.copy_texts()"
    ));
    let refused = db.refusal(
        "table loot, trigger copy_texts on nodes, function copy_texts()",
        &format!(" remove them with psql (DROP TRIGGER \"copy_texts\" ON \"{s}\".\"nodes\"; DROP TABLE \"{s}\".\"loot\"; DROP FUNCTION \"{s}\".copy_texts();), or"),
    );
    let error = json!({ "error": refused }).to_string();
    db.tl(&["append", "--role", "user", "--text", "secret plans"])
        .err(3, &error);
    db.tl(&["log"]).err(3, &error);
    let mut session = db.mcp();
    let failed = session
        .call(
            "timeline_append",
            json!({"timeline_id": "tl0", "role": "user", "text": "secret plans"}),
        )
        .unwrap_err();
    assert_eq!(failed["error"], json!(refused), "{failed}");
    session.close();
    let check = db.tl(&["db", "check"]);
    assert_eq!(check.code, 3, "{check:?}");
    assert_eq!(
        serde_json::from_str::<Value>(&check.stderr).unwrap()["data"]["problems"],
        json!([
            format!(
                "table loot is not part of Timeline's schema (a database is data, not code); remove it with psql (DROP TABLE \"{s}\".\"loot\";)"
            ),
            format!(
                "trigger copy_texts on nodes is not part of Timeline's schema (a database is data, not code); remove it with psql (DROP TRIGGER \"copy_texts\" ON \"{s}\".\"nodes\";)"
            ),
            format!(
                "function copy_texts() is not part of Timeline's schema (a database is data, not code); remove it with psql (DROP FUNCTION \"{s}\".copy_texts();)"
            ),
        ])
    );
    // Nothing ran: the trigger copied and rewrote nothing.
    assert_eq!(
        db.server
            .psql(&format!("SELECT count(*) FROM {s}.loot"))
            .trim(),
        "0"
    );
    assert_eq!(db.texts().trim(), "|before");
    // Removed as the error says, the database is used again.
    db.server.psql(&format!(
        "DROP TRIGGER \"copy_texts\" ON \"{s}\".\"nodes\"; DROP TABLE \"{s}\".\"loot\"; DROP FUNCTION \"{s}\".copy_texts();"
    ));
    db.tl(&["append", "--role", "user", "--text", "after"])
        .ok(r#"{"node":"n2"}"#);
    assert_eq!(db.tl(&["db", "check"]).json()["ok"], json!(true));
    let _ = &db.owner;
}

#[test]
fn pg_security_a_view_in_place_of_a_table_rls_and_shadowing_operators_are_refused() {
    let Some(db) = shared("view") else { return };
    let s = &db.schema;
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    db.tl(&["append", "--role", "user", "--text", "hello"])
        .ok(r#"{"node":"n1"}"#);
    // What an administrator may add: an index on columns, grants, statistics. Still accepted.
    db.server.psql(&format!(
        "CREATE INDEX nodes_by_role ON {s}.nodes (role, timeline); \
         GRANT SELECT ON ALL TABLES IN SCHEMA {s} TO {}; ANALYZE {s}.nodes",
        db.other
    ));
    db.tl(&["append", "--role", "user", "--text", "still fine"])
        .ok(r#"{"node":"n2"}"#);
    assert_eq!(db.tl(&["db", "check"]).json()["ok"], json!(true));
    // nodes replaced by a view that writes elsewhere (into the renamed table).
    db.server.psql(&format!(
        "ALTER TABLE {s}.nodes RENAME TO kept_nodes; CREATE VIEW {s}.nodes AS SELECT * FROM {s}.kept_nodes"
    ));
    let check = db.tl(&["db", "check"]);
    assert_eq!(check.code, 3, "{check:?}");
    assert_eq!(
        serde_json::from_str::<Value>(&check.stderr).unwrap()["data"]["problems"],
        json!([
            format!(
                "table kept_nodes is not part of Timeline's schema (a database is data, not code); remove it with psql (DROP TABLE \"{s}\".\"kept_nodes\";)"
            ),
            "view nodes (in place of Timeline's table nodes) is not part of Timeline's schema; restore a backup of the database",
        ])
    );
    let refused = db.refusal(
        "table kept_nodes, view nodes (in place of Timeline's table nodes)",
        &format!(" remove them with psql (DROP TABLE \"{s}\".\"kept_nodes\";), or"),
    );
    db.tl(&["append", "--role", "user", "--text", "x"])
        .err(3, &json!({ "error": refused }).to_string());
    db.server.psql(&format!(
        "DROP VIEW {s}.nodes; ALTER TABLE {s}.kept_nodes RENAME TO nodes"
    ));
    // Row-level security with a policy, an operator and a function that would shadow PostgreSQL's,
    // an index over an expression that calls a function.
    db.server.psql(&format!(
        "ALTER TABLE {s}.nodes ENABLE ROW LEVEL SECURITY; \
         CREATE POLICY only_mine ON {s}.nodes USING (role = 'user')"
    ));
    db.as_other(&format!(
        "CREATE FUNCTION {s}.same(bigint, bigint) RETURNS boolean LANGUAGE sql AS 'SELECT true'; \
         CREATE OPERATOR {s}.= (LEFTARG = bigint, RIGHTARG = bigint, FUNCTION = {s}.same)"
    ));
    db.server.psql(&format!(
        "CREATE FUNCTION public.sec_len_{s}(text) RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT length($1)'; \
         CREATE INDEX by_len ON {s}.nodes (public.sec_len_{s}(text))"
    ));
    let check = db.tl(&["db", "check"]);
    assert_eq!(check.code, 3, "{check:?}");
    assert_eq!(
        serde_json::from_str::<Value>(&check.stderr).unwrap()["data"]["problems"],
        json!([
            format!(
                "index by_len on nodes is not part of Timeline's schema (a database is data, not code); remove it with psql (DROP INDEX \"{s}\".\"by_len\";)"
            ),
            format!(
                "row-level security policy only_mine on nodes is not part of Timeline's schema (a database is data, not code); remove it with psql (DROP POLICY \"only_mine\" ON \"{s}\".\"nodes\";)"
            ),
            format!(
                "row-level security on table nodes is not part of Timeline's schema (a database is data, not code); remove it with psql (ALTER TABLE \"{s}\".\"nodes\" NO FORCE ROW LEVEL SECURITY, DISABLE ROW LEVEL SECURITY;)"
            ),
            format!(
                "function same(bigint, bigint) is not part of Timeline's schema (a database is data, not code); remove it with psql (DROP FUNCTION \"{s}\".same(bigint, bigint);)"
            ),
            format!(
                "operator =(bigint, bigint) is not part of Timeline's schema (a database is data, not code); remove it with psql (DROP OPERATOR \"{s}\".=(bigint, bigint);)"
            ),
        ])
    );
    // One of Timeline's own indexes made again over a function: named by what it uses.
    db.server.psql(&format!(
        "DROP INDEX {s}.nodes_summaries; CREATE INDEX nodes_summaries ON {s}.nodes (public.sec_len_{s}(text))"
    ));
    let check = db.tl(&["db", "check"]);
    assert_eq!(
        serde_json::from_str::<Value>(&check.stderr).unwrap()["data"]["problems"][5],
        json!(format!(
            "index {s}.nodes_summaries, which uses function sec_len_{s}(text), is not part of Timeline's schema; restore a backup of the database"
        )),
    );
    db.server.psql(&format!(
        "DROP INDEX {s}.by_len; DROP POLICY only_mine ON {s}.nodes; DROP INDEX {s}.nodes_summaries; \
         CREATE INDEX nodes_summaries ON {s}.nodes (timeline, id) WHERE summary_kind IS NOT NULL; \
         ALTER TABLE {s}.nodes DISABLE ROW LEVEL SECURITY; DROP OPERATOR {s}.=(bigint, bigint); \
         DROP FUNCTION {s}.same(bigint, bigint)"
    ));
    assert_eq!(db.tl(&["db", "check"]).json()["ok"], json!(true));
}

#[test]
fn pg_security_every_transaction_pins_its_search_path() {
    let Some(db) = shared("path") else { return };
    let s = &db.schema;
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    db.tl(&["append", "--role", "user", "--text", "the real one"])
        .ok(r#"{"node":"n1"}"#);
    // The role's own search path names another schema that holds tables of Timeline's names: a
    // session that did not pin its path would read and write those.
    let decoy = format!("{s}_decoy");
    db.server.psql(&format!(
        "CREATE SCHEMA {decoy} AUTHORIZATION {other}; GRANT ALL ON SCHEMA {decoy} TO PUBLIC; \
         CREATE TABLE {decoy}.nodes AS SELECT * FROM {s}.nodes WITH NO DATA; \
         CREATE TABLE {decoy}.timelines AS SELECT * FROM {s}.timelines WITH NO DATA; \
         GRANT ALL ON ALL TABLES IN SCHEMA {decoy} TO PUBLIC; \
         ALTER ROLE {owner} SET search_path = {decoy}, public",
        other = db.other,
        owner = db.owner
    ));
    db.tl(&["append", "--role", "user", "--text", "second"])
        .ok(r#"{"node":"n2"}"#);
    let log = db.tl(&["log"]).json();
    let texts: Vec<&str> = log["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["second", "the real one"]);
    let mut session = db.mcp();
    session.ok(
        "timeline_append",
        json!({"timeline_id": "tl0", "role": "user", "text": "third"}),
    );
    session.close();
    assert_eq!(db.texts().trim(), "|the real one|second|third");
    assert_eq!(
        db.server
            .psql(&format!("SELECT count(*) FROM {decoy}.nodes"))
            .trim(),
        "0"
    );
    db.server
        .psql(&format!("ALTER ROLE {} RESET search_path", db.owner));
}
