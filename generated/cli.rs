// generated from spec/timeline.json; do not edit. Regenerate with: cargo test --test suite generated::
//
// The clap command tree of `tl`. Flags take plain strings; the spec validator checks them.
// `spec_values` offers the allowed values to shell completion without checking them.

/// The `tl` command with every subcommand and flag of the spec.
pub fn command() -> clap::Command {
    tree(false, None)
}

/// The same command as a run of `tl` parses with: each subcommand's flags added only when that
/// subcommand is parsed, and only the subcommand `only` (its group, for `db ...`) when given.
pub fn command_to_parse(only: Option<&str>) -> clap::Command {
    tree(true, only)
}

/// Whether the tree holds the subcommand `name`.
fn wanted(only: Option<&str>, name: &str) -> bool {
    only.is_none_or(|only| only == name)
}

/// A subcommand with its flags, added now or (`defer`) when it is parsed.
fn with_flags(cmd: clap::Command, defer: bool, flags: fn(clap::Command) -> clap::Command) -> clap::Command {
    if defer { cmd.defer(flags) } else { flags(cmd) }
}

fn tree(defer: bool, only: Option<&str>) -> clap::Command {
    use clap::{Arg, ArgAction, Command, ValueHint};
    Command::new("tl")
        .about("Keep LLM conversations as a tree of messages with named branches, rebuild the context of any message, fit it into a token budget with summaries, and archive finished branches. Every command prints JSON on stdout (with --format text, log, search, diff, context and branches print readable text); errors are JSON on stderr.")
        .version(env!("CARGO_PKG_VERSION"))
        .subcommand_required(true)
        .arg_required_else_help(true)
        .arg(Arg::new("db").long("db").value_name("PATH").global(true).action(ArgAction::Set).value_parser(clap::value_parser!(std::ffi::OsString)).value_hint(ValueHint::FilePath).help("The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database), or a PostgreSQL database as a postgresql:// URI (docs/storage.md). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory."))
        .arg(Arg::new("timeline").long("timeline").value_name("TL").global(true).action(ArgAction::Set).value_parser(clap::value_parser!(std::ffi::OsString)).help("The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID."))
        .arg(Arg::new("idempotency-key").long("idempotency-key").value_name("KEY").global(true).action(ArgAction::Set).value_parser(clap::value_parser!(std::ffi::OsString)).help("Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused."))
        .arg(Arg::new("format").long("format").value_name("FORMAT").action(ArgAction::Set).help("How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by timelines, log, search, diff, context and branches, and by import before the command only (tl --format text import --format codex), since import's own --format names what the file holds. [json, text]"))
        .subcommands(wanted(only, "create").then(|| with_flags(
            Command::new("create")
                .about("Create a new timeline with an empty main branch.")
                .override_usage("tl create [OPTIONS]"),
            defer,
            |cmd| cmd
                .arg(Arg::new("title").long("title").value_name("TITLE").action(ArgAction::Set).allow_hyphen_values(true).help("An optional title, shown by timelines."))
        )))
        .subcommands(wanted(only, "append").then(|| with_flags(
            Command::new("append")
                .about("Append a message to the current branch (or the one named) and move its head.")
                .override_usage("tl append [OPTIONS] --role <ROLE> <--text <TEXT>|--text-file <PATH>>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("role").long("role").value_name("ROLE").action(ArgAction::Set).allow_hyphen_values(true).value_parser(spec_values(&["user", "assistant", "system", "summary"])).hide_possible_values(true).help("Who wrote the message: user, assistant, system or summary. [user, assistant, system, summary] (required)"))
                .arg(Arg::new("text").long("text").value_name("TEXT").action(ArgAction::Set).allow_hyphen_values(true).help("The message text. Use - to read it from standard input, or --text-file PATH. (required)"))
                .arg(Arg::new("text-file").long("text-file").value_name("PATH").action(ArgAction::Set).allow_hyphen_values(true).value_hint(ValueHint::FilePath).help("Read --text from this file (UTF-8)."))
                .arg(Arg::new("tokens").long("tokens").value_name("N").action(ArgAction::Set).allow_hyphen_values(true).help("Token count of the message. Default: max(1, ceil(Unicode scalars / 4))."))
                .arg(Arg::new("intent-tag").long("intent-tag").value_name("TAG").action(ArgAction::Set).allow_hyphen_values(true).help("Label the message with an intent tag (your own vocabulary)."))
                .arg(Arg::new("intent-note").long("intent-note").value_name("TEXT").action(ArgAction::Set).allow_hyphen_values(true).help("A note that explains the intent; needs the intent tag. Shown by node, never in context."))
                .arg(Arg::new("branch").long("branch").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The branch to append to; it does not become current. Default: the current branch."))
                .arg(Arg::new("expect-head").long("expect-head").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("Refuse with a conflict (nothing written) unless the branch's head is this node: compare-and-set for concurrent writers."))
        )))
        .subcommands(wanted(only, "fork").then(|| with_flags(
            Command::new("fork")
                .about("Create a branch whose head is the given node.")
                .override_usage("tl fork [OPTIONS] --node <NID> --name <BRANCH_NAME>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The node the new branch starts from (its head). (required)"))
                .arg(Arg::new("name").long("name").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The new branch's name. (required)"))
        )))
        .subcommands(wanted(only, "switch").then(|| with_flags(
            Command::new("switch")
                .about("Make another branch the current one.")
                .override_usage("tl switch [OPTIONS] --name <BRANCH_NAME>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("name").long("name").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The branch to make current. (required)"))
        )))
        .subcommands(wanted(only, "drop-branch").then(|| with_flags(
            Command::new("drop-branch")
                .about("Remove a branch pointer; its messages stay in the timeline.")
                .override_usage("tl drop-branch [OPTIONS] --name <BRANCH_NAME>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("name").long("name").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The branch to remove. The current branch cannot be removed. (required)"))
        )))
        .subcommands(wanted(only, "rename-branch").then(|| with_flags(
            Command::new("rename-branch")
                .about("Rename a branch, keeping its head, watermark, place and current-branch marker.")
                .override_usage("tl rename-branch [OPTIONS] --name <BRANCH_NAME> --to <BRANCH_NAME>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("name").long("name").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The branch to rename. (required)"))
                .arg(Arg::new("to").long("to").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("Its new name; no other branch may have it. (required)"))
        )))
        .subcommands(wanted(only, "context").then(|| with_flags(
            Command::new("context")
                .about("Print the messages from the root to a node, oldest first.")
                .override_usage("tl context [OPTIONS] --node <NID>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The last message of the context. (required)"))
                .arg(Arg::new("format").long("format").value_name("FORMAT").action(ArgAction::Set).allow_hyphen_values(true).value_parser(spec_values(&["json", "text"])).hide_possible_values(true).help("How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by timelines, log, search, diff, context and branches, and by import before the command only (tl --format text import --format codex), since import's own --format names what the file holds. [json, text]"))
        )))
        .subcommands(wanted(only, "budget").then(|| with_flags(
            Command::new("budget")
                .about("Fit the context of a node into a token budget with summaries and placeholders.")
                .override_usage("tl budget [OPTIONS] --node <NID> --max <N>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The target message; it is always kept verbatim. (required)"))
                .arg(Arg::new("max").long("max").value_name("N").action(ArgAction::Set).allow_hyphen_values(true).help("The token budget. (required)"))
                .arg(Arg::new("dry-run").long("dry-run").action(ArgAction::SetTrue).help("Show the layout without writing anything: a placeholder that would be created appears with node null and the range it would cover (from, to), and summaries_created lists only existing placeholders. An idempotency key has no effect."))
                .arg(Arg::new("explain").long("explain").action(ArgAction::SetTrue).help("Add an explanation: for every message of the path, in order, whether it was kept, covered by a summary or by a placeholder, and why. If the budget is infeasible, the error data holds the smallest layout (messages) and its explanation."))
        )))
        .subcommands(wanted(only, "pin").then(|| with_flags(
            Command::new("pin")
                .about("Pin a node so that budgets always keep it verbatim.")
                .override_usage("tl pin [OPTIONS] --node <NID>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The node to pin. (required)"))
        )))
        .subcommands(wanted(only, "unpin").then(|| with_flags(
            Command::new("unpin")
                .about("Remove a pin.")
                .override_usage("tl unpin [OPTIONS] --node <NID>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The node to unpin. (required)"))
        )))
        .subcommands(wanted(only, "summarize").then(|| with_flags(
            Command::new("summarize")
                .about("Add a summary of the path from one node down to another.")
                .override_usage("tl summarize [OPTIONS] --from <NID> --to <NID> <--summary <TEXT>|--summary-file <PATH>>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("from").long("from").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The first node of the summarised range. (required)"))
                .arg(Arg::new("to").long("to").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The last node of the range: the start itself or a descendant of it. (required)"))
                .arg(Arg::new("summary").long("summary").value_name("TEXT").action(ArgAction::Set).allow_hyphen_values(true).help("The summary text. Use - to read it from standard input, or --summary-file PATH. (required)"))
                .arg(Arg::new("summary-file").long("summary-file").value_name("PATH").action(ArgAction::Set).allow_hyphen_values(true).value_hint(ValueHint::FilePath).help("Read --summary from this file (UTF-8)."))
                .arg(Arg::new("tokens").long("tokens").value_name("N").action(ArgAction::Set).allow_hyphen_values(true).help("Token count of the summary. Default: max(1, ceil(Unicode scalars / 4))."))
                .arg(Arg::new("derived-from").long("derived-from").value_name("IDS").action(ArgAction::Set).allow_hyphen_values(true).help("Summaries this one was derived from, comma-separated (n9,n10)."))
                .arg(Arg::new("supersede").long("supersede").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("A summary this one replaces as its next version."))
                .arg(Arg::new("intent-tag").long("intent-tag").value_name("TAG").action(ArgAction::Set).allow_hyphen_values(true).help("Label the message with an intent tag (your own vocabulary)."))
                .arg(Arg::new("intent-note").long("intent-note").value_name("TEXT").action(ArgAction::Set).allow_hyphen_values(true).help("A note that explains the intent; needs the intent tag. Shown by node, never in context."))
        )))
        .subcommands(wanted(only, "branches").then(|| with_flags(
            Command::new("branches")
                .about("List the branches with their heads.")
                .override_usage("tl branches [OPTIONS]"),
            defer,
            |cmd| cmd
                .arg(Arg::new("format").long("format").value_name("FORMAT").action(ArgAction::Set).allow_hyphen_values(true).value_parser(spec_values(&["json", "text"])).hide_possible_values(true).help("How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by timelines, log, search, diff, context and branches, and by import before the command only (tl --format text import --format codex), since import's own --format names what the file holds. [json, text]"))
        )))
        .subcommands(wanted(only, "node").then(|| with_flags(
            Command::new("node")
                .about("Show one node in full: text, tokens, intent, summary range and versions, import provenance.")
                .override_usage("tl node [OPTIONS] --node <NID>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("The node to show. (required)"))
        )))
        .subcommands(wanted(only, "search").then(|| with_flags(
            Command::new("search")
                .about("Find messages and summaries by their words, best matches first.")
                .override_usage("tl search [OPTIONS] --query <SEARCH_QUERY>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("query").long("query").value_name("SEARCH_QUERY").action(ArgAction::Set).allow_hyphen_values(true).help("What to find: words (all must occur), \"exact phrases\", prefix* words; at most 8 search terms (a phrase counts each word, a prefix one more). (required)"))
                .arg(Arg::new("branch").long("branch").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("Only messages on this branch's path (from the root to its head). The branch of --timeline, or of the timeline with the smallest ID."))
                .arg(Arg::new("under").long("under").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("Only this node and its descendants. A node of --timeline, or of the timeline with the smallest ID."))
                .arg(Arg::new("role").long("role").value_name("ROLE").action(ArgAction::Set).allow_hyphen_values(true).value_parser(spec_values(&["user", "assistant", "system", "summary"])).hide_possible_values(true).help("Only messages with this role. [user, assistant, system, summary]"))
                .arg(Arg::new("since").long("since").value_name("TIME").action(ArgAction::Set).allow_hyphen_values(true).help("Only messages created at or after this time (messages without a recorded time never match)."))
                .arg(Arg::new("until").long("until").value_name("TIME").action(ArgAction::Set).allow_hyphen_values(true).help("Only messages created at or before this time (messages without a recorded time never match)."))
                .arg(Arg::new("zone").long("zone").value_name("ZONE").action(ArgAction::Set).allow_hyphen_values(true).value_parser(spec_values(&["hot", "cold", "all"])).hide_possible_values(true).help("Only hot (live) or cold (archived) messages. Default: all. [hot, cold, all]"))
                .arg(Arg::new("limit").long("limit").value_name("N").action(ArgAction::Set).allow_hyphen_values(true).help("Hits per page. Default: 20."))
                .arg(Arg::new("cursor").long("cursor").value_name("CURSOR").action(ArgAction::Set).allow_hyphen_values(true).help("The next_cursor of the previous page (same query and filters), for the page after it."))
                .arg(Arg::new("format").long("format").value_name("FORMAT").action(ArgAction::Set).allow_hyphen_values(true).value_parser(spec_values(&["json", "text"])).hide_possible_values(true).help("How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by timelines, log, search, diff, context and branches, and by import before the command only (tl --format text import --format codex), since import's own --format names what the file holds. [json, text]"))
        )))
        .subcommands(wanted(only, "log").then(|| with_flags(
            Command::new("log")
                .about("Page through the messages of a branch, newest first.")
                .override_usage("tl log [OPTIONS]"),
            defer,
            |cmd| cmd
                .arg(Arg::new("branch").long("branch").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The branch to read. Default: the current branch."))
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("Read the path that ends at this node instead of a branch."))
                .arg(Arg::new("limit").long("limit").value_name("N").action(ArgAction::Set).allow_hyphen_values(true).help("Messages per page. Default: 50."))
                .arg(Arg::new("cursor").long("cursor").value_name("CURSOR").action(ArgAction::Set).allow_hyphen_values(true).help("The next_cursor of the previous page, for the older messages after it."))
                .arg(Arg::new("format").long("format").value_name("FORMAT").action(ArgAction::Set).allow_hyphen_values(true).value_parser(spec_values(&["json", "text"])).hide_possible_values(true).help("How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by timelines, log, search, diff, context and branches, and by import before the command only (tl --format text import --format codex), since import's own --format names what the file holds. [json, text]"))
        )))
        .subcommands(wanted(only, "diff").then(|| with_flags(
            Command::new("diff")
                .about("Compare two branches or nodes: their common ancestor and what each has after it.")
                .override_usage("tl diff [OPTIONS] --left <SIDE> --right <SIDE>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("left").long("left").value_name("SIDE").action(ArgAction::Set).allow_hyphen_values(true).help("One side: a branch name or a node ID. (required)"))
                .arg(Arg::new("right").long("right").value_name("SIDE").action(ArgAction::Set).allow_hyphen_values(true).help("The other side: a branch name or a node ID. (required)"))
                .arg(Arg::new("format").long("format").value_name("FORMAT").action(ArgAction::Set).allow_hyphen_values(true).value_parser(spec_values(&["json", "text"])).hide_possible_values(true).help("How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by timelines, log, search, diff, context and branches, and by import before the command only (tl --format text import --format codex), since import's own --format names what the file holds. [json, text]"))
        )))
        .subcommands(wanted(only, "archive-check").then(|| with_flags(
            Command::new("archive-check")
                .about("Tell whether a branch can be archived, and why not.")
                .override_usage("tl archive-check [OPTIONS] --name <BRANCH_NAME>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("name").long("name").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The branch to check. (required)"))
        )))
        .subcommands(wanted(only, "archive-branch").then(|| with_flags(
            Command::new("archive-branch")
                .about("Archive a finished branch: remove its pointer and move its own messages to the cold zone.")
                .override_usage("tl archive-branch [OPTIONS] --name <BRANCH_NAME>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("name").long("name").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The branch to archive. (required)"))
        )))
        .subcommands(wanted(only, "restore-branch").then(|| with_flags(
            Command::new("restore-branch")
                .about("Bring an archived branch back: its pointer, and its archived messages to the hot zone.")
                .override_usage("tl restore-branch [OPTIONS] --branch <BRANCH_NAME>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("branch").long("branch").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("The archived branch to restore (the latest one archived under that name). (required)"))
        )))
        .subcommands(wanted(only, "import").then(|| with_flags(
            Command::new("import")
                .about("Import conversations: chat exports, API request bodies, coding-agent sessions, llm logs.")
                .override_usage("tl import [OPTIONS] --format <IMPORT_FORMAT>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("format").long("format").value_name("IMPORT_FORMAT").action(ArgAction::Set).allow_hyphen_values(true).value_parser(spec_values(&["chatgpt", "claude", "openai", "anthropic", "claude-code", "codex", "gemini-cli", "llm", "open-webui", "librechat"])).hide_possible_values(true).help("What the file holds: chatgpt or claude (a data export: conversations.json, conversations-000.json, the folder or the .zip), openai (a Chat Completions messages array, or an object with messages), anthropic (a Messages request body), claude-code, codex or gemini-cli (Claude Code session transcripts, Codex CLI rollout files, Gemini CLI sessions: a session's file or a folder of them; imported again, a grown session adds its new messages to its timeline), llm (simonw/llm's logs.db, read-only; kept up to date the same way), open-webui (a chat export: a JSON array of chats), librechat (a conversation export). [chatgpt, claude, openai, anthropic, claude-code, codex, gemini-cli, llm, open-webui, librechat] (required)"))
                .arg(Arg::new("input").long("input").value_name("PATH").action(ArgAction::Set).allow_hyphen_values(true).value_hint(ValueHint::FilePath).help("The file to read (for chatgpt and claude also the export's folder or .zip; for claude-code a session's .jsonl or a folder searched for them). Required, except for claude-code, which reads $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects, codex, which reads $CODEX_HOME/sessions, else ~/.codex/sessions, gemini-cli, which reads ~/.gemini/tmp, and llm, which reads $LLM_USER_PATH/logs.db, else io.datasette.llm/logs.db in the configuration folder, without it."))
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("openai and anthropic only: attach the messages as a new branch from this node of the timeline (--timeline, default the first) instead of making a new timeline."))
                .arg(Arg::new("branch").long("branch").value_name("BRANCH_NAME").action(ArgAction::Set).allow_hyphen_values(true).help("With --node: the new branch's name. Default: import-1, import-2, ... (the first that is free)."))
                .arg(Arg::new("max-unzipped-mib").long("max-unzipped-mib").value_name("N").action(ArgAction::Set).allow_hyphen_values(true).help("A .zip only: the most its conversations files may decompress to, in MiB, in all; a bigger archive is refused. Default: 16384 (16 GiB)."))
                .arg(Arg::new("max-zip-ratio").long("max-zip-ratio").value_name("N").action(ArgAction::Set).allow_hyphen_values(true).help("A .zip only: the most an entry may decompress to, as a multiple of its compressed size; more is refused as a zip bomb. Default: 100."))
                .arg(Arg::new("quiet").long("quiet").action(ArgAction::SetTrue).help("No progress bar on standard error, even on a terminal (it is never drawn when standard error is not one). The JSON report on standard output is printed as always."))
        )))
        .subcommands(wanted(only, "export").then(|| with_flags(
            Command::new("export")
                .about("Export a timeline (draw.io, ASCII tree, HTML) or a context (OpenAI, Anthropic, Markdown); read-only.")
                .override_usage("tl export [OPTIONS] --format <EXPORT_FORMAT>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("format").long("format").value_name("EXPORT_FORMAT").action(ArgAction::Set).allow_hyphen_values(true).value_parser(spec_values(&["drawio", "ascii", "html", "openai", "anthropic", "markdown"])).hide_possible_values(true).help("drawio or html (both need --output) or ascii: the whole timeline; openai, anthropic or markdown: the context of --node. [drawio, ascii, html, openai, anthropic, markdown] (required)"))
                .arg(Arg::new("output").long("output").value_name("PATH").action(ArgAction::Set).allow_hyphen_values(true).value_hint(ValueHint::FilePath).help("The file to write; it must not exist yet. Without it, every format but drawio and html is printed."))
                .arg(Arg::new("node").long("node").value_name("NID").action(ArgAction::Set).allow_hyphen_values(true).help("openai, anthropic and markdown: the last message of the exported context (required for them); html: the message the page opens at."))
                .arg(Arg::new("max").long("max").value_name("N").action(ArgAction::Set).allow_hyphen_values(true).help("openai, anthropic and markdown: export the layout a budget of this many tokens would give (summaries and placeholders as text), computed without writing anything."))
        )))
        .subcommands(wanted(only, "db").then(||
            Command::new("db").about("Commands on the database file as a whole (db ...).").subcommand_required(true).arg_required_else_help(true)
            .subcommand(with_flags(
                Command::new("info")
                    .about("Show the storage engine, file, format version, size, and the counts of timelines and messages.")
                    .override_usage("tl db info [OPTIONS]"),
                defer,
                |cmd| cmd
            ))
            .subcommand(with_flags(
                Command::new("check")
                    .about("Check the database's integrity and report every problem; --repair rebuilds the search index.")
                    .override_usage("tl db check [OPTIONS]"),
                defer,
                |cmd| cmd
                    .arg(Arg::new("repair").long("repair").action(ArgAction::SetTrue).help("First rebuild the indexes the file derives from its messages (SQLite: the full-text search index), then check. Without it nothing is changed."))
            ))
            .subcommand(with_flags(
                Command::new("convert")
                    .about("Copy the database into a new file (.json: JSON, else SQLite) or a PostgreSQL URI's database.")
                    .override_usage("tl db convert [OPTIONS] --to <PATH>"),
                defer,
                |cmd| cmd
                    .arg(Arg::new("to").long("to").value_name("PATH").action(ArgAction::Set).allow_hyphen_values(true).value_hint(ValueHint::FilePath).help("The new database file, which must not exist yet, or a postgresql:// URI whose schema holds no Timeline tables yet. (required)"))
            ))
            .subcommand(with_flags(
                Command::new("backup")
                    .about("Write a consistent copy of the database to a new file while other processes keep working.")
                    .override_usage("tl db backup [OPTIONS] --to <PATH>"),
                defer,
                |cmd| cmd
                    .arg(Arg::new("to").long("to").value_name("PATH").action(ArgAction::Set).allow_hyphen_values(true).value_hint(ValueHint::FilePath).help("The copy's file; it must not exist yet. The copy uses the same engine as the database (a PostgreSQL database's copy: the engine its name gives, .json: JSON, else SQLite). (required)"))
            ))
        ))
        .subcommands(wanted(only, "timelines").then(|| with_flags(
            Command::new("timelines")
                .about("List every timeline with its title, times, message and branch counts.")
                .override_usage("tl timelines [OPTIONS]"),
            defer,
            |cmd| cmd
                .arg(Arg::new("format").long("format").value_name("FORMAT").action(ArgAction::Set).allow_hyphen_values(true).value_parser(spec_values(&["json", "text"])).hide_possible_values(true).help("How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by timelines, log, search, diff, context and branches, and by import before the command only (tl --format text import --format codex), since import's own --format names what the file holds. [json, text]"))
        )))
        .subcommands(wanted(only, "completions").then(|| with_flags(
            Command::new("completions")
                .about("Print a completion script for a shell (bash, zsh, fish, powershell or elvish).")
                .override_usage("tl completions [OPTIONS] <SHELL>"),
            defer,
            |cmd| cmd
                .arg(Arg::new("shell").value_name("SHELL").action(ArgAction::Set).allow_hyphen_values(true).value_parser(spec_values(&["bash", "zsh", "fish", "powershell", "elvish"])).hide_possible_values(true).help("The shell to print the script for. [bash, zsh, fish, powershell, elvish] (required)"))
        )))
        .subcommands(wanted(only, "man").then(|| with_flags(
            Command::new("man")
                .about("Print the manual page of tl as roff text (read it with man -l, or install it as tl.1).")
                .override_usage("tl man [OPTIONS]"),
            defer,
            |cmd| cmd
        )))
        .subcommands(wanted(only, "demo").then(|| with_flags(
            Command::new("demo")
                .about("Walk through a short demo conversation in a new database, printing each tl command and its answer.")
                .override_usage("tl demo [OPTIONS]"),
            defer,
            |cmd| cmd
        )))
}
