//! What a request produced, below both the service and export (which makes the text of an ASCII
//! export), so neither reaches up into the other.

use serde_json::Value;

/// What a request produced: JSON for every operation, plain text for an ASCII export to stdout.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// The operation's JSON result.
    Json(Value),
    /// Text printed as is (an ASCII tree export).
    Text(String),
}
