// generated from spec/timeline.json; do not edit. Regenerate with: cargo test --test generated
//
// The clap command tree of `tl`. Flags take plain strings; the spec validator checks them.

/// The `tl` command with every subcommand and flag of the spec.
pub fn command() -> clap::Command {
    use clap::{Arg, ArgAction, Command};
    Command::new("tl")
        .about("Keep LLM conversations as a tree of messages with named branches, rebuild the context of any message, fit it into a token budget with summaries, and archive finished branches. Every command prints JSON on stdout; errors are JSON on stderr.")
        .version(env!("CARGO_PKG_VERSION"))
        .subcommand_required(true)
        .arg_required_else_help(true)
        .arg(Arg::new("db").long("db").value_name("PATH").global(true).action(ArgAction::Set).value_parser(clap::value_parser!(std::ffi::OsString)).help("The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory."))
        .arg(Arg::new("timeline").long("timeline").value_name("TL").global(true).action(ArgAction::Set).value_parser(clap::value_parser!(std::ffi::OsString)).help("The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID."))
        .arg(Arg::new("idempotency-key").long("idempotency-key").value_name("KEY").global(true).action(ArgAction::Set).value_parser(clap::value_parser!(std::ffi::OsString)).help("Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused."))
        .subcommand(
            Command::new("create")
                .about("Create a new timeline with an empty main branch.")
        )
        .subcommand(
            Command::new("append")
                .about("Append a message to the current branch and move its head.")
                .arg(Arg::new("role").long("role").value_name("ROLE").action(ArgAction::Set).allow_hyphen_values(true).help("Who wrote the message: user, assistant, system or summary. [user, assistant, system, summary] (required)"))
                .arg(Arg::new("text").long("text").value_name("TEXT").action(ArgAction::Set).allow_hyphen_values(true).help("The message text. Use - to read it from standard input, or --text-file PATH. (required)"))
                .arg(Arg::new("text-file").long("text-file").value_name("PATH").action(ArgAction::Set).allow_hyphen_values(true).help("Read --text from this file (UTF-8)."))
                .arg(Arg::new("tokens").long("tokens").value_name("N").action(ArgAction::Set).allow_hyphen_values(true).help("Token count of the message. Default: max(1, ceil(Unicode scalars / 4))."))
                .arg(Arg::new("intent-tag").long("intent-tag").value_name("TAG").action(ArgAction::Set).allow_hyphen_values(true).help("Label the message with an intent tag (your own vocabulary)."))
                .arg(Arg::new("intent-note").long("intent-note").value_name("TEXT").action(ArgAction::Set).allow_hyphen_values(true).help("A note that explains the intent; needs the intent tag. Shown by node, never in context."))
        )
        .subcommand(
            Command::new("fork")
                .about("Create a branch whose head is the given node.")
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The node the new branch starts from (its head). (required)"))
                .arg(Arg::new("name").long("name").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The new branch's name. (required)"))
        )
        .subcommand(
            Command::new("switch")
                .about("Make another branch the current one.")
                .arg(Arg::new("name").long("name").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The branch to make current. (required)"))
        )
        .subcommand(
            Command::new("drop-branch")
                .about("Remove a branch pointer; its messages stay in the timeline.")
                .arg(Arg::new("name").long("name").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The branch to remove. The current branch cannot be removed. (required)"))
        )
        .subcommand(
            Command::new("context")
                .about("Print the messages from the root to a node, oldest first.")
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The last message of the context. (required)"))
        )
        .subcommand(
            Command::new("budget")
                .about("Fit the context of a node into a token budget with summaries and placeholders.")
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The target message; it is always kept verbatim. (required)"))
                .arg(Arg::new("max").long("max").value_name("N").action(ArgAction::Set).allow_hyphen_values(true).help("The token budget. (required)"))
        )
        .subcommand(
            Command::new("pin")
                .about("Pin a node so that budgets always keep it verbatim.")
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The node to pin. (required)"))
        )
        .subcommand(
            Command::new("unpin")
                .about("Remove a pin.")
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The node to unpin. (required)"))
        )
        .subcommand(
            Command::new("summarize")
                .about("Add a summary of the path from one node down to another.")
                .arg(Arg::new("from").long("from").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The first node of the summarised range. (required)"))
                .arg(Arg::new("to").long("to").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The last node of the range: the start itself or a descendant of it. (required)"))
                .arg(Arg::new("summary").long("summary").value_name("TEXT").action(ArgAction::Set).allow_hyphen_values(true).help("The summary text. Use - to read it from standard input, or --summary-file PATH. (required)"))
                .arg(Arg::new("summary-file").long("summary-file").value_name("PATH").action(ArgAction::Set).allow_hyphen_values(true).help("Read --summary from this file (UTF-8)."))
                .arg(Arg::new("tokens").long("tokens").value_name("N").action(ArgAction::Set).allow_hyphen_values(true).help("Token count of the summary. Default: max(1, ceil(Unicode scalars / 4))."))
                .arg(Arg::new("derived-from").long("derived-from").value_name("IDS").action(ArgAction::Set).allow_hyphen_values(true).help("Summaries this one was derived from, comma-separated (n9,n10)."))
                .arg(Arg::new("supersede").long("supersede").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("A summary this one replaces as its next version."))
                .arg(Arg::new("intent-tag").long("intent-tag").value_name("TAG").action(ArgAction::Set).allow_hyphen_values(true).help("Label the message with an intent tag (your own vocabulary)."))
                .arg(Arg::new("intent-note").long("intent-note").value_name("TEXT").action(ArgAction::Set).allow_hyphen_values(true).help("A note that explains the intent; needs the intent tag. Shown by node, never in context."))
        )
        .subcommand(
            Command::new("branches")
                .about("List the branches with their heads.")
        )
        .subcommand(
            Command::new("node")
                .about("Show one node in full: text, tokens, intent, summary range and versions.")
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The node to show. (required)"))
        )
        .subcommand(
            Command::new("archive-check")
                .about("Tell whether a branch can be archived, and why not.")
                .arg(Arg::new("name").long("name").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The branch to check. (required)"))
        )
        .subcommand(
            Command::new("archive-branch")
                .about("Archive a finished branch: remove its pointer and move its own messages to the cold zone.")
                .arg(Arg::new("name").long("name").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The branch to archive. (required)"))
        )
        .subcommand(
            Command::new("import")
                .about("Import conversations: a ChatGPT or Claude export, OpenAI messages, an Anthropic request body.")
                .arg(Arg::new("format").long("format").value_name("IMPORT_FORMAT").action(ArgAction::Set).allow_hyphen_values(true).help("What the file holds: chatgpt or claude (a data export: conversations.json, conversations-000.json, the folder or the .zip), openai (a Chat Completions messages array, or an object with messages), anthropic (a Messages request body). [chatgpt, claude, openai, anthropic] (required)"))
                .arg(Arg::new("input").long("input").value_name("PATH").action(ArgAction::Set).allow_hyphen_values(true).help("The file to read (for chatgpt and claude also the export's folder or .zip). (required)"))
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("openai and anthropic only: attach the messages as a new branch from this node of the timeline (--timeline, default the first) instead of making a new timeline."))
                .arg(Arg::new("branch").long("branch").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("With --node: the new branch's name. Default: import-1, import-2, ... (the first that is free)."))
        )
        .subcommand(
            Command::new("export")
                .about("Export a timeline (draw.io, ASCII tree) or a context (OpenAI, Anthropic, Markdown); read-only.")
                .arg(Arg::new("format").long("format").value_name("EXPORT_FORMAT").action(ArgAction::Set).allow_hyphen_values(true).help("drawio (needs --output) or ascii: the whole timeline; openai, anthropic or markdown: the context of --node. [drawio, ascii, openai, anthropic, markdown] (required)"))
                .arg(Arg::new("output").long("output").value_name("PATH").action(ArgAction::Set).allow_hyphen_values(true).help("The file to write; it must not exist yet. Without it, every format but drawio is printed."))
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("openai, anthropic and markdown: the last message of the exported context (required for them)."))
                .arg(Arg::new("max").long("max").value_name("N").action(ArgAction::Set).allow_hyphen_values(true).help("openai, anthropic and markdown: export the layout a budget of this many tokens would give (summaries and placeholders as text), computed without writing anything."))
        )
        .subcommand(
            Command::new("db").about("Commands on the database file as a whole (db ...).").subcommand_required(true).arg_required_else_help(true)
            .subcommand(
                Command::new("info")
                    .about("Show the storage engine, file, format version, size, and the counts of timelines and messages.")
            )
            .subcommand(
                Command::new("check")
                    .about("Check the database's integrity and report every problem found, changing nothing.")
            )
            .subcommand(
                Command::new("convert")
                    .about("Copy the database into a new file; its extension picks the engine (.json: JSON, else SQLite).")
                    .arg(Arg::new("to").long("to").value_name("PATH").action(ArgAction::Set).allow_hyphen_values(true).help("The new database file; it must not exist yet. (required)"))
            )
            .subcommand(
                Command::new("backup")
                    .about("Write a consistent copy of the database to a new file while other processes keep working.")
                    .arg(Arg::new("to").long("to").value_name("PATH").action(ArgAction::Set).allow_hyphen_values(true).help("The copy's file; it must not exist yet. The copy uses the same engine as the database. (required)"))
            )
        )
}
