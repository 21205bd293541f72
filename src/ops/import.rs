//! The import operation: conversations from a file (see `crate::interchange`) written as new
//! timelines, or one conversation as a new branch of an existing timeline. Each imported
//! conversation leaves an import record (its source ID, a digest of its content, its title and
//! times) and an audit entry; a conversation whose digest was imported before is skipped, so
//! importing the same file twice adds nothing the second time.
//!
//! The input is read and converted outside any transaction, by a reader thread, and written in
//! short transactions of whole conversations, so that other writers wait for one batch at most and
//! a killed import leaves only whole conversations. A data export is checked whole first (its JSON,
//! without building values), so a broken file is refused before anything is written.

mod sessions;

use super::{Ctx, ImportArgs, existing, message, timeline_of};
use crate::error::{Error, ErrorKind, Message, Result, Step};
use crate::interchange::{self, Conversation, Format, Kinds, input};
use crate::model::file::{AuditEntry, ImportRecord};
use crate::model::{
    Branch, Node, ROOT, Role, Summary, SummaryKind, estimate_tokens, node_id, timeline_id,
};
use crate::spec::spec;
use crate::store::{NodeRow, Outcome, Store, TimelineRow, Tx};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

/// How long one write transaction of an import goes on taking conversations that are ready; the
/// conversation it is writing is always finished. Other writers wait about this long at most.
const BATCH_TIME: Duration = Duration::from_millis(200);

/// Converted conversations waiting to be written hold about this many bytes at most (one bigger
/// conversation is let in alone): what bounds an import's memory besides the conversation being
/// read.
const QUEUE_BYTES: usize = 16 << 20;

/// The reader thread's stack: parsing, converting, hashing and dropping a conversation's JSON
/// recurse once per level of nesting, up to `input::MAX_DEPTH` levels.
const READER_STACK: usize = 256 << 20;

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
    messages: u64,
    timelines: Vec<Value>,
    skipped: Vec<Value>,
    /// Conversations skipped because they are not of the named format, and the first reason.
    mismatched: u64,
    first_mismatch: Option<String>,
    kinds: Kinds,
    /// Conversations imported by the transactions committed so far.
    committed: u64,
    /// What the import looks up about earlier imports of the format (updates, joined sessions).
    index: sessions::Index,
}

impl Report {
    fn skip(
        &mut self,
        at: &Prepared,
        source_id: Option<String>,
        title: Option<String>,
        reason: String,
    ) {
        let mut entry = Map::new();
        entry.insert("file".into(), json!(at.file));
        entry.insert("index".into(), json!(at.index));
        if let Some(id) = source_id {
            entry.insert("source_id".into(), json!(id));
        }
        if let Some(title) = title {
            entry.insert("title".into(), json!(title));
        }
        entry.insert("reason".into(), json!(reason));
        self.skipped.push(Value::Object(entry));
    }
}

/// One conversation of the input as the reader thread left it: converted (or why not), with what
/// the writer needs of its JSON.
struct Prepared {
    file: String,
    index: usize,
    source_id: Option<String>,
    title: Option<String>,
    /// The digest's state after the format and the conversation's JSON (see [`digest`]).
    hasher: Sha256,
    content: Content,
    /// A Codex fork: the session it came from.
    forked_from: Option<String>,
}

enum Content {
    /// Not parsed (too large, not Unicode): the reason.
    Unread(String),
    /// Not of the named format: the reason.
    Mismatch(String),
    /// A session file whose digest an earlier import recorded: not parsed.
    Unchanged(crate::model::KnownImport),
    Ready(Conversation),
}

impl Prepared {
    fn new(format: Format, element: input::Element) -> Prepared {
        let value = match element.value {
            Err(reason) => Err(reason),
            Ok(input::Body::Value(value)) => Ok(value),
            // Converted and digested as it was parsed.
            Ok(input::Body::Read(read)) => {
                return Prepared {
                    file: element.file,
                    index: element.index,
                    source_id: read.source_id,
                    title: read.title,
                    hasher: read.hasher,
                    content: match read.conversation {
                        Ok(conversation) => Content::Ready(conversation),
                        Err(reason) => Content::Mismatch(reason),
                    },
                    // Only session files (Codex) fork, and they are not read this way.
                    forked_from: None,
                };
            }
        };
        let (source_id, title, content, value) = match value {
            Err(reason) => (None, None, Content::Unread(reason), Value::Null),
            Ok(value) => {
                let content = match format.convert(&value) {
                    Ok(conversation) => Content::Ready(conversation),
                    Err(reason) => Content::Mismatch(reason),
                };
                (
                    format.source_id(&value),
                    format.title(&value),
                    content,
                    value,
                )
            }
        };
        let mut hasher = interchange::digest::start(format);
        // Streamed into the digest: the same bytes as `value.to_string()` without a copy of the
        // conversation's whole text.
        let _ = serde_json::to_writer(DigestWriter(&mut hasher), &value);
        Prepared {
            file: element.file,
            index: element.index,
            source_id,
            title,
            hasher,
            content,
            forked_from: None,
        }
    }

    /// About how many bytes it holds.
    fn bytes(&self) -> usize {
        match &self.content {
            Content::Ready(c) => c
                .messages
                .iter()
                .map(|m| {
                    256 + m.text.len()
                        + m.intent
                            .as_ref()
                            .map_or(0, |i| i.tag.len() + i.note.as_ref().map_or(0, String::len))
                })
                .sum(),
            Content::Unread(r) | Content::Mismatch(r) => 256 + r.len(),
            Content::Unchanged(k) => 256 + k.source_key.len(),
        }
    }
}

/// Writes into a digest (writing never fails).
struct DigestWriter<'a>(&'a mut Sha256);

impl std::io::Write for DigestWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.update(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The conversations between the reader thread and the writer, bounded by [`QUEUE_BYTES`].
#[derive(Default)]
struct Queue {
    state: Mutex<QueueState>,
    changed: Condvar,
}

#[derive(Default)]
struct QueueState {
    items: VecDeque<Prepared>,
    bytes: usize,
    /// The reader is done: how its reading ended.
    done: Option<Result<()>>,
    /// The writer failed: the reader stops.
    stop: bool,
}

/// Ends the queue when the reader thread stops without ending it (a panic), so that the writer
/// does not wait for ever; the panic itself is reported when the thread is joined.
struct EndOnPanic<'q>(&'q Queue);

impl Drop for EndOnPanic<'_> {
    fn drop(&mut self) {
        let mut state = self.0.lock();
        if state.done.is_none() {
            state.done = Some(Err(stopped()));
        }
        drop(state);
        self.0.changed.notify_all();
    }
}

/// The reader's error when the writer has stopped (never shown: the writer's error is).
fn stopped() -> Error {
    Error::database("the import stopped")
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, QueueState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Add a conversation, waiting while the queue is full.
    fn push(&self, item: Prepared) -> Result<()> {
        let size = item.bytes();
        let mut state = self.lock();
        while !state.stop && !state.items.is_empty() && state.bytes + size > QUEUE_BYTES {
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        if state.stop {
            return Err(stopped());
        }
        state.bytes += size;
        state.items.push_back(item);
        self.changed.notify_all();
        Ok(())
    }

    /// The next conversation; when `wait`, waits for one unless the reader is done.
    fn pop(&self, wait: bool) -> Option<Prepared> {
        let mut state = self.lock();
        loop {
            if let Some(item) = state.items.pop_front() {
                state.bytes -= item.bytes();
                self.changed.notify_all();
                return Some(item);
            }
            if !wait || state.done.is_some() {
                return None;
            }
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn finish(&self, result: Result<()>) {
        self.lock().done = Some(result);
        self.changed.notify_all();
    }

    fn stop(&self) {
        self.lock().stop = true;
        self.changed.notify_all();
    }
}

/// Import the conversations of `args.input` into `store` (see the module's comment); the result
/// lists what was imported and what was skipped, and why.
pub fn import(store: &mut Store, args: &ImportArgs, ctx: &Ctx) -> Result<Value> {
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
    Ok(json!({
        "format": format.as_str(),
        "imported": report.imported,
        "skipped": report.skipped.len(),
        "messages": report.messages,
        "timelines": report.timelines,
        "skipped_conversations": report.skipped,
        "kinds": report.kinds.to_json(),
    }))
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
    while let Some(first) = queue.pop(true) {
        store.write(|tx| {
            let started = Instant::now();
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
            report.skip(
                &prepared,
                Some(known.source_key.clone()),
                known.title.clone(),
                format!("unchanged since its import into {}", known.timeline),
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
    if let Some(same) = &earlier.same
        && format.is_session()
    {
        report.skip(
            &prepared,
            source_id,
            title,
            format!("unchanged since its import into {}", same.timeline),
        );
        return Ok(());
    }
    if let Some(same) = &earlier.same {
        let place = match &same.branch {
            Some(branch) => format!("{} as branch {branch:?}", same.timeline),
            None => same.timeline.clone(),
        };
        report.skip(
            &prepared,
            source_id,
            title,
            format!("already imported into {place}"),
        );
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
        None if format.is_session() => sessions::joined(
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
        let update = sessions::Update {
            format,
            source_id: source_id.as_deref(),
            source_key: &source_key,
            digest: &digest,
            latest,
            now: ctx.now,
            joined: joined.as_ref().map(|(key, _)| key.as_str()),
        };
        let index = &mut report.index;
        return match sessions::update(tx, &update, conversation, &mut kinds, index)? {
            sessions::Updated::Added(entry, added) => {
                report.timelines.push(entry);
                report.imported += 1;
                report.messages += added;
                report.kinds.add(&kinds);
                Ok(())
            }
            sessions::Updated::Skipped(reason) => {
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
        sessions::name_agent_branches(tx, tl, &mut written.branches[1..])?;
    }
    let mut entry = Map::new();
    entry.insert("timeline_id".into(), json!(written.timeline));
    if let Some(id) = &source_id {
        entry.insert("source_id".into(), json!(id));
    }
    if let Some(title) = &conversation.title {
        entry.insert("title".into(), json!(title));
    }
    if let Some(time) = conversation.create_time_ms {
        entry.insert("create_time_ms".into(), json!(time));
    }
    entry.insert("messages".into(), json!(written.nodes));
    if let Some(target) = target {
        entry.insert("from".into(), json!(node_id(target.node.id)));
    }
    entry.insert("branches".into(), json!(written.branches));
    if let Some(last) = &earlier.latest {
        entry.insert("earlier_import".into(), json!(last.timeline));
    }
    if format.keeps_up_to_date() {
        entry.insert("status".into(), json!("new"));
    }
    report.timelines.push(Value::Object(entry));
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

/// SHA-256 (hex) of the format, the conversation's JSON (both in `hasher` already) and the place
/// it is attached to.
fn digest(mut hasher: Sha256, target: Option<&Target>) -> String {
    if let Some(target) = target {
        hasher.update([0]);
        hasher.update(
            format!(
                "{}/{}",
                timeline_id(target.timeline.id),
                node_id(target.node.id)
            )
            .as_bytes(),
        );
    }
    super::hex(&hasher.finalize())
}

/// What writing one conversation made.
struct Written {
    timeline: String,
    first: u64,
    nodes: u64,
    branches: Vec<String>,
    /// The node holding each message's last part, per message.
    ends: Vec<u64>,
    ids: Vec<Option<String>>,
    times: Vec<Option<u64>>,
}

/// A node's place: ID, tokens of its path, depth.
#[derive(Clone, Copy)]
struct Place {
    id: u64,
    prefix_tokens: u64,
    depth: u64,
}

/// `text` cut into parts of at most `limit` bytes at character boundaries (one part when it fits).
fn split(text: &str, limit: usize) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = text;
    while rest.len() > limit {
        let mut at = limit;
        while !rest.is_char_boundary(at) {
            at -= 1;
        }
        parts.push(&rest[..at]);
        rest = &rest[at..];
    }
    parts.push(rest);
    parts
}

/// Insert the conversation's messages below `base` (each below its parent's last part, or the
/// existing node `outside[i]` names for message `i` without a parent), numbering nodes from the
/// timeline's next node.
#[allow(clippy::too_many_arguments)]
fn insert_messages(
    tx: &mut dyn Tx,
    tl: u64,
    next: u64,
    base: Place,
    outside: &[Option<Place>],
    (format, now): (Format, u64),
    conversation: &Conversation,
    kinds: &mut Kinds,
) -> Result<Written> {
    let limit = spec().constants.max_text_bytes;
    let mut next = next;
    let mut ends: Vec<Place> = Vec::with_capacity(conversation.messages.len());
    let mut ids = Vec::with_capacity(conversation.messages.len());
    let mut times = Vec::with_capacity(conversation.messages.len());
    let first = next;
    let mut summarized = false;
    for (i, msg) in conversation.messages.iter().enumerate() {
        let mut parent = msg
            .parent
            .map(|p| ends[p])
            .or_else(|| outside.get(i).copied().flatten())
            .unwrap_or(base);
        if msg.role == Role::Summary {
            // Not a message of the path: what hangs below it hangs below the end of its range.
            ends.push(parent);
            if parent.id == ROOT {
                kinds.skip("summary_of_nothing");
                continue;
            }
            if msg.text.len() > limit {
                kinds.skip("summary_too_long");
                continue;
            }
            insert_summary(tx, tl, next, parent.id, msg, now)?;
            ids.push(msg.source_id.clone());
            times.push(msg.time_ms);
            next = next.checked_add(1).ok_or_else(Error::overflow)?;
            summarized = true;
            continue;
        }
        let parts = split(&msg.text, limit);
        if parts.len() > 1 {
            kinds.part("split");
        }
        for (k, part) in parts.iter().enumerate() {
            let (intent, provenance) = if k == 0 {
                (msg.intent.clone(), msg.provenance.clone())
            } else {
                let (intent, provenance) = interchange::continued(format, k + 1, parts.len());
                (Some(intent), Some(provenance))
            };
            let tokens = estimate_tokens(part);
            let prefix_tokens = parent
                .prefix_tokens
                .checked_add(tokens)
                .ok_or_else(Error::overflow)?;
            let row = NodeRow {
                id: next,
                node: Node {
                    parent: parent.id,
                    role: msg.role,
                    text: (*part).to_string(),
                    tokens,
                    // The source's time (whole seconds), else the import's.
                    created_at: Some(msg.time_ms.map_or(now, |ms| ms / 1000)),
                    intent,
                    provenance,
                    summary: None,
                    cold: false,
                },
                prefix_tokens,
                depth: parent.depth + 1,
                pinned: false,
                cover_count: 0,
                stale: false,
                superseded_by: None,
            };
            tx.insert_node(tl, &row)?;
            ids.push(msg.source_id.clone());
            times.push(msg.time_ms);
            parent = Place {
                id: next,
                prefix_tokens,
                depth: parent.depth + 1,
            };
            next = next.checked_add(1).ok_or_else(Error::overflow)?;
        }
        ends.push(parent);
    }
    if summarized {
        super::walk::advance_watermarks(tx, tl)?;
    }
    Ok(Written {
        timeline: timeline_id(tl),
        first,
        nodes: next - first,
        branches: Vec::new(),
        ends: ends.iter().map(|p| p.id).collect(),
        ids,
        times,
    })
}

/// Summary `msg` (a compaction in the source) as node `n`: a real summary of the path from its
/// first message down to `to`, the message the compaction followed, as `summarize` would write it.
fn insert_summary(
    tx: &mut dyn Tx,
    tl: u64,
    n: u64,
    to: u64,
    msg: &interchange::Msg,
    now: u64,
) -> Result<()> {
    let mut from = to;
    loop {
        let parent = existing(tx, tl, from)?.node.parent;
        if parent == ROOT {
            break;
        }
        from = parent;
    }
    let node = Node {
        parent: ROOT,
        role: Role::Summary,
        text: msg.text.clone(),
        tokens: estimate_tokens(&msg.text),
        created_at: Some(msg.time_ms.map_or(now, |ms| ms / 1000)),
        intent: msg.intent.clone(),
        provenance: msg.provenance.clone(),
        summary: Some(Summary {
            kind: SummaryKind::Real,
            from,
            to,
            derived_from: Vec::new(),
            supersedes: None,
            version: 1,
        }),
        cold: false,
    };
    let row = super::walk::new_row(tx, tl, n, node)?;
    tx.insert_node(tl, &row)?;
    super::walk::cover_range(tx, tl, from, to)
}

/// Whether message `i` of a conversation is a summary (which is no leaf, and no one's parent).
fn is_summary(messages: &[interchange::Msg], i: usize) -> bool {
    messages[i].role == Role::Summary
}

/// A conversation as a new timeline: the path to the message the source showed last is `main`,
/// every other leaf a branch named after where it leaves the paths named before it (`edit-N` at a
/// user message: an edited prompt; `regen-N` at an assistant message: a regenerated answer;
/// `alt-N` elsewhere).
fn write_timeline(
    tx: &mut dyn Tx,
    format: Format,
    conversation: &Conversation,
    kinds: &mut Kinds,
    now: u64,
) -> Result<Written> {
    let tl = tx.next_timeline()?;
    let main = spec().constants.first_branch.clone();
    let created = conversation.create_time_ms.map_or(now, |ms| ms / 1000);
    tx.create_timeline(tl, &main, conversation.title.as_deref(), created)?;
    let root = Place {
        id: ROOT,
        prefix_tokens: 0,
        depth: 0,
    };
    let mut written = insert_messages(tx, tl, 1, root, &[], (format, now), conversation, kinds)?;
    if let Some(ms) = conversation.update_time_ms {
        tx.touch_timeline(tl, ms / 1000)?;
    }
    let messages = &conversation.messages;
    let mut has_child = vec![false; messages.len()];
    for (i, m) in messages.iter().enumerate() {
        if let Some(p) = m.parent
            && !is_summary(messages, i)
        {
            has_child[p] = true;
        }
    }
    // The head of main is a message, never a summary (nor a message before the first one).
    let mut current = conversation
        .current
        .filter(|&c| c < messages.len())
        .unwrap_or(messages.len() - 1);
    while is_summary(messages, current) {
        match messages[current].parent {
            Some(p) => current = p,
            None => break,
        }
    }
    let mut named = vec![false; messages.len()];
    let mut at = Some(current);
    while let Some(i) = at {
        named[i] = true;
        at = messages[i].parent;
    }
    tx.put_branch(
        tl,
        &Branch {
            name: main.clone(),
            head: written.ends[current],
            watermark: ROOT,
        },
    )?;
    written.branches.push(main);
    let mut counters = [0u64; 3];
    for leaf in
        (0..messages.len()).filter(|&i| !has_child[i] && i != current && !is_summary(messages, i))
    {
        let mut split_at = leaf;
        let mut at = Some(leaf);
        while let Some(i) = at {
            if named[i] {
                break;
            }
            named[i] = true;
            split_at = i;
            at = messages[i].parent;
        }
        let (slot, prefix) = match messages[split_at].role {
            Role::User => (0, "edit"),
            Role::Assistant => (1, "regen"),
            _ => (2, "alt"),
        };
        counters[slot] += 1;
        let name = format!("{prefix}-{}", counters[slot]);
        tx.put_branch(
            tl,
            &Branch {
                name: name.clone(),
                head: written.ends[leaf],
                watermark: ROOT,
            },
        )?;
        written.branches.push(name);
    }
    Ok(written)
}

/// A conversation (openai, anthropic) as a new branch from the target node.
fn write_branch(
    tx: &mut dyn Tx,
    format: Format,
    conversation: &Conversation,
    target: &Target,
    args: &ImportArgs,
    kinds: &mut Kinds,
    now: u64,
) -> Result<Written> {
    let tl = target.timeline.id;
    let next = tx
        .timeline(tl)?
        .map(|t| t.next_node)
        .unwrap_or(target.timeline.next_node);
    let base = Place {
        id: target.node.id,
        prefix_tokens: target.node.prefix_tokens,
        depth: target.node.depth,
    };
    let mut written = insert_messages(tx, tl, next, base, &[], (format, now), conversation, kinds)?;
    tx.touch_timeline(tl, now)?;
    let name = match &args.branch {
        Some(name) => name.clone(),
        None => {
            let mut k = 1u64;
            loop {
                let name = format!("import-{k}");
                if tx.branch(tl, &name)?.is_none() {
                    break name;
                }
                k += 1;
            }
        }
    };
    let head = *written.ends.last().unwrap_or(&target.node.id);
    tx.put_branch(
        tl,
        &Branch {
            name: name.clone(),
            head,
            watermark: ROOT,
        },
    )?;
    written.branches.push(name);
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::split;

    #[test]
    fn split_at_character_boundaries() {
        assert_eq!(split("", 4), vec![""]);
        assert_eq!(split("abcd", 4), vec!["abcd"]);
        assert_eq!(split("abcdef", 4), vec!["abcd", "ef"]);
        // "é" is two bytes: never cut in half.
        assert_eq!(split("abcé", 4), vec!["abc", "é"]);
        assert_eq!(split("讨论目标", 4), vec!["讨", "论", "目", "标"]);
        assert_eq!(split("讨论目标", 6).concat(), "讨论目标");
    }
}
