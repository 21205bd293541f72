//! The storage-row counter behind `TIMELINE_COUNT_READS=1`: how many rows each transaction read
//! through `Tx`, printed on standard error. It is what tests use to show that an operation's cost
//! depends on what it returns, not on the size of the database (a count, never a timing, so the
//! tests are exact on any machine). Off (one environment lookup per transaction) unless asked for.

use super::{
    Counts, Engine, NewParent, NodeChange, NodeRow, PathFind, SearchHit, SearchScope, TimelineRow,
    Tx,
};
use crate::error::Result;
use crate::model::file::{AuditEntry, IdempotencyEntry, ImportRecord};
use crate::model::{ArchivedBranch, Branch, Database, Earlier, KnownImport, Timeline};
use crate::search::Query;
use std::sync::atomic::{AtomicU64, Ordering};

/// The environment variable that turns the counter on (`1`).
pub const VARIABLE: &str = "TIMELINE_COUNT_READS";

/// Whether the counter is on for this process.
pub fn enabled() -> bool {
    std::env::var_os(VARIABLE).is_some_and(|v| v == "1")
}

/// Run `f` on `tx`, counting the rows it reads when the counter is on, and print the count as one
/// line on standard error: `storage rows read: N`.
pub fn run<R>(tx: &mut dyn Tx, f: impl FnOnce(&mut dyn Tx) -> Result<R>) -> Result<R> {
    if !enabled() {
        return f(tx);
    }
    let sqlite = tx.engine() == Engine::Sqlite;
    SQLITE_INSTRUCTIONS.store(0, Ordering::Relaxed);
    let mut counted = Counted { tx, rows: 0 };
    let result = f(&mut counted);
    eprintln!("storage rows read: {}", counted.rows);
    if sqlite {
        eprintln!(
            "storage sqlite instructions: {}",
            SQLITE_INSTRUCTIONS.load(Ordering::Relaxed)
        );
    }
    result
}

/// The SQLite engine's virtual-machine instructions since the current read or change began, in
/// steps of `SQLITE_INSTRUCTION_STEP` (its connections' progress handler adds them while the
/// counter is on), printed after the rows line as `storage sqlite instructions: N`. It is the
/// work SQLite did, which the rows a query returns do not show: a path walk that SQLite planned
/// as a search of the whole timeline returned one row and read every node.
pub(super) static SQLITE_INSTRUCTIONS: AtomicU64 = AtomicU64::new(0);

/// How many instructions SQLite runs between two calls of the progress handler.
pub(super) const SQLITE_INSTRUCTION_STEP: u16 = 100;

/// Print the statements one read or change sent to a database server, as the line after its
/// `storage rows read: N`: `storage statements sent: N` (the PostgreSQL engine; the file engines
/// send none).
pub fn print_statements(n: u64) {
    eprintln!("storage statements sent: {n}");
}

/// A transaction that counts the rows each read returns: one per row, timeline, node ID, branch or
/// record, whether or not it exists (a lookup that finds nothing still costs an index probe).
struct Counted<'a> {
    tx: &'a mut dyn Tx,
    rows: u64,
}

impl Counted<'_> {
    fn add(&mut self, n: usize) {
        self.rows += u64::try_from(n.max(1)).unwrap_or(u64::MAX);
    }
}

impl Tx for Counted<'_> {
    fn engine(&self) -> Engine {
        self.tx.engine()
    }
    fn next_timeline(&mut self) -> Result<u64> {
        self.add(1);
        self.tx.next_timeline()
    }
    fn timeline_ids(&mut self, limit: usize) -> Result<Vec<u64>> {
        let r = self.tx.timeline_ids(limit)?;
        self.add(r.len());
        Ok(r)
    }
    fn timeline(&mut self, tl: u64) -> Result<Option<TimelineRow>> {
        self.add(1);
        self.tx.timeline(tl)
    }
    fn create_timeline(
        &mut self,
        id: u64,
        first_branch: &str,
        title: Option<&str>,
        now: u64,
    ) -> Result<()> {
        self.tx.create_timeline(id, first_branch, title, now)
    }
    fn touch_timeline(&mut self, tl: u64, now: u64) -> Result<()> {
        self.tx.touch_timeline(tl, now)
    }
    fn timeline_list(&mut self) -> Result<Vec<(TimelineRow, u64)>> {
        let r = self.tx.timeline_list()?;
        self.add(r.len());
        Ok(r)
    }
    fn set_current_branch(&mut self, tl: u64, name: &str) -> Result<()> {
        self.tx.set_current_branch(tl, name)
    }
    fn node(&mut self, tl: u64, n: u64) -> Result<Option<NodeRow>> {
        self.add(1);
        self.tx.node(tl, n)
    }
    fn parent_of_new(&mut self, tl: u64, n: u64) -> Result<Option<NewParent>> {
        let found = self.tx.parent_of_new(tl, n)?;
        // Two rows, as reading them one by one counts them (the root has no parent to read).
        self.add(match &found {
            Some(parent) if parent.place.id != crate::model::ROOT => 2,
            _ => 1,
        });
        Ok(found)
    }
    fn ancestors(&mut self, tl: u64, n: u64, limit: u64) -> Result<Vec<NodeRow>> {
        let r = self.tx.ancestors(tl, n, limit)?;
        self.add(r.len());
        Ok(r)
    }
    fn budget_window(&mut self, tl: u64, n: u64, max_tokens: u64) -> Result<Vec<NodeRow>> {
        let r = self.tx.budget_window(tl, n, max_tokens)?;
        self.add(r.len());
        Ok(r)
    }
    fn find_on_path(&mut self, tl: u64, n: u64, find: PathFind) -> Result<Option<NodeRow>> {
        self.add(1);
        self.tx.find_on_path(tl, n, find)
    }
    fn children(&mut self, tl: u64, n: u64) -> Result<Vec<u64>> {
        let r = self.tx.children(tl, n)?;
        self.add(r.len());
        Ok(r)
    }
    fn summaries_from(&mut self, tl: u64, from: u64) -> Result<Vec<u64>> {
        let r = self.tx.summaries_from(tl, from)?;
        self.add(r.len());
        Ok(r)
    }
    fn summary_by_request(&mut self, tl: u64, digest: &[u8; 32]) -> Result<Option<u64>> {
        self.add(1);
        self.tx.summary_by_request(tl, digest)
    }
    fn dependents(&mut self, tl: u64, n: u64) -> Result<Vec<u64>> {
        let r = self.tx.dependents(tl, n)?;
        self.add(r.len());
        Ok(r)
    }
    fn insert_node(&mut self, tl: u64, row: &NodeRow) -> Result<()> {
        self.tx.insert_node(tl, row)
    }
    fn insert_nodes(&mut self, tl: u64, rows: &[NodeRow]) -> Result<()> {
        self.tx.insert_nodes(tl, rows)
    }
    fn change_node(&mut self, tl: u64, n: u64, change: NodeChange) -> Result<()> {
        self.tx.change_node(tl, n, change)
    }
    fn cover_path(&mut self, tl: u64, from: u64, to: u64) -> Result<u64> {
        self.tx.cover_path(tl, from, to)
    }
    fn in_a_range(&mut self, tl: u64, n: &NodeRow) -> Result<bool> {
        self.add(1);
        self.tx.in_a_range(tl, n)
    }
    fn branches(&mut self, tl: u64) -> Result<Vec<Branch>> {
        let r = self.tx.branches(tl)?;
        self.add(r.len());
        Ok(r)
    }
    fn branch(&mut self, tl: u64, name: &str) -> Result<Option<Branch>> {
        self.add(1);
        self.tx.branch(tl, name)
    }
    fn put_branch(&mut self, tl: u64, branch: &Branch) -> Result<()> {
        self.tx.put_branch(tl, branch)
    }
    fn remove_branch(&mut self, tl: u64, name: &str) -> Result<()> {
        self.tx.remove_branch(tl, name)
    }
    fn insert_branch(&mut self, tl: u64, index: u64, branch: &Branch) -> Result<()> {
        self.tx.insert_branch(tl, index, branch)
    }
    fn rename_branch(&mut self, tl: u64, old: &str, new: &str) -> Result<()> {
        self.tx.rename_branch(tl, old, new)
    }
    fn archived_branches(&mut self, tl: u64) -> Result<Vec<ArchivedBranch>> {
        let r = self.tx.archived_branches(tl)?;
        self.add(r.len());
        Ok(r)
    }
    fn push_archived_branch(&mut self, tl: u64, archived: &ArchivedBranch) -> Result<()> {
        self.tx.push_archived_branch(tl, archived)
    }
    fn remove_archived_branch(&mut self, tl: u64, name: &str) -> Result<()> {
        self.tx.remove_archived_branch(tl, name)
    }
    fn idempotency(&mut self, scope: &str, key: &str) -> Result<Option<IdempotencyEntry>> {
        self.add(1);
        self.tx.idempotency(scope, key)
    }
    fn put_idempotency(&mut self, entry: &IdempotencyEntry) -> Result<()> {
        self.tx.put_idempotency(entry)
    }
    fn purge_idempotency(&mut self, cutoff: u64) -> Result<()> {
        self.tx.purge_idempotency(cutoff)
    }
    fn append_audit(&mut self, now: u64, entry: AuditEntry) -> Result<()> {
        self.tx.append_audit(now, entry)
    }
    fn earlier_imports(&mut self, format: &str, source_key: &str, digest: &str) -> Result<Earlier> {
        self.add(2);
        self.tx.earlier_imports(format, source_key, digest)
    }
    fn import_digests(&mut self, format: &str) -> Result<Vec<KnownImport>> {
        let r = self.tx.import_digests(format)?;
        self.add(r.len());
        Ok(r)
    }
    fn imports_of(&mut self, format: &str, source_key: &str) -> Result<Vec<ImportRecord>> {
        let r = self.tx.imports_of(format, source_key)?;
        self.add(r.len());
        Ok(r)
    }
    fn put_import(&mut self, record: &ImportRecord) -> Result<()> {
        self.tx.put_import(record)
    }
    fn created_at(&mut self, tl: u64, n: u64) -> Result<Option<u64>> {
        self.add(1);
        self.tx.created_at(tl, n)
    }
    fn search(&mut self, query: &Query, scope: &SearchScope) -> Result<Vec<SearchHit>> {
        let r = self.tx.search(query, scope)?;
        self.add(r.len());
        Ok(r)
    }
    fn load_timeline(&mut self, tl: u64) -> Result<Timeline> {
        let r = self.tx.load_timeline(tl)?;
        self.add(r.nodes.len());
        Ok(r)
    }
    fn load_database(&mut self) -> Result<Database> {
        let r = self.tx.load_database()?;
        self.add(r.timelines.iter().map(|t| t.nodes.len()).sum());
        Ok(r)
    }
    fn counts(&mut self) -> Result<Counts> {
        self.add(1);
        self.tx.counts()
    }
}
