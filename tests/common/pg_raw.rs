//! What a test does to a PostgreSQL database behind Timeline's back, as another program with access
//! to the server could: plain SQL in the database's own schema on the test server (`postgres.rs`).

use super::Db;

/// The schema of a PostgreSQL `Db` (its URI's `schema=`).
pub fn schema(db: &Db) -> String {
    let uri = db.path.to_string_lossy().into_owned();
    uri.rsplit_once("schema=")
        .expect("a PostgreSQL database of Db::new")
        .1
        .to_string()
}

/// A connection to the test server with the database's schema as its search path.
pub fn client(db: &Db) -> ::postgres::Client {
    let server = super::postgres::server().expect("a server");
    let mut config = ::postgres::Config::new();
    // A host that starts with '/' is the Unix socket's directory.
    config
        .host(&server.socket_dir().to_string_lossy())
        .user("timeline")
        .dbname("postgres")
        .options(&format!("-csearch_path={}", schema(db)));
    config
        .connect(::postgres::NoTls)
        .expect("the test server accepts connections")
}

/// Run SQL statements (separated by `;`) in the database's schema.
#[track_caller]
pub fn execute(db: &Db, sql: &str) {
    client(db)
        .batch_execute(sql)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

/// The one integer a query gives.
#[track_caller]
pub fn query_i64(db: &Db, sql: &str) -> i64 {
    client(db)
        .query_one(sql, &[])
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
        .get(0)
}

/// Every row of the database's tables as text, in a fixed order: what must not change.
pub fn rows(db: &Db) -> String {
    let mut client = client(db);
    let mut out = String::new();
    for table in [
        "state",
        "timelines",
        "nodes",
        "branches",
        "idempotency",
        "audit",
        "imports",
    ] {
        let sql = format!(
            "SELECT coalesce(string_agg(t::text, E'\\n' ORDER BY t::text), '') FROM {table} t"
        );
        let text: String = client
            .query_one(&sql, &[])
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
            .get(0);
        out.push_str(&format!("{table}:\n{text}\n"));
    }
    out
}
