//! The clap command tree of `tl` (`generated/cli.rs`) and the usage lines of its commands.

use super::{HEADER_NOTE, rust_str};
use crate::spec::{Operation, Param, Spec, TypeKind};

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
        if global.after_command(op) {
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
fn scoped_global(global: &crate::spec::Global) -> CliArg {
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
    out.push_str("pub fn command() -> clap::Command {\n    tree(false, None)\n}\n\n");
    out.push_str(
        "/// The same command as a run of `tl` parses with: each subcommand's flags added only when that\n\
         /// subcommand is parsed, and only the subcommand `only` (its group, for `db ...`) when given.\n",
    );
    out.push_str(
        "pub fn command_to_parse(only: Option<&str>) -> clap::Command {\n    tree(true, only)\n}\n\n",
    );
    out.push_str(
        "/// Whether the tree holds the subcommand `name`.\n\
         fn wanted(only: Option<&str>, name: &str) -> bool {\n    only.is_none_or(|only| only == name)\n}\n\n",
    );
    out.push_str(
        "/// A subcommand with its flags, added now or (`defer`) when it is parsed.\n\
         fn with_flags(cmd: clap::Command, defer: bool, flags: fn(clap::Command) -> clap::Command) -> clap::Command {\n    \
         if defer { cmd.defer(flags) } else { flags(cmd) }\n}\n\n",
    );
    out.push_str("fn tree(defer: bool, only: Option<&str>) -> clap::Command {\n");
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
            None => out.push_str(&render_command(spec, op, &op.cli, "        ", true)),
            Some((group, _)) if !groups.contains(&group) => {
                groups.push(group);
                out.push_str(&format!(
                    "        .subcommands(wanted(only, {}).then(||\n            Command::new({}).about({}).subcommand_required(true).arg_required_else_help(true)\n",
                    rust_str(group),
                    rust_str(group),
                    rust_str(&format!("Commands on the database file as a whole ({group} ...)."))
                ));
                for member in spec
                    .operations
                    .iter()
                    .filter(|o| o.cli.split_once(' ').is_some_and(|(g, _)| g == group))
                {
                    let (_, sub) = member.cli.split_once(' ').unwrap_or_default();
                    out.push_str(&render_command(spec, member, sub, "            ", false));
                }
                out.push_str("        ))\n");
            }
            Some(_) => {}
        }
    }
    out.push_str("}\n");
    out
}

/// One subcommand of the clap tree, indented by `indent`; a top-level one (`gated`) only when
/// `wanted`.
fn render_command(spec: &Spec, op: &Operation, name: &str, indent: &str, gated: bool) -> String {
    let mut out = if gated {
        format!(
            "{indent}.subcommands(wanted(only, {}).then(|| with_flags(\n{indent}    Command::new({})\n",
            rust_str(name),
            rust_str(name)
        )
    } else {
        format!(
            "{indent}.subcommand(with_flags(\n{indent}    Command::new({})\n",
            rust_str(name)
        )
    };
    out.push_str(&format!(
        "{indent}        .about({})\n",
        rust_str(&op.summary)
    ));
    out.push_str(&format!(
        "{indent}        .override_usage({}),\n",
        rust_str(&usage(spec, op))
    ));
    out.push_str(&format!("{indent}    defer,\n{indent}    |cmd| cmd\n"));
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
    out.push_str(&format!("{indent})){}\n", if gated { ")" } else { "" }));
    out
}
