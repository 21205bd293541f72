//! Session formats (`Format::is_session`: a tool's own JSONL files, one session a file), kept up to
//! date: a file is one conversation keyed by its session ID and digested whole, so an unchanged file
//! is recognised by one index lookup of its digest, and a file that grew is an update of the
//! timeline its first import made. An update writes only the messages whose source IDs (the lines'
//! `uuid`) no earlier import of the session recorded, below the nodes those became; the old nodes
//! keep their IDs, and the branches whose heads the new messages continue move along.

use super::prepared::{Content, Prepared};
use super::write::{Place, insert_messages};
use crate::error::{Error, Result};
use crate::interchange::{
    Conversation, Format, Kinds, MAX_CONVERSATION_BYTES, Msg, claude_code, codex, gemini, llm,
};
use crate::model::file::{AuditEntry, ImportRecord};
use crate::model::{Branch, ROOT, Role, node_id, parse_node_id, parse_timeline_id, timeline_id};
use crate::store::Tx;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The earlier imports of the format by digest.
pub(super) type Known = HashMap<String, crate::model::KnownImport>;

/// Folders deeper than this below the input are not searched (a loop of links cannot be walked
/// forever; links to folders are not followed either).
const MAX_FOLDER_DEPTH: usize = 16;

/// Call `each` with every session file of `path` (a file, or a folder searched for them), in
/// path order, read and converted; `quiet`: no progress bar.
pub(super) fn read(
    format: Format,
    path: &Path,
    known: &Known,
    quiet: bool,
    each: &mut dyn FnMut(Prepared) -> Result<()>,
) -> Result<()> {
    if format == Format::Llm {
        return read_llm(path, known, quiet, each);
    }
    let shown = path.display().to_string();
    let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::invalid(format!(
            "invalid argument --input: {shown} does not exist; pass a session's .jsonl or a folder of them"
        )),
        _ => Error::invalid(format!("invalid argument --input: cannot read {shown}: {e}")),
    })?;
    let files = if meta.is_dir() {
        let mut files = Vec::new();
        collect(format, path, 0, &mut files);
        files.sort();
        if files.is_empty() {
            return Err(Error::invalid(format!(
                "invalid argument --input: the folder {shown} holds no session files (*.jsonl); pass {} itself or the folder that holds them",
                format.label()
            )));
        }
        files
    } else if meta.is_file() {
        vec![path.to_path_buf()]
    } else {
        return Err(Error::invalid(format!(
            "invalid argument --input: {shown} is not a regular file (a pipe, a device or a socket); an import reads regular files only, so copy the data into a file and import that; nothing was imported"
        )));
    };
    let bar = Bar::new(files.len() as u64, "sessions", quiet);
    for file in files {
        let name = file
            .strip_prefix(path)
            .ok()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(&file)
            .display()
            .to_string();
        each(prepare(format, &file, name, known))?;
        bar.0.inc(1);
    }
    Ok(())
}

/// A progress bar on standard error over many files or conversations: drawn only on a terminal
/// (indicatif hides it otherwise, so a pipe or a log file gets nothing) and cleared when dropped,
/// also when the import stops on an error. `--quiet` hides it on a terminal too.
struct Bar(indicatif::ProgressBar);

impl Bar {
    fn new(len: u64, what: &str, quiet: bool) -> Bar {
        if len < 2 || quiet {
            return Bar(indicatif::ProgressBar::hidden());
        }
        let bar = indicatif::ProgressBar::new(len);
        let template = format!("importing {{bar:30}} {{pos}}/{{len}} {what} · {{elapsed}}");
        if let Ok(style) = indicatif::ProgressStyle::with_template(&template) {
            bar.set_style(style);
        }
        Bar(bar)
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.0.finish_and_clear();
    }
}

/// The session files below `dir`, `depth` levels down.
fn collect(format: Format, dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        // The entry's own type: a link is neither followed into a folder nor read as a file.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() && depth < MAX_FOLDER_DEPTH {
            collect(format, &path, depth + 1, out);
        } else if kind.is_file() && is_session_file(format, &path) {
            out.push(path);
        }
    }
}

/// The conversations of an llm `logs.db` (the file, or a folder holding it), opened read-only,
/// one at a time: each digested from its rows and passed over when an earlier import had them all.
fn read_llm(
    path: &Path,
    known: &Known,
    quiet: bool,
    each: &mut dyn FnMut(Prepared) -> Result<()>,
) -> Result<()> {
    let file = if path.is_dir() {
        path.join("logs.db")
    } else {
        path.to_path_buf()
    };
    let shown = file.display().to_string();
    let meta = std::fs::metadata(&file).map_err(|e| {
        Error::invalid(format!(
            "invalid argument --input: cannot read {shown}: {e}"
        ))
    })?;
    if !meta.is_file() {
        return Err(Error::invalid(format!(
            "invalid argument --input: {shown} is not a regular file; pass llm's logs.db"
        )));
    }
    let refused = |reason: String| {
        Error::invalid(format!(
            "invalid argument --input: {shown} is not an llm logs.db: {reason}; nothing was imported"
        ))
    };
    let conn = llm::open(&file).map_err(refused)?;
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let conversations = llm::conversations(&conn).map_err(refused)?;
    let groups = if llm::has_message_store(&conn) {
        llm::thread_groups(&conn).map_err(refused)?
    } else {
        Vec::new()
    };
    let total = conversations.len() + groups.len();
    let bar = Bar::new(total as u64, "conversations", quiet);
    let count = conversations.len();
    for (index, (id, title)) in conversations.into_iter().enumerate() {
        let rows = llm::rows(&conn, &id).map_err(refused)?;
        let mut hasher = Sha256::new();
        hasher.update(Format::Llm.as_str().as_bytes());
        hasher.update([0]);
        hasher.update(id.as_bytes());
        for row in &rows {
            hasher.update([0]);
            hasher.update(row.to_json().to_string().as_bytes());
        }
        let digest = crate::ops::hex(&hasher.clone().finalize());
        let content = match known.get(&digest) {
            Some(k) => Content::Unchanged(k.clone()),
            None => Content::Ready(llm::convert(title.as_deref(), &rows)),
        };
        let title = match &content {
            Content::Ready(c) => c.title.clone(),
            _ => title,
        };
        each(Prepared {
            file: name.clone(),
            index,
            source_id: Some(id),
            title,
            hasher,
            content,
            forked_from: None,
        })?;
        bar.0.inc(1);
    }
    // The message store: a thread and its forks, digested from their messages.
    for (k, (id, threads)) in groups.into_iter().enumerate() {
        let messages = llm::thread_messages(&conn, &threads).map_err(refused)?;
        let mut hasher = Sha256::new();
        hasher.update(Format::Llm.as_str().as_bytes());
        hasher.update([0]);
        hasher.update(b"thread:");
        hasher.update(id.as_bytes());
        for thread in &threads {
            hasher.update([0]);
            hasher.update(
                json!([thread.id, thread.name, thread.tip])
                    .to_string()
                    .as_bytes(),
            );
        }
        for m in &messages {
            hasher.update([0]);
            hasher.update(m.to_json().to_string().as_bytes());
        }
        let digest = crate::ops::hex(&hasher.clone().finalize());
        let content = match known.get(&digest) {
            Some(k) => Content::Unchanged(k.clone()),
            None => Content::Ready(llm::convert_threads(&threads, &messages)),
        };
        let title = match &content {
            Content::Ready(c) => c.title.clone(),
            Content::Unchanged(k) => k.title.clone(),
            _ => None,
        };
        each(Prepared {
            file: name.clone(),
            index: count + k,
            source_id: Some(id),
            title,
            hasher,
            content,
            forked_from: None,
        })?;
        bar.0.inc(1);
    }
    Ok(())
}

/// Whether a file found in a folder is a session file of `format`.
fn is_session_file(format: Format, path: &Path) -> bool {
    match format {
        Format::Codex => codex::is_session_file(path),
        Format::GeminiCli => gemini::is_session_file(path),
        _ => claude_code::is_session_file(path),
    }
}

/// Where `format` keeps its sessions when no input is given, and how the error names it.
pub(super) fn default_dir(format: Format) -> Option<(PathBuf, &'static str)> {
    match format {
        Format::ClaudeCode => claude_code::default_dir().map(|d| {
            (
                d,
                "Claude Code sessions at {}, where they are kept by default ($CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects)",
            )
        }),
        Format::Codex => codex::default_dir().map(|d| {
            (
                d,
                "Codex sessions at {}, where they are kept by default ($CODEX_HOME/sessions, else ~/.codex/sessions)",
            )
        }),
        Format::Llm => llm::default_path().map(|d| {
            (
                d,
                "llm logs at {}, where llm keeps them by default ($LLM_USER_PATH/logs.db, else io.datasette.llm/logs.db in your configuration folder)",
            )
        }),
        Format::GeminiCli => gemini::default_dir().map(|d| {
            (
                d,
                "Gemini CLI sessions at {}, where they are kept (~/.gemini/tmp/PROJECT/chats)",
            )
        }),
        _ => None,
    }
}

/// One session file read and converted (or why not).
fn prepare(format: Format, file: &Path, name: String, known: &Known) -> Prepared {
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut hasher = Sha256::new();
    hasher.update(format.as_str().as_bytes());
    hasher.update([0]);
    let unread = |reason: String, hasher: Sha256| Prepared {
        file: name.clone(),
        index: 0,
        source_id: Some(stem.clone()),
        title: None,
        hasher,
        content: Content::Unread(reason),
        forked_from: None,
    };
    let mut bytes = Vec::new();
    let read = std::fs::File::open(file)
        .and_then(|f| f.take(MAX_CONVERSATION_BYTES + 1).read_to_end(&mut bytes));
    if let Err(e) = read {
        return unread(format!("it cannot be read: {e}"), hasher);
    }
    if bytes.len() as u64 > MAX_CONVERSATION_BYTES {
        return unread(
            format!(
                "it is over {} MiB, the limit for one conversation",
                MAX_CONVERSATION_BYTES >> 20
            ),
            hasher,
        );
    }
    hasher.update(&bytes);
    let Ok(text) = std::str::from_utf8(&bytes) else {
        return unread("it is not UTF-8 text".into(), hasher);
    };
    // Its subagents (`<session>/subagents/agent-ID.jsonl`) belong to it: read, digested and
    // counted against the same limit.
    let mut agents = Vec::new();
    let mut total = bytes.len() as u64;
    for (id, path) in subagent_files(file, &stem) {
        let mut agent = Vec::new();
        let read = std::fs::File::open(&path)
            .and_then(|f| f.take(MAX_CONVERSATION_BYTES + 1).read_to_end(&mut agent));
        if let Err(e) = read {
            return unread(
                format!("its subagent {} cannot be read: {e}", path.display()),
                hasher,
            );
        }
        total += agent.len() as u64;
        if total > MAX_CONVERSATION_BYTES {
            return unread(
                format!(
                    "with its subagents it is over {} MiB, the limit for one conversation",
                    MAX_CONVERSATION_BYTES >> 20
                ),
                hasher,
            );
        }
        hasher.update([0]);
        hasher.update(id.as_bytes());
        hasher.update([0]);
        hasher.update(&agent);
        match String::from_utf8(agent) {
            Ok(text) => agents.push((id, text)),
            Err(_) => {
                return unread(
                    format!("its subagent {} is not UTF-8 text", path.display()),
                    hasher,
                );
            }
        }
    }
    let digest = crate::ops::hex(&hasher.clone().finalize());
    if let Some(k) = known.get(&digest) {
        return Prepared {
            file: name,
            index: 0,
            source_id: Some(k.source_key.clone()),
            title: k.title.clone(),
            hasher,
            content: Content::Unchanged(k.clone()),
            forked_from: None,
        };
    }
    let mut forked_from = None;
    let (session, content) = match format {
        Format::ClaudeCode => match claude_code::convert(text, &agents) {
            Ok((session, conversation)) => (session, Content::Ready(conversation)),
            Err(reason) => (None, Content::Mismatch(reason)),
        },
        Format::Codex => match codex::convert(text) {
            Ok((meta, conversation)) => {
                forked_from = meta.forked_from;
                (meta.id, Content::Ready(conversation))
            }
            Err(reason) => (None, Content::Mismatch(reason)),
        },
        Format::GeminiCli => match gemini::convert(text) {
            Ok((session, conversation)) => (session, Content::Ready(conversation)),
            Err(reason) => (None, Content::Mismatch(reason)),
        },
        _ => (None, Content::Mismatch("not a session format".into())),
    };
    let title = match &content {
        Content::Ready(c) => c.title.clone(),
        _ => None,
    };
    Prepared {
        file: name,
        index: 0,
        source_id: Some(session.unwrap_or(stem)),
        title,
        hasher,
        content,
        forked_from,
    }
}

/// The subagent transcripts of the session file `file` (its `stem`), as (agent ID, path), by ID:
/// `<folder>/<stem>/subagents/agent-ID.jsonl`, regular files only; Claude Code's own compaction
/// agents (`agent-acompact-*`) repeat the session and are left out.
fn subagent_files(file: &Path, stem: &str) -> Vec<(String, PathBuf)> {
    let Some(dir) = file.parent().map(|d| d.join(stem).join("subagents")) else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut out: Vec<(String, PathBuf)> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|e| {
            let path = e.path();
            let name = path.file_name()?.to_str()?;
            let id = name.strip_prefix("agent-")?.strip_suffix(".jsonl")?;
            (!id.starts_with("acompact")).then(|| (id.to_string(), path.clone()))
        })
        .collect();
    out.sort();
    out
}

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
            let other = conversation.messages.iter().find_map(|m| {
                let keys = map.get(m.source_id.as_deref()?)?;
                keys.iter().find(|k| *k != source_key).cloned()
            });
            match other {
                Some(key) => Ok(latest(tx, &key)?.map(|r| (key, r))),
                None => Ok(None),
            }
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
    Added(Value, u64),
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
        return Err(Error::database(format!(
            "the database is damaged: an import record names the timeline {shown_tl:?}; run tl db check"
        )));
    };
    let Some(timeline) = tx.timeline(tl)? else {
        return Ok(Updated::Skipped(format!(
            "its earlier import went to {shown_tl}, which is no longer there"
        )));
    };
    // Source ID -> the node holding its last part, over every import into the timeline of the
    // session and of the sessions it shares the timeline with (resumed, forked).
    let mut keys = vec![update.source_key.to_string()];
    for k in index.keys_in(tx, update.format, shown_tl)? {
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut nodes: HashMap<String, u64> = HashMap::new();
    for key in &keys {
        for record in tx.imports_of(update.format.as_str(), key)? {
            if record.timeline != *shown_tl {
                continue;
            }
            let first = parse_node_id(&record.first_node).unwrap_or(ROOT);
            for (k, id) in record.message_ids.iter().enumerate() {
                if let Some(id) = id {
                    nodes.insert(id.clone(), first + k as u64);
                }
            }
        }
    }
    let messages = &conversation.messages;
    let old = |m: &Msg| m.source_id.as_ref().and_then(|id| nodes.get(id)).copied();
    let mut sub = Conversation {
        title: conversation.title.clone(),
        ..Conversation::default()
    };
    let mut outside: Vec<Option<Place>> = Vec::new();
    let mut new_index: Vec<Option<usize>> = vec![None; messages.len()];
    for (i, msg) in messages.iter().enumerate() {
        if old(msg).is_some() {
            continue;
        }
        let (parent, below) = match msg.parent {
            None => (None, None),
            Some(p) => match new_index[p] {
                Some(q) => (Some(q), None),
                None => {
                    let n = old(&messages[p]).unwrap_or(ROOT);
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
        return Ok(Updated::Skipped(match update.joined {
            Some(other) => {
                format!("its messages are all in {shown_tl} already, imported with session {other}")
            }
            None => format!("unchanged: no new messages since its import into {shown_tl}"),
        }));
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
    let mut entry = Map::new();
    entry.insert("timeline_id".into(), json!(timeline_id(tl)));
    if let Some(id) = update.source_id {
        entry.insert("source_id".into(), json!(id));
    }
    if let Some(title) = &conversation.title {
        entry.insert("title".into(), json!(title));
    }
    entry.insert("messages".into(), json!(written.nodes));
    entry.insert("branches".into(), json!(moved));
    if let Some(other) = update.joined {
        entry.insert("joined".into(), json!(other));
    }
    entry.insert("status".into(), json!("updated"));
    Ok(Updated::Added(Value::Object(entry), written.nodes))
}
