//! The product contract, defined in `spec/timeline.json`.
//!
//! Every operation, parameter, limit, result shape and error kind is defined once in that file. The
//! MCP schemas served at run time come from it (`mcp`), so do the files under `generated/` (the
//! `codegen` module), and both front-ends validate their input against it (`validate`). The
//! binaries do not parse the file: `generated/spec.rs` builds the same values as Rust code, since
//! parsing 60 KB of JSON took half a millisecond of every `tl` process (a tenth of a `tl append`).

pub mod mcp;
pub mod validate;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// Which front-end the arguments came from; only the way parameter names are printed differs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The `tl` command line: parameters are named by their flags (`--max`).
    Cli,
    /// An MCP tool call: parameters are named by their property names (`max`).
    Mcp,
}

/// The spec's text: what the code generator reads (`generated/spec.rs` is built from it).
pub const SPEC_JSON: &str = include_str!("../../spec/timeline.json");

/// The whole product contract as parsed from `spec/timeline.json`: operations, types, errors and limits.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Spec {
    /// Version of the contract itself (changes when an operation or result shape changes).
    pub spec_version: String,
    /// Product title shown in help texts and the MCP server info.
    pub title: String,
    /// One-paragraph description of the product, the top of `tl --help`.
    pub about: String,
    /// The `instructions` of the MCP `initialize` result: a short workflow guide for the model.
    pub mcp_instructions: String,
    /// Named limits and fixed values shared by both front-ends.
    pub constants: Constants,
    /// Parameter types by name (`node_id`, `branch_name`, ...), referenced from parameters and fields.
    pub types: BTreeMap<String, TypeDef>,
    /// Error kinds by name, with their exit codes and MCP codes.
    pub errors: BTreeMap<String, ErrorDef>,
    /// JSON Schema of one message as the read operations return it.
    pub message_schema: JsonText,
    /// One message of a log or a diff side: a message with its time, zone, pin, summary range and
    /// the branches whose head it is (`#/$defs/entry` in result schemas).
    pub entry_schema: JsonText,
    /// The structured content of a failed MCP tool call (`isError: true`): `{"error", "data"?}`.
    pub mcp_error_schema: JsonText,
    /// Every operation, in the order the CLI and the tool list show them.
    pub operations: Vec<Operation>,
    /// Flags every `tl` command accepts (such as `--db`).
    pub globals: Vec<Global>,
}

/// The named constants of the spec: limits, protocol versions and fixed names.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Constants {
    /// Version of the on-disk database format this build writes.
    pub format_version: u64,
    /// Tokens the budget planner keeps free for the model's answer.
    pub reserve_tokens: u64,
    /// Most messages a single read operation returns.
    pub max_output_messages: usize,
    /// Largest message text accepted, in bytes.
    pub max_text_bytes: usize,
    /// Largest idempotency key accepted, in bytes.
    pub max_idempotency_key_bytes: usize,
    /// How long an idempotency key is remembered, in seconds.
    pub idempotency_window_seconds: u64,
    /// Largest MCP frame (one JSON-RPC message) the server reads, in bytes.
    pub mcp_frame_limit_bytes: usize,
    /// MCP protocol versions the server accepts in `initialize`.
    pub mcp_protocol_versions: Vec<String>,
    /// MCP protocol versions in which JSON-RPC batches are allowed.
    pub mcp_batch_protocol_versions: Vec<String>,
    /// Most messages one JSON-RPC batch may hold.
    pub mcp_batch_max_items: usize,
    /// Largest answer line to a JSON-RPC batch, in bytes.
    pub mcp_batch_answer_limit_bytes: usize,
    /// Tool `annotations` exist from this protocol version on.
    pub mcp_annotations_from: String,
    /// `outputSchema` and `structuredContent` exist from this protocol version on.
    pub mcp_structured_content_from: String,
    /// A tool's top-level `title` exists from this protocol version on.
    pub mcp_title_from: String,
    /// From this version on, arguments that fail the argument check are tool execution errors
    /// (`isError: true`, SEP-1303) instead of JSON-RPC "invalid params" errors.
    pub mcp_argument_errors_as_tool_errors_from: String,
    /// Server name in the MCP `initialize` result.
    pub mcp_server_name: String,
    /// ID of the root node every timeline starts from.
    pub root_node: String,
    /// Name of the branch a new timeline starts on.
    pub first_branch: String,
    /// How many characters of a message the ASCII tree shows before cutting it.
    pub ascii_truncate_scalars: usize,
    /// The most tokens one path from the root may hold (a node's `path_tokens`): 2^53 - 1, so every
    /// sum stays exact as a JSON number in any client and fits the engines' signed 64-bit columns.
    pub max_path_tokens: u64,
}

/// A named parameter type: how values are checked and described.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TypeDef {
    /// The shape of the type's values.
    pub kind: TypeKind,
    /// Prefix of IDs of this type (`n` for node IDs), for `id` kinds.
    #[serde(default)]
    pub prefix: Option<String>,
    /// Element type name, for `list` kinds.
    #[serde(default)]
    pub items: Option<String>,
    /// Smallest length in characters, for `string` kinds.
    #[serde(default)]
    pub min_chars: Option<usize>,
    /// Largest length in bytes, for `string` kinds.
    #[serde(default)]
    pub max_bytes: Option<usize>,
    /// Characters a `string` value may not contain.
    #[serde(default)]
    pub forbidden_chars: Vec<String>,
    /// The only values allowed, when the type is an enumeration.
    #[serde(default, rename = "enum")]
    pub allowed: Vec<String>,
    /// The fields of an `object` kind.
    #[serde(default)]
    pub fields: Vec<Field>,
    /// The smallest and largest value of a `uint`, where limited.
    #[serde(default)]
    pub minimum: Option<u64>,
    /// The largest value of a `uint`, where limited.
    #[serde(default)]
    pub maximum: Option<u64>,
    /// What the type means, shown in help and schemas.
    pub description: String,
    /// The description in MCP schemas, where it differs (no command-line spelling).
    #[serde(default)]
    pub mcp_description: Option<String>,
}

impl TypeDef {
    /// The description as `origin` shows it.
    pub fn description_for(&self, origin: Origin) -> &str {
        match (origin, &self.mcp_description) {
            (Origin::Mcp, Some(text)) => text,
            _ => &self.description,
        }
    }
}

/// The shape of a spec type's values.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TypeKind {
    /// A prefixed numeric ID such as `n12`.
    Id,
    /// A comma-separated list (an array over MCP) of another type.
    List,
    /// A text value.
    String,
    /// A non-negative integer.
    Uint,
    /// A switch: a flag without a value on the command line, a boolean over MCP. Never required;
    /// `false` is the same as absent.
    Bool,
    /// A JSON object whose fields are described by `TypeDef::fields`.
    Object,
}

/// A field of an object-typed parameter (the intent). On the command line each field is its own flag.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Field {
    /// The field's key in the object.
    pub name: String,
    /// Name of the field's spec type.
    #[serde(rename = "type")]
    pub ty: String,
    /// Whether the object must contain the field.
    pub required: bool,
    /// The CLI flag that sets the field.
    pub cli_flag: String,
    /// One-line help for the field.
    pub help: String,
    /// The help over MCP, where it differs.
    #[serde(default)]
    pub mcp_help: Option<String>,
}

impl Field {
    /// The help as `origin` shows it: `mcp_help` (else `help`) over MCP, `help` on the command line.
    pub fn help_for(&self, origin: Origin) -> &str {
        match (origin, &self.mcp_help) {
            (Origin::Mcp, Some(text)) => text,
            _ => &self.help,
        }
    }
}

/// One error kind of the spec: how it is reported on each front-end.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorDef {
    /// Exit status of `tl` for this kind.
    pub exit_code: i32,
    /// The JSON-RPC error code when an error of this kind is a protocol error (argument errors
    /// before 2025-11-25); `null` for kinds that are always tool errors (`isError: true`).
    pub mcp_code: Option<i64>,
    /// What the error kind means.
    pub description: String,
}

/// One operation of the spec: its names on each front-end, its parameters, result and errors.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Operation {
    /// The operation's spec name (`fork`, `context_budget`).
    pub name: String,
    /// The `tl` subcommand name.
    pub cli: String,
    /// The MCP tool name, when the operation has a tool.
    pub mcp: Option<String>,
    /// Where the operation runs; the typed requests are grouped by it (`ops::Request`).
    #[serde(default)]
    pub runs: Runs,
    /// Why a changing operation has no MCP tool (required for one; see `check`).
    #[serde(default)]
    pub mcp_omitted: Option<String>,
    /// One line for `tl` help and the CLI reference.
    pub summary: String,
    /// Whether the operation changes the database.
    pub mutating: bool,
    /// The MCP tool's `title` (required for operations with an MCP tool).
    #[serde(default)]
    pub title: Option<String>,
    /// The MCP tool's `description`, written for models (required with an MCP tool).
    #[serde(default)]
    pub mcp_description: Option<String>,
    /// The MCP tool's behaviour hints (required with an MCP tool).
    #[serde(default)]
    pub annotations: Option<Annotations>,
    /// Whether the operation works on one timeline (and takes `timeline_id`).
    pub timeline: TimelineUse,
    /// How the operation treats an idempotency key.
    pub idempotency: KeyUse,
    /// The operation's parameters, in help order.
    pub params: Vec<Param>,
    /// For an array result: the key MCP wraps it under (`{"messages": [...]}`), since MCP
    /// structured content is an object. `tl` prints the array itself.
    #[serde(default)]
    pub mcp_result_key: Option<String>,
    /// JSON Schema of the operation's result.
    pub result: JsonText,
    /// Error kinds the operation can return.
    pub errors: Vec<String>,
}

/// Where an operation runs, which decides the group of its typed request (`ops::Request`).
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum Runs {
    /// Inside one database transaction (`ops::run`): the default.
    #[default]
    Transaction,
    /// On the database as a whole (`db ...`: its information, checks and copies) or as a series of
    /// transactions (import); run by `service`.
    Database,
    /// An export: reads one transaction and writes a file or standard output.
    Export,
    /// Inside `tl` itself, without a database (completions, the man page, the demo): a command of
    /// the CLI, never an MCP tool.
    Local,
}

/// What an MCP tool does to its environment (the tool `annotations`; `openWorldHint` is always
/// false: a tool touches only the local database).
#[derive(Debug, Deserialize, Clone, Copy)]
#[serde(deny_unknown_fields)]
pub struct Annotations {
    /// Only reads: changes nothing.
    pub read_only: bool,
    /// Removes or replaces something (a branch, a pin, the current branch) rather than only adding.
    pub destructive: bool,
    /// Repeating the call with the same arguments has no further effect.
    pub idempotent: bool,
}

/// Whether an operation works on one timeline.
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum TimelineUse {
    /// The operation is about the whole database.
    None,
    /// One timeline: required over MCP, the smallest ID by default on the command line.
    Required,
    /// Optional on both front-ends; without it the operation covers every timeline (search).
    Optional,
}

impl Operation {
    /// Whether the operation runs inside `tl` itself (completions, the man page, the demo).
    pub fn local(&self) -> bool {
        self.runs == Runs::Local
    }
}

impl TimelineUse {
    /// Whether the operation takes a `timeline_id` argument at all.
    pub fn takes_timeline(self) -> bool {
        self != TimelineUse::None
    }
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

/// One parameter of an operation.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Param {
    /// The MCP property name, and the key of the JSON object both front-ends build.
    pub name: String,
    /// The CLI long flag when it differs from the name with `_` turned into `-`.
    #[serde(default)]
    pub cli_flag: Option<String>,
    /// Name of the parameter's spec type.
    #[serde(rename = "type")]
    pub ty: String,
    /// Whether the parameter must be given.
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
    /// One-line help for the parameter.
    pub help: String,
    /// The help over MCP, where it differs from `help`.
    #[serde(default)]
    pub mcp_help: Option<String>,
    /// For a branch name: which branches it names, when not one that exists now. Shell completion
    /// reads it (a new name has nothing to offer; restore-branch offers the archived branches).
    #[serde(default)]
    pub names: Option<Names>,
}

/// What a branch-name parameter names, when not an existing branch (`Param::names`).
#[derive(Debug, Deserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum Names {
    /// A name no branch has yet (fork --name, rename-branch --to, import --branch).
    New,
    /// A branch that was archived and not restored since (restore-branch --branch).
    Archived,
}

impl Param {
    /// The help as `origin` shows it: `cli_help` for `tl`, `mcp_help` (else `help`) over MCP.
    pub fn help_for(&self, origin: Origin) -> String {
        match (origin, &self.mcp_help) {
            (Origin::Cli, _) => self.cli_help(),
            (Origin::Mcp, Some(text)) => text.clone(),
            (Origin::Mcp, None) => self.help.clone(),
        }
    }

    /// The CLI long flag without its dashes: `cli_flag`, else the name with `_` turned into `-`.
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

/// A flag every `tl` command accepts.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Global {
    /// The global's key in the arguments both front-ends build.
    pub name: String,
    /// The CLI long flag.
    pub cli_flag: String,
    /// The value placeholder in `tl` help.
    pub value_name: String,
    /// One-line help for the flag.
    pub help: String,
    /// The description of the matching MCP argument, where there is one.
    #[serde(default)]
    pub mcp_help: Option<String>,
    /// The values the option accepts, where limited (`--format json|text`).
    #[serde(default)]
    pub values: Vec<String>,
    /// The commands (spec operation names) that take the option, where not every command does. Such
    /// an option is given before the command (`tl --format text log`) or after it (`tl log --format
    /// text`), and is never an MCP argument.
    #[serde(default)]
    pub operations: Option<Vec<String>>,
}

impl Global {
    /// Whether `op` takes this option.
    pub fn applies_to(&self, op: &str) -> bool {
        self.operations
            .as_ref()
            .is_none_or(|ops| ops.iter().any(|o| o == op))
    }

    /// Whether `op` takes this option after its command too. An option of some commands only
    /// (`--format json|text`) that one of `op`'s own parameters also names (`import --format`, what
    /// the file holds) is taken before the command only: `tl --format text import --format codex`.
    pub fn after_command(&self, op: &Operation) -> bool {
        self.applies_to(&op.name)
            && (self.operations.is_none() || op.params.iter().all(|p| p.flag() != self.cli_flag))
    }
}

impl Spec {
    /// Parse a spec's JSON text (the code generator's input; the binaries use [`spec`]).
    pub fn parse(text: &str) -> Result<Spec, serde_json::Error> {
        serde_json::from_str(text)
    }

    /// The operation with spec name `name`.
    pub fn operation(&self, name: &str) -> Option<&Operation> {
        self.operations.iter().find(|op| op.name == name)
    }

    /// The operation whose `tl` subcommand is `cli`.
    pub fn by_cli(&self, cli: &str) -> Option<&Operation> {
        self.operations.iter().find(|op| op.cli == cli)
    }

    /// The operation whose MCP tool name is `tool`.
    pub fn by_mcp(&self, tool: &str) -> Option<&Operation> {
        self.operations
            .iter()
            .find(|op| op.mcp.as_deref() == Some(tool))
    }

    /// The type definition named `name`; panics on a name `check` would reject.
    pub fn type_def(&self, name: &str) -> &TypeDef {
        // `check` proves every referenced type exists, and a test runs `check`.
        &self.types[name]
    }

    /// The error kind named `kind`; panics on a name `check` would reject.
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
            for global in self.globals.iter().filter(|g| g.after_command(op)) {
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
                if self
                    .types
                    .get(&param.ty)
                    .is_some_and(|def| def.kind == TypeKind::Bool)
                    && (param.required || param.stdin || param.file_flag.is_some())
                {
                    problems.push(format!(
                        "{}.{}: a flag is never required and has no other source",
                        op.name, param.name
                    ));
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
            if op.local() && (op.mcp.is_some() || op.mutating || op.timeline != TimelineUse::None) {
                problems.push(format!(
                    "{}: a local command has no MCP tool, changes no database and uses no timeline",
                    op.name
                ));
            }
            for param in op.params.iter().filter(|p| p.names.is_some()) {
                if param.ty != "branch_name" {
                    problems.push(format!(
                        "{}.{}: names is only for parameters of type branch_name",
                        op.name, param.name
                    ));
                }
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
            let omitted = op.mcp_omitted.as_deref().is_some_and(|r| !r.is_empty());
            if op.mcp.is_none() && op.mutating && !omitted {
                problems.push(format!(
                    "{}: every mutating operation must be reachable over MCP, or say why not (mcp_omitted)",
                    op.name
                ));
            }
            if op.mcp.is_some() && op.mcp_omitted.is_some() {
                problems.push(format!(
                    "{}: mcp_omitted is only for operations without an MCP tool",
                    op.name
                ));
            }
            if op.mcp.is_some() {
                problems.extend(self.check_tool(op));
            }
        }
        problems.extend(self.check_mcp_wording());
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
        for global in &self.globals {
            for name in global.operations.iter().flatten() {
                if self.operation(name).is_none() {
                    problems.push(format!(
                        "global --{}: unknown operation {name}",
                        global.cli_flag
                    ));
                }
            }
        }
        for (name, def) in &self.types {
            if (def.minimum.is_some() || def.maximum.is_some()) && def.kind != TypeKind::Uint {
                problems.push(format!("type {name}: only a uint has a minimum or maximum"));
            }
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
        if c.reserve_tokens == 0
            || c.max_output_messages == 0
            || c.max_text_bytes == 0
            || c.mcp_batch_max_items == 0
            || c.mcp_batch_answer_limit_bytes == 0
            || c.max_path_tokens == 0
        {
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
        for (what, version) in [
            ("mcp_annotations_from", &c.mcp_annotations_from),
            ("mcp_title_from", &c.mcp_title_from),
            (
                "mcp_argument_errors_as_tool_errors_from",
                &c.mcp_argument_errors_as_tool_errors_from,
            ),
        ] {
            if !c.mcp_protocol_versions.contains(version) {
                problems.push(format!("{what} must be a supported version"));
            }
        }
        if self.mcp_instructions.trim().is_empty() {
            problems.push("mcp_instructions must not be empty".into());
        }
        if !c.mcp_protocol_versions.is_sorted() {
            problems.push(
                "mcp_protocol_versions must be listed oldest first (the last is the latest)".into(),
            );
        }
        problems
    }

    /// What an MCP tool needs besides its name: title, description, annotations true to
    /// `mutating`, and a wrapping key exactly when the result is an array.
    fn check_tool(&self, op: &Operation) -> Vec<String> {
        let mut problems = Vec::new();
        if op.title.as_deref().is_none_or(str::is_empty) {
            problems.push(format!("{}: an MCP tool needs a title", op.name));
        }
        if op.mcp_description.as_deref().is_none_or(str::is_empty) {
            problems.push(format!("{}: an MCP tool needs an mcp_description", op.name));
        }
        match op.annotations {
            None => problems.push(format!("{}: an MCP tool needs annotations", op.name)),
            Some(a) if a.read_only == op.mutating => problems.push(format!(
                "{}: annotations.read_only must be the opposite of mutating",
                op.name
            )),
            Some(a) if a.read_only && a.destructive => problems.push(format!(
                "{}: a read-only tool cannot be destructive",
                op.name
            )),
            Some(_) => {}
        }
        let array = op.result.get("type").and_then(Value::as_str) == Some("array");
        if array != op.mcp_result_key.is_some() {
            problems.push(format!(
                "{}: mcp_result_key is needed exactly when the result is an array (MCP structured content is an object)",
                op.name
            ));
        }
        problems
    }

    /// Every text that MCP clients and models read, paired with where it comes from.
    pub fn mcp_texts(&self) -> Vec<(String, String)> {
        let mut texts = vec![(
            "mcp_instructions".to_string(),
            self.mcp_instructions.clone(),
        )];
        for op in self.operations.iter().filter(|op| op.mcp.is_some()) {
            if let Some(text) = &op.mcp_description {
                texts.push((format!("{}.mcp_description", op.name), text.clone()));
            }
            for param in &op.params {
                texts.push((
                    format!("{}.{}", op.name, param.name),
                    param.help_for(Origin::Mcp),
                ));
                let def = self.type_def(&param.ty);
                texts.push((
                    format!("type {}", param.ty),
                    def.description_for(Origin::Mcp).to_string(),
                ));
                for field in &def.fields {
                    texts.push((
                        format!("{}.{}.{}", op.name, param.name, field.name),
                        field.help_for(Origin::Mcp).to_string(),
                    ));
                }
            }
        }
        for global in &self.globals {
            if let Some(text) = &global.mcp_help {
                texts.push((format!("global {}", global.name), text.clone()));
            }
        }
        texts
    }

    /// MCP texts must not speak of the command line: a model cannot run `tl`.
    fn check_mcp_wording(&self) -> Vec<String> {
        const CLI_WORDS: [&str; 7] = [
            "--",
            "(CLI",
            "tl ",
            "comma-separated",
            "command line",
            "standard input",
            "in params",
        ];
        let mut problems = Vec::new();
        for (place, text) in self.mcp_texts() {
            for word in CLI_WORDS {
                if text.contains(word) {
                    problems.push(format!(
                        "{place}: MCP text speaks of the command line ({word:?}): {text}"
                    ));
                }
            }
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

/// The spec compiled into this build, built once per process from `generated/spec.rs`, which the
/// freshness test keeps equal to `spec/timeline.json`.
pub fn spec() -> &'static Spec {
    static SPEC: OnceLock<Spec> = OnceLock::new();
    SPEC.get_or_init(compiled)
}

/// The values of `spec/timeline.json` as Rust code (`codegen::spec_data` writes it).
fn compiled() -> Spec {
    include!("../../generated/spec.rs")
}

/// A JSON value of the spec (a result's schema) kept as its text until it is first read: most runs
/// read none of them, and they are a fifth of the spec.
pub struct JsonText {
    text: std::borrow::Cow<'static, str>,
    value: OnceLock<Value>,
}

impl JsonText {
    /// A value compiled in as text (`generated/spec.rs`); the freshness test proves it parses.
    pub const fn compiled(text: &'static str) -> JsonText {
        JsonText {
            text: std::borrow::Cow::Borrowed(text),
            value: OnceLock::new(),
        }
    }

    /// The value's JSON text, compact.
    pub fn text(&self) -> &str {
        &self.text
    }
}

impl std::ops::Deref for JsonText {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.value.get_or_init(|| {
            serde_json::from_str(&self.text).expect("a spec value compiled in is valid JSON")
        })
    }
}

impl std::fmt::Debug for JsonText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

impl<'de> Deserialize<'de> for JsonText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<JsonText, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(JsonText {
            text: std::borrow::Cow::Owned(value.to_string()),
            value: OnceLock::from(value),
        })
    }
}

impl Serialize for JsonText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Value::serialize(self, serializer)
    }
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
    fn twenty_one_mcp_tools() {
        assert_eq!(
            spec()
                .operations
                .iter()
                .filter(|op| op.mcp.is_some())
                .count(),
            21
        );
    }
}
