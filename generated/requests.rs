// generated from spec/timeline.json; do not edit. Regenerate with: cargo test --test suite generated::
//
// One typed request per operation of the spec, built from validated arguments.

/// Arguments of `create`: Create a new timeline with an empty main branch.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CreateArgs {
    /// An optional title, shown by timelines.
    pub title: Option<String>,
}

/// Arguments of `append`: Append a message to the current branch (or the one named) and move its head.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppendArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// Who wrote the message: user, assistant, system or summary.
    pub role: String,
    /// The message text.
    pub text: String,
    /// Token count of the message. Default: max(1, ceil(Unicode scalars / 4)).
    pub tokens: Option<u64>,
    /// Optional intent of the message.
    pub intent: Option<crate::model::Intent>,
    /// The branch to append to; it does not become current. Default: the current branch.
    pub branch: Option<String>,
    /// Refuse with a conflict (nothing written) unless the branch's head is this node: compare-and-set for concurrent writers.
    pub expect_head: Option<u64>,
}

/// Arguments of `fork`: Create a branch whose head is the given node.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ForkArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The node the new branch starts from (its head).
    pub node: u64,
    /// The new branch's name.
    pub name: String,
}

/// Arguments of `switch`: Make another branch the current one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SwitchArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The branch to make current.
    pub name: String,
}

/// Arguments of `drop_branch`: Remove a branch pointer; its messages stay in the timeline.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DropBranchArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The branch to remove. The current branch cannot be removed.
    pub name: String,
}

/// Arguments of `rename_branch`: Rename a branch, keeping its head, watermark, place and current-branch marker.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RenameBranchArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The branch to rename.
    pub name: String,
    /// Its new name; no other branch may have it.
    pub new_name: String,
}

/// Arguments of `context`: Print the messages from the root to a node, oldest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContextArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The last message of the context.
    pub node: u64,
}

/// Arguments of `context_budget`: Fit the context of a node into a token budget with summaries and placeholders.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContextBudgetArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The target message; it is always kept verbatim.
    pub node: u64,
    /// The token budget.
    pub max_tokens: u64,
    /// Show the layout without writing anything: a placeholder that would be created appears with node null and the range it would cover (from, to), and summaries_created lists only existing placeholders. An idempotency key has no effect.
    pub dry_run: bool,
    /// Add an explanation: for every message of the path, in order, whether it was kept, covered by a summary or by a placeholder, and why. If the budget is infeasible, the error data holds the smallest layout (messages) and its explanation.
    pub explain: bool,
}

/// Arguments of `pin`: Pin a node so that budgets always keep it verbatim.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PinArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The node to pin.
    pub node: u64,
}

/// Arguments of `unpin`: Remove a pin.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UnpinArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The node to unpin.
    pub node: u64,
}

/// Arguments of `summarize`: Add a summary of the path from one node down to another.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SummarizeArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The first node of the summarised range.
    pub from: u64,
    /// The last node of the range: the start itself or a descendant of it.
    pub to: u64,
    /// The summary text.
    pub summary: String,
    /// Token count of the summary. Default: max(1, ceil(Unicode scalars / 4)).
    pub tokens: Option<u64>,
    /// Summaries this one was derived from, comma-separated (n9,n10).
    pub derived_from: Vec<u64>,
    /// A summary this one replaces as its next version.
    pub supersede: Option<u64>,
    /// Optional intent of the summary.
    pub intent: Option<crate::model::Intent>,
}

/// Arguments of `branches`: List the branches with their heads.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BranchesArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
}

/// Arguments of `node`: Show one node in full: text, tokens, intent, summary range and versions, import provenance.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The node to show.
    pub node: u64,
}

/// Arguments of `search`: Find messages and summaries by their words, best matches first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SearchArgs {
    /// The timeline; `None` means every timeline.
    pub timeline_id: Option<u64>,
    /// What to find: words (all must occur), "exact phrases", prefix* words.
    pub query: String,
    /// Only messages on this branch's path (from the root to its head). The branch of --timeline, or of the timeline with the smallest ID.
    pub branch: Option<String>,
    /// Only this node and its descendants. A node of --timeline, or of the timeline with the smallest ID.
    pub under: Option<u64>,
    /// Only messages with this role.
    pub role: Option<String>,
    /// Only messages created at or after this time (messages without a recorded time never match).
    pub since: Option<String>,
    /// Only messages created at or before this time (messages without a recorded time never match).
    pub until: Option<String>,
    /// Only hot (live) or cold (archived) messages. Default: all.
    pub zone: Option<String>,
    /// Hits per page. Default: 20.
    pub limit: Option<u64>,
    /// The next_cursor of the previous page (same query and filters), for the page after it.
    pub cursor: Option<String>,
}

/// Arguments of `log`: Page through the messages of a branch, newest first.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LogArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The branch to read. Default: the current branch.
    pub branch: Option<String>,
    /// Read the path that ends at this node instead of a branch.
    pub node: Option<u64>,
    /// Messages per page. Default: 50.
    pub limit: Option<u64>,
    /// The next_cursor of the previous page, for the older messages after it.
    pub cursor: Option<String>,
}

/// Arguments of `diff`: Compare two branches or nodes: their common ancestor and what each has after it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiffArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// One side: a branch name or a node ID.
    pub left: String,
    /// The other side: a branch name or a node ID.
    pub right: String,
}

/// Arguments of `archive_check`: Tell whether a branch can be archived, and why not.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ArchiveCheckArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The branch to check.
    pub branch: String,
}

/// Arguments of `archive_branch`: Archive a finished branch: remove its pointer and move its own messages to the cold zone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ArchiveBranchArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The branch to archive.
    pub branch: String,
}

/// Arguments of `restore_branch`: Bring an archived branch back: its pointer, and its archived messages to the hot zone.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RestoreBranchArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The archived branch to restore (the latest one archived under that name).
    pub branch: String,
}

/// Arguments of `import`: Import conversations: chat exports, API request bodies, coding-agent sessions, llm logs.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImportArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// What the file holds: chatgpt or claude (a data export: conversations.json, conversations-000.json, the folder or the .zip), openai (a Chat Completions messages array, or an object with messages), anthropic (a Messages request body), claude-code, codex or gemini-cli (Claude Code session transcripts, Codex CLI rollout files, Gemini CLI sessions: a session's file or a folder of them; imported again, a grown session adds its new messages to its timeline), llm (simonw/llm's logs.db, read-only; kept up to date the same way), open-webui (a chat export: a JSON array of chats), librechat (a conversation export).
    pub format: String,
    /// The file to read (for chatgpt and claude also the export's folder or .zip; for claude-code a session's .jsonl or a folder searched for them). Required, except for claude-code, which reads $CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects, codex, which reads $CODEX_HOME/sessions, else ~/.codex/sessions, gemini-cli, which reads ~/.gemini/tmp, and llm, which reads $LLM_USER_PATH/logs.db, else io.datasette.llm/logs.db in the configuration folder, without it.
    pub input: Option<String>,
    /// openai and anthropic only: attach the messages as a new branch from this node of the timeline (--timeline, default the first) instead of making a new timeline.
    pub node: Option<u64>,
    /// With --node: the new branch's name. Default: import-1, import-2, ... (the first that is free).
    pub branch: Option<String>,
    /// A .zip only: the most its conversations files may decompress to, in MiB, in all; a bigger archive is refused. Default: 16384 (16 GiB).
    pub max_unzipped_mib: Option<u64>,
    /// A .zip only: the most an entry may decompress to, as a multiple of its compressed size; more is refused as a zip bomb. Default: 100.
    pub max_zip_ratio: Option<u64>,
}

/// Arguments of `export`: Export a timeline (draw.io, ASCII tree, HTML) or a context (OpenAI, Anthropic, Markdown); read-only.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExportArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// drawio or html (both need --output) or ascii: the whole timeline; openai, anthropic or markdown: the context of --node.
    pub format: String,
    /// The file to write; it must not exist yet. Without it, every format but drawio and html is printed.
    pub output: Option<String>,
    /// openai, anthropic and markdown: the last message of the exported context (required for them); html: the message the page opens at.
    pub node: Option<u64>,
    /// openai, anthropic and markdown: export the layout a budget of this many tokens would give (summaries and placeholders as text), computed without writing anything.
    pub max_tokens: Option<u64>,
}

/// Arguments of `db_info`: Show the storage engine, file, format version, size, and the counts of timelines and messages.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DbInfoArgs {
}

/// Arguments of `db_check`: Check the database's integrity and report every problem; --repair rebuilds the search index.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DbCheckArgs {
    /// First rebuild the indexes the file derives from its messages (SQLite: the full-text search index), then check. Without it nothing is changed.
    pub repair: bool,
}

/// Arguments of `db_convert`: Copy the database into a new file; its extension picks the engine (.json: JSON, else SQLite).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DbConvertArgs {
    /// The new database file; it must not exist yet.
    pub to: String,
}

/// Arguments of `db_backup`: Write a consistent copy of the database to a new file while other processes keep working.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DbBackupArgs {
    /// The copy's file; it must not exist yet. The copy uses the same engine as the database.
    pub to: String,
}

/// Arguments of `timelines`: List every timeline with its title, times, message and branch counts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TimelinesArgs {
}

/// Arguments of `completions`: Print a completion script for a shell (bash, zsh, fish, powershell or elvish).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CompletionsArgs {
    /// The shell to print the script for.
    pub shell: String,
}

/// Arguments of `man`: Print the manual page of tl as roff text (read it with man -l, or install it as tl.1).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ManArgs {
}

/// Arguments of `demo`: Walk through a short demo conversation in a new database, printing each tl command and its answer.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DemoArgs {
}

/// A validated request for one operation of the spec.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// `create`: Create a new timeline with an empty main branch.
    Create(CreateArgs),
    /// `append`: Append a message to the current branch (or the one named) and move its head.
    Append(AppendArgs),
    /// `fork`: Create a branch whose head is the given node.
    Fork(ForkArgs),
    /// `switch`: Make another branch the current one.
    Switch(SwitchArgs),
    /// `drop_branch`: Remove a branch pointer; its messages stay in the timeline.
    DropBranch(DropBranchArgs),
    /// `rename_branch`: Rename a branch, keeping its head, watermark, place and current-branch marker.
    RenameBranch(RenameBranchArgs),
    /// `context`: Print the messages from the root to a node, oldest first.
    Context(ContextArgs),
    /// `context_budget`: Fit the context of a node into a token budget with summaries and placeholders.
    ContextBudget(ContextBudgetArgs),
    /// `pin`: Pin a node so that budgets always keep it verbatim.
    Pin(PinArgs),
    /// `unpin`: Remove a pin.
    Unpin(UnpinArgs),
    /// `summarize`: Add a summary of the path from one node down to another.
    Summarize(SummarizeArgs),
    /// `branches`: List the branches with their heads.
    Branches(BranchesArgs),
    /// `node`: Show one node in full: text, tokens, intent, summary range and versions, import provenance.
    Node(NodeArgs),
    /// `search`: Find messages and summaries by their words, best matches first.
    Search(SearchArgs),
    /// `log`: Page through the messages of a branch, newest first.
    Log(LogArgs),
    /// `diff`: Compare two branches or nodes: their common ancestor and what each has after it.
    Diff(DiffArgs),
    /// `archive_check`: Tell whether a branch can be archived, and why not.
    ArchiveCheck(ArchiveCheckArgs),
    /// `archive_branch`: Archive a finished branch: remove its pointer and move its own messages to the cold zone.
    ArchiveBranch(ArchiveBranchArgs),
    /// `restore_branch`: Bring an archived branch back: its pointer, and its archived messages to the hot zone.
    RestoreBranch(RestoreBranchArgs),
    /// `import`: Import conversations: chat exports, API request bodies, coding-agent sessions, llm logs.
    Import(ImportArgs),
    /// `export`: Export a timeline (draw.io, ASCII tree, HTML) or a context (OpenAI, Anthropic, Markdown); read-only.
    Export(ExportArgs),
    /// `db_info`: Show the storage engine, file, format version, size, and the counts of timelines and messages.
    DbInfo(DbInfoArgs),
    /// `db_check`: Check the database's integrity and report every problem; --repair rebuilds the search index.
    DbCheck(DbCheckArgs),
    /// `db_convert`: Copy the database into a new file; its extension picks the engine (.json: JSON, else SQLite).
    DbConvert(DbConvertArgs),
    /// `db_backup`: Write a consistent copy of the database to a new file while other processes keep working.
    DbBackup(DbBackupArgs),
    /// `timelines`: List every timeline with its title, times, message and branch counts.
    Timelines(TimelinesArgs),
    /// `completions`: Print a completion script for a shell (bash, zsh, fish, powershell or elvish).
    Completions(CompletionsArgs),
    /// `man`: Print the manual page of tl as roff text (read it with man -l, or install it as tl.1).
    Man(ManArgs),
    /// `demo`: Walk through a short demo conversation in a new database, printing each tl command and its answer.
    Demo(DemoArgs),
}

impl Request {
    /// The request for the spec operation `op` from arguments that passed `validate`; `None` for
    /// a name the spec does not have.
    pub fn from_args(op: &str, args: &crate::spec::validate::Args) -> Option<Request> {
        Some(match op {
            "create" => Request::Create(CreateArgs {
                title: args.str("title").map(str::to_string),
            }),
            "append" => Request::Append(AppendArgs {
                timeline_id: args.id("timeline_id"),
                role: args.str("role").map(str::to_string).unwrap_or_default(),
                text: args.str("text").map(str::to_string).unwrap_or_default(),
                tokens: args.u64("tokens"),
                intent: args.intent("intent"),
                branch: args.str("branch").map(str::to_string),
                expect_head: args.id("expect_head"),
            }),
            "fork" => Request::Fork(ForkArgs {
                timeline_id: args.id("timeline_id"),
                node: args.id("node").unwrap_or_default(),
                name: args.str("name").map(str::to_string).unwrap_or_default(),
            }),
            "switch" => Request::Switch(SwitchArgs {
                timeline_id: args.id("timeline_id"),
                name: args.str("name").map(str::to_string).unwrap_or_default(),
            }),
            "drop_branch" => Request::DropBranch(DropBranchArgs {
                timeline_id: args.id("timeline_id"),
                name: args.str("name").map(str::to_string).unwrap_or_default(),
            }),
            "rename_branch" => Request::RenameBranch(RenameBranchArgs {
                timeline_id: args.id("timeline_id"),
                name: args.str("name").map(str::to_string).unwrap_or_default(),
                new_name: args.str("new_name").map(str::to_string).unwrap_or_default(),
            }),
            "context" => Request::Context(ContextArgs {
                timeline_id: args.id("timeline_id"),
                node: args.id("node").unwrap_or_default(),
            }),
            "context_budget" => Request::ContextBudget(ContextBudgetArgs {
                timeline_id: args.id("timeline_id"),
                node: args.id("node").unwrap_or_default(),
                max_tokens: args.u64("max_tokens").unwrap_or_default(),
                dry_run: args.flag("dry_run"),
                explain: args.flag("explain"),
            }),
            "pin" => Request::Pin(PinArgs {
                timeline_id: args.id("timeline_id"),
                node: args.id("node").unwrap_or_default(),
            }),
            "unpin" => Request::Unpin(UnpinArgs {
                timeline_id: args.id("timeline_id"),
                node: args.id("node").unwrap_or_default(),
            }),
            "summarize" => Request::Summarize(SummarizeArgs {
                timeline_id: args.id("timeline_id"),
                from: args.id("from").unwrap_or_default(),
                to: args.id("to").unwrap_or_default(),
                summary: args.str("summary").map(str::to_string).unwrap_or_default(),
                tokens: args.u64("tokens"),
                derived_from: args.ids("derived_from"),
                supersede: args.id("supersede"),
                intent: args.intent("intent"),
            }),
            "branches" => Request::Branches(BranchesArgs {
                timeline_id: args.id("timeline_id"),
            }),
            "node" => Request::Node(NodeArgs {
                timeline_id: args.id("timeline_id"),
                node: args.id("node").unwrap_or_default(),
            }),
            "search" => Request::Search(SearchArgs {
                timeline_id: args.id("timeline_id"),
                query: args.str("query").map(str::to_string).unwrap_or_default(),
                branch: args.str("branch").map(str::to_string),
                under: args.id("under"),
                role: args.str("role").map(str::to_string),
                since: args.str("since").map(str::to_string),
                until: args.str("until").map(str::to_string),
                zone: args.str("zone").map(str::to_string),
                limit: args.u64("limit"),
                cursor: args.str("cursor").map(str::to_string),
            }),
            "log" => Request::Log(LogArgs {
                timeline_id: args.id("timeline_id"),
                branch: args.str("branch").map(str::to_string),
                node: args.id("node"),
                limit: args.u64("limit"),
                cursor: args.str("cursor").map(str::to_string),
            }),
            "diff" => Request::Diff(DiffArgs {
                timeline_id: args.id("timeline_id"),
                left: args.str("left").map(str::to_string).unwrap_or_default(),
                right: args.str("right").map(str::to_string).unwrap_or_default(),
            }),
            "archive_check" => Request::ArchiveCheck(ArchiveCheckArgs {
                timeline_id: args.id("timeline_id"),
                branch: args.str("branch").map(str::to_string).unwrap_or_default(),
            }),
            "archive_branch" => Request::ArchiveBranch(ArchiveBranchArgs {
                timeline_id: args.id("timeline_id"),
                branch: args.str("branch").map(str::to_string).unwrap_or_default(),
            }),
            "restore_branch" => Request::RestoreBranch(RestoreBranchArgs {
                timeline_id: args.id("timeline_id"),
                branch: args.str("branch").map(str::to_string).unwrap_or_default(),
            }),
            "import" => Request::Import(ImportArgs {
                timeline_id: args.id("timeline_id"),
                format: args.str("format").map(str::to_string).unwrap_or_default(),
                input: args.str("input").map(str::to_string),
                node: args.id("node"),
                branch: args.str("branch").map(str::to_string),
                max_unzipped_mib: args.u64("max_unzipped_mib"),
                max_zip_ratio: args.u64("max_zip_ratio"),
            }),
            "export" => Request::Export(ExportArgs {
                timeline_id: args.id("timeline_id"),
                format: args.str("format").map(str::to_string).unwrap_or_default(),
                output: args.str("output").map(str::to_string),
                node: args.id("node"),
                max_tokens: args.u64("max_tokens"),
            }),
            "db_info" => Request::DbInfo(DbInfoArgs {
            }),
            "db_check" => Request::DbCheck(DbCheckArgs {
                repair: args.flag("repair"),
            }),
            "db_convert" => Request::DbConvert(DbConvertArgs {
                to: args.str("to").map(str::to_string).unwrap_or_default(),
            }),
            "db_backup" => Request::DbBackup(DbBackupArgs {
                to: args.str("to").map(str::to_string).unwrap_or_default(),
            }),
            "timelines" => Request::Timelines(TimelinesArgs {
            }),
            "completions" => Request::Completions(CompletionsArgs {
                shell: args.str("shell").map(str::to_string).unwrap_or_default(),
            }),
            "man" => Request::Man(ManArgs {
            }),
            "demo" => Request::Demo(DemoArgs {
            }),
            _ => return None,
        })
    }

    /// The spec name of the operation.
    pub fn name(&self) -> &'static str {
        match self {
            Request::Create(_) => "create",
            Request::Append(_) => "append",
            Request::Fork(_) => "fork",
            Request::Switch(_) => "switch",
            Request::DropBranch(_) => "drop_branch",
            Request::RenameBranch(_) => "rename_branch",
            Request::Context(_) => "context",
            Request::ContextBudget(_) => "context_budget",
            Request::Pin(_) => "pin",
            Request::Unpin(_) => "unpin",
            Request::Summarize(_) => "summarize",
            Request::Branches(_) => "branches",
            Request::Node(_) => "node",
            Request::Search(_) => "search",
            Request::Log(_) => "log",
            Request::Diff(_) => "diff",
            Request::ArchiveCheck(_) => "archive_check",
            Request::ArchiveBranch(_) => "archive_branch",
            Request::RestoreBranch(_) => "restore_branch",
            Request::Import(_) => "import",
            Request::Export(_) => "export",
            Request::DbInfo(_) => "db_info",
            Request::DbCheck(_) => "db_check",
            Request::DbConvert(_) => "db_convert",
            Request::DbBackup(_) => "db_backup",
            Request::Timelines(_) => "timelines",
            Request::Completions(_) => "completions",
            Request::Man(_) => "man",
            Request::Demo(_) => "demo",
        }
    }
}
