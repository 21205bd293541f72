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
/// other: the node (table, primary key, by parent), the branch head, the timeline's counters,
/// the search document (table, unique index) and FTS5's segment and structure (`_data`), segment
/// index (`_idx`) and document size (`_docsize`). A new index an append updates fails here.
#[test]
fn sqlite_an_append_writes_one_page_of_each_btree_it_changes() {
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
        "search_docs",
        "search_index_data",
        "search_index_docsize",
        "search_index_idx",
        "sqlite_autoindex_nodes_1",
        "sqlite_autoindex_search_docs_1",
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
