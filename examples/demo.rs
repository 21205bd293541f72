//! A guided tour: builds a small branching conversation in `target/demo/demo.timeline.json` with the
//! same code path as `tl`, printing each command and what it answered.
//!
//! Run it with `cargo run --example demo`. It starts from a fresh demo file each time and touches no
//! other database.

use std::ffi::OsString;
use timeline::cli::{CliError, run};
use timeline::service::Output;

fn main() -> std::process::ExitCode {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("target")
        .join("demo");
    if let Err(e) = std::fs::create_dir_all(&dir) {
        eprintln!("cannot create {}: {e}", dir.display());
        return std::process::ExitCode::FAILURE;
    }
    let db = dir.join("demo.timeline.json");
    for file in ["", ".bak", ".lock"] {
        let _ = std::fs::remove_file(format!("{}{file}", db.display()));
    }
    let steps: &[&[&str]] = &[
        &["create"],
        &[
            "append",
            "--role",
            "user",
            "--text",
            "Plan a local-first notes app.",
            "--tokens",
            "8",
        ],
        &[
            "append",
            "--role",
            "assistant",
            "--text",
            "Store notes as JSON; sync later.",
            "--tokens",
            "12",
        ],
        &[
            "append",
            "--role",
            "user",
            "--text",
            "Only local data for now.",
            "--tokens",
            "6",
            "--intent-tag",
            "decision",
        ],
        &["pin", "--node", "n3"],
        &[
            "append",
            "--role",
            "assistant",
            "--text",
            "Option A: one file per note.",
            "--tokens",
            "40",
        ],
        &["fork", "--node", "n3", "--name", "alternative"],
        &["switch", "--name", "alternative"],
        &[
            "append",
            "--role",
            "assistant",
            "--text",
            "Option B: one database file.",
            "--tokens",
            "40",
        ],
        &["context", "--node", "n5"],
        &["budget", "--node", "n5", "--max", "90"],
        &[
            "summarize",
            "--from",
            "n1",
            "--to",
            "n2",
            "--summary",
            "Goal: local-first notes app, JSON storage.",
            "--tokens",
            "9",
        ],
        &["budget", "--node", "n5", "--max", "90"],
        &["branches"],
        &["export", "--format", "ascii"],
    ];
    for step in steps {
        println!(
            "$ tl {}",
            step.iter()
                .map(|a| if a.contains(' ') {
                    format!("{a:?}")
                } else {
                    a.to_string()
                })
                .collect::<Vec<_>>()
                .join(" ")
        );
        let mut args: Vec<OsString> = vec!["tl".into(), "--db".into(), db.clone().into_os_string()];
        args.extend(step.iter().map(OsString::from));
        match run(args, &mut std::io::empty()) {
            Ok(Output::Json(value)) => println!("{value}\n"),
            Ok(Output::Text(text)) => println!("{text}"),
            Err(CliError::Text { text, .. }) => println!("{text}"),
            Err(CliError::Failed(error)) => println!("error: {}\n", error.to_json()),
        }
    }
    println!(
        "The demo database is {}; try: cargo run --bin tl -- --db {} node --node n6",
        db.display(),
        db.display()
    );
    std::process::ExitCode::SUCCESS
}
