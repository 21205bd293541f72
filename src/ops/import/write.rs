//! Writing one converted conversation's messages: as a new timeline with its branches, or as a
//! new branch of an existing timeline.

use super::super::{ImportArgs, existing};
use super::Target;
use crate::error::{Error, Result};
use crate::interchange::{self, Conversation, Format, Kinds};
use crate::model::{Branch, Node, ROOT, Role, Summary, SummaryKind, estimate_tokens, timeline_id};
use crate::spec::spec;
use crate::store::{NodeRow, Tx};

/// What writing one conversation made.
pub(super) struct Written {
    pub(super) timeline: String,
    pub(super) first: u64,
    pub(super) nodes: u64,
    pub(super) branches: Vec<String>,
    /// The node holding each message's last part, per message.
    pub(super) ends: Vec<u64>,
    pub(super) ids: Vec<Option<String>>,
    pub(super) times: Vec<Option<u64>>,
}

/// The most node rows, and about the most bytes of text, one `insert_nodes` of an import writes:
/// their texts are copies held until then, so a long or large conversation is written in parts
/// and an import's memory keeps its bound (one more copy of 256 KiB of text at most, or of one
/// text: a large message is written alone, as before batches).
const BATCH_ROWS: usize = 1024;
const BATCH_BYTES: usize = 256 << 10;

/// A node's place: ID, tokens of its path, depth.
#[derive(Clone, Copy)]
pub(super) struct Place {
    pub(super) id: u64,
    pub(super) prefix_tokens: u64,
    pub(super) depth: u64,
}

/// `text` cut into parts of at most `limit` bytes at character boundaries (one part when it fits).
pub(super) fn split(text: &str, limit: usize) -> Vec<&str> {
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
pub(super) fn insert_messages(
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
    // Written in batches: a batch's rows cost fewer statements than one insert each.
    let mut batch: Vec<NodeRow> = Vec::with_capacity(conversation.messages.len().min(BATCH_ROWS));
    let mut batch_bytes = 0;
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
            // A summary reads the path it covers: the rows before it are written first.
            tx.insert_nodes(tl, &batch)?;
            batch.clear();
            batch_bytes = 0;
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
            let prefix_tokens = super::super::walk::path_tokens(parent.prefix_tokens, tokens)?;
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
                stale: false,
                superseded_by: None,
            };
            batch_bytes += row.node.text.len();
            batch.push(row);
            if batch.len() == BATCH_ROWS || batch_bytes >= BATCH_BYTES {
                tx.insert_nodes(tl, &batch)?;
                batch.clear();
                batch_bytes = 0;
            }
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
    tx.insert_nodes(tl, &batch)?;
    if summarized {
        super::super::walk::advance_watermarks(tx, tl)?;
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
pub(super) fn insert_summary(
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
    let row = super::super::walk::new_row(tx, tl, n, node)?;
    tx.insert_node(tl, &row)?;
    super::super::walk::cover_range(tx, tl, from, to)
}

/// Whether message `i` of a conversation is a summary (which is no leaf, and no one's parent).
pub(super) fn is_summary(messages: &[interchange::Msg], i: usize) -> bool {
    messages[i].role == Role::Summary
}

/// A conversation as a new timeline: the path to the message the source showed last is `main`,
/// every other leaf a branch named after where it leaves the paths named before it (`edit-N` at a
/// user message: an edited prompt; `regen-N` at an assistant message: a regenerated answer;
/// `alt-N` elsewhere).
pub(super) fn write_timeline(
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
pub(super) fn write_branch(
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
    pub(super) fn split_at_character_boundaries() {
        assert_eq!(split("", 4), vec![""]);
        assert_eq!(split("abcd", 4), vec!["abcd"]);
        assert_eq!(split("abcdef", 4), vec!["abcd", "ef"]);
        // "é" is two bytes: never cut in half.
        assert_eq!(split("abcé", 4), vec!["abc", "é"]);
        assert_eq!(split("讨论目标", 4), vec!["讨", "论", "目", "标"]);
        assert_eq!(split("讨论目标", 6).concat(), "讨论目标");
    }
}
