//! Renderers of the files under `generated/`, used only to write them: each is a walk over the spec,
//! and the freshness test (`cargo test --test suite generated::`) compares their output with the
//! checked-in files. Nothing at run time calls into this module.

mod cli;
mod reference;
mod requests;
mod spec_data;

use crate::spec::{SPEC_JSON, Spec, mcp::tools_list};
use serde_json::Value;

/// The note at the top of every generated file: where it comes from and how to regenerate it.
pub const HEADER_NOTE: &str = "generated from spec/timeline.json; do not edit. Regenerate with: cargo test --test suite generated::";

/// Every generated file as (path relative to the repository root, contents).
pub fn render_all() -> Vec<(&'static str, String)> {
    // From the JSON itself, not the compiled-in copy (`spec()`), which may be the stale file.
    let spec =
        &Spec::parse(SPEC_JSON).expect("spec/timeline.json is valid JSON of the spec's shape");
    let mut files = vec![
        ("generated/spec.rs", spec_data::render_spec(spec)),
        ("generated/cli.rs", cli::render_cli(spec)),
        ("generated/requests.rs", requests::render_requests(spec)),
        ("generated/tools.json", pretty(&tools_list(spec))),
        (
            "generated/cli-reference.md",
            reference::render_reference(spec),
        ),
        (
            "generated/schema/database.json",
            pretty(&crate::model::file::database_schema()),
        ),
        (
            "generated/sqlite_schema.rs",
            crate::store::render_sqlite_schema(),
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

/// A Rust string literal of `s`.
pub(crate) fn rust_str(s: &str) -> String {
    format!("{s:?}")
}
