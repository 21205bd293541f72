//! `generated/spec.rs`: the spec's values as one Rust expression, so the binaries build them without
//! parsing JSON. Each type is destructured whole, so a field added to the spec's types fails to
//! compile here until it is written out too.

use super::{HEADER_NOTE, rust_str};
use crate::spec::{
    Annotations, Constants, ErrorDef, Field, Global, JsonText, Operation, Param, Spec, TypeDef,
};
use std::collections::BTreeMap;

/// The file: a comment, then an expression of type `Spec` (read by `include!` in `src/spec`).
pub fn render_spec(spec: &Spec) -> String {
    format!(
        "// The values of spec/timeline.json as Rust code (see src/spec/mod.rs).\n// {HEADER_NOTE}\n{}\n",
        spec.rust()
    )
}

/// A value written as the Rust expression that builds it.
trait Rust {
    fn rust(&self) -> String;
}

impl Rust for String {
    fn rust(&self) -> String {
        format!("String::from({})", rust_str(self))
    }
}

impl Rust for bool {
    fn rust(&self) -> String {
        self.to_string()
    }
}

macro_rules! number {
    ($($t:ty),*) => {$(
        impl Rust for $t {
            fn rust(&self) -> String {
                format!("{self}_{}", stringify!($t))
            }
        }
    )*};
}
number!(u64, usize, i32, i64);

impl<T: Rust> Rust for Option<T> {
    fn rust(&self) -> String {
        match self {
            Some(value) => format!("Some({})", value.rust()),
            None => "None".into(),
        }
    }
}

impl<T: Rust> Rust for Vec<T> {
    fn rust(&self) -> String {
        let items: Vec<String> = self.iter().map(Rust::rust).collect();
        format!("vec![{}]", items.join(", "))
    }
}

impl<T: Rust> Rust for BTreeMap<String, T> {
    fn rust(&self) -> String {
        let entries: Vec<String> = self
            .iter()
            .map(|(key, value)| format!("\n    ({}, {}),", key.rust(), value.rust()))
            .collect();
        format!("BTreeMap::from([{}\n])", entries.concat())
    }
}

impl Rust for JsonText {
    fn rust(&self) -> String {
        format!("JsonText::compiled({})", rust_str(self.text()))
    }
}

/// An enum of the spec: its variant, by the name `Debug` gives it.
macro_rules! variants {
    ($($t:ident),*) => {$(
        impl Rust for crate::spec::$t {
            fn rust(&self) -> String {
                format!("{}::{self:?}", stringify!($t))
            }
        }
    )*};
}
variants!(TypeKind, Runs, TimelineUse, KeyUse, Names);

/// `Name { field: value, ... }` from the fields' names and values.
fn literal(name: &str, fields: &[(&str, String)]) -> String {
    let fields: Vec<String> = fields.iter().map(|(f, v)| format!("{f}: {v}")).collect();
    format!("{name} {{ {} }}", fields.join(", "))
}

/// `Rust` for a spec struct, written as a literal of all its fields. The pattern names every field
/// (no `..`), so a field added to the struct fails to compile here until it is listed.
macro_rules! structs {
    ($($name:ident { $($field:ident),* $(,)? })*) => {$(
        impl Rust for $name {
            fn rust(&self) -> String {
                let $name { $($field),* } = self;
                literal(stringify!($name), &[$((stringify!($field), $field.rust())),*])
            }
        }
    )*};
}

structs! {
    Constants {
        format_version,
        reserve_tokens,
        max_output_messages,
        max_text_bytes,
        max_idempotency_key_bytes,
        idempotency_window_seconds,
        mcp_frame_limit_bytes,
        mcp_protocol_versions,
        mcp_batch_protocol_versions,
        mcp_batch_max_items,
        mcp_batch_answer_limit_bytes,
        mcp_annotations_from,
        mcp_structured_content_from,
        mcp_title_from,
        mcp_argument_errors_as_tool_errors_from,
        mcp_server_name,
        root_node,
        first_branch,
        ascii_truncate_scalars,
        max_path_tokens,
    }
    TypeDef {
        kind,
        prefix,
        items,
        min_chars,
        max_bytes,
        forbidden_chars,
        allowed,
        fields,
        minimum,
        maximum,
        description,
        mcp_description,
    }
    Field { name, ty, required, cli_flag, help, mcp_help }
    ErrorDef { exit_code, mcp_code, description }
    Operation {
        name,
        cli,
        mcp,
        runs,
        mcp_omitted,
        summary,
        mutating,
        title,
        mcp_description,
        annotations,
        timeline,
        idempotency,
        params,
        mcp_result_key,
        result,
        errors,
    }
    Annotations { read_only, destructive, idempotent }
    Param {
        name,
        cli_flag,
        ty,
        required,
        stdin,
        file_flag,
        positional,
        help,
        mcp_help,
        names,
    }
    Global { name, cli_flag, value_name, help, mcp_help, values, operations }
}

/// The whole spec: like the structs, but with one operation per line.
impl Rust for Spec {
    fn rust(&self) -> String {
        let Spec {
            spec_version,
            title,
            about,
            mcp_instructions,
            constants,
            types,
            errors,
            message_schema,
            entry_schema,
            mcp_error_schema,
            operations,
            globals,
        } = self;
        let operations: Vec<String> = operations
            .iter()
            .map(|op| format!("\n    {},", op.rust()))
            .collect();
        literal(
            "Spec",
            &[
                ("spec_version", spec_version.rust()),
                ("title", title.rust()),
                ("about", about.rust()),
                ("mcp_instructions", mcp_instructions.rust()),
                ("constants", constants.rust()),
                ("types", types.rust()),
                ("errors", errors.rust()),
                ("message_schema", message_schema.rust()),
                ("entry_schema", entry_schema.rust()),
                ("mcp_error_schema", mcp_error_schema.rust()),
                ("operations", format!("vec![{}\n]", operations.concat())),
                ("globals", globals.rust()),
            ],
        )
    }
}
