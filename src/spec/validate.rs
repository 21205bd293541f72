//! Spec-derived argument validation, shared by the CLI and the MCP server.
//!
//! Both front-ends build the same JSON object (MCP property names) and hand it to `validate`, so a rule
//! lives in exactly one place: the spec's type table interpreted here.

use super::{Operation, Param, Spec, TimelineUse, TypeDef, TypeKind, spec};
use serde_json::{Map, Value};

pub use super::Origin;

/// Arguments that break the spec's rules. It is always an `invalid_argument` error of the argument
/// check (the `error` module turns it into one, marked as enforcing the tool's `inputSchema`); kept
/// apart so that the spec depends on no other module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    /// What is wrong and what is expected, naming the parameter as the caller wrote it.
    pub message: String,
}

impl Invalid {
    fn new(message: impl Into<String>) -> Invalid {
        Invalid {
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Invalid {}

/// The result of a check.
pub type Result<T> = std::result::Result<T, Invalid>;

/// Arguments that passed validation, with typed accessors.
#[derive(Debug, Clone, Default)]
pub struct Args {
    values: Map<String, Value>,
}

impl Args {
    /// A flag: true only when it was given as true.
    pub fn flag(&self, name: &str) -> bool {
        self.values.get(name) == Some(&Value::Bool(true))
    }

    /// All arguments as the JSON object they were validated from; `ops::Request::from_checked`
    /// reads the typed request from it.
    pub fn as_map(&self) -> &Map<String, Value> {
        &self.values
    }
}

/// How a parameter is named to the person who passed it.
fn display_name(origin: Origin, mcp_path: &str, cli_flag: &str) -> String {
    match origin {
        Origin::Cli => format!("--{cli_flag}"),
        Origin::Mcp => mcp_path.to_string(),
    }
}

/// How a parameter is named: its flag (`--max`) or, when positional, its value name (`<SHELL>`).
fn param_name(origin: Origin, param: &Param) -> String {
    match origin {
        Origin::Cli => param.cli_name(),
        Origin::Mcp => param.name.clone(),
    }
}

/// Validate `args` for `op`. Unknown keys, missing required parameters and values that break a type's
/// rules are [`Invalid`]: errors of kind `invalid_argument` that name the parameter and say what is
/// expected, marked as errors of the argument check (`Error::schema`) when converted, since they
/// enforce what the tool's `inputSchema` states.
pub fn validate(op: &Operation, args: &Map<String, Value>, origin: Origin) -> Result<Args> {
    check_args(op, args, origin)
}

/// A value of the spec's `intent` type: a tag and an optional note (`model::Intent` is one; the
/// spec names no type of the model, so that it depends on no other module).
pub trait TaggedNote {
    /// The intent's tag.
    fn tag(&self) -> &str;
    /// The intent's note, if any.
    fn note(&self) -> Option<&str>;
}

/// Why `intent` is not one that `append` accepts as its `intent` argument (the same rules of the spec's
/// `intent` type: a non-empty tag within the size limit, a note within the text limit), or `None`.
/// Importers check what they build with it, so an import writes only what `append` could have.
pub fn intent_problem(intent: &impl TaggedNote) -> Option<String> {
    let spec = spec();
    let mut value = Map::new();
    value.insert("tag".into(), Value::String(intent.tag().to_string()));
    if let Some(note) = intent.note() {
        value.insert("note".into(), Value::String(note.to_string()));
    }
    let def = spec.type_def("intent");
    check_object(spec, def, &Value::Object(value), "intent", Origin::Mcp)
        .err()
        .map(|e| {
            e.message
                .trim_start_matches("invalid argument ")
                .to_string()
        })
}

/// The idempotency key rules (1 to `max_idempotency_key_bytes` bytes; refused by operations that
/// take no key), as an error of the argument check. The service applies the same rules; the MCP
/// server checks first so that it can tell an argument error from a failure of the tool.
pub fn check_idempotency_key(op: &Operation, key: Option<&str>, origin: Origin) -> Result<()> {
    let Some(key) = key else { return Ok(()) };
    let name = match origin {
        Origin::Cli => "--idempotency-key",
        Origin::Mcp => "idempotency_key",
    };
    if op.idempotency == super::KeyUse::Rejected {
        return Err(Invalid::new(format!(
            "invalid argument {name}: {} does not take an idempotency key; it changes nothing in the database, so it is always safe to run again",
            op.cli
        )));
    }
    let limit = spec().constants.max_idempotency_key_bytes;
    if key.is_empty() || key.len() > limit {
        return Err(Invalid::new(format!(
            "invalid argument {name}: must be 1 to {limit} bytes, such as request-001"
        )));
    }
    Ok(())
}

fn check_args(op: &Operation, args: &Map<String, Value>, origin: Origin) -> Result<Args> {
    let spec = spec();
    let mut values = Map::new();
    let timeline_global = &spec
        .globals
        .iter()
        .find(|g| g.name == "timeline_id")
        .map(|g| g.cli_flag.clone())
        .unwrap_or_default();
    for key in args.keys() {
        let known = op.params.iter().any(|p| &p.name == key)
            || (key == "timeline_id" && op.timeline.takes_timeline());
        if !known {
            let expected: Vec<String> = op
                .params
                .iter()
                .map(|p| p.name.clone())
                .chain(
                    op.timeline
                        .takes_timeline()
                        .then(|| "timeline_id".to_string()),
                )
                .collect();
            return Err(Invalid::new(format!(
                "invalid argument {key}: {} takes no such argument (it takes: {})",
                op.mcp.as_deref().unwrap_or(&op.cli),
                if expected.is_empty() {
                    "nothing".to_string()
                } else {
                    expected.join(", ")
                }
            )));
        }
    }
    if op.timeline.takes_timeline() {
        let name = display_name(origin, "timeline_id", timeline_global);
        match args.get("timeline_id") {
            None | Some(Value::Null)
                if origin == Origin::Mcp && op.timeline == TimelineUse::Required =>
            {
                return Err(Invalid::new("invalid argument timeline_id: required; pass the ID that timeline_create returned, such as \"tl0\"".to_string()));
            }
            None | Some(Value::Null) => {}
            Some(value) => {
                check_value(spec, spec.type_def("timeline_id"), value, &name, origin)?;
                values.insert("timeline_id".into(), value.clone());
            }
        }
    }
    for param in &op.params {
        let def = spec.type_def(&param.ty);
        let value = args.get(&param.name).filter(|v| !v.is_null());
        let Some(value) = value else {
            if param.required {
                return Err(Invalid::new(format!(
                    "invalid argument {}: required ({})",
                    param_name(origin, param),
                    param.help_for(origin)
                )));
            }
            continue;
        };
        if def.kind == TypeKind::Object {
            let object = check_object(spec, def, value, &param.name, origin)?;
            values.insert(param.name.clone(), Value::Object(object));
        } else if def.kind == TypeKind::Bool {
            check_value(
                spec,
                def,
                value,
                &display_name(origin, &param.name, &param.flag()),
                origin,
            )?;
            // false is the same request as no flag at all (also for idempotency keys).
            if value == &Value::Bool(true) {
                values.insert(param.name.clone(), value.clone());
            }
        } else {
            check_value(spec, def, value, &param_name(origin, param), origin)?;
            values.insert(param.name.clone(), value.clone());
        }
    }
    Ok(Args { values })
}

fn check_object(
    spec: &Spec,
    def: &TypeDef,
    value: &Value,
    name: &str,
    origin: Origin,
) -> Result<Map<String, Value>> {
    let Value::Object(object) = value else {
        return Err(Invalid::new(format!(
            "invalid argument {name}: must be an object ({})",
            def.description_for(origin)
        )));
    };
    for key in object.keys() {
        if !def.fields.iter().any(|f| &f.name == key) {
            return Err(Invalid::new(format!(
                "invalid argument {name}.{key}: unknown field (known: {})",
                def.fields
                    .iter()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    let mut out = Map::new();
    for field in &def.fields {
        let shown = display_name(origin, &format!("{name}.{}", field.name), &field.cli_flag);
        match object.get(&field.name).filter(|v| !v.is_null()) {
            None if field.required => {
                let others: Vec<String> = def
                    .fields
                    .iter()
                    .filter(|f| f.name != field.name && object.contains_key(&f.name))
                    .map(|f| display_name(origin, &format!("{name}.{}", f.name), &f.cli_flag))
                    .collect();
                let because = if others.is_empty() {
                    String::new()
                } else {
                    format!(" when {} is given", others.join(", "))
                };
                return Err(Invalid::new(format!(
                    "invalid argument {shown}: required{because} ({})",
                    field.help_for(origin)
                )));
            }
            None => {}
            Some(v) => {
                check_value(spec, spec.type_def(&field.ty), v, &shown, origin)?;
                out.insert(field.name.clone(), v.clone());
            }
        }
    }
    Ok(out)
}

fn check_value(
    spec: &Spec,
    def: &TypeDef,
    value: &Value,
    name: &str,
    origin: Origin,
) -> Result<()> {
    let description = def.description_for(origin);
    let fail = |problem: String| Err(Invalid::new(format!("invalid argument {name}: {problem}")));
    match def.kind {
        TypeKind::Uint => match value {
            Value::Number(n)
                if n.as_u64()
                    .is_some_and(|v| def.minimum.is_some_and(|min| v < min)) =>
            {
                fail(format!(
                    "must be at least {}, got {n}",
                    def.minimum.unwrap_or_default()
                ))
            }
            Value::Number(n)
                if n.as_u64()
                    .is_some_and(|v| def.maximum.is_some_and(|max| v > max)) =>
            {
                fail(format!(
                    "must be at most {}, got {n}",
                    def.maximum.unwrap_or_default()
                ))
            }
            Value::Number(n) if n.is_u64() => Ok(()),
            Value::Number(n) if n.is_i64() => {
                fail(format!("must be a non-negative integer, got {n}"))
            }
            // Only a number of 2^64 or more is too large; a float such as 5.0 is not an integer.
            Value::Number(n) if n.as_f64().is_some_and(|f| f >= u64::MAX as f64) => fail(format!(
                "is larger than the maximum {}",
                def.maximum.unwrap_or(u64::MAX)
            )),
            Value::Number(n) => fail(format!("must be a non-negative integer, got {n}")),
            other => fail(format!(
                "must be a non-negative integer, got {}",
                short(other)
            )),
        },
        TypeKind::Id => {
            let prefix = def.prefix.as_deref().unwrap_or_default();
            let Value::String(s) = value else {
                return fail(format!(
                    "must be a string such as \"{prefix}1\", got {}",
                    short(value)
                ));
            };
            let digits = s.strip_prefix(prefix).unwrap_or("");
            let canonical = !digits.is_empty()
                && digits.bytes().all(|b| b.is_ascii_digit())
                && (digits == "0" || !digits.starts_with('0'));
            if !canonical {
                return fail(format!("{} Got {}", description, short(value)));
            }
            if digits.parse::<u64>().is_err() {
                return fail(format!("the number in {} is too large", short(value)));
            }
            Ok(())
        }
        TypeKind::List => {
            let Value::Array(items) = value else {
                return fail(format!("must be an array ({})", description));
            };
            let item_def = spec.type_def(def.items.as_deref().unwrap_or_default());
            for (i, item) in items.iter().enumerate() {
                check_value(spec, item_def, item, &format!("{name}[{i}]"), origin)?;
            }
            Ok(())
        }
        TypeKind::String => {
            let Value::String(s) = value else {
                return fail(format!(
                    "must be a string ({}), got {}",
                    description,
                    short(value)
                ));
            };
            if let Some(max) = def.max_bytes
                && s.len() > max
            {
                return fail(format!(
                    "is {} bytes of UTF-8; the limit is {max} bytes",
                    s.len()
                ));
            }
            if let Some(min) = def.min_chars
                && s.chars().count() < min
            {
                return fail(format!("must not be empty ({})", description));
            }
            for forbidden in &def.forbidden_chars {
                if s.contains(forbidden.as_str()) {
                    return fail(format!(
                        "must not contain \"{forbidden}\" ({})",
                        def.description
                    ));
                }
            }
            if !def.allowed.is_empty() && !def.allowed.iter().any(|a| a == s) {
                return fail(format!(
                    "must be one of {}, got {}",
                    def.allowed.join(", "),
                    short(value)
                ));
            }
            Ok(())
        }
        TypeKind::Bool => match value {
            Value::Bool(_) => Ok(()),
            other => fail(format!("must be true or false, got {}", short(other))),
        },
        TypeKind::Object => fail("objects are only allowed as parameters".into()),
    }
}

/// A value shown inside an error message, cut so that a 1 MiB argument does not flood the terminal.
fn short(value: &Value) -> String {
    shorten(&value.to_string())
}

/// Caller-supplied text for an error message or a log line: the first 60 Unicode scalars, then `...`
/// when it was longer (a text may be 1 MiB, an MCP line 8 MiB).
pub fn shorten(text: &str) -> String {
    if text.chars().count() > 60 {
        format!("{}...", text.chars().take(60).collect::<String>())
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(op: &str, args: Value, origin: Origin) -> Result<Args> {
        let op = spec().operation(op).unwrap();
        validate(op, args.as_object().unwrap(), origin)
    }

    #[test]
    fn rejects_non_canonical_ids() {
        for bad in [
            "n",
            "x1",
            "n01",
            "n-1",
            "n1a",
            "N1",
            "n99999999999999999999999",
        ] {
            let err = run(
                "node",
                json!({"node": bad, "timeline_id": "tl0"}),
                Origin::Mcp,
            )
            .unwrap_err();
            assert!(
                err.message.starts_with("invalid argument node:"),
                "{bad}: {}",
                err.message
            );
        }
        assert!(
            run(
                "node",
                json!({"node": "n0", "timeline_id": "tl0"}),
                Origin::Mcp
            )
            .is_ok()
        );
    }

    #[test]
    fn names_parameters_the_way_the_caller_wrote_them() {
        let cli = run(
            "append",
            json!({"role": "user", "text": "x", "intent": {"note": "n"}}),
            Origin::Cli,
        )
        .unwrap_err();
        assert_eq!(
            cli.message,
            "invalid argument --intent-tag: required when --intent-note is given (Label the message with an intent tag (your own vocabulary).)"
        );
        let mcp = run(
            "append",
            json!({"timeline_id": "tl0", "role": "user", "text": "x", "intent": {"note": "n"}}),
            Origin::Mcp,
        )
        .unwrap_err();
        assert!(
            mcp.message
                .starts_with("invalid argument intent.tag: required when intent.note is given"),
            "{}",
            mcp.message
        );
    }

    #[test]
    fn flags_are_booleans_and_false_is_no_flag() {
        let base = json!({"timeline_id": "tl0", "node": "n1", "max_tokens": 5});
        let with = |extra: Value| {
            let mut args = base.clone();
            args.as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            run("context_budget", args, Origin::Mcp)
        };
        let on = with(json!({"dry_run": true, "explain": true})).unwrap();
        assert!(on.flag("dry_run") && on.flag("explain"));
        // false is left out, so it is the same request as no flag (idempotency digests included).
        let off = with(json!({"dry_run": false, "explain": null})).unwrap();
        assert!(!off.flag("dry_run") && !off.flag("explain"));
        assert_eq!(off.as_map(), with(json!({})).unwrap().as_map());
        for bad in [json!("yes"), json!(1), json!([true])] {
            let err = with(json!({ "dry_run": bad })).unwrap_err();
            assert!(
                err.message
                    .starts_with("invalid argument dry_run: must be true or false, got"),
                "{}",
                err.message
            );
        }
    }

    #[test]
    fn uint_edges() {
        let ok = run(
            "context_budget",
            json!({"timeline_id": "tl0", "node": "n1", "max_tokens": u64::MAX}),
            Origin::Mcp,
        );
        assert!(ok.is_ok());
        for bad in [json!(-1), json!(1.5), json!("3"), json!(1e30)] {
            let err = run(
                "context_budget",
                json!({"timeline_id": "tl0", "node": "n1", "max_tokens": bad}),
                Origin::Mcp,
            )
            .unwrap_err();
            assert!(
                err.message.starts_with("invalid argument max_tokens:"),
                "{}",
                err.message
            );
        }
    }
}
