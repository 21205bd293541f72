//! JSON-RPC 2.0: parse a line, tell requests from notifications, and build responses and errors.

use serde_json::{Map, Value, json};

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
    pub data: Option<Value>,
}

impl RpcError {
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    pub fn parse(detail: impl std::fmt::Display) -> Self {
        RpcError::new(PARSE_ERROR, format!("Parse error: {detail}"))
    }

    pub fn invalid_request(detail: impl std::fmt::Display) -> Self {
        RpcError::new(INVALID_REQUEST, format!("Invalid Request: {detail}"))
    }

    pub fn invalid_params(detail: impl std::fmt::Display) -> Self {
        RpcError::new(INVALID_PARAMS, format!("Invalid params: {detail}"))
    }

    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("code".into(), json!(self.code));
        object.insert("message".into(), json!(self.message));
        if let Some(data) = &self.data {
            object.insert("data".into(), data.clone());
        }
        Value::Object(object)
    }
}

impl From<crate::error::Error> for RpcError {
    /// A library error keeps its message (worded for MCP) and data; its code comes from the spec's
    /// error table. Only argument errors are answered as JSON-RPC errors (see `mcp::session`); any
    /// other kind would be an internal error (-32603).
    fn from(error: crate::error::Error) -> Self {
        RpcError {
            code: error.kind.mcp_code().unwrap_or(-32603),
            message: error.render(crate::spec::validate::Origin::Mcp),
            data: error.data,
        }
    }
}

/// One incoming JSON-RPC message, after the envelope was checked.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    /// Has an `id`: must be answered.
    Request {
        id: Value,
        method: String,
        params: Option<Value>,
    },
    /// Has no `id`: never answered.
    Notification {
        method: String,
        params: Option<Value>,
    },
    /// A response from the client (it has `result` or `error` and no `method`). This server sends no
    /// requests, so such a message is ignored.
    Response,
}

/// Decode one line into JSON. Invalid UTF-8 and invalid JSON (including nesting deeper than
/// serde_json's recursion limit, and numbers out of range) are parse errors.
pub fn parse(bytes: &[u8]) -> Result<Value, RpcError> {
    let text = std::str::from_utf8(bytes).map_err(|e| {
        RpcError::parse(format!(
            "the message is not valid UTF-8 (invalid byte at offset {})",
            e.valid_up_to()
        ))
    })?;
    serde_json::from_str(text)
        .map_err(|e| RpcError::parse(format!("the message is not valid JSON ({e})")))
}

/// A message whose envelope is invalid: the id to answer with (null when unknown) and the error.
pub type Rejected = Box<(Value, RpcError)>;

/// Check the JSON-RPC envelope of one message (not a batch). On failure, return the id to answer with
/// (the message's own id when it is valid, otherwise null) and the error.
pub fn classify(value: Value) -> Result<Message, Rejected> {
    let Value::Object(mut object) = value else {
        return Err(Box::new((
            Value::Null,
            RpcError::invalid_request(
                "a message must be a JSON object with \"jsonrpc\": \"2.0\" and a \"method\"",
            ),
        )));
    };
    let id = match object.remove("id") {
        None => None,
        Some(id @ Value::String(_)) => Some(id),
        Some(Value::Number(n)) if n.is_i64() || n.is_u64() => Some(Value::Number(n)),
        Some(other) => {
            return Err(Box::new((
                Value::Null,
                RpcError::invalid_request(format!(
                    "\"id\" must be a string or an integer, got {}",
                    describe(&other)
                )),
            )));
        }
    };
    let fail = |detail: String| {
        Err(Box::new((
            id.clone().unwrap_or(Value::Null),
            RpcError::invalid_request(detail),
        )))
    };
    if object.get("jsonrpc") != Some(&Value::String("2.0".into())) {
        return fail("\"jsonrpc\" must be the string \"2.0\"".into());
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        None if id.is_some() && (object.contains_key("result") || object.contains_key("error")) => {
            return Ok(Message::Response);
        }
        None => return fail("\"method\" is missing".into()),
        Some(other) => {
            return fail(format!(
                "\"method\" must be a string, got {}",
                describe(&other)
            ));
        }
    };
    let params = match object.remove("params") {
        None | Some(Value::Null) => None,
        Some(params @ (Value::Object(_) | Value::Array(_))) => Some(params),
        Some(other) => {
            return fail(format!(
                "\"params\" must be an object, got {}",
                describe(&other)
            ));
        }
    };
    Ok(match id {
        Some(id) => Message::Request { id, method, params },
        None => Message::Notification { method, params },
    })
}

/// A success response.
pub fn success(id: Value, result: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "result": result})
}

/// An error response.
pub fn failure(id: Value, error: &RpcError) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": error.to_json()})
}

/// The JSON type of a value, for error messages (never the value itself, which may be huge).
pub fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a non-integer number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_messages() {
        assert_eq!(
            classify(json!({"jsonrpc": "2.0", "id": 7, "method": "ping"})),
            Ok(Message::Request {
                id: json!(7),
                method: "ping".into(),
                params: None
            })
        );
        assert_eq!(
            classify(json!({"jsonrpc": "2.0", "method": "x", "params": {"a": 1}})),
            Ok(Message::Notification {
                method: "x".into(),
                params: Some(json!({"a": 1}))
            })
        );
        assert_eq!(
            classify(json!({"jsonrpc": "2.0", "id": "a", "result": {}})),
            Ok(Message::Response)
        );
        let (id, err) =
            *classify(json!({"jsonrpc": "2.0", "id": 1.5, "method": "ping"})).unwrap_err();
        assert_eq!((id, err.code), (Value::Null, INVALID_REQUEST));
        let (id, err) =
            *classify(json!({"jsonrpc": "1.0", "id": "k", "method": "ping"})).unwrap_err();
        assert_eq!((id, err.code), (json!("k"), INVALID_REQUEST));
        let (id, err) = *classify(json!({"jsonrpc": "2.0", "id": 3, "method": 4})).unwrap_err();
        assert_eq!((id, err.code), (json!(3), INVALID_REQUEST));
        let (id, err) =
            *classify(json!({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": 4}))
                .unwrap_err();
        assert_eq!((id, err.code), (json!(3), INVALID_REQUEST));
        let (id, err) = *classify(json!(5)).unwrap_err();
        assert_eq!((id, err.code), (Value::Null, INVALID_REQUEST));
    }

    #[test]
    fn parse_errors() {
        assert_eq!(parse(b"\xff").unwrap_err().code, PARSE_ERROR);
        assert_eq!(parse(b"{").unwrap_err().code, PARSE_ERROR);
        assert_eq!(parse(b"1e400").unwrap_err().code, PARSE_ERROR);
        let deep = "[".repeat(100_000);
        assert_eq!(parse(deep.as_bytes()).unwrap_err().code, PARSE_ERROR);
    }
}
