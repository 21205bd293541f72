//! JSON-RPC 2.0: parse a line, tell requests from notifications, and build responses and errors.

use serde_json::{Map, Value, json};

/// JSON-RPC code: the message is not valid JSON.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC code: the JSON is not a valid request object.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC code: the server has no such method.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC code: the method's parameters are wrong.
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC code: the server could not answer the request.
pub const INTERNAL_ERROR: i64 = -32603;

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    /// The JSON-RPC error code.
    pub code: i64,
    /// A short description for people.
    pub message: String,
    /// Structured details, when there are any.
    pub data: Option<Value>,
}

impl RpcError {
    /// An error with `code` and `message` and no data.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        RpcError {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// A `PARSE_ERROR` that says what could not be parsed.
    pub fn parse(detail: impl std::fmt::Display) -> Self {
        RpcError::new(PARSE_ERROR, format!("Parse error: {detail}"))
    }

    /// An `INVALID_REQUEST` error with `detail`.
    pub fn invalid_request(detail: impl std::fmt::Display) -> Self {
        RpcError::new(INVALID_REQUEST, format!("Invalid Request: {detail}"))
    }

    /// An `INVALID_PARAMS` error with `detail`.
    pub fn invalid_params(detail: impl std::fmt::Display) -> Self {
        RpcError::new(INVALID_PARAMS, format!("Invalid params: {detail}"))
    }

    /// The error object of a JSON-RPC response.
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
        /// The request's ID, echoed in the response.
        id: Value,
        /// The method called.
        method: String,
        /// The method's parameters, when given.
        params: Option<Value>,
    },
    /// Has no `id`: never answered.
    Notification {
        /// The method called.
        method: String,
        /// The method's parameters, when given.
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

/// How many items the line holds when it is a JSON array (a batch), counted without building them
/// in memory; `None` when it is not a well-formed array (`parse` then says why).
pub fn batch_len(bytes: &[u8]) -> Option<usize> {
    struct Count(usize);
    impl<'de> serde::Deserialize<'de> for Count {
        fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_seq(Count(0))
        }
    }
    impl<'de> serde::de::Visitor<'de> for Count {
        type Value = Count;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("an array")
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(
            mut self,
            mut seq: A,
        ) -> Result<Count, A::Error> {
            while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {
                self.0 += 1;
            }
            Ok(self)
        }
    }
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace())?;
    if *first != b'[' {
        return None;
    }
    let text = std::str::from_utf8(bytes).ok()?;
    serde_json::from_str::<Count>(text)
        .ok()
        .map(|count| count.0)
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
                    describe_id(&other)
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

/// What is wrong with an `id` that is neither a string nor a 64-bit integer. JSON has one number
/// type; serde_json reads an integer beyond the 64-bit range, and any number written with a fraction
/// or an exponent, as a float, which could not be echoed back exactly.
fn describe_id(id: &Value) -> String {
    match id {
        Value::Number(n) => match n.as_f64() {
            // The integers in between parse as integers. 2^64 and -2^63 are exact in f64, and the
            // first integers beyond the range round to them.
            Some(f) if f >= 18_446_744_073_709_551_616.0 || f <= -9_223_372_036_854_775_808.0 => format!(
                "an integer beyond the 64-bit range ({} to {}); send such an id as a string",
                i64::MIN,
                u64::MAX
            ),
            Some(f) if f.fract() == 0.0 => {
                "a number written with a decimal point or an exponent (such as 1.0 or 1e3); write a whole number without them".into()
            }
            _ => "a number with a fractional part".into(),
        },
        other => describe(other).into(),
    }
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
    fn ids_that_are_not_64_bit_integers_say_why() {
        let message = |line: &str| {
            let (id, err) = *classify(parse(line.as_bytes()).unwrap()).unwrap_err();
            assert_eq!((id, err.code), (Value::Null, INVALID_REQUEST));
            err.message
        };
        let id = |n: &str| format!(r#"{{"jsonrpc":"2.0","id":{n},"method":"ping"}}"#);
        for beyond in [
            "18446744073709551616",
            "-9223372036854775809",
            "1e19999",
            "1e20",
        ] {
            if beyond == "1e19999" {
                // Out of f64's range: the line is not accepted as JSON at all.
                assert_eq!(parse(id(beyond).as_bytes()).unwrap_err().code, PARSE_ERROR);
                continue;
            }
            assert!(
                message(&id(beyond)).contains("an integer beyond the 64-bit range"),
                "{beyond}"
            );
        }
        for written in ["1.0", "1e3", "-0.0", "1E19"] {
            assert!(
                message(&id(written)).contains("a number written with a decimal point"),
                "{written}"
            );
        }
        assert!(message(&id("0.5")).contains("a number with a fractional part"));
        for fine in ["18446744073709551615", "-9223372036854775808", "0"] {
            assert!(
                classify(parse(id(fine).as_bytes()).unwrap()).is_ok(),
                "{fine}"
            );
        }
    }

    #[test]
    fn counts_batches() {
        assert_eq!(batch_len(b" [1, {\"a\": [2, 3]}, \"x\"] "), Some(3));
        assert_eq!(batch_len(b"[]"), Some(0));
        assert_eq!(batch_len(b"{}"), None);
        assert_eq!(batch_len(b"[1,"), None);
        assert_eq!(batch_len(b"[1] 2"), None);
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
