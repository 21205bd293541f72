//! Session files imported again: the new messages of a grown session written to its timeline,
//! a session that continues another joining its timeline, and the names of subagents' branches.

use super::write::{Place, insert_messages};
use crate::error::{Error, Result};
use crate::interchange::{Conversation, Format, Kinds, Msg, claude_code};
use crate::model::file::{AuditEntry, ImportRecord};
use crate::model::{Branch, ROOT, Role, node_id, parse_node_id, parse_timeline_id, timeline_id};
use crate::ops::results::{ImportStatus, ImportedConversation};
use crate::store::Tx;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};

/// A free branch name: `agent-ID` for a subagent's branch when it is free, else `PREFIX-N`, the
/// first N free.
fn free_name(tx: &mut dyn Tx, tl: u64, agent: Option<String>, prefix: &str) -> Result<String> {
    if let Some(agent) = agent {
        let name = format!("agent-{agent}");
        // A branch name has no "/"; an ID that is not a short name of its own is not used.
        if !agent.is_empty()
            && agent.len() <= 128
            && !agent.contains('/')
            && tx.branch(tl, &name)?.is_none()
        {
            return Ok(name);
        }
    }
    let mut k = 1u64;
    loop {
        let name = format!("{prefix}-{k}");
        if tx.branch(tl, &name)?.is_none() {
            return Ok(name);
        }
        k += 1;
    }
}

/// After a session became a new timeline: each branch that ends in a subagent's message is named
/// after it (`agent-ID`), or `sidechain-N` for a sidechain of the session file, instead of
/// `edit-N`. `branches` is the import's list of them.
pub(super) fn name_agent_branches(tx: &mut dyn Tx, tl: u64, branches: &mut [String]) -> Result<()> {
    for name in branches.iter_mut() {
        let Some(branch) = tx.branch(tl, name)? else {
            continue;
        };
        let Some(row) = tx.node(tl, branch.head)? else {
            continue;
        };
        let provenance = row.node.provenance.as_deref();
        let agent = claude_code::agent_of_node(provenance);
        let prefix = if agent.is_some() {
            "agent"
        } else if claude_code::is_sidechain_node(provenance) {
            "sidechain"
        } else {
            continue;
        };
        let new = free_name(tx, tl, agent, prefix)?;
        tx.rename_branch(tl, name, &new)?;
        *name = new;
    }
    Ok(())
}

/// What an import looks up about the format's earlier imports, each part read the first time it is
/// needed and then kept up to date by the import's own writes: which sessions recorded which
/// message source IDs (only when a new session appears, so an import of unchanged or grown
/// sessions never reads it), and which sessions went to which timeline (for updates).
#[derive(Default)]
pub(super) struct Index {
    ids: Option<HashMap<String, Vec<String>>>,
    timelines: Option<HashMap<String, Vec<String>>>,
}

impl Index {
    /// The sessions whose imports went to timeline `tl` ("tlN").
    fn keys_in(&mut self, tx: &mut dyn Tx, format: Format, tl: &str) -> Result<Vec<String>> {
        if self.timelines.is_none() {
            let mut map: HashMap<String, Vec<String>> = HashMap::new();
            for k in tx.import_digests(format.as_str())? {
                let keys = map.entry(k.timeline).or_default();
                if !keys.contains(&k.source_key) {
                    keys.push(k.source_key);
                }
            }
            self.timelines = Some(map);
        }
        Ok(self
            .timelines
            .as_ref()
            .and_then(|m| m.get(tl))
            .cloned()
            .unwrap_or_default())
    }

    fn map(&mut self, tx: &mut dyn Tx, format: Format) -> Result<&HashMap<String, Vec<String>>> {
        if self.ids.is_none() {
            let mut keys: Vec<String> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for k in tx.import_digests(format.as_str())? {
                if seen.insert(k.source_key.clone()) {
                    keys.push(k.source_key);
                }
            }
            let mut map = HashMap::new();
            for key in keys {
                for record in tx.imports_of(format.as_str(), &key)? {
                    add_ids(&mut map, &key, &record.message_ids);
                }
            }
            self.ids = Some(map);
        }
        Ok(self.ids.get_or_insert_with(HashMap::new))
    }

    /// Record that session `key` wrote the messages `ids` into timeline `tl`.
    pub(super) fn add(&mut self, key: &str, tl: &str, ids: &[Option<String>]) {
        if let Some(map) = &mut self.ids {
            add_ids(map, key, ids);
        }
        if let Some(map) = &mut self.timelines {
            let keys = map.entry(tl.to_string()).or_default();
            if !keys.iter().any(|k| k == key) {
                keys.push(key.to_string());
            }
        }
    }
}

fn add_ids(map: &mut HashMap<String, Vec<String>>, key: &str, ids: &[Option<String>]) {
    for id in ids.iter().flatten() {
        let keys = map.entry(id.clone()).or_default();
        if !keys.iter().any(|k| k == key) {
            keys.push(key.to_string());
        }
    }
}

/// The session whose timeline a session imported for the first time joins, and that session's
/// latest import: for Claude Code, one that recorded a message of it (a session resumed into a
/// new file starts with copies of the earlier session's lines, `uuid` and all); for Codex, the
/// session it is a fork of (`forked_from_id`), or an imported fork of it (the fork's first
/// message names it; the deepest message they share is what is looked up, since every Codex
/// session starts with the same instructions).
pub(super) fn joined(
    tx: &mut dyn Tx,
    format: Format,
    source_key: &str,
    forked_from: Option<&str>,
    conversation: &Conversation,
    index: &mut Index,
) -> Result<Option<(String, ImportRecord)>> {
    let latest = |tx: &mut dyn Tx, key: &str| -> Result<Option<ImportRecord>> {
        Ok(tx.imports_of(format.as_str(), key)?.pop())
    };
    match format {
        Format::ClaudeCode => {
            let map = index.map(tx, format)?;
            let mut others: Vec<String> = Vec::new();
            for m in &conversation.messages {
                let Some(keys) = m.source_id.as_deref().and_then(|id| map.get(id)) else {
                    continue;
                };
                for k in keys {
                    if k != source_key && !others.contains(k) {
                        others.push(k.clone());
                    }
                }
            }
            // The first session that holds one of its messages as it is (a resumed session's
            // copied lines); one that only reused uuids for other messages is not joined.
            for key in others {
                let Some(record) = latest(tx, &key)? else {
                    continue;
                };
                if shares_a_message(tx, format, &key, &record.timeline, conversation)? {
                    return Ok(Some((key, record)));
                }
            }
            Ok(None)
        }
        Format::Codex => {
            if let Some(parent) = forked_from.filter(|p| *p != source_key)
                && let Some(record) = latest(tx, parent)?
            {
                return Ok(Some((parent.to_string(), record)));
            }
            let map = index.map(tx, format)?;
            let Some(keys) = conversation
                .messages
                .iter()
                .rev()
                .find_map(|m| map.get(m.source_id.as_deref()?))
                .cloned()
            else {
                return Ok(None);
            };
            for key in keys.iter().filter(|k| *k != source_key) {
                let records = tx.imports_of(format.as_str(), key)?;
                let Some(first) = records.first() else {
                    continue;
                };
                let (Some(tl), Some(n)) = (
                    parse_timeline_id(&first.timeline),
                    parse_node_id(&first.first_node),
                ) else {
                    continue;
                };
                let provenance = tx.node(tl, n)?.and_then(|r| r.node.provenance);
                let from = crate::interchange::original_field(
                    provenance.as_deref(),
                    Format::Codex,
                    "forked_from",
                );
                if from.as_ref().and_then(Value::as_str) == Some(source_key)
                    && let Some(record) = records.last()
                {
                    return Ok(Some((key.clone(), record.clone())));
                }
            }
            Ok(None)
        }
        _ => Ok(None),
    }
}

/// Whether a message of `conversation` is one that session `key` wrote into the timeline
/// `shown_tl`: the same role and text (see [`is_same`]; where it hangs is checked as it is
/// written).
fn shares_a_message(
    tx: &mut dyn Tx,
    format: Format,
    key: &str,
    shown_tl: &str,
    conversation: &Conversation,
) -> Result<bool> {
    let Some(tl) = parse_timeline_id(shown_tl) else {
        return Ok(false);
    };
    let mut nodes: HashMap<String, (u64, u64)> = HashMap::new();
    for record in tx.imports_of(format.as_str(), key)? {
        if record.timeline != shown_tl {
            continue;
        }
        let first = parse_node_id(&record.first_node).unwrap_or(ROOT);
        for (k, id) in record.message_ids.iter().enumerate() {
            if let Some(id) = id {
                let n = first + k as u64;
                nodes.entry(id.clone()).or_insert((n, n)).1 = n;
            }
        }
    }
    if tx.timeline(tl)?.is_none() {
        return Ok(false);
    }
    for msg in &conversation.messages {
        let Some(&range) = msg.source_id.as_ref().and_then(|id| nodes.get(id)) else {
            continue;
        };
        if is_same(tx, tl, msg, range, None)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Whether message `msg` is what the nodes `first..=last` (its parts) of timeline `tl` hold: the
/// same role and text, and, when `parent` is given (but for a summary, which hangs from the
/// root), the first part below `parent`, the node its parent message is (`Some(None)`: its parent
/// is not there).
fn is_same(
    tx: &mut dyn Tx,
    tl: u64,
    msg: &Msg,
    (first, last): (u64, u64),
    parent: Option<Option<u64>>,
) -> Result<bool> {
    let mut text = String::new();
    for n in first..=last {
        let row = super::existing(tx, tl, n)?;
        if row.node.role != msg.role {
            return Ok(false);
        }
        if n == first
            && msg.role != Role::Summary
            && parent.is_some_and(|p| p != Some(row.node.parent))
        {
            return Ok(false);
        }
        text.push_str(&row.node.text);
        if text.len() > msg.text.len() {
            return Ok(false);
        }
    }
    Ok(text == msg.text)
}

/// A session imported before whose file changed, or a new one that joins the timeline of a
/// session it continues (`joined`).
pub(super) struct Update<'a> {
    pub format: Format,
    pub source_id: Option<&'a str>,
    pub source_key: &'a str,
    pub digest: &'a str,
    pub latest: &'a ImportRecord,
    pub now: u64,
    /// The session whose timeline a new session joins; its new paths are branches `fork-N`
    /// (Codex) or named as edits are.
    pub joined: Option<&'a str>,
}

/// What an update did.
pub(super) enum Updated {
    /// The result's entry for the session, and how many nodes were added.
    Added(Box<ImportedConversation>, u64),
    /// Nothing new: every message is in the timeline already (with the session it joined).
    Unchanged(Option<String>),
    /// Nothing was written, for this reason.
    Skipped(String),
}

/// Add the messages of `conversation` that no earlier import of the session wrote to the timeline
/// of its latest import.
pub(super) fn update(
    tx: &mut dyn Tx,
    update: &Update,
    conversation: &Conversation,
    kinds: &mut Kinds,
    index: &mut Index,
) -> Result<Updated> {
    let shown_tl = &update.latest.timeline;
    let Some(tl) = parse_timeline_id(shown_tl) else {
        return Err(Error::damaged(format!(
            "the database is damaged: an import record names the timeline {shown_tl:?}"
        )));
    };
    let Some(timeline) = tx.timeline(tl)? else {
        return Ok(Updated::Skipped(format!(
            "its earlier import went to {shown_tl}, which is no longer there"
        )));
    };
    // Source ID -> the nodes holding its first and last part, over every import into the
    // timeline of the sessions it shares the timeline with (resumed, forked) and then of the
    // session itself, whose own IDs win.
    let mut keys: Vec<String> = index
        .keys_in(tx, update.format, shown_tl)?
        .into_iter()
        .filter(|k| k != update.source_key)
        .collect();
    keys.push(update.source_key.to_string());
    let mut nodes: HashMap<String, (u64, u64)> = HashMap::new();
    let mut own: HashSet<String> = HashSet::new();
    for key in &keys {
        let mine = key == update.source_key;
        let mut found: HashMap<String, (u64, u64)> = HashMap::new();
        for record in tx.imports_of(update.format.as_str(), key)? {
            if record.timeline != *shown_tl {
                continue;
            }
            let first = parse_node_id(&record.first_node).unwrap_or(ROOT);
            for (k, id) in record.message_ids.iter().enumerate() {
                if let Some(id) = id {
                    let n = first + k as u64;
                    found.entry(id.clone()).or_insert((n, n)).1 = n;
                }
            }
        }
        if mine {
            own.extend(found.keys().cloned());
        }
        nodes.extend(found);
    }
    let messages = &conversation.messages;
    // The node (its last part) each message already is. A Claude Code message whose uuid only
    // another session recorded is that session's message only when it is the same: the same
    // role and text, below the same node. Sessions that reuse uuids for other messages are
    // joined where they agree, and the rest is written as new messages and reported.
    let mut old_of: Vec<Option<u64>> = vec![None; messages.len()];
    let mut reused: Vec<String> = Vec::new();
    for (i, msg) in messages.iter().enumerate() {
        let Some(id) = msg.source_id.as_ref() else {
            continue;
        };
        let Some(&(first, last)) = nodes.get(id) else {
            continue;
        };
        if own.contains(id) || update.format != Format::ClaudeCode {
            old_of[i] = Some(last);
            continue;
        }
        // A message whose parent the file does not hold may hang anywhere.
        let parent = msg.parent.map(|p| old_of[p]);
        if is_same(tx, tl, msg, (first, last), parent)? {
            old_of[i] = Some(last);
        } else if !reused.contains(id) {
            reused.push(id.clone());
        }
    }
    let mut sub = Conversation {
        title: conversation.title.clone(),
        ..Conversation::default()
    };
    let mut outside: Vec<Option<Place>> = Vec::new();
    let mut new_index: Vec<Option<usize>> = vec![None; messages.len()];
    for (i, msg) in messages.iter().enumerate() {
        if old_of[i].is_some() {
            continue;
        }
        let (parent, below) = match msg.parent {
            None => (None, None),
            Some(p) => match new_index[p] {
                Some(q) => (Some(q), None),
                None => {
                    let n = old_of[p].unwrap_or(ROOT);
                    let row = super::existing(tx, tl, n)?;
                    if row.node.cold {
                        return Ok(Updated::Skipped(format!(
                            "its new messages continue {} of {shown_tl}, which is archived; restore its branch (tl restore-branch) and import again",
                            node_id(n)
                        )));
                    }
                    let place = Place {
                        id: n,
                        prefix_tokens: row.prefix_tokens,
                        depth: row.depth,
                    };
                    (None, Some(place))
                }
            },
        };
        new_index[i] = Some(sub.messages.len());
        sub.messages.push(Msg {
            parent,
            ..msg.clone()
        });
        outside.push(below);
    }
    if sub.messages.is_empty() {
        return Ok(Updated::Unchanged(update.joined.map(str::to_string)));
    }
    let root = Place {
        id: ROOT,
        prefix_tokens: 0,
        depth: 0,
    };
    let written = insert_messages(
        tx,
        tl,
        timeline.next_node,
        root,
        &outside,
        (update.format, update.now),
        &sub,
        kinds,
    )?;
    // The new leaves, the session's last message first: each moves the branch whose head it
    // continues, or gets a branch of its own.
    // Summaries are neither leaves nor parents.
    let summary = |i: usize| sub.messages[i].role == Role::Summary;
    let mut has_child = vec![false; sub.messages.len()];
    for (i, m) in sub.messages.iter().enumerate() {
        if let Some(p) = m.parent
            && !summary(i)
        {
            has_child[p] = true;
        }
    }
    let last = (0..sub.messages.len()).rev().find(|&i| !summary(i));
    let leaves = last.into_iter().chain(
        (0..sub.messages.len()).filter(|&i| !has_child[i] && !summary(i) && Some(i) != last),
    );
    let mut branches = tx.branches(tl)?;
    let mut moved: Vec<String> = Vec::new();
    for leaf in leaves {
        let mut top = leaf;
        while let Some(p) = sub.messages[top].parent {
            top = p;
        }
        let from = outside[top].map_or(ROOT, |p| p.id);
        let head = written.ends[leaf];
        let name = match branches
            .iter_mut()
            .find(|b| b.head == from && from != ROOT && !moved.contains(&b.name))
        {
            Some(branch) => {
                branch.head = head;
                branch.name.clone()
            }
            None => {
                let leaf_provenance = sub.messages[leaf].provenance.as_deref();
                let prefix = match sub.messages[top].role {
                    _ if update.joined.is_some() && update.format == Format::Codex => "fork",
                    _ if claude_code::is_sidechain_node(leaf_provenance) => "sidechain",
                    Role::User => "edit",
                    Role::Assistant => "regen",
                    _ => "alt",
                };
                let agent = claude_code::agent_of_node(leaf_provenance);
                let name = free_name(tx, tl, agent, prefix)?;
                branches.push(Branch {
                    name: name.clone(),
                    head,
                    watermark: ROOT,
                });
                name
            }
        };
        if let Some(branch) = branches.iter().find(|b| b.name == name) {
            tx.put_branch(tl, branch)?;
        }
        moved.push(name);
    }
    let touched = conversation
        .update_time_ms
        .map_or(update.now, |ms| ms / 1000);
    tx.touch_timeline(tl, touched.max(timeline.updated_at.unwrap_or(0)))?;
    let record = ImportRecord {
        format: update.format.as_str().into(),
        source_key: update.source_key.to_string(),
        digest: update.digest.to_string(),
        timeline: timeline_id(tl),
        branch: None,
        first_node: node_id(written.first),
        nodes: written.nodes,
        title: conversation.title.clone(),
        create_time_ms: conversation.create_time_ms,
        update_time_ms: conversation.update_time_ms,
        message_ids: written.ids.clone(),
        message_times_ms: if written.times.iter().all(Option::is_none) {
            Vec::new()
        } else {
            written.times.clone()
        },
        ts: update.now,
    };
    tx.put_import(&record)?;
    index.add(update.source_key, &record.timeline, &record.message_ids);
    let mut summary = Map::new();
    summary.insert("format".into(), json!(update.format.as_str()));
    if let Some(id) = update.source_id {
        summary.insert("source_id".into(), json!(id));
    }
    if let Some(title) = &conversation.title {
        summary.insert("title".into(), json!(title));
    }
    summary.insert("messages".into(), json!(written.nodes));
    tx.append_audit(
        update.now,
        AuditEntry {
            op: "import".into(),
            timeline: Some(timeline_id(tl)),
            from: Some(node_id(written.first)),
            to: Some(node_id(written.first + written.nodes - 1)),
            result: Some(Value::Object(summary)),
            ..AuditEntry::default()
        },
    )?;
    let entry = ImportedConversation {
        timeline_id: timeline_id(tl),
        source_id: update.source_id.map(str::to_string),
        title: conversation.title.clone(),
        create_time_ms: None,
        messages: written.nodes,
        from: None,
        branches: moved,
        earlier_import: None,
        joined: update.joined.map(str::to_string),
        reused_ids: reused,
        status: ImportStatus::Updated,
    };
    Ok(Updated::Added(Box::new(entry), written.nodes))
}
