//! What only the PostgreSQL engine has (issue 25): the URI and its redaction, a server that is
//! down, schemas that are missing or newer, migrations and writers running at once, `db info`,
//! backup and convert to and from the file engines, search that gives what SQLite gives. Every
//! other behaviour runs on PostgreSQL through `on_every_engine!` in its own area. Each test returns
//! at once (after one loud line) where the server programs are missing, and fails under CI=true.
// The test server listens on a Unix socket (tests/common/postgres.rs), so these are Unix tests.
#![cfg(unix)]

use crate::common::{self, Db, TL, postgres};
use serde_json::json;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

/// A database on the test server (a schema of its own), or `None` when there is no server.
fn pg_db() -> Option<Db> {
    postgres::server()?;
    common::use_engine(common::Engine::Postgres);
    Some(Db::new())
}

/// A direct connection to the test server, for what a test must do behind Timeline's back.
fn raw_client() -> ::postgres::Client {
    let server = postgres::server().expect("a server");
    let mut config = ::postgres::Config::new();
    config
        .host_path(server.socket_dir())
        .user("timeline")
        .dbname("postgres");
    config
        .connect(::postgres::NoTls)
        .expect("the test server accepts connections")
}

fn schema_of(db: &Db) -> String {
    let uri = db.path.to_string_lossy().into_owned();
    uri.rsplit_once("schema=").expect("a schema").1.to_string()
}

/// The URI with a password added, as a user might write it.
fn with_password(db: &Db, password: &str) -> String {
    db.path.to_string_lossy().replacen(
        "postgresql://timeline@",
        &format!("postgresql://timeline:{password}@"),
        1,
    )
}

#[test]
fn db_info_names_the_engine_the_server_and_the_schema_version() {
    let Some(db) = pg_db() else { return };
    let version = postgres::program_version().expect("postgres -V");
    let shown = db.path.display().to_string();
    db.tl(&["db", "info"]).ok(&json!({"engine": "postgres", "path": shown, "exists": false, "format_version": null, "file_bytes": 0, "timelines": 0, "nodes": 0, "cold_nodes": 0, "server_version": version}).to_string());
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    db.append("user", "hello", 2);
    db.tl(&["db", "info"]).ok(&json!({"engine": "postgres", "path": shown, "exists": true, "format_version": timeline::store::postgres_schema_version(), "file_bytes": 0, "timelines": 1, "nodes": 1, "cold_nodes": 0, "server_version": version}).to_string());
    db.tl(&["db", "check"])
        .ok(&json!({"ok": true, "engine": "postgres", "path": shown, "problems": []}).to_string());
    db.tl(&["db", "check", "--repair"]).ok(&json!({"ok": true, "engine": "postgres", "path": shown, "problems": [], "rebuilt": ["search index"]}).to_string());
}

#[test]
fn the_password_is_never_shown() {
    let Some(db) = pg_db() else { return };
    let uri = with_password(&db, "s3cret");
    let mut with = Db::new();
    with.path = PathBuf::from(&uri);
    let info = with.tl(&["db", "info"]);
    assert_eq!(info.json()["path"], db.path.display().to_string());
    let check = with.tl(&["db", "check"]);
    check.err(3, &json!({"error": format!("the database {} does not exist yet (its schema {} holds no Timeline tables); create it with the first change (for example create), or pass --db with the URI of an existing database", db.path.display(), schema_of(&db))}).to_string());
    // A server that refuses the connection: the error names the URI without the password.
    let down = "postgresql://ann:s3cret@127.0.0.1:1/team?connect_timeout=2";
    let mut gone = Db::new();
    gone.path = PathBuf::from(down);
    let run = gone.tl(&["timelines"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stderr.starts_with(r#"{"error":"cannot connect to the PostgreSQL database postgresql://ann@127.0.0.1:1/team?connect_timeout=2: error connecting to server"#), "{run:?}");
    assert!(
        run.stderr.ends_with(
            "(Timeline waited at most 2 seconds: connect_timeout); nothing was read or written\"}\n"
        ),
        "{run:?}"
    );
    for run in [&info, &check, &run] {
        assert!(
            !run.stdout.contains("s3cret") && !run.stderr.contains("s3cret"),
            "{run:?}"
        );
    }
    // A bad URI is refused without echoing it.
    let mut bad = Db::new();
    bad.path = PathBuf::from("postgresql://ann:s3cret@host/db?colour=red");
    bad.tl(&["timelines"]).err(2, r#"{"error":"invalid argument --db: the PostgreSQL connection URI cannot be used: its query parameter \"colour\" is not one Timeline uses (host, port, user, password, dbname, sslmode, sslrootcert, connect_timeout, application_name, schema). Write it as postgresql://user@host:port/dbname (a Unix socket as postgresql:///dbname?host=/socket/dir)"}"#);
}

#[test]
fn a_schema_without_tables_reads_as_a_missing_file_and_stays_empty() {
    let Some(db) = pg_db() else { return };
    common::use_engine(common::Engine::Sqlite);
    let file = Db::new();
    for args in [
        &["timelines"][..],
        &["search", "--query", "anything"],
        &["log"],
        &["branches"],
        &["context", "--node", "n1"],
    ] {
        let (pg, sqlite) = (db.tl(args), file.tl(args));
        assert_eq!(
            (pg.code, &pg.stdout, &pg.stderr),
            (sqlite.code, &sqlite.stdout, &sqlite.stderr),
            "{args:?}"
        );
    }
    assert!(!file.path.exists());
    assert_eq!(
        common::stored_state(&db.path),
        None,
        "a read created tables"
    );
}

#[test]
fn a_newer_schema_is_refused_untouched() {
    let Some(db) = pg_db() else { return };
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    let schema = schema_of(&db);
    let mut client = raw_client();
    client
        .execute(
            &format!("UPDATE {schema}.state SET schema_version = 99"),
            &[],
        )
        .unwrap();
    let refused = format!(
        "the database {} has schema version 99, newer than this version of Timeline reads ({}); nothing was changed. Use the release of Timeline that wrote it, or a newer one",
        db.path.display(),
        timeline::store::postgres_schema_version()
    );
    db.tl(&["timelines"])
        .err(3, &json!({"error": refused}).to_string());
    db.tl(&["append", "--role", "user", "--text", "x"])
        .err(3, &json!({"error": refused}).to_string());
    let version: i64 = client
        .query_one(&format!("SELECT schema_version FROM {schema}.state"), &[])
        .unwrap()
        .get(0);
    let nodes: i64 = client
        .query_one(&format!("SELECT count(*) FROM {schema}.nodes"), &[])
        .unwrap()
        .get(0);
    assert_eq!((version, nodes), (99, 1));
}

#[test]
fn processes_starting_together_create_the_schema_once_and_distinct_timelines() {
    let Some(db) = pg_db() else { return };
    let runs = vec![vec!["create".to_string()]; 6];
    let mut ids: Vec<String> = db
        .tl_at_once(&runs)
        .iter()
        .map(|r| r.json()["timeline_id"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    assert_eq!(ids, ["tl0", "tl1", "tl2", "tl3", "tl4", "tl5"]);
    assert_eq!(db.tl(&["db", "info"]).json()["timelines"], 6);
}

#[test]
fn writers_to_one_timeline_take_turns_and_lose_nothing() {
    let Some(db) = pg_db() else { return };
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    postgres::eight_appends_to_tl0_land_once(&db, 1, &String::new);
}

#[test]
fn a_writer_waits_only_for_its_own_timeline() {
    let Some(db) = pg_db() else { return };
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl1"}"#);
    let schema = schema_of(&db);
    let mut client = raw_client();
    let mut holder = client.transaction().unwrap();
    holder
        .query(
            &format!("SELECT 1 FROM {schema}.timelines WHERE id = 0 FOR UPDATE"),
            &[],
        )
        .unwrap();
    // tl1 is not held up by the lock on tl0's row.
    db.tl(&[
        "--timeline",
        "tl1",
        "append",
        "--role",
        "user",
        "--text",
        "other",
    ])
    .ok(r#"{"node":"n1"}"#);
    let mut cmd = db.command(TL);
    cmd.arg("--db")
        .arg(&db.path)
        .args([
            "--timeline",
            "tl0",
            "append",
            "--role",
            "user",
            "--text",
            "waits",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut waiting = common::spawn(&mut cmd);
    std::thread::sleep(Duration::from_millis(1500));
    assert!(
        waiting.try_wait().unwrap().is_none(),
        "the change to tl0 did not wait for the lock"
    );
    holder.commit().unwrap();
    common::Run::from(waiting.wait_with_output().unwrap()).ok(r#"{"node":"n1"}"#);
}

/// A database with a bit of everything a snapshot holds, made through `db`.
fn fill(db: &Db) {
    db.tl(&["create", "--title", "trip"])
        .ok(r#"{"timeline_id":"tl0"}"#);
    db.append("system", "plan the trip", 3);
    db.append("user", "東京の天気はどうですか budget 40 euros", 9);
    db.append("assistant", "Sunny in Tokyo; the budget holds", 7);
    db.tl(&["fork", "--node", "n1", "--name", "alt"]).json();
    db.tl(&[
        "--idempotency-key",
        "k1",
        "append",
        "--role",
        "user",
        "--text",
        "keyed",
    ])
    .json();
    db.tl(&["pin", "--node", "n1"]).json();
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl1"}"#);
}

#[test]
fn convert_and_backup_round_trip_between_every_engine() {
    let Some(pg) = pg_db() else { return };
    common::use_engine(common::Engine::Sqlite);
    let file = Db::new();
    fill(&file);
    let original = common::stored_state(&file.path).unwrap();
    let to = pg.path.display().to_string();
    let converted = file.tl(&["db", "convert", "--to", &to]).json();
    assert_eq!(
        (converted["to"].as_str(), converted["engine"].as_str()),
        (Some(to.as_str()), Some("postgres"))
    );
    assert_eq!(common::stored_state(&pg.path).unwrap(), original);
    pg.tl(&["db", "check"]).json();
    // Converting into a schema that holds a database is refused, and writes nothing.
    let schema = schema_of(&pg);
    file.tl(&["db", "convert", "--to", &to]).err(1, &json!({"error": format!("{to} already holds a Timeline database (schema {schema}); nothing was written. Name another schema with ?schema=NAME (Timeline never writes over a database)")}).to_string());
    assert_eq!(common::stored_state(&pg.path).unwrap(), original);
    for name in ["back.json", "back.sqlite"] {
        let target = pg.dir.path().join(name);
        let backed = pg
            .tl(&["db", "backup", "--to", target.to_str().unwrap()])
            .json();
        assert_eq!(
            backed["engine"],
            if name.ends_with("json") {
                "json"
            } else {
                "sqlite"
            }
        );
        assert_eq!(common::stored_state(&target).unwrap(), original, "{name}");
    }
    common::use_engine(common::Engine::Postgres);
    let second = Db::new();
    let json_copy = pg.dir.path().join("back.json");
    let mut from_json = Db::new();
    from_json.path = json_copy;
    from_json
        .tl(&["db", "convert", "--to", &second.path.display().to_string()])
        .json();
    assert_eq!(common::stored_state(&second.path).unwrap(), original);
}

#[test]
fn search_finds_what_sqlite_finds_in_the_same_order() {
    let Some(pg) = pg_db() else { return };
    common::use_engine(common::Engine::Sqlite);
    let file = Db::new();
    for db in [&pg, &file] {
        fill(db);
        db.append("user", "budget budget budget travel", 4);
        db.append("assistant", "天気予報: 東京は晴れ", 5);
    }
    for query in [
        "budget",
        "budg*",
        "\"the budget\"",
        "天気",
        "東京",
        "euros budget",
        "tok*",
        "nothing",
    ] {
        for extra in [
            &[][..],
            &["--role", "user"],
            &["--zone", "cold"],
            &["--timeline", "tl0"],
        ] {
            let mut args = vec!["search", "--query", query];
            args.extend_from_slice(extra);
            let (a, b) = (pg.tl(&args), file.tl(&args));
            assert_eq!(
                (a.code, &a.stdout, &a.stderr),
                (b.code, &b.stdout, &b.stderr),
                "{args:?}"
            );
        }
    }
}

/// Schema 2 (issue 24): a schema of version 1 gets every node's jump pointer and path-min tokens
/// from its migration, the same values the inserts write, and budgets do not change.
#[test]
fn the_path_columns_migration_fills_what_inserts_write() {
    let Some(db) = pg_db() else { return };
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    for i in 0..9u64 {
        db.append("user", &format!("m{i}"), 40 - 3 * i + (i % 3) * 9);
    }
    db.tl(&["pin", "--node", "n3"]).ok(r#"{"pinned":"n3"}"#);
    let schema = schema_of(&db);
    let mut client = raw_client();
    let columns = |client: &mut ::postgres::Client| -> Vec<(i64, i64, i64)> {
        client
            .query(
                &format!("SELECT id, jump, path_min_tokens FROM {schema}.nodes ORDER BY id"),
                &[],
            )
            .unwrap()
            .iter()
            .map(|r| (r.get(0), r.get(1), r.get(2)))
            .collect()
    };
    let fresh = columns(&mut client);
    let jumps: Vec<i64> = fresh.iter().map(|c| c.1).collect();
    assert_eq!(jumps, [0, 0, 1, 0, 3, 4, 3, 0, 7, 8]);
    let budget = ["budget", "--node", "n9", "--max", "150", "--dry-run"];
    let before = db.tl(&budget).json();
    client
        .batch_execute(&format!(
            "DROP INDEX {schema}.nodes_summaries; DROP INDEX {schema}.nodes_pinned; DROP INDEX {schema}.nodes_by_real_start; \
             ALTER TABLE {schema}.nodes DROP COLUMN jump, DROP COLUMN path_min_tokens; \
             UPDATE {schema}.state SET schema_version = 2"
        ))
        .unwrap();
    assert_eq!(db.tl(&budget).json(), before);
    assert_eq!(columns(&mut client), fresh);
    assert_eq!(db.tl(&["db", "check"]).json()["ok"], json!(true));
}
