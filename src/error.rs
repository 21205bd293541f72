//! The library's error: a kind from the spec's error table, a message for people, optional data.
//!
//! Front-ends never invent errors of their own kinds: the CLI maps a kind to its exit code and the MCP
//! server to its JSON-RPC code, both read from the spec.

use serde_json::{Map, Value, json};
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    InvalidArgument,
    NotFound,
    Conflict,
    Archived,
    BudgetInfeasible,
    NotEligible,
    LimitExceeded,
    Database,
    Output,
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
        }
    }

    pub const ALL: [ErrorKind; 9] = [
        ErrorKind::InvalidArgument,
        ErrorKind::NotFound,
        ErrorKind::Conflict,
        ErrorKind::Archived,
        ErrorKind::BudgetInfeasible,
        ErrorKind::NotEligible,
        ErrorKind::LimitExceeded,
        ErrorKind::Database,
        ErrorKind::Output,
    ];

    pub fn exit_code(self) -> i32 {
        crate::spec::spec().error(self.code()).exit_code
    }

    pub fn mcp_code(self) -> i64 {
        crate::spec::spec().error(self.code()).mcp_code
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Error {
    pub kind: ErrorKind,
    pub message: String,
    pub data: Option<Value>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
            data: None,
        }
    }

    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::InvalidArgument, message)
    }

    pub fn not_found(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::NotFound, message)
    }

    pub fn conflict(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Conflict, message)
    }

    pub fn database(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::Database, message)
    }

    pub fn overflow() -> Self {
        Error::new(
            ErrorKind::LimitExceeded,
            "token arithmetic overflow: the sum of token counts does not fit in 64 bits; use smaller --tokens values",
        )
    }

    /// The CLI's stderr object: `{"error": message}` plus `data` where the error has it.
    pub fn to_json(&self) -> Value {
        let mut object = Map::new();
        object.insert("error".into(), json!(self.message));
        if let Some(data) = &self.data {
            object.insert("data".into(), data.clone());
        }
        Value::Object(object)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

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
}
