//! The import operation: conversations from a file (see `crate::interchange`) written as new
//! timelines, or one conversation as a new branch of an existing timeline. Each imported
//! conversation leaves an import record (its source ID, a digest of its content, its title and
//! times) and an audit entry; a conversation whose digest was imported before writes nothing and
//! is reported unchanged, so importing the same file twice adds nothing the second time.
//!
//! The input is read and converted outside any transaction, by a reader thread, and written in
//! short transactions of whole conversations, with pauses between them, so that other writers wait
//! for one batch at most and a killed import leaves only whole conversations. A data export is
//! checked whole first (its JSON, without building values), so a broken file is refused before
//! anything is written.

mod prepared;
mod queue;
mod sessions;
mod updates;
mod write;

use super::results::{
    ImportKinds, ImportStatus, Imported, ImportedConversation, SkippedConversation,
};
use super::{Ctx, ImportArgs, existing, message, timeline_of};
use crate::error::{Error, ErrorKind, Message, Result, Step};
use crate::interchange::{Conversation, Format, Kinds, input};
use crate::model::file::{AuditEntry, ImportRecord};
use crate::model::{ROOT, node_id, timeline_id};
use crate::store::{NodeRow, Outcome, Store, TimelineRow, Tx};
use prepared::{Content, Prepared, digest};
use queue::{EndOnPanic, Queue};
use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use write::{write_branch, write_timeline};

/// How long one write transaction of an import goes on taking conversations that are ready; the
/// conversation it is writing is always finished. Other writers wait about this long at most.
const BATCH_TIME: Duration = Duration::from_millis(200);

/// Between two of its transactions an import leaves the database to other writers for a twentieth
/// of the time it held it, up to this long. After a transaction of 20 ms or more that is at least
/// a millisecond, as often as SQLite's waiters try, so an `append` waiting for the lock takes it;
/// shorter transactions mean the import is waiting for its reader, which leaves the lock free
/// anyway. The pause costs the import a twentieth of its speed at most.
const MAX_PAUSE: Duration = Duration::from_millis(10);

/// The reader thread's stack: checking, parsing, converting, hashing and dropping a conversation's
/// JSON recurse once per level of nesting, which the scanner bounds (`input::MAX_DEPTH`, 10,000
/// levels). At that depth a debug build needs 24 to 28 MiB (a LibreChat `messagesTree`, the
/// deepest walk; a message nested as deep needs 20 to 24), a release build less: this is over
/// twice that.
const READER_STACK: usize = 64 << 20;

/// Where a single conversation goes when it is attached to an existing timeline.
struct Target {
    timeline: TimelineRow,
    node: NodeRow,
}

/// What one import did, for its result.
#[derive(Default)]
struct Report {
    conversations: u64,
    imported: u64,
    /// Conversations imported before as they are now (listed in `timelines`).
    unchanged: u64,
    messages: u64,
    timelines: Vec<ImportedConversation>,
    skipped: Vec<SkippedConversation>,
    /// Conversations skipped because they are not of the named format, and the first reason.
    mismatched: u64,
    first_mismatch: Option<String>,
    kinds: Kinds,
    /// Conversations imported by the transactions committed so far.
    committed: u64,
    /// What the import looks up about earlier imports of the format (updates, joined sessions).
    index: updates::Index,
}

impl Report {
    /// A conversation in `timeline` already as it is: listed with status unchanged, nothing written.
    fn unchanged(
        &mut self,
        timeline: &str,
        source_id: Option<String>,
        title: Option<String>,
        joined: Option<String>,
    ) {
        self.unchanged += 1;
        self.timelines.push(ImportedConversation {
            timeline_id: timeline.to_string(),
            source_id,
            title,
            create_time_ms: None,
            messages: 0,
            from: None,
            branches: Vec::new(),
            earlier_import: None,
            joined,
            reused_ids: Vec::new(),
            status: ImportStatus::Unchanged,
        });
    }

    fn skip(
        &mut self,
        at: &Prepared,
        source_id: Option<String>,
        title: Option<String>,
        reason: String,
    ) {
        self.skipped.push(SkippedConversation {
            file: at.file.clone(),
            index: at.index,
            source_id,
            title,
            reason,
        });
    }
}

/// Import the conversations of `args.input` into `store` (see the module's comment); the result
/// gives each conversation its status (new, updated, unchanged), or why it was skipped.
pub fn import(store: &mut Store, args: &ImportArgs, ctx: &Ctx) -> Result<Imported> {
    let format = Format::parse(&args.format).ok_or_else(|| {
        Error::invalid(format!(
            "invalid argument --format: {:?} is not an import format; use chatgpt, claude, openai, anthropic, claude-code, codex, gemini-cli, llm, open-webui or librechat",
            args.format
        ))
    })?;
    let input = match &args.input {
        Some(input) => PathBuf::from(input),
        None if format.is_session() => {
            let Some((dir, place)) = sessions::default_dir(format) else {
                return Err(Error::invalid(
                    "invalid argument --input: HOME is not set, so the sessions cannot be found; pass --input with a session file or a folder of them",
                ));
            };
            if !dir.exists() {
                return Err(Error::invalid(format!(
                    "invalid argument --input: there are no {}; pass --input with a session file or a folder of them",
                    place.replace("{}", &dir.display().to_string())
                )));
            }
            dir
        }
        None => {
            return Err(Error::invalid(format!(
                "invalid argument --input: --format {} needs --input, the file to import",
                format.as_str()
            )));
        }
    };
    let shown = input.display().to_string();
    // The options are checked before the input is read (and again in each write).
    if args.node.is_some() || args.branch.is_some() || args.timeline_id.is_some() {
        store.read(|tx| resolve_target(tx, format, args).map(|_| ()))?;
    }
    // A session import knows the digests imported before, so unchanged files are not parsed.
    let mut known = std::collections::HashMap::new();
    if format.is_session() {
        for k in store.read(|tx| tx.import_digests(format.as_str()))? {
            known.entry(k.digest.clone()).or_insert(k);
        }
    }
    let queue = Queue::default();
    let path = input.as_path();
    let limits = input::Limits {
        quiet: args.quiet,
        ..input::Limits::new(args.max_unzipped_mib, args.max_zip_ratio)
    };
    let mut report = Report::default();
    let written = std::thread::scope(|scope| {
        let reader = std::thread::Builder::new()
            .name("import-reader".into())
            .stack_size(READER_STACK)
            .spawn_scoped(scope, || {
                let _ended = EndOnPanic(&queue);
                let result = read_input(format, path, limits, &known, args.quiet, &queue);
                queue.finish(result);
            })
            .map_err(|e| {
                Error::database(format!("cannot start the import's reader thread: {e}"))
            })?;
        let written = write_all(store, format, args, &shown, ctx, &queue, &mut report);
        if written.is_err() {
            queue.stop();
        }
        if reader.join().is_err() {
            return Err(Error::internal(
                "internal error: the import's reader thread failed; see the message above. Please report this",
            ));
        }
        written
    });
    let read = queue.lock().done.take().unwrap_or(Ok(()));
    let outcome = written.and(read);
    if let Err(e) = outcome {
        if report.committed == 0 {
            return Err(e);
        }
        let message = e.message.replace("; nothing was imported", "");
        return Err(Error::new(
            e.kind,
            format!(
                "{message}; the {} conversation(s) before it were imported. Import the file again once this is fixed: what was imported is skipped then",
                report.committed
            ),
        ));
    }
    if report.conversations > 0 && report.mismatched == report.conversations {
        return Err(Error::invalid(format!(
            "invalid argument --input: {shown} is not {}: none of its {} conversation(s) could be read (the first: {}); check --format; nothing was imported",
            format.label(),
            report.conversations,
            report.first_mismatch.unwrap_or_default()
        )));
    }
    Ok(Imported {
        format: format.as_str().to_string(),
        imported: report.imported,
        unchanged: report.unchanged,
        skipped: report.skipped.len() as u64,
        messages: report.messages,
        timelines: report.timelines,
        skipped_conversations: report.skipped,
        kinds: ImportKinds {
            roles: report.kinds.roles,
            parts: report.kinds.parts,
            skipped: report.kinds.skipped,
        },
    })
}

/// The reader thread: check a data export whole, then parse and convert each conversation into
/// the queue.
fn read_input(
    format: Format,
    path: &Path,
    limits: input::Limits,
    known: &sessions::Known,
    quiet: bool,
    queue: &Queue,
) -> Result<()> {
    if format.is_session() {
        return sessions::read(format, path, known, quiet, &mut |prepared| {
            queue.push(prepared)
        });
    }
    if format.is_export() {
        input::read(format, path, input::Pass::Check, limits, &mut |_| Ok(0))?;
    }
    input::read(format, path, input::Pass::Parse, limits, &mut |element| {
        let prepared = Prepared::new(format, element);
        let messages = match &prepared.content {
            Content::Ready(c) => c.messages.len() as u64,
            _ => 0,
        };
        queue.push(prepared)?;
        Ok(messages)
    })
}

/// The writer: short transactions of the conversations the reader has ready, until it is done.
fn write_all(
    store: &mut Store,
    format: Format,
    args: &ImportArgs,
    shown: &str,
    ctx: &Ctx,
    queue: &Queue,
    report: &mut Report,
) -> Result<()> {
    // When the last transaction ended and how long other writers are let in after it.
    let mut released: Option<(Instant, Duration)> = None;
    while let Some(first) = queue.pop(true) {
        if let Some((at, pause)) = released {
            std::thread::sleep(pause.saturating_sub(at.elapsed()));
        }
        let mut started = Instant::now();
        store.write(|tx| {
            // (From the moment the lock is held: BATCH_TIME and the pause count only that.)
            started = Instant::now();
            let target = resolve_target(tx, format, args)?;
            let before = report.imported;
            let mut next = Some(first);
            while let Some(prepared) = next {
                write_one(
                    tx,
                    format,
                    (args, shown),
                    ctx,
                    target.as_ref(),
                    prepared,
                    report,
                )?;
                next = if started.elapsed() < BATCH_TIME {
                    queue.pop(false)
                } else {
                    None
                };
            }
            // A batch of skipped conversations writes nothing (nor creates the database).
            Ok(if report.imported == before {
                Outcome::Unchanged(())
            } else {
                Outcome::Commit(())
            })
        })?;
        released = Some((Instant::now(), (started.elapsed() / 20).min(MAX_PAUSE)));
        report.committed = report.imported;
    }
    Ok(())
}

/// Write one conversation (or record why it is skipped), inside a transaction.
fn write_one(
    tx: &mut dyn Tx,
    format: Format,
    (args, shown): (&ImportArgs, &str),
    ctx: &Ctx,
    target: Option<&Target>,
    prepared: Prepared,
    report: &mut Report,
) -> Result<()> {
    report.conversations += 1;
    let source_id = prepared.source_id.clone();
    let title = prepared.title.clone();
    let conversation = match &prepared.content {
        Content::Unread(reason) => {
            report.skip(&prepared, None, None, reason.clone());
            return Ok(());
        }
        Content::Unchanged(known) => {
            report.unchanged(
                &known.timeline,
                Some(known.source_key.clone()),
                known.title.clone(),
                None,
            );
            return Ok(());
        }
        Content::Mismatch(reason) if !format.is_export() && !format.is_session() => {
            return Err(Error::invalid(format!(
                "invalid argument --input: {shown} is not {}: {reason}; nothing was imported",
                format.label()
            )));
        }
        Content::Mismatch(reason) => {
            report.mismatched += 1;
            report.first_mismatch.get_or_insert_with(|| reason.clone());
            report.skip(&prepared, source_id, title, reason.clone());
            return Ok(());
        }
        Content::Ready(conversation) => conversation,
    };
    let digest = digest(prepared.hasher.clone(), target);
    let source_key = source_id.clone().unwrap_or_else(|| digest.clone());
    let earlier = tx.earlier_imports(format.as_str(), &source_key, &digest)?;
    if let Some(same) = &earlier.same {
        report.unchanged(&same.timeline, source_id, title, None);
        return Ok(());
    }
    if let Some(reason) = &conversation.skip {
        report.skip(&prepared, source_id, title, reason.clone());
        return Ok(());
    }
    if conversation.messages.is_empty() {
        report.skip(
            &prepared,
            source_id,
            title,
            "it has no messages with any content".into(),
        );
        return Ok(());
    }
    if let Some(reason) = refused_value(conversation) {
        if !format.is_export() && !format.is_session() {
            return Err(Error::invalid(format!(
                "invalid argument --input: {shown} cannot be imported: {reason}; nothing was imported"
            )));
        }
        report.skip(&prepared, source_id, title, reason);
        return Ok(());
    }
    let mut kinds = conversation.kinds.clone();
    // A session seen for the first time may continue one imported before (resumed, forked).
    let joined = match &earlier.latest {
        None if format.is_session() => updates::joined(
            tx,
            format,
            &source_key,
            prepared.forked_from.as_deref(),
            conversation,
            &mut report.index,
        )?,
        _ => None,
    };
    let latest = earlier
        .latest
        .as_ref()
        .or(joined.as_ref().map(|(_, record)| record));
    if format.keeps_up_to_date()
        && let Some(latest) = latest
    {
        let update = updates::Update {
            format,
            source_id: source_id.as_deref(),
            source_key: &source_key,
            digest: &digest,
            latest,
            now: ctx.now,
            joined: joined.as_ref().map(|(key, _)| key.as_str()),
        };
        let index = &mut report.index;
        return match updates::update(tx, &update, conversation, &mut kinds, index)? {
            updates::Updated::Added(entry, added) => {
                report.timelines.push(*entry);
                report.imported += 1;
                report.messages += added;
                report.kinds.add(&kinds);
                Ok(())
            }
            updates::Updated::Unchanged(joined) => {
                report.unchanged(&latest.timeline, source_id, title, joined);
                Ok(())
            }
            updates::Updated::Skipped(reason) => {
                report.skip(&prepared, source_id, title, reason);
                Ok(())
            }
        };
    }
    let mut written = match target {
        None => write_timeline(tx, format, conversation, &mut kinds, ctx.now)?,
        Some(target) => write_branch(tx, format, conversation, target, args, &mut kinds, ctx.now)?,
    };
    if format.is_session()
        && let Some(tl) = crate::model::parse_timeline_id(&written.timeline)
    {
        updates::name_agent_branches(tx, tl, &mut written.branches[1..])?;
    }
    report.timelines.push(ImportedConversation {
        timeline_id: written.timeline.clone(),
        source_id: source_id.clone(),
        title: conversation.title.clone(),
        create_time_ms: conversation.create_time_ms,
        messages: written.nodes,
        from: target.map(|target| node_id(target.node.id)),
        branches: written.branches.clone(),
        earlier_import: earlier.latest.as_ref().map(|last| last.timeline.clone()),
        joined: None,
        reused_ids: Vec::new(),
        status: ImportStatus::New,
    });
    let record = ImportRecord {
        format: format.as_str().into(),
        source_key,
        digest,
        timeline: written.timeline.clone(),
        branch: target.and_then(|_| written.branches.first().cloned()),
        first_node: node_id(written.first),
        nodes: written.nodes,
        title: conversation.title.clone(),
        create_time_ms: conversation.create_time_ms,
        update_time_ms: conversation.update_time_ms,
        message_ids: if written.ids.iter().all(Option::is_none) {
            Vec::new()
        } else {
            written.ids
        },
        message_times_ms: if written.times.iter().all(Option::is_none) {
            Vec::new()
        } else {
            written.times
        },
        ts: ctx.now,
    };
    tx.put_import(&record)?;
    if format.keeps_up_to_date() {
        report
            .index
            .add(&record.source_key, &record.timeline, &record.message_ids);
    }
    let mut summary = Map::new();
    summary.insert("format".into(), json!(format.as_str()));
    if let Some(id) = &source_id {
        summary.insert("source_id".into(), json!(id));
    }
    if let Some(title) = &conversation.title {
        summary.insert("title".into(), json!(title));
    }
    summary.insert("messages".into(), json!(written.nodes));
    tx.append_audit(
        ctx.now,
        AuditEntry {
            op: "import".into(),
            timeline: Some(written.timeline.clone()),
            from: Some(node_id(written.first)),
            to: Some(node_id(written.first + written.nodes - 1)),
            branch: record.branch.clone(),
            result: Some(Value::Object(summary)),
            ..AuditEntry::default()
        },
    )?;
    report.imported += 1;
    report.messages += written.nodes;
    report.kinds.add(&kinds);
    Ok(())
}

/// Why a converted conversation holds a value that `append` would refuse (the same validation of
/// the spec's types), or `None`: an import writes only what `append` could have written.
fn refused_value(conversation: &Conversation) -> Option<String> {
    conversation
        .messages
        .iter()
        .enumerate()
        .find_map(|(i, msg)| {
            let intent = msg.intent.as_ref()?;
            let problem = crate::spec::validate::intent_problem(intent)?;
            let which = match &msg.source_id {
                Some(id) => format!("message {i} ({id})"),
                None => format!("message {i}"),
            };
            Some(format!(
                "{which} would get an intent that append refuses: {problem}"
            ))
        })
}

/// The existing timeline and node a single conversation is attached to (`--node`), after checking
/// that the options fit the format.
fn resolve_target(tx: &mut dyn Tx, format: Format, args: &ImportArgs) -> Result<Option<Target>> {
    if args.branch.is_some() && args.node.is_none() {
        return Err(Error::invalid(
            "invalid argument --branch: it names the branch made by an import into an existing timeline, so it needs --node",
        ));
    }
    let Some(n) = args.node else {
        if args.timeline_id.is_some() {
            return Err(Error::invalid(
                "invalid argument --timeline: an import makes new timelines unless --node names where to attach the messages; pass --node too (--node n0 starts from the timeline's root)",
            ));
        }
        return Ok(None);
    };
    if format.is_export() {
        return Err(Error::invalid(format!(
            "invalid argument --node: {} holds whole conversations, each imported as a timeline of its own; --node is for --format openai and anthropic",
            format.label()
        )));
    }
    let timeline = timeline_of(tx, args.timeline_id)?;
    let node = if n == ROOT {
        existing(tx, timeline.id, ROOT)?
    } else {
        message(tx, &timeline, n)?
    };
    if node.node.cold {
        return Err(Error::new(
            ErrorKind::Archived,
            format!(
                "cannot import from {}: it is archived (cold); attach the messages to a hot node instead, such as a summary that covers it",
                node_id(n)
            ),
        ));
    }
    if let Some(name) = &args.branch
        && tx.branch(timeline.id, name)?.is_some()
    {
        return Err(Error::conflict(
            Message::from(format!(
                "branch {name:?} already exists in {}; choose another --branch, or list the branches with ",
                timeline_id(timeline.id)
            ))
            .step(Step::new("branches")),
        ));
    }
    Ok(Some(Target { timeline, node }))
}
