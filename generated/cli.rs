// generated from spec/timeline.json; do not edit. Regenerate with: cargo test --test generated
//
// The clap command tree of `tl`. Flags take plain strings; the spec validator checks them.
// `spec_values` offers the allowed values to shell completion without checking them.

/// The `tl` command with every subcommand and flag of the spec.
pub fn command() -> clap::Command {
    use clap::{Arg, ArgAction, Command, ValueHint};
    Command::new("tl")
        .about("Keep LLM conversations as a tree of messages with named branches, rebuild the context of any message, fit it into a token budget with summaries, and archive finished branches. Every command prints JSON on stdout; errors are JSON on stderr.")
        .version(env!("CARGO_PKG_VERSION"))
        .subcommand_required(true)
        .arg_required_else_help(true)
        .arg(Arg::new("db").long("db").value_name("PATH").global(true).action(ArgAction::Set).value_parser(clap::value_parser!(std::ffi::OsString)).value_hint(ValueHint::FilePath).help("The database file. Default: $TIMELINE_DB if set and non-empty, else .timeline.json in your home directory."))
        .arg(Arg::new("timeline").long("timeline").value_name("TL").global(true).action(ArgAction::Set).value_parser(clap::value_parser!(std::ffi::OsString)).help("The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID."))
        .arg(Arg::new("idempotency-key").long("idempotency-key").value_name("KEY").global(true).action(ArgAction::Set).value_parser(clap::value_parser!(std::ffi::OsString)).help("Make a change safe to retry: the same key on the same timeline within 7 days returns the first result."))
        .subcommand(
            Command::new("create")
                .about("Create a new timeline with an empty main branch.")
                .override_usage("tl create [OPTIONS]")
        )
        .subcommand(
            Command::new("append")
                .about("Append a message to the current branch and move its head.")
                .override_usage("tl append [OPTIONS] --role <ROLE> <--text <TEXT>|--text-file <PATH>>")
                .arg(Arg::new("role").long("role").value_name("ROLE").action(ArgAction::Set).allow_hyphen_values(true).value_parser(spec_values(&["user", "assistant", "system", "summary"])).hide_possible_values(true).help("Who wrote the message: user, assistant, system or summary. [user, assistant, system, summary] (required)"))
                .arg(Arg::new("text").long("text").value_name("TEXT").action(ArgAction::Set).allow_hyphen_values(true).help("The message text. Use - to read it from standard input, or --text-file PATH. (required)"))
                .arg(Arg::new("text-file").long("text-file").value_name("PATH").action(ArgAction::Set).allow_hyphen_values(true).value_hint(ValueHint::FilePath).help("Read --text from this file (UTF-8)."))
                .arg(Arg::new("tokens").long("tokens").value_name("N").action(ArgAction::Set).allow_hyphen_values(true).help("Token count of the message. Default: max(1, ceil(Unicode scalars / 4))."))
                .arg(Arg::new("intent-tag").long("intent-tag").value_name("TAG").action(ArgAction::Set).allow_hyphen_values(true).help("Label the message with an intent tag (your own vocabulary)."))
                .arg(Arg::new("intent-note").long("intent-note").value_name("TEXT").action(ArgAction::Set).allow_hyphen_values(true).help("A note that explains the intent; needs the intent tag. Shown by node, never in context."))
        )
        .subcommand(
            Command::new("fork")
                .about("Create a branch whose head is the given node.")
                .override_usage("tl fork [OPTIONS] --node <NID> --name <BRANCH_NAME>")
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The node the new branch starts from (its head). (required)"))
                .arg(Arg::new("name").long("name").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The new branch's name. (required)"))
        )
        .subcommand(
            Command::new("switch")
                .about("Make another branch the current one.")
                .override_usage("tl switch [OPTIONS] --name <BRANCH_NAME>")
                .arg(Arg::new("name").long("name").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The branch to make current. (required)"))
        )
        .subcommand(
            Command::new("drop-branch")
                .about("Remove a branch pointer; its messages stay in the timeline.")
                .override_usage("tl drop-branch [OPTIONS] --name <BRANCH_NAME>")
                .arg(Arg::new("name").long("name").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The branch to remove. The current branch cannot be removed. (required)"))
        )
        .subcommand(
            Command::new("context")
                .about("Print the messages from the root to a node, oldest first.")
                .override_usage("tl context [OPTIONS] --node <NID>")
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The last message of the context. (required)"))
        )
        .subcommand(
            Command::new("budget")
                .about("Fit the context of a node into a token budget with summaries and placeholders.")
                .override_usage("tl budget [OPTIONS] --node <NID> --max <N>")
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The target message; it is always kept verbatim. (required)"))
                .arg(Arg::new("max").long("max").value_name("N").action(ArgAction::Set).allow_hyphen_values(true).help("The token budget. (required)"))
        )
        .subcommand(
            Command::new("pin")
                .about("Pin a node so that budgets always keep it verbatim.")
                .override_usage("tl pin [OPTIONS] --node <NID>")
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The node to pin. (required)"))
        )
        .subcommand(
            Command::new("unpin")
                .about("Remove a pin.")
                .override_usage("tl unpin [OPTIONS] --node <NID>")
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The node to unpin. (required)"))
        )
        .subcommand(
            Command::new("summarize")
                .about("Add a summary of the path from one node down to another.")
                .override_usage("tl summarize [OPTIONS] --from <NID> --to <NID> <--summary <TEXT>|--summary-file <PATH>>")
                .arg(Arg::new("from").long("from").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The first node of the summarised range. (required)"))
                .arg(Arg::new("to").long("to").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The last node of the range: the start itself or a descendant of it. (required)"))
                .arg(Arg::new("summary").long("summary").value_name("TEXT").action(ArgAction::Set).allow_hyphen_values(true).help("The summary text. Use - to read it from standard input, or --summary-file PATH. (required)"))
                .arg(Arg::new("summary-file").long("summary-file").value_name("PATH").action(ArgAction::Set).allow_hyphen_values(true).value_hint(ValueHint::FilePath).help("Read --summary from this file (UTF-8)."))
                .arg(Arg::new("tokens").long("tokens").value_name("N").action(ArgAction::Set).allow_hyphen_values(true).help("Token count of the summary. Default: max(1, ceil(Unicode scalars / 4))."))
                .arg(Arg::new("derived-from").long("derived-from").value_name("IDS").action(ArgAction::Set).allow_hyphen_values(true).help("Summaries this one was derived from, comma-separated (n9,n10)."))
                .arg(Arg::new("supersede").long("supersede").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("A summary this one replaces as its next version."))
                .arg(Arg::new("intent-tag").long("intent-tag").value_name("TAG").action(ArgAction::Set).allow_hyphen_values(true).help("Label the message with an intent tag (your own vocabulary)."))
                .arg(Arg::new("intent-note").long("intent-note").value_name("TEXT").action(ArgAction::Set).allow_hyphen_values(true).help("A note that explains the intent; needs the intent tag. Shown by node, never in context."))
        )
        .subcommand(
            Command::new("branches")
                .about("List the branches with their heads.")
                .override_usage("tl branches [OPTIONS]")
        )
        .subcommand(
            Command::new("node")
                .about("Show one node in full: text, tokens, intent, summary range and versions.")
                .override_usage("tl node [OPTIONS] --node <NID>")
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The node to show. (required)"))
        )
        .subcommand(
            Command::new("archive-check")
                .about("Tell whether a branch can be archived, and why not.")
                .override_usage("tl archive-check [OPTIONS] --name <BRANCH_NAME>")
                .arg(Arg::new("name").long("name").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The branch to check. (required)"))
        )
        .subcommand(
            Command::new("archive-branch")
                .about("Archive a finished branch: remove its pointer and move its own messages to the cold zone.")
                .override_usage("tl archive-branch [OPTIONS] --name <BRANCH_NAME>")
                .arg(Arg::new("name").long("name").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The branch to archive. (required)"))
        )
        .subcommand(
            Command::new("export")
                .about("Export the timeline as a draw.io diagram or an ASCII tree (read-only).")
                .override_usage("tl export [OPTIONS] --format <EXPORT_FORMAT>")
                .arg(Arg::new("format").long("format").value_name("EXPORT_FORMAT").action(ArgAction::Set).allow_hyphen_values(true).value_parser(spec_values(&["drawio", "ascii"])).hide_possible_values(true).help("drawio (needs --output) or ascii. [drawio, ascii] (required)"))
                .arg(Arg::new("output").long("output").value_name("PATH").action(ArgAction::Set).allow_hyphen_values(true).value_hint(ValueHint::FilePath).help("The file to write; it must not exist yet. Without it, ascii prints the tree."))
        )
        .subcommand(
            Command::new("completions")
                .about("Print a completion script for a shell (bash, zsh, fish, powershell or elvish).")
                .override_usage("tl completions [OPTIONS] <SHELL>")
                .arg(Arg::new("shell").value_name("SHELL").action(ArgAction::Set).allow_hyphen_values(true).value_parser(spec_values(&["bash", "zsh", "fish", "powershell", "elvish"])).hide_possible_values(true).help("The shell to print the script for. [bash, zsh, fish, powershell, elvish] (required)"))
        )
        .subcommand(
            Command::new("man")
                .about("Print the manual page of tl as roff text (read it with man -l, or install it as tl.1).")
                .override_usage("tl man [OPTIONS]")
        )
        .subcommand(
            Command::new("demo")
                .about("Walk through a short demo conversation in a new database, printing each tl command and its answer.")
                .override_usage("tl demo [OPTIONS]")
        )
}
