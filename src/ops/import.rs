//! The import operation: conversations from a file (see `crate::interchange`) written as new
//! timelines, or one conversation as a new branch of an existing timeline, all in the caller's one
//! transaction. Each imported conversation leaves an import record (its source ID, a digest of its
//! content, its title and times) and an audit entry; a conversation whose digest was imported before
//! is skipped, so importing the same file twice adds nothing the second time.

use super::{Ctx, ImportArgs, existing, message, timeline_of};
use crate::error::{Error, ErrorKind, Message, Result, Step};
use crate::interchange::{self, Conversation, Format, Kinds, input};
use crate::model::file::{AuditEntry, ImportRecord};
use crate::model::{Branch, Node, ROOT, Role, estimate_tokens, node_id, timeline_id};
use crate::spec::spec;
use crate::store::{NodeRow, TimelineRow, Tx};
use serde_json::{Map, Value, json};
use std::path::Path;

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
}

impl Report {
    fn skip(
        &mut self,
        element: &input::Element,
        source_id: Option<String>,
        title: Option<String>,
        reason: String,
    ) {
        let mut entry = Map::new();
        entry.insert("file".into(), json!(element.file));
        entry.insert("index".into(), json!(element.index));
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

pub fn import(tx: &mut dyn Tx, args: &ImportArgs, ctx: &Ctx) -> Result<Value> {
    let format = Format::parse(&args.format).ok_or_else(|| {
        Error::invalid(format!(
            "invalid argument --format: {:?} is not an import format; use chatgpt, claude, openai or anthropic",
            args.format
        ))
    })?;
    let target = resolve_target(tx, format, args)?;
    let mut report = Report::default();
    let shown = args.input.clone();
    input::read(format, Path::new(&args.input), &mut |element| {
        report.conversations += 1;
        let value = match &element.value {
            Ok(value) => value,
            Err(reason) => {
                report.skip(&element, None, None, reason.clone());
                return Ok(0);
            }
        };
        let source_id = format.source_id(value);
        let title = format.title(value);
        let digest = digest(format, value, target.as_ref());
        let source_key = source_id.clone().unwrap_or_else(|| digest.clone());
        let earlier = tx.imports_of(format.as_str(), &source_key)?;
        if let Some(same) = earlier.iter().find(|r| r.digest == digest) {
            let place = match &same.branch {
                Some(branch) => format!("{} as branch {branch:?}", same.timeline),
                None => same.timeline.clone(),
            };
            report.skip(
                &element,
                source_id,
                title,
                format!("already imported into {place}"),
            );
            return Ok(0);
        }
        let conversation = match format.convert(value) {
            Ok(conversation) => conversation,
            Err(reason) if !format.is_export() => {
                return Err(Error::invalid(format!(
                    "invalid argument --input: {shown} is not {}: {reason}; nothing was imported",
                    format.label()
                )));
            }
            Err(reason) => {
                report.mismatched += 1;
                report.first_mismatch.get_or_insert_with(|| reason.clone());
                report.skip(&element, source_id, title, reason);
                return Ok(0);
            }
        };
        if conversation.messages.is_empty() {
            report.skip(
                &element,
                source_id,
                title,
                "it has no messages with any content".into(),
            );
            return Ok(0);
        }
        if let Some(reason) = refused_value(&conversation) {
            if !format.is_export() {
                return Err(Error::invalid(format!(
                    "invalid argument --input: {shown} cannot be imported: {reason}; nothing was imported"
                )));
            }
            report.skip(&element, source_id, title, reason);
            return Ok(0);
        }
        let mut kinds = conversation.kinds.clone();
        let written = match &target {
            None => write_timeline(tx, format, &conversation, &mut kinds, ctx.now)?,
            Some(target) => {
                write_branch(tx, format, &conversation, target, args, &mut kinds, ctx.now)?
            }
        };
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
        if let Some(target) = &target {
            entry.insert("from".into(), json!(node_id(target.node.id)));
        }
        entry.insert("branches".into(), json!(written.branches));
        if let Some(last) = earlier.last() {
            entry.insert("earlier_import".into(), json!(last.timeline));
        }
        report.timelines.push(Value::Object(entry));
        let record = ImportRecord {
            format: format.as_str().into(),
            source_key,
            digest,
            timeline: written.timeline.clone(),
            branch: target
                .as_ref()
                .and_then(|_| written.branches.first().cloned()),
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
        Ok(written.nodes)
    })?;
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

/// Why a converted conversation holds a value that `append` would refuse (the same validation of
/// the spec's types), or `None`: an import writes only what `append` could have written.
fn refused_value(conversation: &Conversation) -> Option<String> {
    conversation.messages.iter().enumerate().find_map(|(i, msg)| {
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

/// SHA-256 (hex) of the format, the conversation's JSON and the place it is attached to.
fn digest(format: Format, value: &Value, target: Option<&Target>) -> String {
    use sha2::{Digest, Sha256};
    let mut hasher = Sha256::new();
    hasher.update(format.as_str().as_bytes());
    hasher.update([0]);
    hasher.update(value.to_string().as_bytes());
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
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
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

/// Insert the conversation's messages below `base` (each below its parent's last part), numbering
/// nodes from the timeline's next node.
fn insert_messages(
    tx: &mut dyn Tx,
    tl: u64,
    next: u64,
    base: Place,
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
    for msg in &conversation.messages {
        let mut parent = msg.parent.map(|p| ends[p]).unwrap_or(base);
        let parts = split(&msg.text, limit);
        if parts.len() > 1 {
            kinds.part("split");
        }
        for (k, part) in parts.iter().enumerate() {
            let intent = if k == 0 {
                msg.intent.clone()
            } else {
                Some(interchange::continued(format, k + 1, parts.len()))
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
    let mut written = insert_messages(tx, tl, 1, root, (format, now), conversation, kinds)?;
    if let Some(ms) = conversation.update_time_ms {
        tx.touch_timeline(tl, ms / 1000)?;
    }
    let messages = &conversation.messages;
    let mut has_child = vec![false; messages.len()];
    for m in messages {
        if let Some(p) = m.parent {
            has_child[p] = true;
        }
    }
    let current = conversation
        .current
        .filter(|&c| c < messages.len())
        .unwrap_or(messages.len() - 1);
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
    for leaf in (0..messages.len()).filter(|&i| !has_child[i] && i != current) {
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
    let mut written = insert_messages(tx, tl, next, base, (format, now), conversation, kinds)?;
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
