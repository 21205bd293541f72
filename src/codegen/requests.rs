//! The typed requests (`generated/requests.rs`): an argument struct per operation, the request
//! groups by where an operation runs, and the parser from checked arguments.

use super::{HEADER_NOTE, rust_str};
use crate::spec::{Operation, Param, Spec, TypeKind};

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

/// The Rust type of a parameter and the expression that reads it from the checked arguments `a`
/// (`ops::request::Fields`); a required parameter missing after the check is an internal error, never
/// a default.
fn rust_param(spec: &Spec, param: &Param) -> (String, String) {
    let def = spec.type_def(&param.ty);
    let name = rust_str(&param.name);
    let (ty, read) = match def.kind {
        TypeKind::Id => ("u64", format!("a.id({name})?")),
        TypeKind::Uint => ("u64", format!("a.uint({name})?")),
        TypeKind::List => ("Vec<u64>", format!("a.ids({name})?")),
        TypeKind::String => ("String", format!("a.text({name})?")),
        TypeKind::Bool => ("bool", format!("a.flag({name})?")),
        TypeKind::Object => ("crate::model::Intent", format!("a.intent({name})?")),
    };
    if matches!(def.kind, TypeKind::List | TypeKind::Bool) {
        // A list that was not given is an empty list; a flag that was not given is off.
        (ty.to_string(), read)
    } else if param.required {
        (ty.to_string(), format!("a.required({name}, {read})?"))
    } else {
        (format!("Option<{ty}>"), read)
    }
}

/// The groups of typed requests, by where their operations run: (group, enum, what it is).
const REQUEST_GROUPS: [(crate::spec::Runs, &str, &str); 3] = [
    (
        crate::spec::Runs::Transaction,
        "TxRequest",
        "A request that runs inside one database transaction (`ops::run`).",
    ),
    (
        crate::spec::Runs::Database,
        "DatabaseRequest",
        "A request on the database as a whole: its information, checks and copies (`db ...`), and\n/// imports (a series of transactions). `service` runs them.",
    ),
    (
        crate::spec::Runs::Local,
        "LocalRequest",
        "A command that runs inside `tl` itself, without a database (completions, man, demo).",
    ),
];

/// The typed requests: an argument struct per operation, the request enum grouped by where an
/// operation runs, and the parser from checked arguments, so that an operation added to the spec
/// does not compile until every dispatch handles it.
pub fn render_requests(spec: &Spec) -> String {
    use crate::spec::Runs;
    let mut out = String::new();
    out.push_str(&format!("// {HEADER_NOTE}\n"));
    out.push_str(
        "//\n// One typed request per operation of the spec, parsed from checked arguments.\n\n",
    );
    for op in &spec.operations {
        out.push_str(&format!(
            "/// Arguments of `{}`: {}\n#[derive(Debug, Clone, PartialEq)]\npub struct {}Args {{\n",
            op.name,
            op.summary,
            camel(&op.name)
        ));
        match op.timeline {
            crate::spec::TimelineUse::Required => out.push_str("    /// The timeline; `None` means the one with the smallest ID.\n    pub timeline_id: Option<u64>,\n"),
            crate::spec::TimelineUse::Optional => out.push_str("    /// The timeline; `None` means every timeline.\n    pub timeline_id: Option<u64>,\n"),
            crate::spec::TimelineUse::None => {}
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
    for (runs, group, doc) in REQUEST_GROUPS {
        out.push_str(&format!(
            "/// {doc}\n#[derive(Debug, Clone, PartialEq)]\npub enum {group} {{\n"
        ));
        for op in spec.operations.iter().filter(|op| op.runs == runs) {
            out.push_str(&format!(
                "    /// `{}`: {}\n    {}({}Args),\n",
                op.name,
                op.summary,
                camel(&op.name),
                camel(&op.name)
            ));
        }
        out.push_str("}\n\n");
    }
    let exports: Vec<&Operation> = spec
        .operations
        .iter()
        .filter(|op| op.runs == Runs::Export)
        .collect();
    out.push_str("/// A checked request for one operation of the spec, by where it runs.\n#[derive(Debug, Clone, PartialEq)]\npub enum Request {\n");
    out.push_str("    /// Inside one database transaction.\n    Tx(TxRequest),\n");
    out.push_str("    /// On the database as a whole.\n    Database(DatabaseRequest),\n");
    for op in &exports {
        out.push_str(&format!(
            "    /// `{}`: {}\n    {}({}Args),\n",
            op.name,
            op.summary,
            camel(&op.name),
            camel(&op.name)
        ));
    }
    out.push_str("    /// Inside `tl` itself.\n    Local(LocalRequest),\n}\n\n");
    let wrap = |op: &Operation| -> (String, String) {
        let variant = camel(&op.name);
        match op.runs {
            Runs::Transaction => (format!("Request::Tx(TxRequest::{variant}("), "))".into()),
            Runs::Database => (
                format!("Request::Database(DatabaseRequest::{variant}("),
                "))".into(),
            ),
            Runs::Export => (format!("Request::{variant}("), ")".into()),
            Runs::Local => (
                format!("Request::Local(LocalRequest::{variant}("),
                "))".into(),
            ),
        }
    };
    out.push_str("impl Request {\n");
    out.push_str("    /// The typed request of `op` from arguments that passed `spec::validate::validate`. The only\n    /// place where an operation is picked by its name.\n");
    out.push_str("    pub fn from_checked(op: &crate::spec::Operation, args: &crate::spec::validate::Args) -> Result<Request> {\n        let a = Fields::new(op, args);\n        Ok(match op.name.as_str() {\n");
    for op in &spec.operations {
        let (open, close) = wrap(op);
        out.push_str(&format!(
            "            {} => {open}{}Args {{\n",
            rust_str(&op.name),
            camel(&op.name)
        ));
        if op.timeline.takes_timeline() {
            out.push_str("                timeline_id: a.id(\"timeline_id\")?,\n");
        }
        for param in &op.params {
            let (_, read) = rust_param(spec, param);
            out.push_str(&format!("                {}: {read},\n", param.name));
        }
        out.push_str(&format!("            }}{close},\n"));
    }
    out.push_str("            _ => return Err(a.unknown()),\n        })\n    }\n\n");
    out.push_str("    /// The spec name of the operation.\n    pub fn name(&self) -> &'static str {\n        match self {\n");
    out.push_str(
        "            Request::Tx(r) => r.name(),\n            Request::Database(r) => r.name(),\n",
    );
    for op in &exports {
        out.push_str(&format!(
            "            Request::{}(_) => {},\n",
            camel(&op.name),
            rust_str(&op.name)
        ));
    }
    out.push_str("            Request::Local(r) => r.name(),\n        }\n    }\n}\n");
    for (runs, group, _) in REQUEST_GROUPS {
        out.push_str(&format!("\nimpl {group} {{\n"));
        out.push_str("    /// The spec name of the operation.\n    pub fn name(&self) -> &'static str {\n        match self {\n");
        for op in spec.operations.iter().filter(|op| op.runs == runs) {
            out.push_str(&format!(
                "            {group}::{}(_) => {},\n",
                camel(&op.name),
                rust_str(&op.name)
            ));
        }
        out.push_str("        }\n    }\n");
        if runs == Runs::Transaction {
            out.push_str("\n    /// The timeline the request names, if any (`None` also for operations without one).\n    pub fn timeline_id(&self) -> Option<u64> {\n        match self {\n");
            for op in spec.operations.iter().filter(|op| op.runs == runs) {
                if op.timeline.takes_timeline() {
                    out.push_str(&format!(
                        "            {group}::{}(a) => a.timeline_id,\n",
                        camel(&op.name)
                    ));
                } else {
                    out.push_str(&format!(
                        "            {group}::{}(_) => None,\n",
                        camel(&op.name)
                    ));
                }
            }
            out.push_str("        }\n    }\n");
        }
        out.push_str("}\n");
    }
    out
}
