//! The product contract, loaded from `spec/timeline.json`.
//!
//! Every operation, parameter, limit, result shape and error kind is defined once in that file. The CLI
//! command tree, the MCP `tools/list` payload and the CLI reference are rendered from it (see `emit`),
//! and both front-ends validate their input against it (see `validate`).

pub mod emit;
pub mod validate;

use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The spec text, compiled into both binaries.
pub const SPEC_JSON: &str = include_str!("../../spec/timeline.json");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    pub spec_version: String,
    pub title: String,
    pub about: String,
    pub constants: Constants,
    pub types: BTreeMap<String, TypeDef>,
    pub errors: BTreeMap<String, ErrorDef>,
    pub message_schema: Value,
    pub operations: Vec<Operation>,
    pub globals: Vec<Global>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Constants {
    pub format_version: u64,
    pub reserve_tokens: u64,
    pub max_output_messages: usize,
    pub max_text_bytes: usize,
    pub max_idempotency_key_bytes: usize,
    pub idempotency_window_seconds: u64,
    pub mcp_frame_limit_bytes: usize,
    pub mcp_protocol_versions: Vec<String>,
    pub mcp_batch_protocol_versions: Vec<String>,
    pub mcp_structured_content_from: String,
    pub mcp_server_name: String,
    pub root_node: String,
    pub first_branch: String,
    pub ascii_truncate_scalars: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TypeDef {
    pub kind: TypeKind,
    #[serde(default)]
    pub prefix: Option<String>,
    #[serde(default)]
    pub items: Option<String>,
    #[serde(default)]
    pub min_chars: Option<usize>,
    #[serde(default)]
    pub max_bytes: Option<usize>,
    #[serde(default)]
    pub forbidden_chars: Vec<String>,
    #[serde(default, rename = "enum")]
    pub allowed: Vec<String>,
    #[serde(default)]
    pub fields: Vec<Field>,
    pub description: String,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TypeKind {
    Id,
    List,
    String,
    Uint,
    Object,
}

/// A field of an object-typed parameter (the intent). On the command line each field is its own flag.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    pub name: String,
    #[serde(rename = "type")]
    pub ty: String,
    pub required: bool,
    pub cli_flag: String,
    pub help: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorDef {
    pub exit_code: i32,
    pub mcp_code: i64,
    pub description: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Operation {
    pub name: String,
    pub cli: String,
    pub mcp: Option<String>,
    /// Runs inside `tl` itself, without a database transaction (completions, the man page, the demo):
    /// a command of the CLI, never an MCP tool.
    #[serde(default)]
    pub local: bool,
    pub summary: String,
    pub mutating: bool,
    pub timeline: TimelineUse,
    pub idempotency: KeyUse,
    pub params: Vec<Param>,
    pub result: Value,
    pub errors: Vec<String>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TimelineUse {
    None,
    Required,
}

/// What an operation does with an idempotency key.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum KeyUse {
    /// Keys are scoped to the whole database (create).
    Database,
    /// Keys are scoped to the timeline.
    Timeline,
    /// Read-only: a key is accepted and has no effect.
    Ignored,
    /// The operation refuses a key (export).
    Rejected,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    /// The MCP property name, and the key of the JSON object both front-ends build.
    pub name: String,
    /// The CLI long flag when it differs from the name with `_` turned into `-`.
    #[serde(default)]
    pub cli_flag: Option<String>,
    #[serde(rename = "type")]
    pub ty: String,
    pub required: bool,
    /// The CLI accepts `-` to read the value from standard input.
    #[serde(default)]
    pub stdin: bool,
    /// The CLI also accepts the value from a file through this flag.
    #[serde(default)]
    pub file_flag: Option<String>,
    /// On the command line a positional argument (`tl completions bash`) instead of a flag.
    #[serde(default)]
    pub positional: bool,
    pub help: String,
}

impl Param {
    pub fn flag(&self) -> String {
        self.cli_flag
            .clone()
            .unwrap_or_else(|| self.name.replace('_', "-"))
    }

    /// How `tl` names the parameter to a person: `--max`, or `<SHELL>` for a positional one.
    pub fn cli_name(&self) -> String {
        if self.positional {
            format!("<{}>", self.name.to_uppercase())
        } else {
            format!("--{}", self.flag())
        }
    }

    /// The help as `tl` shows it: `help` plus how the command line can read the value (standard
    /// input, a file). MCP schemas and errors use `help` alone: those ways do not exist there.
    pub fn cli_help(&self) -> String {
        let mut help = self.help.clone();
        if self.stdin {
            help.push_str(" Use - to read it from standard input");
            if let Some(file) = &self.file_flag {
                help.push_str(&format!(", or --{file} PATH"));
            }
            help.push('.');
        }
        help
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Global {
    pub name: String,
    pub cli_flag: String,
    pub value_name: String,
    pub help: String,
}

impl Spec {
    pub fn operation(&self, name: &str) -> Option<&Operation> {
        self.operations.iter().find(|op| op.name == name)
    }

    pub fn by_cli(&self, cli: &str) -> Option<&Operation> {
        self.operations.iter().find(|op| op.cli == cli)
    }

    pub fn by_mcp(&self, tool: &str) -> Option<&Operation> {
        self.operations
            .iter()
            .find(|op| op.mcp.as_deref() == Some(tool))
    }

    pub fn type_def(&self, name: &str) -> &TypeDef {
        // `check` proves every referenced type exists, and a test runs `check`.
        &self.types[name]
    }

    pub fn error(&self, kind: &str) -> &ErrorDef {
        &self.errors[kind]
    }

    /// The invariants of the table: unique names, known types and errors, sane limits.
    /// Returns every problem found, so a broken spec reports all of them at once.
    pub fn check(&self) -> Vec<String> {
        let mut problems = Vec::new();
        let mut seen = std::collections::BTreeSet::new();
        for op in &self.operations {
            if !seen.insert(&op.name) {
                problems.push(format!("duplicate operation name {}", op.name));
            }
            if op.summary.is_empty() || op.summary.len() > 100 {
                problems.push(format!(
                    "{}: summary must be one line of 1..=100 bytes",
                    op.name
                ));
            }
            let mut flags = std::collections::BTreeSet::new();
            for global in &self.globals {
                flags.insert(global.cli_flag.clone());
            }
            let mut names = std::collections::BTreeSet::new();
            for param in &op.params {
                if !names.insert(param.name.clone()) {
                    problems.push(format!("{}: duplicate parameter {}", op.name, param.name));
                }
                match self.types.get(&param.ty) {
                    None => problems.push(format!(
                        "{}.{}: unknown type {}",
                        op.name, param.name, param.ty
                    )),
                    Some(def) if def.kind == TypeKind::Object => {
                        for field in &def.fields {
                            if !flags.insert(field.cli_flag.clone()) {
                                problems.push(format!(
                                    "{}: duplicate flag --{}",
                                    op.name, field.cli_flag
                                ));
                            }
                        }
                    }
                    Some(_) => {
                        if !flags.insert(param.flag()) {
                            problems.push(format!(
                                "{}: duplicate flag --{}",
                                op.name,
                                param.flag()
                            ));
                        }
                    }
                }
                if let Some(file_flag) = &param.file_flag
                    && !flags.insert(file_flag.clone())
                {
                    problems.push(format!("{}: duplicate flag --{file_flag}", op.name));
                }
            }
            for error in &op.errors {
                if !self.errors.contains_key(error) {
                    problems.push(format!("{}: unknown error kind {error}", op.name));
                }
            }
            if op.mutating && op.idempotency == KeyUse::Ignored {
                problems.push(format!(
                    "{}: a mutating operation must honour idempotency keys",
                    op.name
                ));
            }
            if op.local && (op.mcp.is_some() || op.mutating || op.timeline != TimelineUse::None) {
                problems.push(format!(
                    "{}: a local command has no MCP tool, changes no database and uses no timeline",
                    op.name
                ));
            }
            for param in op.params.iter().filter(|p| p.positional) {
                if op.params.iter().filter(|p| p.positional).count() > 1
                    || param.cli_flag.is_some()
                    || param.file_flag.is_some()
                    || param.stdin
                    || self
                        .types
                        .get(&param.ty)
                        .is_some_and(|d| d.kind == TypeKind::Object)
                {
                    problems.push(format!(
                        "{}.{}: a positional parameter is the only one of its command and has no flag, file flag, stdin or object type",
                        op.name, param.name
                    ));
                }
            }
            if op.mcp.is_none() && op.mutating {
                problems.push(format!(
                    "{}: every mutating operation must be reachable over MCP",
                    op.name
                ));
            }
        }
        let mut cli_names = std::collections::BTreeSet::new();
        let mut mcp_names = std::collections::BTreeSet::new();
        for op in &self.operations {
            if !cli_names.insert(&op.cli) {
                problems.push(format!("duplicate CLI command {}", op.cli));
            }
            if let Some(mcp) = &op.mcp
                && !mcp_names.insert(mcp)
            {
                problems.push(format!("duplicate MCP tool {mcp}"));
            }
        }
        for (name, def) in &self.types {
            if def.kind == TypeKind::Id && def.prefix.as_deref().unwrap_or("").is_empty() {
                problems.push(format!("type {name}: an id needs a prefix"));
            }
            if def.kind == TypeKind::List
                && def
                    .items
                    .as_ref()
                    .is_none_or(|i| !self.types.contains_key(i))
            {
                problems.push(format!("type {name}: a list needs known items"));
            }
            for field in &def.fields {
                if !self.types.contains_key(&field.ty) {
                    problems.push(format!(
                        "type {name}.{}: unknown type {}",
                        field.name, field.ty
                    ));
                }
            }
        }
        let c = &self.constants;
        if c.reserve_tokens == 0 || c.max_output_messages == 0 || c.max_text_bytes == 0 {
            problems.push("constants must be positive".into());
        }
        if !c
            .mcp_batch_protocol_versions
            .iter()
            .all(|v| c.mcp_protocol_versions.contains(v))
        {
            problems.push("batch protocol versions must be supported versions".into());
        }
        if !c
            .mcp_protocol_versions
            .contains(&c.mcp_structured_content_from)
        {
            problems.push("mcp_structured_content_from must be a supported version".into());
        }
        if !c.mcp_protocol_versions.is_sorted() {
            problems.push(
                "mcp_protocol_versions must be listed oldest first (the last is the latest)".into(),
            );
        }
        problems
    }

    /// The newest protocol version, offered when a client asks for one we do not know.
    pub fn latest_protocol_version(&self) -> &str {
        self.constants
            .mcp_protocol_versions
            .last()
            .map(String::as_str)
            .unwrap_or_default()
    }
}

/// The spec compiled into this build. Parsing is cheap and happens once per process.
pub fn spec() -> &'static Spec {
    static SPEC: OnceLock<Spec> = OnceLock::new();
    SPEC.get_or_init(|| {
        // The spec is part of the source; a test proves it parses, so this cannot fail in a release.
        serde_json::from_str(SPEC_JSON).expect("spec/timeline.json is valid (checked by tests)")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_parses_and_has_no_problems() {
        let problems = spec().check();
        assert!(problems.is_empty(), "spec problems: {problems:#?}");
    }

    #[test]
    fn fourteen_mcp_tools() {
        assert_eq!(
            spec()
                .operations
                .iter()
                .filter(|op| op.mcp.is_some())
                .count(),
            14
        );
    }
}
