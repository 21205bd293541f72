//! Which pages a durable append writes (issue 24, item 5): the write-ahead log of a `tl-mcp`
//! session, read between calls, gives every commit's frames; SQLite's `dbstat` table names the
//! b-tree of each page. SQLite only: the log is its on-disk format. The same count at any size is
//! `scripts/wal-pages.py` (for a large file, where the b-trees have more than one level).

use crate::common::{self, Db, Engine, McpSession};
use serde_json::json;
use std::collections::BTreeMap;
use std::path::Path;

/// The page numbers of every commit in the log's current generation, in order.
fn wal_commits(wal: &[u8]) -> Vec<Vec<u32>> {
    let be = |b: &[u8]| u32::from_be_bytes(b.try_into().unwrap());
    let page_size = be(&wal[8..12]) as usize;
    let salts = &wal[16..24];
    let (mut commits, mut current, mut at) = (Vec::new(), Vec::new(), 32);
    // A frame whose salts differ is left from an earlier generation: the log ends before it.
    while at + 24 + page_size <= wal.len() && &wal[at + 8..at + 16] == salts {
        current.push(be(&wal[at..at + 4]));
        if be(&wal[at + 4..at + 8]) != 0 {
            commits.push(std::mem::take(&mut current));
        }
        at += 24 + page_size;
    }
    commits
}

/// The b-tree of every page of a copy of `db` and its log, as the log's last commit left them.
fn page_owners(db: &Path, dir: &Path) -> BTreeMap<u32, String> {
    let copy = dir.join("copy.db");
    std::fs::copy(db, &copy).unwrap();
    std::fs::copy(
        format!("{}-wal", db.display()),
        format!("{}-wal", copy.display()),
    )
    .unwrap();
    let conn = rusqlite::Connection::open(&copy).unwrap();
    let mut stmt = conn.prepare("SELECT pageno, name FROM dbstat").unwrap();
    stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// Each `timeline_append` commits once and writes one page of each b-tree it must change, and no
/// other: the node (table, primary key, by parent), the branch head, the timeline's counters and
/// its row in `search_pending`, where it waits for the search index. A new index an append updates
/// fails here.
#[test]
fn sqlite_an_append_writes_one_page_of_each_btree_it_changes_and_not_the_search_index() {
    common::use_engine(Engine::Sqlite);
    let db = Db::created_at("1767225600");
    db.append("user", "a first message about budgets", 5);
    let mut mcp = McpSession::start(&db);
    let wal = format!("{}-wal", db.path.display());
    for i in 0..6 {
        mcp.ok(
            "timeline_append",
            json!({"timeline_id": "tl0", "role": "user", "text": format!("message {i} about the pages of an append")}),
        );
    }
    let commits = wal_commits(&std::fs::read(&wal).unwrap());
    let owners = page_owners(&db.path, db.dir.path());
    mcp.close();
    let expected = [
        "branches",
        "nodes",
        "nodes_by_parent",
        "search_pending",
        "sqlite_autoindex_nodes_1",
        "timelines",
    ];
    let written: Vec<Vec<&str>> = commits
        .iter()
        .map(|pages| {
            let mut names: Vec<&str> = pages
                .iter()
                .map(|p| owners.get(p).map_or("(free)", String::as_str))
                .collect();
            names.sort();
            names
        })
        .collect();
    assert_eq!(written, vec![expected.to_vec(); 6]);
}

/// Where they are written: the log is kept between processes, blank, and the next process writes its
/// commit over the blocks it has (`store::sqlite::kept_log`; Unix, where SQLite's own VFS is wrapped).
/// A process that only reads leaves it as it is, and a new database can be made beside a blank log
/// that outlived its database, which is nothing SQLite would read.
#[test]
#[cfg(unix)]
fn sqlite_the_log_is_kept_blank_and_written_over_by_the_next_process() {
    common::use_engine(Engine::Sqlite);
    let db = Db::created_at("1767225600");
    let wal = format!("{}-wal", db.path.display());
    let name = db.path.file_name().unwrap().to_string_lossy().into_owned();
    db.tl(&[
        "append", "--role", "user", "--text", "first", "--tokens", "1",
    ])
    .ok(r#"{"node":"n1"}"#);
    assert_eq!(
        common::names_in(db.dir.path()),
        common::closed_sqlite(db.dir.path(), &name)
    );
    let len = std::fs::metadata(&wal).unwrap().len();
    assert!(
        len > 32,
        "the log holds the last commit's pages ({len} bytes)"
    );
    db.tl(&[
        "append", "--role", "user", "--text", "second", "--tokens", "1",
    ])
    .ok(r#"{"node":"n2"}"#);
    common::closed_sqlite(db.dir.path(), &name);
    assert_eq!(
        std::fs::metadata(&wal).unwrap().len(),
        len,
        "written over, not grown"
    );
    let before = std::fs::read(&wal).unwrap();
    db.tl(&["search", "--query", "second"]).ok(
        r#"{"hits":[{"timeline_id":"tl0","node":"n2","role":"user","created_at":1767225600,"zone":"hot","snippet":"«second»","score":1e-6}],"next_cursor":null}"#,
    );
    assert_eq!(
        std::fs::read(&wal).unwrap(),
        before,
        "a read changed the log"
    );
    // The database goes, its blank log stays: a new database at the path is made, and reads nothing
    // of the old one.
    std::fs::remove_file(&db.path).unwrap();
    db.tl(&["create"]).ok(r#"{"timeline_id":"tl0"}"#);
    db.tl(&["log"]).ok(r#"{"messages":[],"next_cursor":null}"#);
}

/// A database of 16 MiB or more keeps a log of 4 MiB, the length SQLite's automatic checkpoint lets
/// it reach, so a long session writes over blocks from its first commit; a log a large transaction
/// made longer is cut back to that when the last process closes.
#[test]
#[cfg(unix)]
fn sqlite_a_large_database_keeps_a_log_of_four_mebibytes() {
    common::use_engine(Engine::Sqlite);
    let db = Db::created_at("1767225600");
    let name = db.path.file_name().unwrap().to_string_lossy().into_owned();
    let wal = format!("{}-wal", db.path.display());
    // 20 messages of 1,000,000 bytes (dots, so the search index has one word each to add).
    let text = format!("x {}", ".".repeat(999_998));
    import_openai(&db, (0..20).map(|_| text.clone()).collect());
    assert!(std::fs::metadata(&db.path).unwrap().len() >= 16 << 20);
    assert_eq!(
        common::names_in(db.dir.path()),
        common::closed_sqlite(db.dir.path(), &name)
    );
    assert_eq!(std::fs::metadata(&wal).unwrap().len(), 4 << 20);
    assert_eq!(db.append("user", "after", 1), "n1");
    common::closed_sqlite(db.dir.path(), &name);
    assert_eq!(std::fs::metadata(&wal).unwrap().len(), 4 << 20);
}

/// A database written whole (`db convert`, `Store::create_from`) has its search index in one
/// segment, so the appends after it do not merge the load's segments piecemeal (a hundred pages and
/// more in some of their commits). The source here, imported a batch at a time, has several.
#[test]
fn sqlite_a_database_written_whole_has_its_search_index_in_one_segment() {
    common::use_engine(Engine::Sqlite);
    let db = Db::created_at("1767225600");
    // 3,000 messages of 150 distinct words each: more than FTS5 holds in memory before writing a
    // segment (1 MiB).
    import_openai(
        &db,
        (0..3000)
            .map(|i| {
                let words: Vec<String> = (0..150).map(|j| format!("w{i}x{j}")).collect();
                words.join(" ")
            })
            .collect(),
    );
    let copy = db.dir.path().join("whole.db");
    db.tl(&["db", "convert", "--to", copy.to_str().unwrap()])
        .json();
    let segments = |path: &Path| -> i64 {
        rusqlite::Connection::open(path)
            .unwrap()
            .query_row(
                "SELECT count(DISTINCT segid) FROM search_index_idx",
                [],
                |r| r.get(0),
            )
            .unwrap()
    };
    assert!(
        segments(&db.path) > 1,
        "the source's index is in one segment already"
    );
    assert_eq!(segments(&copy), 1);
}

/// Import `texts` as one conversation of user messages (an OpenAI messages array), in one `tl`.
fn import_openai(db: &Db, texts: Vec<String>) {
    let count = texts.len();
    let messages: Vec<_> = texts
        .into_iter()
        .map(|text| json!({"role": "user", "content": text}))
        .collect();
    let input = db.dir.path().join("messages.json");
    std::fs::write(&input, serde_json::to_vec(&messages).unwrap()).unwrap();
    let report = db
        .tl(&[
            "import",
            "--format",
            "openai",
            "--input",
            input.to_str().unwrap(),
        ])
        .json();
    assert_eq!(report["messages"], count, "{report}");
    std::fs::remove_file(&input).unwrap();
}

/// The files a traced `tl` synced, in order (see `traced`).
#[cfg(target_os = "linux")]
fn synced_files(args: &[&str], db: &Db) -> Option<Vec<String>> {
    let mut command = strace(db);
    command.arg(common::TL).arg("--db").arg(&db.path).args(args);
    traced(command.output(), db)
}

/// `strace`, set to write every `fsync` and `fdatasync` with its file's path to a file in `db`'s
/// directory.
#[cfg(target_os = "linux")]
fn strace(db: &Db) -> std::process::Command {
    let mut command = std::process::Command::new("strace");
    command
        .args(["-f", "-y", "-e", "trace=fsync,fdatasync", "-o"])
        .arg(db.dir.path().join("syncs.trace"));
    command
}

/// The files a process run by `strace(db)` synced, in order, read from `strace -y`'s lines
/// (`fdatasync(4</dir/db.sqlite-wal>) = 0`); `None` (after one loud line, or a panic under
/// CI=true, where .ci/run installs it) when strace could not run it.
#[cfg(target_os = "linux")]
fn traced(run: std::io::Result<std::process::Output>, db: &Db) -> Option<Vec<String>> {
    let trace = db.dir.path().join("syncs.trace");
    match run {
        Ok(out) if out.status.success() => {}
        other => {
            let message = format!(
                "THE SYNC-COUNTING TEST DID NOT RUN: strace could not trace tl ({other:?}); install Debian's strace package (apt-get install strace), as .ci/run does"
            );
            let in_ci = std::env::var("CI").is_ok_and(|v| v == "true");
            assert!(!in_ci, "{message}");
            eprintln!("\n{message}\n");
            return None;
        }
    }
    let text = std::fs::read_to_string(&trace).unwrap();
    Some(
        text.lines()
            .filter_map(|line| {
                let file = line.split_once('<')?.1.split_once('>')?.0;
                Some(Path::new(file).file_name()?.to_string_lossy().into_owned())
            })
            .collect(),
    )
}

/// A `tl append` on a database whose log was kept blank syncs twice: the commit (with the log's new
/// header, written with its frames), and the database in the close's checkpoint. Not the header on
/// its own (the generation of frames the blank log held had one commit), nor the directory (the
/// blank log's name was made durable by the process that wrote it), nor the log again before the
/// checkpoint (nothing was written to it since the commit). When the blank log's generation had
/// more than one commit, the new header is synced before the frames, as SQLite does.
/// (`store::sqlite::kept_log`; the `sqlite3` shell syncs the directory, the header, the commit,
/// the log again and the database.)
#[test]
#[cfg(target_os = "linux")]
fn sqlite_an_append_on_a_kept_log_syncs_the_log_once_and_the_database_once() {
    common::use_engine(Engine::Sqlite);
    let db = Db::created_at("1767225600");
    db.append("user", "the first message", 3);
    let name = db.path.file_name().unwrap().to_string_lossy().into_owned();
    common::closed_sqlite(db.dir.path(), &name);
    let append = |text: &str| {
        ["append", "--role", "user", "--text", text, "--tokens", "2"].map(str::to_owned)
    };
    let wal = format!("{name}-wal");
    let Some(synced) = synced_files(&append("the second").each_ref().map(String::as_str), &db)
    else {
        return;
    };
    assert_eq!(synced, [wal.clone(), name.clone()]);
    common::closed_sqlite(db.dir.path(), &name);
    // Two commits in one process (a session of two appends): the next process syncs the header.
    let mut session = common::McpSession::start(&db);
    for (text, node) in [("the third", "n3"), ("the fourth", "n4")] {
        let answer = session.ok(
            "timeline_append",
            serde_json::json!({"timeline_id": "tl0", "role": "user", "text": text, "tokens": 2}),
        );
        assert_eq!(answer["node"], node);
    }
    session.close();
    common::closed_sqlite(db.dir.path(), &name);
    let synced = synced_files(&append("the fifth").each_ref().map(String::as_str), &db).unwrap();
    assert_eq!(synced, [wal.clone(), wal, name.clone()]);
    let texts: Vec<String> = db.tl(&["log"]).json()["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        texts,
        [
            "the fifth",
            "the fourth",
            "the third",
            "the second",
            "the first message"
        ]
    );
}

/// A `tl-mcp` session that closes last checkpoints the log into the database. When another
/// program's connection committed after the session's last commit without syncing (SQLite's
/// `synchronous=NORMAL`), the session syncs the log before copying it; when none did, that sync
/// is left out (the session's commit synced everything in the log).
#[test]
#[cfg(target_os = "linux")]
fn sqlite_a_checkpoint_syncs_the_log_when_another_program_wrote_to_it_unsynced() {
    use std::io::{BufRead, Write};
    common::use_engine(Engine::Sqlite);
    for foreign in [false, true] {
        let db = Db::created_at("1767225600");
        db.append("user", "the first message", 3);
        let name = db.path.file_name().unwrap().to_string_lossy().into_owned();
        let wal = format!("{name}-wal");
        let mut command = strace(&db);
        command
            .arg(common::TL_MCP)
            .arg("--db")
            .arg(&db.path)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        let mut child = command.spawn().expect("strace runs");
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut answer = String::new();
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"timeline_append","arguments":{"timeline_id":"tl0","role":"user","text":"the second","tokens":2}}}"#,
        ] {
            writeln!(stdin, "{line}").unwrap();
            if line.contains(r#""id""#) {
                answer.clear();
                stdout.read_line(&mut answer).unwrap();
            }
        }
        assert!(answer.contains(r#"\"node\":\"n2\""#), "{answer}");
        if foreign {
            let conn = rusqlite::Connection::open(&db.path).unwrap();
            conn.execute_batch(
                "PRAGMA synchronous = NORMAL; UPDATE timelines SET title = 'renamed'",
            )
            .unwrap();
        }
        drop(stdin);
        let Some(synced) = traced(child.wait_with_output(), &db) else {
            return;
        };
        // (The commit, with the new header; the foreign commit's frames; the database.)
        let expected: Vec<String> = if foreign {
            vec![wal.clone(), wal, name.clone()]
        } else {
            vec![wal, name.clone()]
        };
        assert_eq!(synced, expected, "another program wrote: {foreign}");
        db.tl(&["db", "check"]).json();
    }
}

/// A transaction larger than SQLite's page cache spills pages into the log before its commit; at
/// the commit SQLite writes changed pages again over their frames and rewrites the checksums of
/// the frame headers from the first of them to the commit frame's, so the session's last write to
/// the log ends inside the commit frame. When another program then commits without syncing
/// (`synchronous=NORMAL`), the session's checkpoint at close must still sync the log before
/// copying it into the database (it did not: the kept log looked for a newer frame where the last
/// write ended, in the commit frame's page). The large transaction is a session indexing the 32
/// messages waiting for the search index, each of 12,000 distinct words, while its client is
/// quiet; the trace shows its checksum rewrites (24-byte writes to the log).
#[test]
#[cfg(target_os = "linux")]
fn sqlite_after_a_spilled_transaction_a_checkpoint_still_syncs_another_programs_frames() {
    use std::io::{BufRead, Write};
    common::use_engine(Engine::Sqlite);
    let mut wal_syncs = Vec::new();
    for foreign in [false, true] {
        // (No message before the session's: the 32nd it appends starts the indexing.)
        let db = Db::created_at("1767225600");
        let name = db.path.file_name().unwrap().to_string_lossy().into_owned();
        let wal = format!("{name}-wal");
        let trace = db.dir.path().join("syncs.trace");
        let mut command = std::process::Command::new("strace");
        command
            .args(["-f", "-y", "-e", "trace=fsync,fdatasync,pwrite64", "-o"])
            .arg(&trace)
            .arg(common::TL_MCP)
            .arg("--db")
            .arg(&db.path)
            .env("TIMELINE_NOW", "1767225600")
            .env_remove("TIMELINE_SQLITE_KEPT_LOG")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        let Ok(mut child) = command.spawn() else {
            traced(Err(std::io::Error::other("strace cannot be started")), &db);
            return;
        };
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut ask = |line: String| {
            writeln!(stdin, "{line}").unwrap();
            let mut answer = String::new();
            if line.contains(r#""id""#) {
                stdout.read_line(&mut answer).unwrap();
            }
            answer
        };
        ask(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}"#.into());
        ask(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into());
        for i in 1..=32 {
            let words: Vec<String> = (0..12_000).map(|j| format!("w{i}x{j}")).collect();
            let call = json!({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "timeline_append",
                "arguments": {"timeline_id": "tl0", "role": "user", "text": words.join(" "), "tokens": 1}}});
            let answer = ask(call.to_string());
            assert!(
                answer.contains(&format!(r#"\"node\":\"n{i}\""#)),
                "{answer}"
            );
        }
        // Quiet: the session indexes the 32 waiting messages; a request read after that is answered
        // after the index is committed.
        std::thread::sleep(std::time::Duration::from_millis(500));
        ask(r#"{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"timeline_db_info","arguments":{}}}"#.into());
        let waiting: i64 = rusqlite::Connection::open(&db.path)
            .unwrap()
            .query_row("SELECT count(*) FROM search_pending", [], |r| r.get(0))
            .unwrap();
        assert_eq!(
            waiting, 0,
            "the session did not index while its client was quiet"
        );
        if foreign {
            let conn = rusqlite::Connection::open(&db.path).unwrap();
            conn.execute_batch(
                "PRAGMA synchronous = NORMAL; UPDATE timelines SET title = 'renamed'",
            )
            .unwrap();
        }
        drop(stdin);
        let out = child.wait_with_output();
        assert!(out.as_ref().is_ok_and(|o| o.status.success()), "{out:?}");
        let text = std::fs::read_to_string(&trace).unwrap();
        // `pwrite64(5</dir/db.sqlite-wal>, "..."..., 24, 4152) = 24`: a frame header alone.
        let rewrites = text
            .lines()
            .filter(|l| l.contains("pwrite64(") && l.contains(&format!("/{wal}>")))
            .filter_map(|l| l.strip_suffix(") = 24"))
            .filter(|call| call.rsplit(", ").nth(1) == Some("24"))
            .count();
        assert!(
            rewrites > 0,
            "no frame checksum was rewritten: the transaction did not spill"
        );
        let synced: Vec<String> = text
            .lines()
            .filter(|l| l.contains("sync("))
            .filter_map(|line| {
                let file = line.split_once('<')?.1.split_once('>')?.0;
                Some(Path::new(file).file_name()?.to_string_lossy().into_owned())
            })
            .collect();
        assert_eq!(synced.last(), Some(&name), "{synced:?}");
        wal_syncs.push(synced.iter().filter(|f| **f == wal).count());
        if foreign {
            assert_eq!(synced[synced.len() - 2], wal, "{synced:?}");
        }
        db.tl(&["db", "check"]).json();
    }
    assert_eq!(
        wal_syncs[1],
        wal_syncs[0] + 1,
        "the other program's frames were not synced before the checkpoint"
    );
}

/// `TIMELINE_SQLITE_KEPT_LOG=off` makes a process use SQLite's own VFS: `db info` says so (also
/// over MCP), and the log is deleted when the last connection closes, as SQLite does; `on` is the
/// default; any other value is refused before anything is opened. A database is shared by
/// processes either way.
#[test]
#[cfg(unix)]
fn sqlite_the_kept_log_can_be_switched_off() {
    common::use_engine(Engine::Sqlite);
    let mut db = Db::created_at("1767225600");
    let name = db.path.file_name().unwrap().to_string_lossy().into_owned();
    let info = |log: &str, db: &Db| {
        common::with_sqlite_fields(
            json!({"engine": "sqlite", "path": db.path.display().to_string(), "exists": true,
                "format_version": timeline::store::sqlite_schema_version(),
                "file_bytes": std::fs::metadata(&db.path).unwrap().len(),
                "timelines": 1, "nodes": db.tl(&["db", "info"]).json()["nodes"], "cold_nodes": 0}),
            log,
        )
        .to_string()
    };
    db.env("TIMELINE_SQLITE_KEPT_LOG", "on");
    db.tl(&["db", "info"]).ok(&info("kept", &db));
    assert_eq!(db.append("user", "kept", 1), "n1");
    assert_eq!(
        common::names_in(db.dir.path()),
        common::closed_sqlite(db.dir.path(), &name)
    );
    db.env("TIMELINE_SQLITE_KEPT_LOG", "off");
    db.tl(&["db", "info"]).ok(&info("plain_switched_off", &db));
    let mut mcp = McpSession::start(&db);
    assert_eq!(
        mcp.ok("timeline_db_info", json!({})).to_string(),
        info("plain_switched_off", &db)
    );
    mcp.close();
    assert_eq!(db.append("user", "plain", 1), "n2");
    assert_eq!(
        common::names_in(db.dir.path()),
        std::slice::from_ref(&name),
        "the log was kept"
    );
    // Back on: the next process keeps the log again.
    db.env("TIMELINE_SQLITE_KEPT_LOG", "on");
    assert_eq!(db.append("user", "kept again", 1), "n3");
    assert_eq!(
        common::names_in(db.dir.path()),
        common::closed_sqlite(db.dir.path(), &name)
    );
    let before = db.bytes();
    for value in ["OFF", "", "no"] {
        db.env("TIMELINE_SQLITE_KEPT_LOG", value);
        for args in [&["log"][..], &["append", "--role", "user", "--text", "x"]] {
            db.tl(args).err(2, &format!(r#"{{"error":"the environment variable TIMELINE_SQLITE_KEPT_LOG is \"{value}\"; it takes on (the default: the kept write-ahead log, docs/storage.md) or off (SQLite's own). Set it to one of those or unset it; nothing was changed"}}"#));
        }
    }
    assert_eq!(db.bytes(), before, "a refused command changed the database");
    // The JSON snapshot engine has no log to choose.
    db.path = db.dir.path().join("other.json");
    db.env("TIMELINE_SQLITE_KEPT_LOG", "no");
    db.tl(&["db", "info"]).ok(&format!(
        r#"{{"engine":"json","path":"{}","exists":false,"format_version":null,"file_bytes":0,"timelines":0,"nodes":0,"cold_nodes":0}}"#,
        db.path.display()
    ));
}

/// A SQLite the kept log was not verified against (a debug build's stand-in version,
/// `TIMELINE_TEST_SQLITE_VERSION`) gets SQLite's own VFS, and `db info` says why.
#[test]
#[cfg(all(unix, debug_assertions))]
fn sqlite_an_unverified_sqlite_version_gets_the_plain_log() {
    common::use_engine(Engine::Sqlite);
    let mut db = Db::created_at("1767225600");
    let name = db.path.file_name().unwrap().to_string_lossy().into_owned();
    db.env("TIMELINE_TEST_SQLITE_VERSION", "3051000");
    assert_eq!(
        db.tl(&["db", "info"]).json()["sqlite_log"],
        "plain_unverified_sqlite_version"
    );
    assert_eq!(db.append("user", "plain", 1), "n1");
    assert_eq!(common::names_in(db.dir.path()), [name]);
    // Switched off wins: it is the reason given.
    db.env("TIMELINE_SQLITE_KEPT_LOG", "off");
    assert_eq!(
        db.tl(&["db", "info"]).json()["sqlite_log"],
        "plain_switched_off"
    );
}
