//! Claude Code session transcripts: one JSONL file per session under
//! `~/.claude/projects/<project>/<session>.jsonl` (or `$CLAUDE_CONFIG_DIR/projects`), one line per
//! event. The lines form a tree through `uuid`/`parentUuid`; this module turns one file into one
//! [`Conversation`] whose messages carry the line's `uuid` as their source ID, which is what lets a
//! later import of the grown file add only the new messages (`ops::import`).
//!
//! - `user` and `assistant` lines are messages, one node per line: the later lines of one API
//!   response (same `message.id`, each below the previous; Claude Code writes one line per content
//!   block) are continuations (provenance `part`: 2, 3, ...) that exports join to the message
//!   before them. So a session imported in the middle of a response and again later gives what
//!   one import of the whole file gives.
//! - Lines that are not messages but sit in the chain (`progress`, a `compact_boundary`, ...) are
//!   passed through: a line below them hangs from their parent (a compact boundary's
//!   `logicalParentUuid`), so the tree stays connected.
//! - A compact summary (`isCompactSummary`) is a summary ([`Role::Summary`]) of the path down to
//!   the message the compaction followed; the lines after it continue that message.
//! - A `summary` line titles the session (the last one wins); without one, the first prompt does.
//! - The lines of one turn with parallel tool calls (see [`Turn`]) are one stretch, in the order
//!   they were written, not a fork per call.
//! - A compact summary without the messages it summarizes (they are in another file) is the first
//!   message, its missing parent in the provenance.
//! - A line whose `uuid` was met already (a resumed session copies lines) is left out, unless the
//!   earlier one was no message (an event, a malformed line).
//! - Until a line names a parent, a message without one follows the message before it.
//! - Lines of another session are kept only where the file's own lines follow them.
//! - Lines of unknown types are counted in `kinds.skipped` by type; unreadable lines as
//!   `unreadable_line`; a `{"loglines": [...]}` object is read as its entries.

use super::anthropic::render_block;
use super::{Conversation, Format, Kinds, Msg, Rendering, iso_to_ms, tag_for};
use crate::model::{Intent, Role};
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// Where Claude Code keeps its sessions: `$CLAUDE_CONFIG_DIR/projects`, else `~/.claude/projects`.
pub fn default_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("CLAUDE_CONFIG_DIR").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir).join("projects"));
    }
    home().map(|h| h.join(".claude").join("projects"))
}

/// The user's home directory (`HOME`, on Windows `USERPROFILE`).
pub(crate) fn home() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .or_else(|| std::env::var_os("USERPROFILE"))
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// Whether a file found in a folder is a session transcript: `*.jsonl`, not a subagent's
/// (`<session>/subagents/agent-*.jsonl`, which is not a session of its own).
pub fn is_session_file(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "jsonl")
        && path
            .parent()
            .and_then(Path::file_name)
            .is_none_or(|n| n != "subagents")
}

/// One message being built from its line(s).
struct Pending {
    parent: Option<usize>,
    role: Role,
    original_role: Option<String>,
    blocks: Vec<Value>,
    uuid: String,
    api_id: Option<String>,
    model: Option<String>,
    time_ms: Option<u64>,
    compact_summary: bool,
    /// The subagent whose transcript holds it.
    agent: Option<String>,
    /// A sidechain line of the session file (a subagent's, in older versions).
    sidechain: bool,
    /// A compact summary's: the message the compaction followed, named but not in the file.
    missing_parent: Option<String>,
    /// The line's `sessionId`.
    session: Option<String>,
}

/// Where a line's `uuid` leads when a later line names it as its parent.
#[derive(Clone, Copy)]
enum Link {
    /// The message at this index.
    Message(usize),
    /// No message: the line hung from nothing we kept.
    Nothing,
}

/// What reading a session's lines has gathered so far.
#[derive(Default)]
struct Lines {
    kinds: Kinds,
    links: HashMap<String, Link>,
    pending: Vec<Pending>,
    session: Option<String>,
    summary_title: Option<String>,
    lines_read: u64,
    recognised: u64,
    first_ms: Option<u64>,
    last_ms: Option<u64>,
    /// A subagent's ID -> the message holding the tool call that started it.
    agents: HashMap<String, usize>,
    /// A tool call's `input.prompt` (a Task's) -> the message holding it: where a sidechain of
    /// the session file starts.
    prompts: HashMap<String, usize>,
    /// Of each message (by index): the assistant turn it is part of (see [`Turn`]).
    turn_of: Vec<Option<usize>>,
    turns: Vec<Turn>,
    /// Lines that named a parent the file does not hold -> that parent's `uuid`.
    missing: HashMap<String, String>,
    /// The `uuid`s of lines that are no messages (events, malformed lines): a message line with
    /// the same `uuid` later is read, not left out as a repeat.
    not_messages: HashSet<String>,
    /// Whether a line so far named a parent: until one does, a message without a parent link
    /// follows the message before it (a file without parent links is read in file order).
    linked: bool,
    /// The last message read of the session file.
    last: Option<usize>,
}

/// One API response with its tool calls and their results. Claude Code writes each further
/// line of a response (a parallel tool call) below the response's first line, beside that
/// call's result, and each result below its call; read as it is written that is a fork at
/// every parallel call. So the lines of a turn are chained in the order they are written, each
/// below the turn's last one, and what follows the turn hangs below its last line: one stretch
/// of one branch. Only earlier lines decide where a line goes, so a session imported between
/// two lines of a turn gives what one import of the whole file gives.
struct Turn {
    /// The response's `message.id`.
    api_id: String,
    /// The IDs of its tool calls.
    tools: HashSet<String>,
    /// The message written last of it.
    tail: usize,
}

/// The text of a line's `message.content` (a string, or its text blocks joined).
fn content_text(line: &Map<String, Value>) -> Option<String> {
    match line.get("message")?.get("content")? {
        Value::String(text) => Some(text.clone()),
        Value::Array(blocks) => Some(
            blocks
                .iter()
                .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n\n"),
        ),
        _ => None,
    }
}

/// The subagent ID a tool result names: its line's `toolUseResult.agentId`, else an
/// `agentId: ID` line of its text.
fn agent_of(line: &Map<String, Value>, blocks: &[Value]) -> Option<String> {
    if let Some(id) = line
        .get("toolUseResult")
        .and_then(|r| r.get("agentId"))
        .and_then(Value::as_str)
    {
        return Some(id.to_string());
    }
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_result"))
        .flat_map(|b| {
            let text = super::plain_text(b.get("content"));
            text.lines()
                .filter_map(|l| l.trim().strip_prefix("agentId:"))
                .map(|id| id.trim().to_string())
                .collect::<Vec<_>>()
        })
        .find(|id| !id.is_empty())
}

/// Whether a `user` or `assistant` line holds a message: `message.content`, a string or an array.
fn is_message(line: &Map<String, Value>) -> bool {
    matches!(
        line.get("message").and_then(|m| m.get("content")),
        Some(Value::String(_) | Value::Array(_))
    )
}

/// The IDs of the tool calls among `blocks`.
fn tool_calls(blocks: &[Value]) -> impl Iterator<Item = &str> {
    blocks
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .filter_map(|b| b.get("id").and_then(Value::as_str))
}

impl Lines {
    /// Where a message whose line names message `p` as its parent goes, and the turn it is part
    /// of: below the end of `p`'s turn, if `p` is part of one (see [`Turn`]).
    fn place(
        &self,
        p: usize,
        assistant: bool,
        api_id: Option<&str>,
        blocks: &[Value],
    ) -> (Option<usize>, Option<usize>) {
        let Some(t) = self.turn_of.get(p).copied().flatten() else {
            return (Some(p), None);
        };
        let turn = &self.turns[t];
        // A further line of the same response, or a message of nothing but results of its
        // calls, is part of the turn; anything else follows it.
        let member = if assistant {
            api_id == Some(turn.api_id.as_str())
        } else {
            !blocks.is_empty()
                && blocks.iter().all(|b| {
                    b.get("type").and_then(Value::as_str) == Some("tool_result")
                        && b.get("tool_use_id")
                            .and_then(Value::as_str)
                            .is_some_and(|id| turn.tools.contains(id))
                })
        };
        (Some(turn.tail), member.then_some(t))
    }

    /// Message `i` was pushed: it is the new end of `turn`, or an assistant message starts a
    /// turn of its own.
    fn join_turn(&mut self, i: usize, turn: Option<usize>, assistant: bool) {
        let api_id = self.pending[i].api_id.clone();
        let t = match (turn, api_id) {
            (Some(t), _) => t,
            (None, Some(api_id)) if assistant => {
                self.turns.push(Turn {
                    api_id,
                    tools: HashSet::new(),
                    tail: i,
                });
                self.turns.len() - 1
            }
            _ => {
                self.turn_of.push(None);
                return;
            }
        };
        let turn = &mut self.turns[t];
        turn.tail = i;
        turn.tools
            .extend(tool_calls(&self.pending[i].blocks).map(str::to_string));
        self.turn_of.push(Some(t));
    }

    /// Read one line; a line without a parent hangs from `root` (a subagent's tool call).
    fn line(&mut self, line: &str, root: Option<usize>, agent: Option<&str>) {
        if line.trim().is_empty() {
            return;
        }
        self.lines_read += 1;
        let Some(Value::Object(mut line)) = super::values::parse_line(line) else {
            self.kinds.skip("unreadable_line");
            return;
        };
        // A session as one JSON object `{"loglines": [...]}` (as Claude Code's web sessions are
        // fetched): its entries are the lines.
        if !line.contains_key("type")
            && let Some(Value::Array(entries)) = line.remove("loglines")
        {
            self.lines_read -= 1;
            for entry in entries {
                self.lines_read += 1;
                match entry {
                    Value::Object(entry) => self.entry(entry, root, agent),
                    _ => self.kinds.skip("unreadable_line"),
                }
            }
            return;
        }
        self.entry(line, root, agent);
    }

    /// Read one line's object.
    fn entry(&mut self, line: Map<String, Value>, root: Option<usize>, agent: Option<&str>) {
        let s = |key: &str| line.get(key).and_then(Value::as_str);
        let kind = s("type").unwrap_or("untyped").to_string();
        if self.session.is_none() {
            self.session = s("sessionId").map(str::to_string);
        }
        let time_ms = s("timestamp").and_then(iso_to_ms);
        if time_ms.is_some() {
            self.first_ms = self.first_ms.or(time_ms);
            self.last_ms = time_ms.max(self.last_ms);
        }
        let uuid = s("uuid").map(str::to_string);
        let message_line = matches!(kind.as_str(), "user" | "assistant") && is_message(&line);
        if let Some(u) = &uuid
            && self.links.contains_key(u)
            && !(message_line && self.not_messages.contains(u))
        {
            self.kinds.skip("repeated_line");
            self.recognised += 1;
            return;
        }
        // The message this line hangs from.
        let parent_key = s("parentUuid").or_else(|| s("logicalParentUuid"));
        self.linked |= parent_key.is_some();
        let sidechain = line.get("isSidechain") == Some(&json!(true));
        // An older session file holds its subagents' lines too (`isSidechain`): the first one,
        // the Task's prompt, hangs from the tool call that started it.
        let own_sidechain = sidechain && agent.is_none();
        let agent = agent.or(if sidechain { s("agentId") } else { None });
        let parent = match parent_key {
            None if sidechain && root.is_none() => content_text(&line)
                .and_then(|text| self.prompts.get(text.trim()))
                .copied(),
            // No parent link in the file so far: the message before it.
            None if !self.linked && agent.is_none() && !sidechain => self.last,
            None => root,
            Some(key) => match self.links.get(key) {
                Some(Link::Message(i)) => Some(*i),
                _ => None,
            },
        };
        // The message a line hangs from that the file does not hold (a compaction's
        // `logicalParentUuid` in a session continued from another file).
        let missing = parent_key.and_then(|key| match self.links.get(key) {
            None => Some(key.to_string()),
            Some(_) => self.missing.get(key).cloned(),
        });
        if parent.is_none()
            && let (Some(u), Some(m)) = (&uuid, &missing)
        {
            self.missing.insert(u.clone(), m.clone());
        }
        let mut prompts: Vec<String> = Vec::new();
        let link = match kind.as_str() {
            "summary" => {
                self.recognised += 1;
                if let Some(text) = s("summary").filter(|t| !t.trim().is_empty()) {
                    self.summary_title = Some(text.to_string());
                }
                return;
            }
            "user" | "assistant" if !message_line => {
                // No message to read (no `message.content`): kept as a link in the chain, and
                // a valid line with its `uuid` later is read.
                self.recognised += 1;
                self.kinds.skip("malformed_line");
                if let Some(u) = &uuid {
                    self.not_messages.insert(u.clone());
                }
                parent.map_or(Link::Nothing, Link::Message)
            }
            "user" | "assistant" => {
                self.recognised += 1;
                if let Some(u) = &uuid {
                    self.not_messages.remove(u);
                }
                let message = line.get("message");
                let m = |key: &str| {
                    message
                        .and_then(|m| m.get(key))
                        .and_then(Value::as_str)
                        .map(str::to_string)
                };
                let api_id = m("id");
                let blocks = match message.and_then(|m| m.get("content")) {
                    Some(Value::String(text)) => vec![json!({"type": "text", "text": text})],
                    Some(Value::Array(blocks)) => blocks.clone(),
                    _ => Vec::new(),
                };
                if let (Some(agent), Some(call)) = (agent_of(&line, &blocks), parent) {
                    self.agents.entry(agent).or_insert(call);
                }
                // A line named by its parent link goes below the end of the turn it names; the
                // first line of a subagent or sidechain hangs from its tool call itself.
                let (parent, turn) = match parent {
                    Some(p) if parent_key.is_some() => {
                        let assistant = kind == "assistant";
                        self.place(p, assistant, api_id.as_deref(), &blocks)
                    }
                    _ => (parent, None),
                };
                prompts = blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("tool_use"))
                    .filter_map(|b| b.get("input")?.get("prompt")?.as_str())
                    .map(|p| p.trim().to_string())
                    .collect();
                // A later line of the same API response is a node of its own (a continuation,
                // see `convert`): a session imported between two of its lines must give what a
                // fresh import gives, and nothing written is ever rewritten.
                if line.get("isCompactSummary") == Some(&json!(true)) {
                    // The summary of the conversation before a compaction: a summary of the path
                    // down to the message the compaction followed, which the lines after it
                    // continue (they name the summary's line as their parent).
                    // Without the messages it summarizes (they are in another file), it is the
                    // message Claude Code sent the model, and what follows hangs below it.
                    let unattached = parent.is_none();
                    self.pending.push(Pending {
                        parent,
                        role: if unattached {
                            Role::User
                        } else {
                            Role::Summary
                        },
                        original_role: None,
                        blocks,
                        uuid: uuid.clone().unwrap_or_default(),
                        api_id: None,
                        model: None,
                        time_ms,
                        compact_summary: true,
                        agent: agent.map(str::to_string),
                        sidechain: own_sidechain,
                        missing_parent: if unattached { missing } else { None },
                        session: s("sessionId").map(str::to_string),
                    });
                    self.turn_of.push(None);
                    if unattached {
                        Link::Message(self.pending.len() - 1)
                    } else {
                        parent.map_or(Link::Nothing, Link::Message)
                    }
                } else {
                    let original = m("role").unwrap_or_else(|| kind.clone());
                    let (role, original_role) = match original.as_str() {
                        "user" => (Role::User, None),
                        "assistant" => (Role::Assistant, None),
                        "system" => (Role::System, None),
                        _ => (Role::User, Some(original)),
                    };
                    self.pending.push(Pending {
                        parent,
                        role,
                        original_role,
                        blocks,
                        uuid: uuid.clone().unwrap_or_default(),
                        api_id,
                        model: m("model").filter(|m| !m.starts_with('<')),
                        time_ms,
                        compact_summary: false,
                        agent: agent.map(str::to_string),
                        sidechain: own_sidechain,
                        missing_parent: None,
                        session: s("sessionId").map(str::to_string),
                    });
                    let i = self.pending.len() - 1;
                    if agent.is_none() {
                        self.last = Some(i);
                    }
                    self.join_turn(i, turn, kind == "assistant");
                    Link::Message(i)
                }
            }
            // Events in the chain that are no messages: passed through to their parent.
            "system" | "progress" => {
                self.recognised += 1;
                if let Some(u) = &uuid {
                    self.not_messages.insert(u.clone());
                }
                let what = s("subtype").unwrap_or(kind.as_str()).to_string();
                self.kinds.skip(&what);
                parent.map_or(Link::Nothing, Link::Message)
            }
            "file-history-snapshot" => {
                self.recognised += 1;
                self.kinds.skip(&kind);
                return;
            }
            other => {
                if let Some(u) = &uuid {
                    self.not_messages.insert(u.clone());
                }
                self.kinds.skip(other);
                parent.map_or(Link::Nothing, Link::Message)
            }
        };
        if let Link::Message(i) = link {
            for prompt in prompts {
                self.prompts.entry(prompt).or_insert(i);
            }
        }
        if let Some(u) = uuid {
            self.links.insert(u, link);
        }
    }
}

/// The session's ID (its lines' `sessionId`) and its conversation, from the session file's lines
/// and its subagents' (ID, lines), each forked from the message whose tool call started it (a
/// subagent no tool result names starts from the root). The lines are read one at a time, so that
/// no file is held whole. `Err` when no line is a Claude Code line at all.
///
/// `own` is the session the file is named after (Claude Code names it by its `sessionId`): a
/// line of another session in it is kept only where a line of its own follows it (history a
/// resumed session copied), else left out and counted as `other_session_line`. When no line
/// carries `own`, the first line's `sessionId` is the file's session.
pub fn convert<I: Iterator<Item = String>>(
    lines: I,
    agents: Vec<(String, I)>,
    own: Option<&str>,
) -> Result<(Option<String>, Conversation), String> {
    let mut st = Lines::default();
    for line in lines {
        st.line(&line, None, None);
    }
    // The session's last message is the head of main, whatever its subagents add after it.
    let main_count = st.pending.len();
    for (id, lines) in agents {
        let root = st.agents.get(&id).copied();
        for line in lines {
            st.line(&line, root, Some(&id));
        }
    }
    let Lines {
        mut kinds,
        pending,
        session,
        summary_title,
        lines_read,
        recognised,
        first_ms,
        last_ms,
        ..
    } = st;
    if lines_read > 0 && recognised == 0 {
        return Err(
            "none of its lines is a Claude Code transcript line (user, assistant, summary, system)"
                .into(),
        );
    }
    let own = own
        .filter(|own| pending.iter().any(|p| p.session.as_deref() == Some(own)))
        .map(str::to_string)
        .or(session);
    // Which lines are kept: the session's own, and another session's that one of its own
    // follows. A parent is always read before its children.
    let mut kept_line: Vec<bool> = pending
        .iter()
        .map(|p| p.session.is_none() || p.session == own)
        .collect();
    for i in (0..pending.len()).rev() {
        if kept_line[i]
            && let Some(q) = pending[i].parent
        {
            kept_line[q] = true;
        }
    }
    let main_last = (0..main_count)
        .rev()
        .find(|&i| kept_line[i] && pending[i].role != Role::Summary);
    let mut conversation = Conversation {
        create_time_ms: first_ms,
        update_time_ms: last_ms,
        ..Conversation::default()
    };
    // Messages left empty (a line without content) are dropped; their children move up.
    let mut index: Vec<Option<usize>> = Vec::with_capacity(pending.len());
    // Of each message written: its API response's ID and which of that response's lines it is
    // (1 for the first): what makes a later line a continuation.
    let mut parts: Vec<(Option<String>, u64)> = Vec::with_capacity(pending.len());
    for (p, keep) in pending.into_iter().zip(kept_line) {
        let parent = p.parent.and_then(|i| index[i]);
        if !keep {
            kinds.skip("other_session_line");
            index.push(parent);
            continue;
        }
        // A line below a line of the same API response continues that message: exports join it
        // to the message before it (`Entry::is_continuation`), as one message.
        let part = match (parent, &p.api_id) {
            (Some(q), Some(id)) if parts[q].0.as_ref() == Some(id) => parts[q].1 + 1,
            _ => 1,
        };
        let mut r = Rendering::default();
        for block in &p.blocks {
            render_block(block, &mut r);
        }
        if r.is_empty() {
            kinds.skip("empty_message");
            index.push(parent);
            continue;
        }
        if p.compact_summary {
            r.kind("compact_summary");
        }
        // A compaction whose earlier messages are not in the file summarizes nothing here: its
        // summary is kept as the message it was to the model, at the top of what follows it.
        let role = if p.role == Role::Summary && parent.is_none() {
            Role::User
        } else {
            p.role
        };
        if p.compact_summary && role == Role::User {
            kinds.skip("compacted_messages_absent");
        }
        let (text, met) = r.finish(&mut kinds);
        // Messages are counted by role once, whatever the number of their lines.
        if part == 1 {
            kinds.role(p.original_role.as_deref().unwrap_or(match p.role {
                Role::User => "user",
                Role::Assistant => "assistant",
                Role::Summary => "user",
                _ => "system",
            }));
        }
        let plain = met.is_empty() && p.original_role.is_none();
        let intent = (!plain).then(|| Intent {
            tag: if p.compact_summary {
                "compact_summary".to_string()
            } else {
                tag_for(p.original_role.as_deref(), &met)
            },
            note: None,
        });
        let mut kept = Map::new();
        kept.insert("import".into(), json!(Format::ClaudeCode.as_str()));
        kept.insert("uuid".into(), json!(p.uuid));
        if let Some(model) = &p.model {
            kept.insert("model".into(), json!(model));
        }
        if let Some(agent) = &p.agent {
            kept.insert("agent".into(), json!(agent));
        }
        if p.sidechain {
            kept.insert("sidechain".into(), json!(true));
        }
        if p.session.is_some() && p.session != own {
            kept.insert("session".into(), json!(p.session));
        }
        if let Some(missing) = &p.missing_parent {
            kept.insert("missing_parent".into(), json!(missing));
        }
        if part > 1 {
            kept.insert("part".into(), json!(part));
        }
        if conversation.title.is_none() && summary_title.is_none() && p.role == Role::User && plain
        {
            conversation.title = Some(first_line(&text));
        }
        parts.push((p.api_id.clone(), part));
        conversation.messages.push(Msg {
            parent,
            role,
            text,
            intent,
            provenance: Some(Value::Object(kept).to_string()),
            source_id: Some(p.uuid),
            time_ms: p.time_ms,
        });
        // What named a summary as its parent hangs below the end of its range.
        index.push(if role == Role::Summary {
            parent
        } else {
            Some(conversation.messages.len() - 1)
        });
    }
    if summary_title.is_some() {
        conversation.title = summary_title;
    }
    conversation.current = main_last.and_then(|i| index[i]);
    conversation.kinds = kinds;
    Ok((own, conversation))
}

/// The subagent a message imported from a Claude Code session came from (its provenance's
/// `agent`), which names the branch it ends.
pub fn agent_of_node(provenance: Option<&str>) -> Option<String> {
    super::original_field(provenance, Format::ClaudeCode, "agent")
        .and_then(|v| v.as_str().map(str::to_string))
}

/// Whether a message imported from a Claude Code session is a sidechain's (its provenance's
/// `sidechain`), so that the branch it ends is `sidechain-N`.
pub fn is_sidechain_node(provenance: Option<&str>) -> bool {
    super::original_field(provenance, Format::ClaudeCode, "sidechain") == Some(json!(true))
}

/// The first line of a prompt, at most 100 characters, as a title.
pub(crate) fn first_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let mut title: String = line.trim().chars().take(100).collect();
    if line.trim().chars().count() > 100 {
        title.push('…');
    }
    title
}
