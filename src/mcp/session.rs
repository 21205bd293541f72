//! The state of one MCP connection: the negotiated protocol version, and the methods it serves.

use super::idle;
use super::rpc::{self, Message, RpcError};
use crate::error::{Error, ErrorKind};
use crate::service::{self, Output, Request};
use crate::spec::mcp::mcp_result;
use crate::spec::spec;
use crate::spec::validate::{Origin, check_idempotency_key, shorten};
use crate::store::Store;
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The `tools/list` payload, rendered from the spec (see `src/spec/mcp.rs` and `src/codegen/`).
pub const TOOLS_JSON: &str = include_str!("../../generated/tools.json");

fn tools() -> &'static Value {
    static TOOLS: OnceLock<Value> = OnceLock::new();
    TOOLS.get_or_init(|| serde_json::from_str(TOOLS_JSON).expect("generated/tools.json is JSON"))
}

/// The newest protocol version the server speaks; also what it follows before `initialize`.
pub fn latest_version() -> &'static str {
    spec().latest_protocol_version()
}

/// One MCP connection's state: the agreed protocol version and the database it works on.
pub struct Session {
    /// The version agreed in `initialize`; `None` until then.
    version: Option<&'static str>,
    /// The database, or why it could not be determined (reported by every tool call).
    db: Result<PathBuf, Error>,
    /// The store, opened by the first tool call and kept for the session (one SQLite connection).
    store: Option<Store>,
}

impl Session {
    /// A session on the database `db` (or the error that says why there is none), before `initialize`.
    pub fn new(db: Result<PathBuf, Error>) -> Self {
        Session {
            version: None,
            db,
            store: None,
        }
    }

    /// Whether the session has work to do while its client is quiet (`idle_work`).
    pub fn has_idle_work(&self) -> bool {
        self.store.as_ref().is_some_and(Store::has_idle_work)
    }

    /// Work done while the client is quiet: index the messages that wait for the search index.
    /// It changes nothing a tool returns, so a failure (another process holds the write lock) is
    /// logged and the work left for later.
    pub fn idle_work(&mut self) {
        if let Some(store) = &mut self.store
            && let Err(e) = store.index_waiting()
        {
            log(&format!("indexing while idle: {}", e.message));
        }
    }

    /// The version in force: the negotiated one, or the latest before `initialize`.
    pub fn version(&self) -> &'static str {
        self.version.unwrap_or_else(latest_version)
    }

    fn at_least(&self, version: &str) -> bool {
        // Versions are dates (YYYY-MM-DD), so text order is time order.
        self.version() >= version
    }

    fn batches_allowed(&self) -> bool {
        let version = self.version();
        spec()
            .constants
            .mcp_batch_protocol_versions
            .iter()
            .any(|v| v == version)
    }

    /// Answer one line of input: the answer line to write (escaped, without its newline), or
    /// `None` when nothing is to be written (notifications).
    pub fn handle_line(&mut self, bytes: &[u8]) -> Option<String> {
        self.handle_line_cancellable(bytes, &mut |_| false)
    }

    /// `handle_line`, asking `cancelled` whether the client has sent `notifications/cancelled` for
    /// the request being handled: before it runs, after its tool returns and once its answer is
    /// built. A cancelled request gets no answer (MCP); a change it committed stays committed.
    /// (Requests inside a batch are answered as usual.)
    pub fn handle_line_cancellable(
        &mut self,
        bytes: &[u8],
        cancelled: &mut dyn FnMut(&Value) -> bool,
    ) -> Option<String> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            // A blank line carries no message; answering it would only confuse clients.
            return None;
        }
        if let Some(count) = rpc::batch_len(bytes)
            && count > spec().constants.mcp_batch_max_items
        {
            // Refused before the batch is built in memory: counting its items allocates nothing.
            let error = self.batch_refusal().unwrap_or_else(|| {
                RpcError::invalid_request(format!(
                    "the batch holds {count} messages, over the limit of {} per batch; nothing in it ran: send at most {} messages per array, or one message per line",
                    spec().constants.mcp_batch_max_items,
                    spec().constants.mcp_batch_max_items
                ))
            });
            return Some(line_of(&fail_logged(Value::Null, &error)));
        }
        match rpc::parse(bytes) {
            Ok(Value::Array(items)) => self.handle_batch(items),
            Ok(value) => self
                .handle_cancellable(rpc::classify(value), cancelled)
                .map(|answer| line_of(&answer)),
            Err(error) => Some(line_of(&fail_logged(Value::Null, &error))),
        }
    }

    /// Why a batch is refused as a whole by the negotiated version, if it is.
    fn batch_refusal(&self) -> Option<RpcError> {
        if self.batches_allowed() {
            return None;
        }
        let when = if self.version.is_some() {
            format!("protocol version {} was negotiated", self.version())
        } else {
            format!(
                "before initialize the server follows the latest protocol version, {}",
                self.version()
            )
        };
        Some(RpcError::invalid_request(format!(
            "JSON-RPC batches (arrays) are accepted only with protocol versions {}, and {when}; send one message per line",
            spec().constants.mcp_batch_protocol_versions.join(" and ")
        )))
    }

    /// Run a batch in order and answer it with one array line that never exceeds
    /// `mcp_batch_answer_limit_bytes`. Room is kept for a short error answer to every later request,
    /// so when an answer does not fit, it is replaced by such an error, and the requests after it
    /// do not run and get theirs.
    fn handle_batch(&mut self, items: Vec<Value>) -> Option<String> {
        if let Some(error) = self.batch_refusal() {
            return Some(line_of(&fail_logged(Value::Null, &error)));
        }
        if items.is_empty() {
            let error = RpcError::invalid_request("the batch is an empty array");
            return Some(line_of(&rpc::failure(Value::Null, &error)));
        }
        let limit = spec().constants.mcp_batch_answer_limit_bytes;
        let items: Vec<_> = items.into_iter().map(rpc::classify).collect();
        // The room for the error answer each item would get if it were cut off, with its comma
        // (0 for a message that is never answered).
        let reserve: Vec<usize> = items
            .iter()
            .map(|item| {
                answer_id(item).map_or(0, |id| line_of(&left_out(id, usize::MAX)).len() + 1)
            })
            .collect();
        // The room still reserved for the items after the current one. With "[" and "]", it always
        // fits: each answer is added only if it leaves that room, and a cut-off answer fits its own.
        let mut later: usize = reserve.iter().sum();
        if later + 2 > limit {
            let error = RpcError::invalid_request(format!(
                "the ids of this batch are too long: even short answers to its requests would take the answer over its limit of {limit} bytes; nothing in it ran: use shorter ids"
            ));
            return Some(line_of(&fail_logged(Value::Null, &error)));
        }
        let mut out = String::from("[");
        let mut stopped = false;
        for (item, reserved) in items.into_iter().zip(reserve) {
            later -= reserved;
            let answer = if stopped {
                answer_id(&item).map(|id| line_of(&not_run(id)))
            } else {
                let id = answer_id(&item);
                self.handle_message(item).map(|answer| {
                    let line = line_of(&answer);
                    if out.len() + line.len() + later + 2 <= limit {
                        line
                    } else {
                        stopped = true;
                        line_of(&left_out(id.unwrap_or(Value::Null), line.len()))
                    }
                })
            };
            if let Some(answer) = answer {
                if out.len() > 1 {
                    out.push(',');
                }
                out.push_str(&answer);
            }
        }
        if stopped {
            log(&format!(
                "a batch's answer reached the limit of {limit} bytes; the rest of the batch did not run"
            ));
        }
        out.push(']');
        (out.len() > 2).then_some(out)
    }

    fn handle_message(&mut self, message: Result<Message, rpc::Rejected>) -> Option<Value> {
        self.handle_cancellable(message, &mut |_| false)
    }

    fn handle_cancellable(
        &mut self,
        message: Result<Message, rpc::Rejected>,
        cancelled: &mut dyn FnMut(&Value) -> bool,
    ) -> Option<Value> {
        match message {
            Err(rejected) => {
                let (id, error) = *rejected;
                log(&error.message);
                Some(rpc::failure(id, &error))
            }
            Ok(Message::Response) => {
                log("ignored a response: this server sends no requests");
                None
            }
            Ok(Message::Notification { method, .. }) => {
                match method.as_str() {
                    "notifications/initialized" | "notifications/cancelled" => {}
                    other => log(&format!(
                        "ignored the notification {}: notifications get no answer and never run a tool",
                        shorten(other)
                    )),
                }
                None
            }
            Ok(Message::Request { id, method, params }) => {
                let dropped = |id: &Value| {
                    log(&format!(
                        "request {} was cancelled by the client: no answer is sent (what it changed, if it ran, stays changed)",
                        shorten(&id.to_string())
                    ));
                    None
                };
                if cancelled(&id) {
                    return dropped(&id);
                }
                let answer = match self.dispatch(&method, params, &mut || cancelled(&id)) {
                    Ok(None) => return dropped(&id),
                    Ok(Some(result)) => rpc::success(id.clone(), result),
                    Err(error) => rpc::failure(id.clone(), &error),
                };
                if cancelled(&id) {
                    return dropped(&id);
                }
                Some(answer)
            }
        }
    }

    /// The result of a request; `None` when `cancelled` says the client cancelled it while its tool
    /// ran (its answer is then neither built nor sent).
    fn dispatch(
        &mut self,
        method: &str,
        params: Option<Value>,
        cancelled: &mut dyn FnMut() -> bool,
    ) -> Result<Option<Value>, RpcError> {
        let params = match params {
            None => Map::new(),
            Some(Value::Object(map)) => map,
            Some(other) => {
                return Err(RpcError::invalid_params(format!(
                    "params of {method} must be an object, got {}",
                    rpc::describe(&other)
                )));
            }
        };
        match method {
            "initialize" => self.initialize(params).map(Some),
            "ping" => Ok(Some(json!({}))),
            "tools/list" => Ok(Some(self.tools_list())),
            "tools/call" => self.tools_call(params, cancelled),
            other => Err(RpcError::new(
                rpc::METHOD_NOT_FOUND,
                format!(
                    "Method not found: {} (this server offers initialize, ping, tools/list and tools/call)",
                    shorten(other)
                ),
            )),
        }
    }

    fn initialize(&mut self, params: Map<String, Value>) -> Result<Value, RpcError> {
        if let Some(version) = self.version {
            return Err(RpcError::invalid_request(format!(
                "initialize was already answered on this connection (protocol version {version}); start a new tl-mcp process to negotiate again"
            )));
        }
        let requested = match params.get("protocolVersion") {
            Some(Value::String(v)) => v,
            Some(other) => {
                return Err(RpcError::invalid_params(format!(
                    "protocolVersion must be a string such as \"{}\", got {}",
                    latest_version(),
                    rpc::describe(other)
                )));
            }
            None => {
                return Err(RpcError::invalid_params(format!(
                    "initialize needs params.protocolVersion, such as \"{}\"",
                    latest_version()
                )));
            }
        };
        let version = spec()
            .constants
            .mcp_protocol_versions
            .iter()
            .find(|v| *v == requested)
            .map(String::as_str)
            .unwrap_or_else(latest_version);
        self.version = Some(version);
        Ok(json!({
            "protocolVersion": version,
            "capabilities": {"tools": {"listChanged": false}},
            "serverInfo": {
                "name": spec().constants.mcp_server_name,
                "version": env!("CARGO_PKG_VERSION"),
            },
            "instructions": spec().mcp_instructions,
        }))
    }

    /// The generated tool list (written for the newest version) without the fields the negotiated
    /// version does not define: `annotations` came with 2025-03-26, `title` and `outputSchema`
    /// with 2025-06-18.
    fn tools_list(&self) -> Value {
        let c = &spec().constants;
        let mut dropped = Vec::new();
        if !self.at_least(&c.mcp_annotations_from) {
            dropped.push("annotations");
        }
        if !self.at_least(&c.mcp_title_from) {
            dropped.push("title");
        }
        if !self.at_least(&c.mcp_structured_content_from) {
            dropped.push("outputSchema");
        }
        let mut tools = tools().clone();
        if let Some(Value::Array(list)) = tools.get_mut("tools") {
            for tool in list {
                if let Value::Object(tool) = tool {
                    for field in &dropped {
                        tool.remove(*field);
                    }
                }
            }
        }
        tools
    }

    /// A tool result: the JSON as text and, from 2025-06-18, as `structuredContent`.
    fn tool_result(&self, value: Value, is_error: bool) -> Value {
        let mut result = Map::new();
        result.insert(
            "content".into(),
            // Exactly the bytes `tl` prints for the same result (control and bidi characters escaped).
            json!([{"type": "text", "text": crate::terminal::escape_json(&value.to_string())}]),
        );
        if value.is_object() && self.at_least(&spec().constants.mcp_structured_content_from) {
            result.insert("structuredContent".into(), value);
        }
        if is_error {
            result.insert("isError".into(), Value::Bool(true));
        }
        Value::Object(result)
    }

    /// How a failed tool call is answered. A failure of the tool (not found, conflict, infeasible
    /// budget, database problem, a value the operation refuses) is a result with `isError: true`
    /// whose text and structured content are `{"error", "data"}` worded for MCP. Arguments that fail
    /// the argument check (what `inputSchema` states) are "invalid arguments", a JSON-RPC -32602
    /// error, up to 2025-06-18; from 2025-11-25 they are tool errors too (SEP-1303).
    fn tool_failure(&self, error: Error) -> Result<Value, RpcError> {
        let c = &spec().constants;
        if error.schema
            && error.kind == ErrorKind::InvalidArgument
            && !self.at_least(&c.mcp_argument_errors_as_tool_errors_from)
        {
            return Err(RpcError::from(error));
        }
        let mut result = self.tool_result(error.to_json_for(Origin::Mcp), true);
        if let Some(advice) = ways_out(&error)
            && let Some(content) = result["content"].as_array_mut()
        {
            content.push(json!({"type": "text", "text": advice}));
        }
        Ok(result)
    }

    fn tools_call(
        &mut self,
        mut params: Map<String, Value>,
        cancelled: &mut dyn FnMut() -> bool,
    ) -> Result<Option<Value>, RpcError> {
        let name = match params.get("name") {
            Some(Value::String(name)) => name.clone(),
            Some(other) => {
                return Err(RpcError::invalid_params(format!(
                    "name must be a string naming a tool, got {}",
                    rpc::describe(other)
                )));
            }
            None => {
                return Err(RpcError::invalid_params(
                    "tools/call needs params.name, the tool to call (tools/list names them)",
                ));
            }
        };
        let op = spec().by_mcp(&name).ok_or_else(|| {
            RpcError::invalid_params(format!(
                "unknown tool {}; tools/list names the {} tools of this server",
                Value::String(shorten(&name)),
                spec()
                    .operations
                    .iter()
                    .filter(|op| op.mcp.is_some())
                    .count()
            ))
        })?;
        let args = match params.remove("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(args)) => args,
            Some(other) => {
                return Err(RpcError::invalid_params(format!(
                    "arguments must be an object, got {}",
                    rpc::describe(&other)
                )));
            }
        };
        let outcome = self.run_tool(op, args, params);
        // A large result costs more to build and write than to read: not for a cancelled call.
        if cancelled() {
            return Ok(None);
        }
        match outcome {
            Ok(value) => Ok(Some(self.tool_result(value, false))),
            Err(error) => self.tool_failure(error).map(Some),
        }
    }

    /// Run a tool whose call is well formed; its result as MCP returns it.
    fn run_tool(
        &mut self,
        op: &'static crate::spec::Operation,
        mut args: Map<String, Value>,
        mut params: Map<String, Value>,
    ) -> Result<Value, Error> {
        let in_arguments = key_text(args.remove("idempotency_key"), "arguments")?;
        let in_params = key_text(params.remove("idempotency_key"), "params")?;
        let idempotency_key = match (in_arguments, in_params) {
            (Some(a), Some(p)) if a != p => {
                return Err(Error::invalid(
                    "invalid argument idempotency_key: arguments.idempotency_key and params.idempotency_key differ; give the key once, or the same key in both places",
                )
                .from_schema_check());
            }
            (a, p) => a.or(p),
        };
        check_idempotency_key(op, idempotency_key.as_deref(), Origin::Mcp)?;
        let store = match &mut self.store {
            Some(store) => store,
            None => {
                let mut store = Store::open(self.db.clone()?)?;
                if idle::AVAILABLE {
                    store.index_while_idle();
                }
                self.store.insert(store)
            }
        };
        if op.mutating {
            service::before_change(store.path())?;
        }
        let output = service::execute(
            store,
            Request {
                op,
                args,
                idempotency_key,
                origin: Origin::Mcp,
            },
        )?;
        Ok(match output {
            Output::Json(value) => mcp_result(op, value),
            Output::Text(text) => Value::String(text),
        })
    }
}

/// An answer as the line written for it: JSON, escaped so that a client's text shown raw (a log of
/// the protocol, a terminal) cannot act on the terminal.
fn line_of(answer: &Value) -> String {
    crate::terminal::escape_json(&answer.to_string()).into_owned()
}

/// An error answer, logged.
fn fail_logged(id: Value, error: &RpcError) -> Value {
    log(&error.message);
    rpc::failure(id, error)
}

/// The id a classified message is answered with; `None` for those never answered.
fn answer_id(message: &Result<Message, rpc::Rejected>) -> Option<Value> {
    match message {
        Ok(Message::Request { id, .. }) => Some(id.clone()),
        Err(rejected) => Some(rejected.0.clone()),
        Ok(Message::Notification { .. } | Message::Response) => None,
    }
}

/// The error answer of a request that ran but whose answer (`bytes` long) did not fit in its batch's
/// answer line. It is longer than `not_run`'s, so the room kept with `bytes = usize::MAX` fits either.
fn left_out(id: Value, bytes: usize) -> Value {
    let limit = spec().constants.mcp_batch_answer_limit_bytes;
    rpc::failure(
        id,
        &RpcError::new(
            rpc::INTERNAL_ERROR,
            format!(
                "this request ran, but its answer ({bytes} bytes) would take the batch's answer over its limit of {limit} bytes, so it was left out and the rest of the batch did not run; send the request again on its own line to get its answer"
            ),
        ),
    )
}

/// The error answer of a request that did not run because its batch's answer was full.
fn not_run(id: Value) -> Value {
    let limit = spec().constants.mcp_batch_answer_limit_bytes;
    rpc::failure(
        id,
        &RpcError::new(
            rpc::INTERNAL_ERROR,
            format!(
                "this request did not run: the batch's answer reached its limit of {limit} bytes before it; send it again on its own line or in a smaller batch"
            ),
        ),
    )
}

/// What a model can do about an infeasible budget, as a second text block of the tool error: the
/// first stays the `{"error", "data"}` object `tl` prints, the seed's contract, which names no way out.
fn ways_out(error: &Error) -> Option<String> {
    if error.kind != ErrorKind::BudgetInfeasible {
        return None;
    }
    let data = error.data.as_ref()?;
    let (required, max) = (data.get("required_tokens")?, data.get("max_tokens")?);
    Some(format!(
        "The smallest layout keeps the node and every pinned message verbatim and needs {required} tokens; max_tokens is {max}. Ways out: call `timeline_context_budget` again with `max_tokens` of at least {required}; unpin messages with `timeline_unpin`; or write shorter summaries of older ranges with `timeline_summarize` (a smaller `tokens`), then call it again."
    ))
}

/// An idempotency key from `arguments` or `params`: absent or null is no key; it must be a string.
fn key_text(value: Option<Value>, place: &str) -> Result<Option<String>, Error> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(key)) => Ok(Some(key)),
        Some(other) => Err(Error::invalid(format!(
            "invalid argument idempotency_key: {place}.idempotency_key must be a string such as \"request-001\", got {}",
            rpc::describe(&other)
        ))
        .from_schema_check()),
    }
}

/// One line on standard error, `tl-mcp: ` first. Control and bidirectional characters in `message`
/// (which may quote a client's method name or a path) are written escaped (`\u{1b}`), so a client
/// cannot act on the terminal of whoever watches the log.
pub fn log(message: &str) {
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr().lock(),
        "tl-mcp: {}",
        crate::terminal::escape_line(message)
    );
}
