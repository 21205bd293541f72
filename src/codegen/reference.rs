//! The CLI reference (`generated/cli-reference.md`).

use super::HEADER_NOTE;
use crate::spec::mcp::with_limit;
use crate::spec::{Spec, TypeKind};
use serde_json::Value;

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
            crate::spec::KeyUse::Database => "accepted (database-wide scope)",
            crate::spec::KeyUse::Timeline => "accepted (per timeline)",
            crate::spec::KeyUse::Ignored => "accepted, no effect (read-only)",
            crate::spec::KeyUse::Rejected => "rejected",
        };
        if op.local() {
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
