//! Session formats (`Format::is_session`: a tool's own JSONL files, one session a file), kept up to
//! date: a file is one conversation keyed by its session ID and digested whole, so an unchanged file
//! is recognised by one index lookup of its digest, and a file that grew is an update of the
//! timeline its first import made. An update writes only the messages whose source IDs (the lines'
//! `uuid`) no earlier import of the session recorded, below the nodes those became; the old nodes
//! keep their IDs, and the branches whose heads the new messages continue move along.

use super::prepared::{Content, Prepared};
use crate::error::{Error, Result};
use crate::interchange::{Format, MAX_CONVERSATION_BYTES, claude_code, codex, gemini, llm};
use serde_json::json;
use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};
use std::rc::Rc;

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
        let prepared = match orphan_agent(format, &file) {
            Some(session) => orphan(format, &file, name, &session),
            None => prepare(format, &file, name, known),
        };
        each(prepared)?;
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
        } else if kind.is_file()
            && (is_session_file(format, &path) || orphan_agent(format, &path).is_some())
        {
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
    let refused = |failure: llm::Failure| {
        if failure.busy {
            // As for a busy database of Timeline's own: the file is fine, try again later.
            Error::database(format!(
                "cannot read {shown}: it is busy: another program (llm itself, most likely) is writing it and kept it locked for more than {} seconds; try again once it has finished (an import passes over what it imported already)",
                llm::BUSY_TIMEOUT.as_secs()
            ))
        } else {
            Error::invalid(format!(
                "invalid argument --input: {shown} is not an llm logs.db: {}; nothing was imported",
                failure.reason
            ))
        }
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
        let mut hasher = Sha256::new();
        hasher.update(Format::Llm.as_str().as_bytes());
        hasher.update([0]);
        hasher.update(id.as_bytes());
        // Over the limit of one conversation: skipped before a row of it is read.
        let bytes = llm::conversation_bytes(&conn, &id).map_err(refused)?;
        if bytes > MAX_CONVERSATION_BYTES {
            each(too_large(
                &name,
                index,
                id,
                title,
                hasher,
                bytes,
                "responses are",
            ))?;
            bar.0.inc(1);
            continue;
        }
        let rows = llm::rows(&conn, &id).map_err(refused)?;
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
        let mut hasher = Sha256::new();
        hasher.update(Format::Llm.as_str().as_bytes());
        hasher.update([0]);
        hasher.update(b"thread:");
        hasher.update(id.as_bytes());
        let messages = match llm::thread_messages(&conn, &threads).map_err(refused)? {
            Ok(messages) => messages,
            Err(bytes) => {
                let title = threads.first().and_then(|t| t.name.clone());
                each(too_large(
                    &name,
                    count + k,
                    id,
                    title,
                    hasher,
                    bytes,
                    "messages are more than",
                ))?;
                bar.0.inc(1);
                continue;
            }
        };
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

/// An llm conversation of `bytes`, over the limit for one: skipped with its reason (read no
/// further, so digested by its ID and size only).
fn too_large(
    file: &str,
    index: usize,
    id: String,
    title: Option<String>,
    mut hasher: Sha256,
    bytes: u64,
    what: &str,
) -> Prepared {
    hasher.update(format!("\0too large: {bytes}").as_bytes());
    Prepared {
        file: file.to_string(),
        index,
        source_id: Some(id),
        title: title.filter(|t| !t.trim().is_empty()),
        hasher,
        content: Content::Ready(crate::interchange::Conversation {
            skip: Some(llm::too_large(bytes, what)),
            ..Default::default()
        }),
        forked_from: None,
    }
}

/// A Claude Code subagent's transcript (`<session>/subagents/agent-ID.jsonl`, not Claude Code's
/// own compaction agent's) whose session file `<session>.jsonl` is not there: that file's path.
/// Such a transcript is read with its session, so without it it is reported, not passed over
/// without a word.
fn orphan_agent(format: Format, path: &Path) -> Option<PathBuf> {
    if format != Format::ClaudeCode || claude_code::is_session_file(path) {
        return None;
    }
    let name = path.file_name()?.to_str()?;
    let id = name.strip_prefix("agent-")?.strip_suffix(".jsonl")?;
    if id.starts_with("acompact") {
        return None;
    }
    let session_dir = path.parent()?.parent()?;
    let session =
        session_dir.with_file_name(format!("{}.jsonl", session_dir.file_name()?.to_str()?));
    (!session.is_file()).then_some(session)
}

/// A subagent's transcript whose session file is missing, reported as skipped.
fn orphan(format: Format, file: &Path, name: String, session: &Path) -> Prepared {
    let mut hasher = Sha256::new();
    hasher.update(format.as_str().as_bytes());
    hasher.update([0]);
    hasher.update(name.as_bytes());
    Prepared {
        file: name,
        index: 0,
        source_id: file.file_stem().map(|s| s.to_string_lossy().into_owned()),
        title: None,
        hasher,
        content: Content::Unread(format!(
            "it is a subagent's transcript, which is imported with its session, but the session's file {} is not beside the session's folder; nothing of it was imported",
            session
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        )),
        forked_from: None,
    }
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
    // First the digest, streamed from the files (an unchanged session is not parsed); then, for a
    // new or grown one, its lines one at a time (`FileLines`): no file is held whole.
    let len = match digest_file(file, MAX_CONVERSATION_BYTES, &mut hasher) {
        Err(e) => return unread(format!("it cannot be read: {e}"), hasher),
        Ok(None) => {
            return unread(
                format!(
                    "it is over {} MiB, the limit for one conversation",
                    MAX_CONVERSATION_BYTES >> 20
                ),
                hasher,
            );
        }
        Ok(Some(len)) => len,
    };
    // Its subagents (`<session>/subagents/agent-ID.jsonl`) belong to it: digested and counted
    // against the same limit.
    let mut agents = Vec::new();
    let mut total = len;
    for (id, path) in subagent_files(file, &stem) {
        hasher.update([0]);
        hasher.update(id.as_bytes());
        hasher.update([0]);
        let agent = match digest_file(&path, MAX_CONVERSATION_BYTES - total, &mut hasher) {
            Err(e) => {
                return unread(
                    format!("its subagent {} cannot be read: {e}", path.display()),
                    hasher,
                );
            }
            Ok(None) => {
                return unread(
                    format!(
                        "with its subagents it is over {} MiB, the limit for one conversation",
                        MAX_CONVERSATION_BYTES >> 20
                    ),
                    hasher,
                );
            }
            Ok(Some(agent)) => agent,
        };
        total += agent;
        agents.push((id, path, agent));
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
    // What stopped the reading of the lines, if anything (shared by the files' readers).
    let failed = Rc::new(RefCell::new(None));
    let lines = FileLines::new(file, len, None, &failed);
    let converted = match format {
        Format::ClaudeCode => {
            let agents = agents
                .into_iter()
                .map(|(id, path, len)| {
                    let lines = FileLines::new(&path, len, Some(&path), &failed);
                    (id, lines)
                })
                .collect();
            claude_code::convert(lines, agents, Some(&stem))
        }
        Format::Codex => codex::convert(lines).map(|(meta, conversation)| {
            forked_from = meta.forked_from;
            (meta.id, conversation)
        }),
        // A Gemini CLI session may be one JSON value (`.json`), read as it streams by.
        Format::GeminiCli => {
            let open = || -> std::io::Result<Box<dyn BufRead>> {
                let f = std::fs::File::open(file)?.take(len);
                Ok(Box::new(std::io::BufReader::with_capacity(1 << 16, f)))
            };
            gemini::convert(&open, len, lines)
        }
        _ => Err("not a session format".into()),
    };
    if let Some(reason) = failed.take() {
        return unread(reason, hasher);
    }
    let (session, content) = match converted {
        Ok((session, conversation)) => (session, Content::Ready(conversation)),
        Err(reason) => (None, Content::Mismatch(reason)),
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

/// Stream the file at `path` into `hasher`: its size, or `None` when it is over `room` bytes.
fn digest_file(path: &Path, room: u64, hasher: &mut Sha256) -> std::io::Result<Option<u64>> {
    let mut reader = std::fs::File::open(path)?.take(room + 1);
    let mut buf = vec![0u8; 1 << 16];
    let mut len = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        len += n as u64;
        if len > room {
            return Ok(None);
        }
        hasher.update(&buf[..n]);
    }
    Ok(Some(len))
}

/// The lines of a session file's first `len` bytes (those its digest covers, even if the file
/// grows meanwhile), one at a time and split as `str::lines` does, so that memory holds one line.
/// The file is opened at the first line asked for. A failure (not readable, not UTF-8) ends the
/// lines and is kept in `failed`, the reason the session is skipped.
struct FileLines {
    path: PathBuf,
    len: u64,
    /// The subagent file it is, for the reason (`None`: the session's own file).
    agent: Option<PathBuf>,
    reader: Option<std::io::BufReader<std::io::Take<std::fs::File>>>,
    failed: Rc<RefCell<Option<String>>>,
    /// Whether a line was read.
    started: bool,
}

impl FileLines {
    fn new(
        path: &Path,
        len: u64,
        agent: Option<&Path>,
        failed: &Rc<RefCell<Option<String>>>,
    ) -> FileLines {
        FileLines {
            path: path.to_path_buf(),
            len,
            agent: agent.map(Path::to_path_buf),
            reader: None,
            failed: Rc::clone(failed),
            started: false,
        }
    }

    fn fail(&self, what: &str) -> Option<String> {
        let reason = match &self.agent {
            None => format!("it {what}"),
            Some(path) => format!("its subagent {} {what}", path.display()),
        };
        self.failed.replace(Some(reason));
        None
    }
}

impl Iterator for FileLines {
    type Item = String;

    fn next(&mut self) -> Option<String> {
        if self.failed.borrow().is_some() {
            return None;
        }
        if self.reader.is_none() {
            match std::fs::File::open(&self.path) {
                Ok(f) => {
                    self.reader = Some(std::io::BufReader::with_capacity(1 << 16, f.take(self.len)))
                }
                Err(e) => return self.fail(&format!("cannot be read: {e}")),
            }
        }
        let reader = self.reader.as_mut()?;
        let mut line = Vec::new();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => return None,
            Ok(_) => {}
            Err(e) => return self.fail(&format!("cannot be read: {e}")),
        }
        if line.last() == Some(&b'\n') {
            line.pop();
            if line.last() == Some(&b'\r') {
                line.pop();
            }
        }
        // A file whose first line is only `{` is one JSON value over many lines (a Claude Code
        // session as `{"loglines": [...]}`, pretty-printed): the whole file is its one line.
        if !self.started
            && line.trim_ascii() == b"{"
            && let Err(e) = reader.read_to_end(&mut line)
        {
            return self.fail(&format!("cannot be read: {e}"));
        }
        self.started = true;
        match String::from_utf8(line) {
            Ok(line) => Some(line),
            Err(_) => self.fail("is not UTF-8 text"),
        }
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
