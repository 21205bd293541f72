//! Renderers of the files under `generated/`. Each is a walk over the spec; the freshness test
//! (`tests/suite/generated.rs`) compares their output with the checked-in files.

use super::validate::Origin;
use super::{Operation, Param, Spec, TypeDef, TypeKind, spec};
use serde_json::{Map, Value, json};

/// The note at the top of every generated file: where it comes from and how to regenerate it.
pub const HEADER_NOTE: &str = "generated from spec/timeline.json; do not edit. Regenerate with: cargo test --test suite generated::";

/// Every generated file as (path relative to the repository root, contents).
pub fn render_all() -> Vec<(&'static str, String)> {
    let spec = spec();
    let mut files = vec![
        ("generated/cli.rs", render_cli(spec)),
        ("generated/requests.rs", render_requests(spec)),
        ("generated/tools.json", pretty(&tools_list(spec))),
        ("generated/cli-reference.md", render_reference(spec)),
        (
            "generated/schema/database.json",
            pretty(&crate::model::file::database_schema()),
        ),
    ];
    // The man page and completion scripts walk the compiled clap tree (generated/cli.rs): after a spec
    // change the first run refreshes cli.rs, the second (built from it) these.
    files.push(("generated/man/tl.1", crate::cli::shell::man_page()));
    for (shell, path) in crate::cli::shell::COMPLETION_FILES {
        files.push((
            path,
            crate::cli::shell::completion_script(shell).unwrap_or_default(),
        ));
    }
    files
}

fn pretty(value: &Value) -> String {
    let mut text = serde_json::to_string_pretty(value).unwrap_or_default();
    text.push('\n');
    text
}

/// The JSON Schema of one value of a spec type, as MCP tools declare it. Every limit the argument
/// check enforces is stated: `pattern`, `minLength`, `maxLength` (for byte limits the character
/// count can only be an upper bound: the description says bytes), `minimum` and `maximum`, `enum`.
pub fn type_schema(spec: &Spec, def: &TypeDef) -> Value {
    let mut schema = match def.kind {
        TypeKind::Id => {
            let prefix = def.prefix.as_deref().unwrap_or_default();
            json!({
                "type": "string",
                "pattern": format!("^{prefix}(0|[1-9][0-9]*)$"),
                // The number must fit in 64 bits: at most 20 digits.
                "maxLength": prefix.len() + 20,
            })
        }
        TypeKind::Uint => json!({
            "type": "integer",
            "minimum": def.minimum.unwrap_or(0),
            "maximum": def.maximum.unwrap_or(u64::MAX),
        }),
        TypeKind::Bool => json!({ "type": "boolean", "default": false }),
        TypeKind::List => json!({
            "type": "array",
            "items": type_schema(spec, spec.type_def(def.items.as_deref().unwrap_or_default())),
        }),
        TypeKind::String => {
            let mut s = json!({ "type": "string" });
            if let Some(min) = def.min_chars {
                s["minLength"] = json!(min);
            }
            if let Some(max) = def.max_bytes {
                s["maxLength"] = json!(max);
            }
            if !def.forbidden_chars.is_empty() {
                let class: String = def
                    .forbidden_chars
                    .iter()
                    .map(|c| c.replace('\\', "\\\\").replace(']', "\\]"))
                    .collect();
                s["pattern"] = json!(format!("^[^{class}]*$"));
            }
            if !def.allowed.is_empty() {
                s["enum"] = json!(def.allowed);
            }
            s
        }
        TypeKind::Object => {
            let mut properties = Map::new();
            let mut required = Vec::new();
            for field in &def.fields {
                let field_def = spec.type_def(&field.ty);
                let mut field_schema = type_schema(spec, field_def);
                field_schema["description"] =
                    json!(with_limit(field.help_for(Origin::Mcp), field_def));
                properties.insert(field.name.clone(), field_schema);
                if field.required {
                    required.push(field.name.clone());
                }
            }
            json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
        }
    };
    schema["description"] = json!(with_limit(def.description_for(Origin::Mcp), def));
    schema
}

/// A description followed by the type's byte limit, which `maxLength` (a count of characters) can
/// only bound from above.
fn with_limit(description: &str, def: &TypeDef) -> String {
    match def.max_bytes {
        Some(max) if def.kind == TypeKind::String => {
            let size = if max % (1 << 20) == 0 {
                format!("{} MiB ({max} bytes)", max >> 20)
            } else {
                format!("{max} bytes")
            };
            format!("{description} At most {size} of UTF-8.")
        }
        _ => description.to_string(),
    }
}

fn param_schema(spec: &Spec, param: &Param) -> Value {
    let def = spec.type_def(&param.ty);
    let mut schema = type_schema(spec, def);
    schema["description"] = json!(with_limit(&param.help_for(Origin::Mcp), def));
    if param.name == "derived_from" {
        // The operation refuses a source listed twice.
        schema["uniqueItems"] = json!(true);
    }
    schema
}

/// The MCP description of a global option that MCP tools take as an argument.
fn global_help(spec: &Spec, name: &str) -> String {
    spec.globals
        .iter()
        .find(|g| g.name == name)
        .and_then(|g| g.mcp_help.clone())
        .unwrap_or_default()
}

/// The input schema of an MCP tool: MCP property names, `timeline_id` required where the op needs one.
pub fn input_schema(spec: &Spec, op: &Operation) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    match op.timeline {
        super::TimelineUse::Required => {
            let mut schema = type_schema(spec, spec.type_def("timeline_id"));
            schema["description"] = json!(global_help(spec, "timeline_id"));
            properties.insert("timeline_id".into(), schema);
            required.push("timeline_id".to_string());
        }
        super::TimelineUse::Optional => {
            let mut schema = type_schema(spec, spec.type_def("timeline_id"));
            schema["description"] = json!(format!(
                "{} Optional: without it, every timeline is covered.",
                global_help(spec, "timeline_id")
            ));
            properties.insert("timeline_id".into(), schema);
        }
        super::TimelineUse::None => {}
    }
    for param in &op.params {
        properties.insert(param.name.clone(), param_schema(spec, param));
        if param.required {
            required.push(param.name.clone());
        }
    }
    if op.mutating {
        let max = spec.constants.max_idempotency_key_bytes;
        properties.insert(
            "idempotency_key".into(),
            json!({
                "type": "string",
                "minLength": 1,
                "maxLength": max,
                "description": format!("{} At most {max} bytes of UTF-8.", global_help(spec, "idempotency_key")),
            }),
        );
    }
    json!({ "type": "object", "properties": properties, "required": required, "additionalProperties": false })
}

/// The result of an operation as MCP returns it: an object result as it is, an array result wrapped
/// under the operation's `mcp_result_key` (structured content is an object).
pub fn mcp_result(op: &Operation, result: Value) -> Value {
    match &op.mcp_result_key {
        Some(key) if result.is_array() => json!({ key.as_str(): result }),
        _ => result,
    }
}

/// The schema of an operation's result as MCP returns it (see [`mcp_result`]).
pub fn mcp_result_schema(op: &Operation) -> Value {
    match &op.mcp_result_key {
        Some(key) => json!({
            "type": "object",
            "properties": { key.as_str(): op.result },
            "required": [key],
            "additionalProperties": false,
        }),
        None => op.result.clone(),
    }
}

/// The output schema of an MCP tool: its result or, for a call answered with `isError: true`, the
/// error object (the same `{"error", "data"}` that `tl` prints). Both are described because some
/// clients check the structured content of error results against the `outputSchema` too.
pub fn output_schema(spec: &Spec, op: &Operation) -> Option<Value> {
    let tool = op.mcp.as_ref()?;
    let mut defs = Map::new();
    defs.insert("error".into(), spec.mcp_error_schema.clone());
    let result = mcp_result_schema(op);
    let text = result.to_string();
    if text.contains("#/$defs/message") {
        defs.insert("message".into(), spec.message_schema.clone());
    }
    if text.contains("#/$defs/entry") {
        defs.insert("entry".into(), spec.entry_schema.clone());
    }
    Some(json!({
        "type": "object",
        "description": format!("The result of {tool}; with isError: true, the error object instead."),
        "anyOf": [result, { "$ref": "#/$defs/error" }],
        "$defs": defs,
    }))
}

/// The `tools/list` result for the newest protocol version: one tool per operation that has an MCP
/// name. Older versions get it with the fields they do not know removed (see `mcp::session`).
pub fn tools_list(spec: &Spec) -> Value {
    let tools: Vec<Value> = spec
        .operations
        .iter()
        .filter_map(|op| {
            let name = op.mcp.as_ref()?;
            let title = op.title.clone().unwrap_or_default();
            let hints = op.annotations?;
            let mut tool = json!({
                "name": name,
                "title": title,
                "description": op.mcp_description.clone().unwrap_or_else(|| op.summary.clone()),
                "inputSchema": input_schema(spec, op),
            });
            if let Some(output) = output_schema(spec, op) {
                tool["outputSchema"] = output;
            }
            tool["annotations"] = json!({
                "title": title,
                "readOnlyHint": hints.read_only,
                "destructiveHint": hints.destructive,
                "idempotentHint": hints.idempotent,
                "openWorldHint": false,
            });
            Some(tool)
        })
        .collect();
    json!({ "tools": tools })
}

fn rust_str(s: &str) -> String {
    format!("{s:?}")
}

fn value_name(spec: &Spec, ty: &str) -> String {
    let def = spec.type_def(ty);
    match def.kind {
        TypeKind::Id => format!(
            "{}ID",
            def.prefix.as_deref().unwrap_or_default().to_uppercase()
        ),
        TypeKind::Uint => "N".into(),
        TypeKind::List => "IDS".into(),
        _ => ty.to_uppercase(),
    }
}

/// One clap argument of a command, as `render_cli` writes it.
struct CliArg {
    /// The flag without `--`, or the argument's id when it is positional.
    id: String,
    /// The name of its value; `None` for a switch (a `bool` parameter), which takes none.
    value_name: Option<String>,
    help: String,
    positional: bool,
    /// The values the spec allows, offered by shell completion (the validator still checks them).
    values: Vec<String>,
    /// A file path: shells complete file names.
    path: bool,
}

/// One `Arg` per CLI flag. Values are taken as plain strings: every check happens in the spec
/// validator, so the CLI and MCP report the same problems.
fn cli_args(spec: &Spec, op: &Operation) -> Vec<CliArg> {
    let mut args = Vec::new();
    for param in &op.params {
        let def = spec.type_def(&param.ty);
        if def.kind == TypeKind::Object {
            for field in &def.fields {
                let field_def = spec.type_def(&field.ty);
                args.push(CliArg {
                    id: field.cli_flag.clone(),
                    value_name: Some(value_name(spec, &field.ty)),
                    help: field.help.clone(),
                    positional: false,
                    values: field_def.allowed.clone(),
                    path: field.ty == "path",
                });
            }
            continue;
        }
        if def.kind == TypeKind::Bool {
            args.push(CliArg {
                id: param.flag(),
                value_name: None,
                help: param.cli_help(),
                positional: false,
                values: Vec::new(),
                path: false,
            });
            continue;
        }
        let required = if param.required { " (required)" } else { "" };
        let allowed = if def.allowed.is_empty() {
            String::new()
        } else {
            format!(" [{}]", def.allowed.join(", "))
        };
        args.push(CliArg {
            id: if param.positional {
                param.name.clone()
            } else {
                param.flag()
            },
            value_name: Some(param_value_name(spec, param)),
            help: format!("{}{allowed}{required}", param.cli_help()),
            positional: param.positional,
            values: def.allowed.clone(),
            path: param.ty == "path",
        });
        if let Some(file_flag) = &param.file_flag {
            args.push(CliArg {
                id: file_flag.clone(),
                value_name: Some("PATH".into()),
                help: format!("Read --{} from this file (UTF-8).", param.flag()),
                positional: false,
                values: Vec::new(),
                path: true,
            });
        }
    }
    for global in spec.globals.iter().filter(|g| g.operations.is_some()) {
        if global.applies_to(&op.name) {
            args.push(scoped_global(global));
        }
    }
    args
}

fn param_value_name(spec: &Spec, param: &Param) -> String {
    if param.positional {
        param.name.to_uppercase()
    } else {
        value_name(spec, &param.ty)
    }
}

/// The usage line of a command, as `tl CMD --help` and the man page show it. clap's own layout
/// (options, then required flags, then positional arguments), with the flags the spec requires: clap
/// is told nothing is required, so that the spec validator reports missing arguments for both
/// front-ends alike, and would otherwise leave them out of the usage line.
pub fn usage(spec: &Spec, op: &Operation) -> String {
    let mut usage = format!("tl {} [OPTIONS]", op.cli);
    for param in op.params.iter().filter(|p| p.required && !p.positional) {
        let flag = param.flag();
        let value = value_name(spec, &param.ty);
        match &param.file_flag {
            Some(file_flag) => {
                usage.push_str(&format!(" <--{flag} <{value}>|--{file_flag} <PATH>>"))
            }
            None => usage.push_str(&format!(" --{flag} <{value}>")),
        }
    }
    for param in op.params.iter().filter(|p| p.positional) {
        let value = param_value_name(spec, param);
        if param.required {
            usage.push_str(&format!(" <{value}>"));
        } else {
            usage.push_str(&format!(" [{value}]"));
        }
    }
    usage
}

fn rust_strs(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| rust_str(v)).collect();
    format!("&[{}]", quoted.join(", "))
}

/// A global option that only some commands take, as an argument of those commands.
fn scoped_global(global: &super::Global) -> CliArg {
    let allowed = if global.values.is_empty() {
        String::new()
    } else {
        format!(" [{}]", global.values.join(", "))
    };
    CliArg {
        id: global.cli_flag.clone(),
        value_name: Some(global.value_name.clone()),
        help: format!("{}{allowed}", global.help),
        positional: false,
        values: global.values.clone(),
        path: false,
    }
}

/// The clap command tree of `tl` (`generated/cli.rs`).
pub fn render_cli(spec: &Spec) -> String {
    let mut out = String::new();
    out.push_str(&format!("// {HEADER_NOTE}\n"));
    out.push_str("//\n// The clap command tree of `tl`. Flags take plain strings; the spec validator checks them.\n");
    out.push_str(
        "// `spec_values` offers the allowed values to shell completion without checking them.\n\n",
    );
    out.push_str("/// The `tl` command with every subcommand and flag of the spec.\n");
    out.push_str("pub fn command() -> clap::Command {\n");
    out.push_str("    use clap::{Arg, ArgAction, Command, ValueHint};\n");
    out.push_str("    Command::new(\"tl\")\n");
    out.push_str(&format!("        .about({})\n", rust_str(&spec.about)));
    out.push_str("        .version(env!(\"CARGO_PKG_VERSION\"))\n");
    out.push_str("        .subcommand_required(true)\n");
    out.push_str("        .arg_required_else_help(true)\n");
    for global in &spec.globals {
        if global.operations.is_some() {
            // Given before the command too (`tl --format text log`); not global, so that a command
            // with a parameter of the same name (export --format) keeps its own.
            let arg = scoped_global(global);
            out.push_str(&format!(
                "        .arg(Arg::new({}).long({}).value_name({}).action(ArgAction::Set).help({}))\n",
                rust_str(&arg.id),
                rust_str(&arg.id),
                rust_str(arg.value_name.as_deref().unwrap_or_default()),
                rust_str(&arg.help)
            ));
            continue;
        }
        let hint = if global.value_name == "PATH" {
            ".value_hint(ValueHint::FilePath)"
        } else {
            ""
        };
        out.push_str(&format!(
            "        .arg(Arg::new({}).long({}).value_name({}).global(true).action(ArgAction::Set).value_parser(clap::value_parser!(std::ffi::OsString)){hint}.help({}))\n",
            rust_str(&global.cli_flag),
            rust_str(&global.cli_flag),
            rust_str(&global.value_name),
            rust_str(&global.help)
        ));
    }
    // A command named "group sub" in the spec becomes a subcommand of the group's command.
    let mut groups: Vec<&str> = Vec::new();
    for op in &spec.operations {
        match op.cli.split_once(' ') {
            None => out.push_str(&render_command(spec, op, &op.cli, "        ")),
            Some((group, _)) if !groups.contains(&group) => {
                groups.push(group);
                out.push_str(&format!(
                    "        .subcommand(\n            Command::new({}).about({}).subcommand_required(true).arg_required_else_help(true)\n",
                    rust_str(group),
                    rust_str(&format!("Commands on the database file as a whole ({group} ...)."))
                ));
                for member in spec
                    .operations
                    .iter()
                    .filter(|o| o.cli.split_once(' ').is_some_and(|(g, _)| g == group))
                {
                    let (_, sub) = member.cli.split_once(' ').unwrap_or_default();
                    out.push_str(&render_command(spec, member, sub, "            "));
                }
                out.push_str("        )\n");
            }
            Some(_) => {}
        }
    }
    out.push_str("}\n");
    out
}

/// `CamelCase` of a snake_case name.
fn camel(name: &str) -> String {
    name.split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase().to_string() + chars.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The Rust type of a parameter and the `Args` accessor that reads it.
fn rust_param(spec: &Spec, param: &Param) -> (String, String) {
    let def = spec.type_def(&param.ty);
    let name = rust_str(&param.name);
    let (ty, read) = match def.kind {
        TypeKind::Id => ("u64", format!("args.id({name})")),
        TypeKind::Uint => ("u64", format!("args.u64({name})")),
        TypeKind::List => ("Vec<u64>", format!("args.ids({name})")),
        TypeKind::String => ("String", format!("args.str({name}).map(str::to_string)")),
        TypeKind::Bool => ("bool", format!("args.flag({name})")),
        TypeKind::Object => ("crate::model::Intent", format!("args.intent({name})")),
    };
    if matches!(def.kind, TypeKind::List | TypeKind::Bool) {
        // A list that was not given is an empty list; a flag that was not given is off.
        (ty.to_string(), read)
    } else if param.required {
        (ty.to_string(), format!("{read}.unwrap_or_default()"))
    } else {
        (format!("Option<{ty}>"), read)
    }
}

/// The typed requests: one variant per operation, so an operation added to the spec does not compile
/// until the service and the operations handle it.
pub fn render_requests(spec: &Spec) -> String {
    let mut out = String::new();
    out.push_str(&format!("// {HEADER_NOTE}\n"));
    out.push_str(
        "//\n// One typed request per operation of the spec, built from validated arguments.\n\n",
    );
    for op in &spec.operations {
        out.push_str(&format!(
            "/// Arguments of `{}`: {}\n#[derive(Debug, Clone, Default, PartialEq)]\npub struct {}Args {{\n",
            op.name,
            op.summary,
            camel(&op.name)
        ));
        match op.timeline {
            super::TimelineUse::Required => out.push_str("    /// The timeline; `None` means the one with the smallest ID.\n    pub timeline_id: Option<u64>,\n"),
            super::TimelineUse::Optional => out.push_str("    /// The timeline; `None` means every timeline.\n    pub timeline_id: Option<u64>,\n"),
            super::TimelineUse::None => {}
        }
        for param in &op.params {
            let (ty, _) = rust_param(spec, param);
            out.push_str(&format!(
                "    /// {}\n    pub {}: {ty},\n",
                param.help, param.name
            ));
        }
        out.push_str("}\n\n");
    }
    out.push_str("/// A validated request for one operation of the spec.\n#[derive(Debug, Clone, PartialEq)]\npub enum Request {\n");
    for op in &spec.operations {
        out.push_str(&format!(
            "    /// `{}`: {}\n    {}({}Args),\n",
            op.name,
            op.summary,
            camel(&op.name),
            camel(&op.name)
        ));
    }
    out.push_str("}\n\nimpl Request {\n");
    out.push_str("    /// The request for the spec operation `op` from arguments that passed `validate`; `None` for\n    /// a name the spec does not have.\n");
    out.push_str("    pub fn from_args(op: &str, args: &crate::spec::validate::Args) -> Option<Request> {\n        Some(match op {\n");
    for op in &spec.operations {
        out.push_str(&format!(
            "            {} => Request::{}({}Args {{\n",
            rust_str(&op.name),
            camel(&op.name),
            camel(&op.name)
        ));
        if op.timeline.takes_timeline() {
            out.push_str("                timeline_id: args.id(\"timeline_id\"),\n");
        }
        for param in &op.params {
            let (_, read) = rust_param(spec, param);
            out.push_str(&format!("                {}: {read},\n", param.name));
        }
        out.push_str("            }),\n");
    }
    out.push_str("            _ => return None,\n        })\n    }\n\n");
    out.push_str("    /// The spec name of the operation.\n    pub fn name(&self) -> &'static str {\n        match self {\n");
    for op in &spec.operations {
        out.push_str(&format!(
            "            Request::{}(_) => {},\n",
            camel(&op.name),
            rust_str(&op.name)
        ));
    }
    out.push_str("        }\n    }\n}\n");
    out
}

/// One `.subcommand(...)` of the clap tree, indented by `indent`.
fn render_command(spec: &Spec, op: &Operation, name: &str, indent: &str) -> String {
    let mut out = format!(
        "{indent}.subcommand(\n{indent}    Command::new({})\n",
        rust_str(name)
    );
    out.push_str(&format!(
        "{indent}        .about({})\n",
        rust_str(&op.summary)
    ));
    out.push_str(&format!(
        "{indent}        .override_usage({})\n",
        rust_str(&usage(spec, op))
    ));
    for arg in cli_args(spec, op) {
        let place = if arg.positional {
            String::new()
        } else {
            format!(".long({})", rust_str(&arg.id))
        };
        let mut extra = String::new();
        if !arg.values.is_empty() {
            extra.push_str(&format!(
                ".value_parser(spec_values({})).hide_possible_values(true)",
                rust_strs(&arg.values)
            ));
        }
        if arg.path {
            extra.push_str(".value_hint(ValueHint::FilePath)");
        }
        match &arg.value_name {
            Some(value_name) => out.push_str(&format!(
                "{indent}        .arg(Arg::new({}){place}.value_name({}).action(ArgAction::Set).allow_hyphen_values(true){extra}.help({}))\n",
                rust_str(&arg.id),
                rust_str(value_name),
                rust_str(&arg.help)
            )),
            None => out.push_str(&format!(
                "{indent}        .arg(Arg::new({}){place}.action(ArgAction::SetTrue).help({}))\n",
                rust_str(&arg.id),
                rust_str(&arg.help)
            )),
        }
    }
    out.push_str(&format!("{indent})\n"));
    out
}

/// The Markdown CLI reference (`generated/cli-reference.md`).
pub fn render_reference(spec: &Spec) -> String {
    let mut out = String::new();
    out.push_str(&format!("<!-- {HEADER_NOTE} -->\n\n"));
    out.push_str("# `tl` command reference\n\n");
    out.push_str(&format!("{}\n\n", spec.about));
    out.push_str("## Global options\n\n| Flag | Meaning |\n|---|---|\n");
    for global in &spec.globals {
        out.push_str(&format!(
            "| `--{} {}` | {} |\n",
            global.cli_flag, global.value_name, global.help
        ));
    }
    out.push_str("\nExit codes: 0 success; ");
    let mut codes: Vec<(i32, &str)> = spec
        .errors
        .iter()
        .map(|(k, e)| (e.exit_code, k.as_str()))
        .collect();
    codes.sort();
    let mut by_code: Vec<String> = Vec::new();
    for code in codes
        .iter()
        .map(|c| c.0)
        .collect::<std::collections::BTreeSet<_>>()
    {
        let kinds: Vec<&str> = codes.iter().filter(|c| c.0 == code).map(|c| c.1).collect();
        by_code.push(format!("{code} {}", kinds.join(", ")));
    }
    out.push_str(&by_code.join("; "));
    out.push_str(". Errors are printed on stderr as `{\"error\": \"...\"}`, with `data` where the error has it.\n\n");
    out.push_str("## Commands\n\n| Command | MCP tool | What it does |\n|---|---|---|\n");
    for op in &spec.operations {
        out.push_str(&format!(
            "| [`{}`](#{}) | {} | {} |\n",
            op.cli,
            op.cli,
            op.mcp
                .as_deref()
                .map(|m| format!("`{m}`"))
                .unwrap_or_else(|| "none (CLI only)".into()),
            op.summary
        ));
    }
    for op in &spec.operations {
        out.push_str(&format!("\n### {}\n\n{}\n\n", op.cli, op.summary));
        let key = match op.idempotency {
            super::KeyUse::Database => "accepted (database-wide scope)",
            super::KeyUse::Timeline => "accepted (per timeline)",
            super::KeyUse::Ignored => "accepted, no effect (read-only)",
            super::KeyUse::Rejected => "rejected",
        };
        if op.local {
            out.push_str(&format!(
                "Runs in `tl` only, outside any database transaction. Idempotency key: {key}.\n\n"
            ));
        } else {
            out.push_str(&format!(
                "Changes the database: {}. Idempotency key: {key}.\n\n",
                if op.mutating { "yes" } else { "no" }
            ));
        }
        if let Some(reason) = &op.mcp_omitted {
            out.push_str(&format!("No MCP tool: {reason}\n\n"));
        }
        if op.params.is_empty() {
            out.push_str("No arguments.\n");
        } else {
            out.push_str(
                "| Flag | MCP argument | Type | Required | Meaning |\n|---|---|---|---|---|\n",
            );
            for param in &op.params {
                let def = spec.type_def(&param.ty);
                if def.kind == TypeKind::Object {
                    for field in &def.fields {
                        out.push_str(&format!(
                            "| `--{}` | `{}.{}` | {} | {} | {} |\n",
                            field.cli_flag,
                            param.name,
                            field.name,
                            field.ty,
                            if field.required {
                                "with the object"
                            } else {
                                "no"
                            },
                            field.help
                        ));
                    }
                    continue;
                }
                let mut help = param.cli_help();
                if let Some(file_flag) = &param.file_flag {
                    help.push_str(&format!(" (`--{file_flag} PATH` reads it from a file.)"));
                }
                out.push_str(&format!(
                    "| `{}` | `{}` | {} | {} | {} |\n",
                    param.cli_name(),
                    param.name,
                    param.ty,
                    if param.required { "yes" } else { "no" },
                    help
                ));
            }
        }
        out.push_str(&format!(
            "\nResult: `{}`\n\nErrors: {}.\n",
            compact_shape(&op.result),
            op.errors.join(", ")
        ));
    }
    out.push_str("\n## Types\n\n| Type | Rule |\n|---|---|\n");
    for (name, def) in &spec.types {
        out.push_str(&format!(
            "| {name} | {} |\n",
            with_limit(&def.description, def)
        ));
    }
    out
}

/// A one-line shape of a result schema, like `{"node": string}`.
fn compact_shape(schema: &Value) -> String {
    match schema.get("type").and_then(Value::as_str) {
        Some("object") => {
            let props = schema.get("properties").and_then(Value::as_object);
            let fields: Vec<String> = props
                .map(|p| {
                    p.iter()
                        .map(|(k, v)| format!("\"{k}\": {}", compact_shape(v)))
                        .collect()
                })
                .unwrap_or_default();
            format!("{{{}}}", fields.join(", "))
        }
        Some("array") => format!(
            "[{}]",
            schema.get("items").map(compact_shape).unwrap_or_default()
        ),
        Some(other) => other.to_string(),
        None if schema.get("$ref").is_some() => schema["$ref"]
            .as_str()
            .and_then(|r| r.rsplit('/').next())
            .unwrap_or("message")
            .to_string(),
        None if schema.get("anyOf").is_some() => schema["anyOf"]
            .as_array()
            .map(|shapes| {
                shapes
                    .iter()
                    .map(compact_shape)
                    .collect::<Vec<_>>()
                    .join(" | ")
            })
            .unwrap_or_default(),
        None => schema
            .get("type")
            .map(|t| t.to_string().replace('"', ""))
            .unwrap_or_else(|| "any".into()),
    }
}
