//! The library's error: a kind from the spec's error table, a message for people, optional data.
//!
//! Front-ends never invent errors of their own kinds: the CLI maps a kind to its exit code and the MCP
//! server to its JSON-RPC code or tool error, both read from the spec.
//!
//! A message may name a next step ("list branches with `tl branches`"). Such steps are typed
//! ([`Step`]: an operation and its arguments, [`Message::arg`]: a parameter) inside a [`Message`], so
//! one wording renders in the vocabulary of each front-end: `tl branches` and `--tokens` for the
//! command line, `timeline_branches` (`timeline_id: "tl0"`) and `tokens` over MCP.

use crate::spec::validate::Origin;
use serde_json::{Map, Value, json};
use std::fmt;
use std::sync::Arc;

/// The kinds of error the spec defines; each maps to an exit code of `tl` and an MCP answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// An argument is missing, has the wrong type, or breaks a limit.
    InvalidArgument,
    /// A timeline, node or branch does not exist.
    NotFound,
    /// The request contradicts the current state (for example a branch name that already exists).
    Conflict,
    /// The node is archived (in the cold zone) and the operation needs a hot node.
    Archived,
    /// No layout keeps the target and every pin within the budget.
    BudgetInfeasible,
    /// The branch cannot be archived; the data carries the reasons.
    NotEligible,
    /// A result or sum would exceed a limit (the output cap, or integer overflow).
    LimitExceeded,
    /// The database file cannot be read, locked or written.
    Database,
    /// The export output file cannot be written.
    Output,
    /// A bug in Timeline: an operation broke one of its own rules and was stopped before it wrote
    /// anything. Not `Database`, whose exit code tells the user the file is damaged.
    Internal,
}

impl ErrorKind {
    /// The key of this kind in the spec's `errors` table.
    pub fn code(self) -> &'static str {
        match self {
            ErrorKind::InvalidArgument => "invalid_argument",
            ErrorKind::NotFound => "not_found",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Archived => "archived",
            ErrorKind::BudgetInfeasible => "budget_infeasible",
            ErrorKind::NotEligible => "not_eligible",
            ErrorKind::LimitExceeded => "limit_exceeded",
            ErrorKind::Database => "database",
            ErrorKind::Output => "output",
            ErrorKind::Internal => "internal",
        }
    }

    /// Every kind, in the order of the spec's error table.
    pub const ALL: [ErrorKind; 10] = [
        ErrorKind::InvalidArgument,
        ErrorKind::NotFound,
        ErrorKind::Conflict,
        ErrorKind::Archived,
        ErrorKind::BudgetInfeasible,
        ErrorKind::NotEligible,
        ErrorKind::LimitExceeded,
        ErrorKind::Database,
        ErrorKind::Output,
        ErrorKind::Internal,
    ];

    /// Exit status of `tl` for this kind, from the spec.
    pub fn exit_code(self) -> i32 {
        crate::spec::spec().error(self.code()).exit_code
    }

    /// The JSON-RPC code when this kind is answered as a protocol error; `None` when it is always a
    /// tool error.
    pub fn mcp_code(self) -> Option<i64> {
        crate::spec::spec().error(self.code()).mcp_code
    }
}

/// An error of any library operation: its kind, a message for people and optional structured data.
///
/// The lower layer's error that caused it, when there is one (an I/O or SQLite error), is kept as
/// its [`std::error::Error::source`]; the message already says in words what it means.
#[derive(Debug, Clone)]
pub struct Error {
    /// Which error of the spec this is.
    pub kind: ErrorKind,
    /// The message as `tl` prints it: next steps named as commands and flags. [`Error::render`] gives
    /// the wording for another front-end.
    pub message: String,
    /// Structured details (such as `required_tokens` of an infeasible budget), when the kind has any.
    pub data: Option<Value>,
    /// The message with its next steps typed, when it has any (else `message` is the only wording).
    wording: Option<Box<Message>>,
    /// Raised by the spec's argument check (`spec::validate`), which enforces what a tool's
    /// `inputSchema` states, before anything ran. MCP versions before 2025-11-25 answer such an
    /// error as a protocol error ("invalid arguments"); everything else is a tool execution error.
    pub schema: bool,
    /// The lower layer's error this one was made from (a thin pointer: errors are returned
    /// everywhere, so they stay small).
    source: Option<Arc<Box<dyn std::error::Error + Send + Sync>>>,
}

/// Errors are equal when they say the same (their sources are not compared: two I/O errors of
/// one kind are not comparable values).
impl PartialEq for Error {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind
            && self.message == other.message
            && self.data == other.data
            && self.wording == other.wording
            && self.schema == other.schema
    }
}

/// The library's result type: `Error` unless stated otherwise.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error of kind `kind` with `message` (plain text or a `Message` with typed next steps).
    pub fn new(kind: ErrorKind, message: impl Into<Message>) -> Self {
        let wording = message.into();
        Error {
            kind,
            message: wording.render(Origin::Cli),
            data: None,
            wording: wording.has_steps().then(|| Box::new(wording)),
            schema: false,
            source: None,
        }
    }

    /// Keep `cause`, the lower layer's error this one was made from, as the error's source.
    pub fn with_source(mut self, cause: impl std::error::Error + Send + Sync + 'static) -> Self {
        self.source = Some(Arc::new(Box::new(cause)));
        self
    }

    /// Attach structured details to the error.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    /// Mark an error of the spec's argument check (see [`Error::schema`]).
    pub fn from_schema_check(mut self) -> Self {
        self.schema = true;
        self
    }

    /// An `InvalidArgument` error.
    pub fn invalid(message: impl Into<Message>) -> Self {
        Error::new(ErrorKind::InvalidArgument, message)
    }

    /// A `NotFound` error.
    pub fn not_found(message: impl Into<Message>) -> Self {
        Error::new(ErrorKind::NotFound, message)
    }

    /// A `Conflict` error.
    pub fn conflict(message: impl Into<Message>) -> Self {
        Error::new(ErrorKind::Conflict, message)
    }

    /// A `Database` error (the file cannot be read, locked or written).
    pub fn database(message: impl Into<Message>) -> Self {
        Error::new(ErrorKind::Database, message)
    }

    /// The `Database` error of damage found in stored data: `what` is damaged, and the way on
    /// is `tl db check` (which has no MCP tool: a model is told to hand over to its user).
    pub fn damaged(what: impl Into<String>) -> Self {
        Error::database(
            Message::from(what.into())
                .text("; ")
                .worded("run tl db check", ASK_THE_USER_TO_CHECK),
        )
    }

    /// An `Output` error of a new file (an export, a backup or conversion of a JSON snapshot) that
    /// could not be written: it existed already, or writing it failed.
    pub(crate) fn new_file(path: &std::path::Path, e: crate::fsutil::NewFileError) -> Self {
        use crate::fsutil::NewFileError;
        match e {
            NewFileError::Exists => Error::new(
                ErrorKind::Output,
                format!(
                    "the output file {} already exists; choose another name (export never overwrites a file, so changes you made to it are kept)",
                    path.display()
                ),
            ),
            NewFileError::Io(e) => Error::new(
                ErrorKind::Output,
                format!(
                    "cannot write the output file {}: {e}; check that its directory exists and is writable",
                    path.display()
                ),
            )
            .with_source(e),
        }
    }

    /// An `Internal` error: a bug in Timeline, not in the request or the database.
    pub fn internal(message: impl Into<Message>) -> Self {
        Error::new(ErrorKind::Internal, message)
    }

    /// The `LimitExceeded` error of a new message or summary that would make the tokens of its path
    /// from the root (`above` before it, `tokens` its own) exceed `max_path_tokens`.
    pub fn path_tokens(above: u64, tokens: u64) -> Self {
        let max = crate::spec::spec().constants.max_path_tokens;
        if above > max {
            // Only a database written by a release without the limit holds such a path.
            return Error::new(
                ErrorKind::LimitExceeded,
                format!(
                    "too many tokens on one path: the messages from the root to the parent of the new node already hold {above} tokens, more than the most a path may hold, {max} (an earlier release accepted any token count); nothing was written. Fork a new branch from a node above the message with the huge token count and continue there, or continue in a new timeline"
                ),
            );
        }
        Error::new(
            ErrorKind::LimitExceeded,
            Message::from(format!(
                "too many tokens on one path: the path from the root to the new node would hold {} tokens ({above} above it and {tokens} of its own), more than the most a path may hold, {max}; nothing was written. Give a smaller ",
                u128::from(above) + u128::from(tokens)
            ))
            .arg("tokens")
            .text(" value (the real token count of the text), or continue in a new timeline"),
        )
    }

    /// The `LimitExceeded` error of a token sum that overflows 64 bits.
    pub fn overflow() -> Self {
        Error::new(
            ErrorKind::LimitExceeded,
            Message::from(
                "token arithmetic overflow: the sum of token counts does not fit in 64 bits; use smaller ",
            )
            .arg("tokens")
            .text(" values"),
        )
    }

    /// The message in the vocabulary of `origin` (for `Origin::Cli` this is [`Error::message`]).
    pub fn render(&self, origin: Origin) -> String {
        match (origin, &self.wording) {
            (Origin::Mcp, Some(wording)) => wording.render(origin),
            _ => self.message.clone(),
        }
    }

    /// The CLI's stderr object: `{"error": message}` plus `data` where the error has it.
    pub fn to_json(&self) -> Value {
        self.to_json_for(Origin::Cli)
    }

    /// The same object with the message worded for `origin` (an MCP tool error's structured content).
    pub fn to_json_for(&self, origin: Origin) -> Value {
        let mut object = Map::new();
        object.insert("error".into(), json!(self.render(origin)));
        if let Some(data) = &self.data {
            object.insert("data".into(), data.clone());
        }
        Value::Object(object)
    }
}

/// A message whose next steps are typed: plain text, [`Step`]s and argument names, in order.
///
/// `Error::not_found(Message::from(format!("node not found: {id}; list branches with "))
/// .step(Step::new("branches").timeline(tl)))` is printed by `tl` as "... list branches with
/// `tl branches`" and over MCP as "... list branches with `timeline_branches`
/// (`timeline_id: "tl0"`)". A plain `String` or `&str` converts into a message without steps.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Message(Vec<Piece>);

#[derive(Debug, Clone, PartialEq)]
enum Piece {
    Text(String),
    Step(Step),
    Arg(String),
    /// Text each front-end words its own way: what only a person at the machine can do.
    Worded {
        cli: String,
        mcp: String,
    },
}

/// The end of a damage error over MCP: checking, repairing and restoring a database are commands
/// of `tl` only, so a model is told to hand over to its user instead of being shown a command.
pub const ASK_THE_USER_TO_CHECK: &str =
    "no MCP tool checks or repairs a database, so stop and tell the user that it needs checking";

/// Over MCP, the end of a damage error: the steps that recover a file are a person's (stopping
/// processes, copying files, `tl db backup`), and no MCP tool takes them.
pub const RECOVER_BY_THE_USER: &str = "No MCP tool repairs or restores a database: stop and tell the user that the file is damaged and needs recovering (Timeline's storage documentation, \"Damaged files\", says how)";

impl Message {
    /// Append text.
    pub fn text(mut self, text: impl Into<String>) -> Self {
        self.0.push(Piece::Text(text.into()));
        self
    }

    /// Append a next step.
    pub fn step(mut self, step: Step) -> Self {
        self.0.push(Piece::Step(step));
        self
    }

    /// Append the name of a parameter (its MCP name): `--max` for `tl`, `max_tokens` over MCP.
    pub fn arg(mut self, name: impl Into<String>) -> Self {
        self.0.push(Piece::Arg(name.into()));
        self
    }

    /// Append text that `tl` words as `cli` and MCP as `mcp`: a step with no MCP tool (checking,
    /// repairing or restoring a database), which a model can only hand over to its user.
    pub fn worded(mut self, cli: impl Into<String>, mcp: impl Into<String>) -> Self {
        self.0.push(Piece::Worded {
            cli: cli.into(),
            mcp: mcp.into(),
        });
        self
    }

    fn has_steps(&self) -> bool {
        self.0.iter().any(|p| !matches!(p, Piece::Text(_)))
    }

    /// The message as the front-end `origin` words it (its commands and parameter names).
    pub fn render(&self, origin: Origin) -> String {
        let mut out = String::new();
        for piece in &self.0 {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Step(step) => out.push_str(&step.render(origin)),
                Piece::Arg(name) => out.push_str(&arg_name(name, origin)),
                Piece::Worded { cli, mcp } => out.push_str(match origin {
                    Origin::Cli => cli,
                    Origin::Mcp => mcp,
                }),
            }
        }
        out
    }
}

/// A refusal of the spec's argument check is an `invalid_argument` error of that check.
impl From<crate::spec::validate::Invalid> for Error {
    fn from(invalid: crate::spec::validate::Invalid) -> Self {
        Error::invalid(invalid.message).from_schema_check()
    }
}

impl From<String> for Message {
    fn from(text: String) -> Self {
        Message(vec![Piece::Text(text)])
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Self {
        Message::from(text.to_string())
    }
}

impl From<&String> for Message {
    fn from(text: &String) -> Self {
        Message::from(text.clone())
    }
}

/// A next step named by a message: an operation of the spec, the timeline, and arguments.
///
/// `tl` renders it as the command to type, in backticks (`` `tl context --node n19` ``; the
/// timeline is left out, as the command line defaults it); MCP as the tool and its arguments
/// (`` `timeline_context` (`timeline_id: "tl0"`, `node: "n19"`) ``). [`Step::needs`] names an
/// argument the caller still has to choose (`--summary ...`, `` `summary: ...` ``).
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    op: String,
    timeline: Option<String>,
    args: Vec<(String, Value)>,
    needs: Vec<String>,
}

impl Step {
    /// A step running the spec operation `op` (its spec name: "context", "branches", "summarize").
    pub fn new(op: impl Into<String>) -> Self {
        Step {
            op: op.into(),
            timeline: None,
            args: Vec::new(),
            needs: Vec::new(),
        }
    }

    /// The timeline the step works on, such as "tl0" (required by every MCP tool but create).
    pub fn timeline(mut self, id: impl Into<String>) -> Self {
        self.timeline = Some(id.into());
        self
    }

    /// An argument by its MCP name, with its value (`"n19"`, `5`, `["n9", "n10"]`).
    pub fn arg(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.args.push((name.into(), value.into()));
        self
    }

    /// An argument the caller still has to supply, by its MCP name.
    pub fn needs(mut self, name: impl Into<String>) -> Self {
        self.needs.push(name.into());
        self
    }

    /// The step as the front-end `origin` words it: a `tl` command line or an MCP tool call.
    pub fn render(&self, origin: Origin) -> String {
        let spec = crate::spec::spec();
        let op = spec.operation(&self.op);
        match origin {
            Origin::Cli => {
                let mut words = vec![
                    "tl".to_string(),
                    op.map_or(self.op.clone(), |op| op.cli.clone()),
                ];
                for (name, value) in &self.args {
                    words.push(cli_flag(op, name));
                    words.push(cli_value(value));
                }
                for name in &self.needs {
                    words.push(cli_flag(op, name));
                    words.push("...".into());
                }
                format!("`{}`", words.join(" "))
            }
            Origin::Mcp => {
                let tool = op
                    .and_then(|op| op.mcp.clone())
                    .unwrap_or_else(|| self.op.clone());
                let mut args: Vec<String> = Vec::new();
                if let Some(timeline) = &self.timeline {
                    args.push(format!("`timeline_id: {}`", json!(timeline)));
                }
                for (name, value) in &self.args {
                    args.push(format!("`{name}: {value}`"));
                }
                for name in &self.needs {
                    args.push(format!("`{name}: ...`"));
                }
                if args.is_empty() {
                    format!("`{tool}`")
                } else {
                    format!("`{tool}` ({})", args.join(", "))
                }
            }
        }
    }
}

/// The `tl` flag of an argument of `op` (its `cli_flag`, or the name with `-` for `_`).
fn cli_flag(op: Option<&crate::spec::Operation>, name: &str) -> String {
    match op.and_then(|op| op.params.iter().find(|p| p.name == name)) {
        Some(param) => format!("--{}", param.flag()),
        None => arg_name(name, Origin::Cli),
    }
}

/// A parameter named for a front-end: MCP uses the name itself; `tl` the flag of the first
/// operation (or global option) that has it.
fn arg_name(name: &str, origin: Origin) -> String {
    if origin == Origin::Mcp {
        return format!("`{name}`");
    }
    let spec = crate::spec::spec();
    if let Some(global) = spec.globals.iter().find(|g| g.name == name) {
        return format!("--{}", global.cli_flag);
    }
    spec.operations
        .iter()
        .flat_map(|op| op.params.iter())
        .find(|p| p.name == name)
        .map(|p| format!("--{}", p.flag()))
        .unwrap_or_else(|| format!("--{}", name.replace('_', "-")))
}

/// A value as typed on a command line: IDs and plain words as they are, lists joined by commas,
/// anything else quoted.
fn cli_value(value: &Value) -> String {
    match value {
        Value::String(s)
            if !s.is_empty()
                && s.chars()
                    .all(|c| c.is_alphanumeric() || "-_.,:".contains(c)) =>
        {
            s.clone()
        }
        Value::Array(items) => items.iter().map(cli_value).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_deref()
            .map(|e| &**e as &(dyn std::error::Error + 'static))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_in_the_spec_and_back() {
        let spec = crate::spec::spec();
        for kind in ErrorKind::ALL {
            assert!(
                spec.errors.contains_key(kind.code()),
                "{} missing from spec",
                kind.code()
            );
        }
        assert_eq!(
            spec.errors.len(),
            ErrorKind::ALL.len(),
            "spec has error kinds the code does not"
        );
    }
    /// A bug is its own kind: not exit 3, which tells the user the database is damaged.
    #[test]
    fn a_bug_is_not_a_database_error() {
        let bug = Error::internal("internal error: no message n4 to change");
        assert_eq!(bug.kind, ErrorKind::Internal);
        assert_eq!(bug.kind.code(), "internal");
        assert_eq!(bug.kind.exit_code(), 70);
        assert_eq!(ErrorKind::Database.exit_code(), 3);
        assert_eq!(bug.kind.mcp_code(), None);
        assert_eq!(bug.message, "internal error: no message n4 to change");
    }

    /// The lower layer's error stays reachable as the source, and does not take part in equality.
    #[test]
    fn the_cause_is_kept_as_the_source() {
        use std::error::Error as _;
        let cause = std::io::Error::new(std::io::ErrorKind::StorageFull, "no space left");
        let error = Error::database("cannot write x: no space left").with_source(cause);
        let source = error.source().expect("a source");
        assert_eq!(source.to_string(), "no space left");
        let io = source
            .downcast_ref::<std::io::Error>()
            .expect("an io::Error");
        assert_eq!(io.kind(), std::io::ErrorKind::StorageFull);
        assert_eq!(error, Error::database("cannot write x: no space left"));
        assert!(Error::database("x").source().is_none());
    }

    #[test]
    fn damage_names_the_check_to_people_and_hands_over_to_the_user_over_mcp() {
        let error = Error::damaged("the database x is damaged: its state row is missing");
        assert_eq!(
            error.message,
            "the database x is damaged: its state row is missing; run tl db check"
        );
        assert_eq!(
            error.render(Origin::Mcp),
            "the database x is damaged: its state row is missing; no MCP tool checks or repairs a database, so stop and tell the user that it needs checking"
        );
    }

    #[test]
    fn a_plain_message_reads_the_same_everywhere() {
        let error = Error::not_found(format!("branch {:?} not found", "a{}b"));
        assert_eq!(error.message, "branch \"a{}b\" not found");
        assert_eq!(error.render(Origin::Mcp), error.message);
        assert!(!error.schema);
    }

    #[test]
    fn steps_render_in_each_front_ends_vocabulary() {
        let error = Error::not_found(
            Message::from("node not found: n7; list branches with ")
                .step(Step::new("branches").timeline("tl0")),
        );
        assert_eq!(
            error.message,
            "node not found: n7; list branches with `tl branches`"
        );
        assert_eq!(
            error.render(Origin::Mcp),
            "node not found: n7; list branches with `timeline_branches` (`timeline_id: \"tl0\"`)"
        );
        let step = Step::new("summarize")
            .timeline("tl1")
            .arg("from", "n1")
            .arg("to", "n3")
            .needs("summary");
        assert_eq!(
            step.render(Origin::Cli),
            "`tl summarize --from n1 --to n3 --summary ...`"
        );
        assert_eq!(
            step.render(Origin::Mcp),
            "`timeline_summarize` (`timeline_id: \"tl1\"`, `from: \"n1\"`, `to: \"n3\"`, `summary: ...`)"
        );
        // Flags come from the spec; lists are comma-joined on the command line, arrays over MCP.
        let budget = Step::new("context_budget")
            .arg("node", "n4")
            .arg("max_tokens", 65);
        assert_eq!(budget.render(Origin::Cli), "`tl budget --node n4 --max 65`");
        assert_eq!(
            budget.render(Origin::Mcp),
            "`timeline_context_budget` (`node: \"n4\"`, `max_tokens: 65`)"
        );
        let derived = Step::new("summarize").arg("derived_from", json!(["n9", "n10"]));
        assert_eq!(
            derived.render(Origin::Cli),
            "`tl summarize --derived-from n9,n10`"
        );
        let fork = Step::new("fork").arg("node", "n2").arg("name", "my branch");
        assert_eq!(
            fork.render(Origin::Cli),
            "`tl fork --node n2 --name \"my branch\"`"
        );
    }

    #[test]
    fn argument_names_follow_the_front_end() {
        let overflow = Error::overflow();
        assert_eq!(
            overflow.message,
            "token arithmetic overflow: the sum of token counts does not fit in 64 bits; use smaller --tokens values"
        );
        assert_eq!(
            overflow.render(Origin::Mcp),
            "token arithmetic overflow: the sum of token counts does not fit in 64 bits; use smaller `tokens` values"
        );
        let max = Message::from("raise ").arg("max_tokens");
        assert_eq!(max.render(Origin::Cli), "raise --max");
        assert_eq!(max.render(Origin::Mcp), "raise `max_tokens`");
        let global = Message::from("pass ").arg("timeline_id");
        assert_eq!(global.render(Origin::Cli), "pass --timeline");
    }

    #[test]
    fn json_for_each_front_end() {
        let error = Error::overflow().with_data(json!({"x": 1}));
        assert_eq!(error.to_json()["error"], json!(error.message));
        assert_eq!(
            error.to_json_for(Origin::Mcp),
            json!({"error": error.render(Origin::Mcp), "data": {"x": 1}})
        );
    }
}
