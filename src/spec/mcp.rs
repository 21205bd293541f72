//! The MCP view of the spec, used at run time: the JSON Schemas of tool inputs and results, the
//! `tools/list` payload, and how a result is wrapped as structured content.

use super::{Operation, Origin, Param, Spec, TypeDef, TypeKind};
use serde_json::{Map, Value, json};

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
pub(crate) fn with_limit(description: &str, def: &TypeDef) -> String {
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
