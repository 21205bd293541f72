//! Operations: the only code that changes a database, written once against the storage interface
//! (`store::Tx`) and run by both engines.
//!
//! Each operation takes its typed request and returns its JSON result. An operation that fails may
//! have changed its transaction half-way; the store then keeps nothing, so nothing reaches disk.

mod archive;
mod budget;
mod find;
mod import;
mod output;
mod read;
mod request;
pub mod results;
mod summarize;
mod tree;
mod walk;

use crate::error::{Error, ErrorKind, Message, Result, Step};
use crate::model::{Intent, ROOT, node_id, timeline_id};
use crate::store::{NodeRow, TimelineRow, Tx};
use serde_json::Value;

pub use request::*;

/// The budget planner's input as the budget operation gathers it (used by the benchmark harness too).
pub use budget::{Planned, Span, plan_full_scan, plan_path, plan_window, planner_input, span};
/// What export needs to lay out a budget without writing: the texts and errors the budget uses.
pub use budget::{existing_placeholder, infeasible, placeholder_text};
pub use import::import;
pub use output::Output;
pub use walk::{path, path_rows};

/// What an operation needs besides the database: the clock, and the front-end whose words a text
/// in a result uses (archival reasons name `tl summarize` or `timeline_summarize`).
#[derive(Debug, Clone, Copy)]
pub struct Ctx {
    /// Unix seconds.
    pub now: u64,
    /// The front-end the request came from.
    pub origin: crate::spec::Origin,
}

/// Whether a request only reads, although its operation may change the database: a budget with
/// `dry_run` computes the layout and writes nothing, so the service runs it in a read transaction
/// (shared lock; no idempotency record).
pub fn reads_only(request: &TxRequest) -> bool {
    matches!(request, TxRequest::ContextBudget(a) if a.dry_run)
}

/// Run a request that works inside one transaction. Requests on the database file as a whole (its
/// copies and checks, imports), exports and the commands local to `tl` have types of their own
/// (`Request`), so they cannot reach here.
pub fn run(tx: &mut dyn Tx, request: &TxRequest, ctx: &Ctx) -> Result<Value> {
    match request {
        TxRequest::Create(a) => json(tree::create(tx, a, ctx)),
        TxRequest::Append(a) => json(tree::append(tx, a, ctx)),
        TxRequest::Fork(a) => json(tree::fork(tx, a, ctx)),
        TxRequest::Switch(a) => json(tree::switch(tx, a, ctx)),
        TxRequest::DropBranch(a) => json(tree::drop_branch(tx, a, ctx)),
        TxRequest::RenameBranch(a) => json(tree::rename_branch(tx, a, ctx)),
        TxRequest::Pin(a) => json(tree::pin(tx, a, ctx)),
        TxRequest::Unpin(a) => json(tree::unpin(tx, a, ctx)),
        TxRequest::Timelines(_) => json(read::timelines(tx)),
        TxRequest::Context(a) => json(read::context(tx, a)),
        TxRequest::Branches(a) => json(read::branches(tx, a)),
        TxRequest::Node(a) => json(read::node(tx, a)),
        TxRequest::Search(a) => json(find::search(tx, a)),
        TxRequest::Log(a) => json(find::log(tx, a)),
        TxRequest::Diff(a) => json(find::diff(tx, a)),
        TxRequest::Summarize(a) => json(summarize::summarize(tx, a, ctx)),
        TxRequest::ContextBudget(a) => json(budget::budget(tx, a, ctx)),
        TxRequest::ArchiveCheck(a) => json(archive::check(tx, a, ctx)),
        TxRequest::ArchiveBranch(a) => json(archive::archive(tx, a, ctx)),
        TxRequest::RestoreBranch(a) => json(archive::restore(tx, a, ctx)),
    }
}

/// A typed result as JSON: the edge where results are serialised, in their documented key order.
pub(crate) fn json(result: Result<impl serde::Serialize>) -> Result<Value> {
    serde_json::to_value(result?)
        .map_err(|e| Error::internal(format!("internal error: a result is not JSON: {e}")))
}

/// Run the spec operation `op` on an in-memory database (tests, the fuzzer, the benchmark): the same
/// code the JSON engine runs inside its lock. A failure may leave `db` half-changed. Only operations
/// inside a transaction run here; any other is refused.
pub fn run_in_memory(
    db: &mut crate::model::Database,
    op: &str,
    args: &crate::spec::validate::Args,
    ctx: &Ctx,
) -> Result<Value> {
    let operation = crate::spec::spec()
        .operation(op)
        .ok_or_else(|| Error::invalid(format!("unknown operation {op}")))?;
    let request = match Request::from_checked(operation, args)? {
        Request::Tx(request) => request,
        other => {
            return Err(Error::invalid(format!(
                "{} does not run inside one transaction, so it cannot run on an in-memory database",
                other.name()
            )));
        }
    };
    run(
        &mut crate::store::MemTx {
            db,
            engine: crate::store::Engine::Json,
        },
        &request,
        ctx,
    )
}

/// Bytes in lowercase hexadecimal: digests (idempotency keys, import digests) and cursors.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The timeline a request names, or the one with the smallest ID.
pub fn timeline_of(tx: &mut dyn Tx, requested: Option<u64>) -> Result<TimelineRow> {
    match requested {
        Some(id) => match tx.timeline(id)? {
            Some(row) => Ok(row),
            None => Err(timeline_not_found(tx, id)?),
        },
        None => {
            let first = tx.timeline_ids(1)?;
            match first.first() {
                Some(&id) => tx.timeline(id)?.ok_or_else(|| {
                    Error::internal(format!("internal error: timeline tl{id} vanished"))
                }),
                None => Err(Error::not_found(
                    Message::from("no timeline in this database yet; run ")
                        .step(Step::new("create"))
                        .text(" first (or pass --db to use another file)"),
                )),
            }
        }
    }
}

/// How many timeline IDs a not-found message lists before it stops.
const LISTED_TIMELINES: usize = 20;

fn timeline_not_found(tx: &mut dyn Tx, id: u64) -> Result<Error> {
    let ids = tx.timeline_ids(LISTED_TIMELINES + 1)?;
    if ids.is_empty() {
        return Ok(Error::not_found(
            Message::from(format!(
                "timeline not found: {}; this database has no timeline yet, run ",
                timeline_id(id)
            ))
            .step(Step::new("create"))
            .text(" first"),
        ));
    }
    let mut names: Vec<String> = ids
        .iter()
        .take(LISTED_TIMELINES)
        .map(|&t| timeline_id(t))
        .collect();
    if ids.len() > LISTED_TIMELINES {
        names.push("…".into());
    }
    Ok(Error::not_found(format!(
        "timeline not found: {} (this database has {})",
        timeline_id(id),
        names.join(", ")
    )))
}

/// A message node (not the root) or a not-found error that says what to do.
pub fn message(tx: &mut dyn Tx, timeline: &TimelineRow, n: u64) -> Result<NodeRow> {
    if n == ROOT {
        return Err(Error::invalid(
            Message::from(format!(
                "invalid argument: n0 is the root of {} and not a message; use a node ID returned by ",
                timeline_id(timeline.id)
            ))
            .step(Step::new("append"))
            .text(" or ")
            .step(Step::new("summarize")),
        ));
    }
    if let Some(row) = tx.node(timeline.id, n)? {
        return Ok(row);
    }
    let tl = timeline_id(timeline.id);
    Err(if timeline.next_node <= 1 {
        Error::not_found(
            Message::from(format!(
                "node not found: {} does not exist in timeline {tl} (it has no messages yet); add one with ",
                node_id(n)
            ))
            .step(Step::new("append").timeline(&tl)),
        )
    } else {
        Error::not_found(
            Message::from(format!(
                "node not found: {} does not exist in timeline {tl} (it has n1..n{}); find the node you mean with ",
                node_id(n),
                timeline.next_node - 1
            ))
            .step(Step::new("log").timeline(&tl))
            .text(" or ")
            .step(Step::new("search").timeline(&tl).needs("query")),
        )
    })
}

/// A node that must exist (the parent of a node, a range end): a missing one means damage.
pub fn existing(tx: &mut dyn Tx, tl: u64, n: u64) -> Result<NodeRow> {
    tx.node(tl, n)?.ok_or_else(|| missing(tl, n))
}

/// The error for node `n` of timeline `tl`, which something refers to, missing.
pub fn missing(tl: u64, n: u64) -> Error {
    Error::damaged(format!(
        "the database is damaged: node {} of {} is referenced but missing",
        node_id(n),
        timeline_id(tl)
    ))
}

/// The branch of that name, or a not-found error listing the branches there are.
pub fn branch_named(
    tx: &mut dyn Tx,
    timeline: &TimelineRow,
    name: &str,
) -> Result<crate::model::Branch> {
    if let Some(branch) = tx.branch(timeline.id, name)? {
        return Ok(branch);
    }
    let names: Vec<String> = tx
        .branches(timeline.id)?
        .into_iter()
        .map(|b| b.name)
        .collect();
    Err(Error::not_found(format!(
        "branch not found: {name:?} does not exist in timeline {} (branches: {})",
        timeline_id(timeline.id),
        names.join(", ")
    )))
}

/// A node as `context` and `budget` print it.
pub fn message_of(row: &NodeRow) -> Value {
    let node = &row.node;
    message_json(
        row.id,
        node.role.as_str(),
        &node.text,
        node.tokens,
        node.intent.as_ref(),
    )
}

/// A message as `context` and `budget` print it: `intent_tag` only when the node has an intent.
fn message_json(
    node_id: u64,
    role: &str,
    text: &str,
    tokens: u64,
    intent: Option<&Intent>,
) -> Value {
    let mut message = serde_json::json!({
        "node": crate::model::node_id(node_id),
        "role": role,
        "text": text,
        "tokens": tokens,
    });
    if let Some(intent) = intent {
        message["intent_tag"] = Value::String(intent.tag.clone());
    }
    message
}

/// Refuse a result of more than `max_output_messages` messages.
pub fn output_cap(count: usize) -> Result<()> {
    let cap = crate::spec::spec().constants.max_output_messages;
    if count > cap {
        return Err(Error::new(
            ErrorKind::LimitExceeded,
            Message::from(format!(
                "the result would have {count} messages, over the limit of {cap}; use "
            ))
            .step(Step::new("context_budget"))
            .text(" with a smaller target, or ")
            .step(Step::new("summarize"))
            .text(" older history"),
        ));
    }
    Ok(())
}
