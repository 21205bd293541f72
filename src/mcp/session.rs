//! The state of one MCP connection: the negotiated protocol version, and the methods it serves.

use super::rpc::{self, Message, RpcError};
use crate::error::Error;
use crate::service::{self, Output, Request};
use crate::spec::spec;
use crate::spec::validate::{Origin, shorten};
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The `tools/list` payload, rendered from the spec (see `src/spec/emit.rs`).
pub const TOOLS_JSON: &str = include_str!("../../generated/tools.json");

fn tools() -> &'static Value {
    static TOOLS: OnceLock<Value> = OnceLock::new();
    TOOLS.get_or_init(|| serde_json::from_str(TOOLS_JSON).expect("generated/tools.json is JSON"))
}

/// The newest protocol version the server speaks; also what it follows before `initialize`.
pub fn latest_version() -> &'static str {
    spec().latest_protocol_version()
}

pub struct Session {
    /// The version agreed in `initialize`; `None` until then.
    version: Option<&'static str>,
    /// The database, or why it could not be determined (reported by every tool call).
    db: Result<PathBuf, Error>,
}

impl Session {
    pub fn new(db: Result<PathBuf, Error>) -> Self {
        Session { version: None, db }
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

    /// Answer one line of input; `None` when nothing is to be written (notifications).
    pub fn handle_line(&mut self, bytes: &[u8]) -> Option<Value> {
        if bytes.iter().all(u8::is_ascii_whitespace) {
            // A blank line carries no message; answering it would only confuse clients.
            return None;
        }
        match rpc::parse(bytes) {
            Ok(value) => self.handle_value(value),
            Err(error) => {
                log(&error.message);
                Some(rpc::failure(Value::Null, &error))
            }
        }
    }

    fn handle_value(&mut self, value: Value) -> Option<Value> {
        let Value::Array(items) = value else {
            return self.handle_message(value);
        };
        if !self.batches_allowed() {
            let when = if self.version.is_some() {
                format!("protocol version {} was negotiated", self.version())
            } else {
                format!(
                    "before initialize the server follows the latest protocol version, {}",
                    self.version()
                )
            };
            let error = RpcError::invalid_request(format!(
                "JSON-RPC batches (arrays) are accepted only with protocol versions {}, and {when}; send one message per line",
                spec().constants.mcp_batch_protocol_versions.join(" and ")
            ));
            log(&error.message);
            return Some(rpc::failure(Value::Null, &error));
        }
        if items.is_empty() {
            let error = RpcError::invalid_request("the batch is an empty array");
            return Some(rpc::failure(Value::Null, &error));
        }
        let answers: Vec<Value> = items
            .into_iter()
            .filter_map(|item| self.handle_message(item))
            .collect();
        (!answers.is_empty()).then_some(Value::Array(answers))
    }

    fn handle_message(&mut self, value: Value) -> Option<Value> {
        match rpc::classify(value) {
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
                Some(match self.dispatch(&method, params) {
                    Ok(result) => rpc::success(id, result),
                    Err(error) => rpc::failure(id, &error),
                })
            }
        }
    }

    fn dispatch(&mut self, method: &str, params: Option<Value>) -> Result<Value, RpcError> {
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
            "initialize" => self.initialize(params),
            "ping" => Ok(json!({})),
            "tools/list" => Ok(self.tools_list()),
            "tools/call" => self.tools_call(params),
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
        }))
    }

    fn tools_list(&self) -> Value {
        let mut tools = tools().clone();
        if !self.at_least(&spec().constants.mcp_structured_content_from)
            && let Some(Value::Array(list)) = tools.get_mut("tools")
        {
            for tool in list {
                if let Value::Object(tool) = tool {
                    tool.remove("outputSchema");
                }
            }
        }
        tools
    }

    fn tools_call(&mut self, mut params: Map<String, Value>) -> Result<Value, RpcError> {
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
        let mut args = match params.remove("arguments") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(args)) => args,
            Some(other) => {
                return Err(RpcError::invalid_params(format!(
                    "arguments must be an object, got {}",
                    rpc::describe(&other)
                )));
            }
        };
        let in_arguments = key_text(args.remove("idempotency_key"), "arguments")?;
        let in_params = key_text(params.remove("idempotency_key"), "params")?;
        let idempotency_key = match (in_arguments, in_params) {
            (Some(a), Some(p)) if a != p => {
                return Err(Error::invalid(
                    "invalid argument idempotency_key: arguments.idempotency_key and params.idempotency_key differ; give the key once, or the same key in both places",
                )
                .into());
            }
            (a, p) => a.or(p),
        };
        let db = self.db.clone()?;
        let output = service::execute(
            db,
            Request {
                op,
                args,
                idempotency_key,
                origin: Origin::Mcp,
            },
        )?;
        let (text, structured) = match output {
            // Exactly the bytes `tl` prints for the same command.
            Output::Json(value) => (
                crate::terminal::escape_json(&value.to_string()).into_owned(),
                value,
            ),
            Output::Text(text) => (text, Value::Null),
        };
        let mut result = Map::new();
        result.insert("content".into(), json!([{"type": "text", "text": text}]));
        if structured.is_object() && self.at_least(&spec().constants.mcp_structured_content_from) {
            result.insert("structuredContent".into(), structured);
        }
        Ok(Value::Object(result))
    }
}

/// An idempotency key from `arguments` or `params`: absent or null is no key; it must be a string.
fn key_text(value: Option<Value>, place: &str) -> Result<Option<String>, RpcError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(key)) => Ok(Some(key)),
        Some(other) => Err(Error::invalid(format!(
            "invalid argument idempotency_key: {place}.idempotency_key must be a string such as \"request-001\", got {}",
            rpc::describe(&other)
        ))
        .into()),
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
