// generated from spec/timeline.json; do not edit. Regenerate with: cargo test --test suite generated::
//
// One typed request per operation of the spec, parsed from checked arguments.

/// Arguments of `create`: Create a new timeline with an empty main branch.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateArgs {
    /// An optional title, shown by timelines.
    pub title: Option<String>,
}

/// Arguments of `append`: Append a message to the current branch (or the one named) and move its head.
#[derive(Debug, Clone, PartialEq)]
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
#[derive(Debug, Clone, PartialEq)]
pub struct ForkArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The node the new branch starts from (its head).
    pub node: u64,
    /// The new branch's name.
    pub name: String,
}

/// Arguments of `switch`: Make another branch the current one.
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The branch to make current.
    pub name: String,
}

/// Arguments of `drop_branch`: Remove a branch pointer; its messages stay in the timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct DropBranchArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The branch to remove. The current branch cannot be removed.
    pub name: String,
}

/// Arguments of `rename_branch`: Rename a branch, keeping its head, watermark, place and current-branch marker.
#[derive(Debug, Clone, PartialEq)]
pub struct RenameBranchArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The branch to rename.
    pub name: String,
    /// Its new name; no other branch may have it.
    pub new_name: String,
}

/// Arguments of `context`: Print the messages from the root to a node, oldest first.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The last message of the context.
    pub node: u64,
}

/// Arguments of `context_budget`: Fit the context of a node into a token budget with summaries and placeholders.
#[derive(Debug, Clone, PartialEq)]
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
#[derive(Debug, Clone, PartialEq)]
pub struct PinArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The node to pin.
    pub node: u64,
}

/// Arguments of `unpin`: Remove a pin.
#[derive(Debug, Clone, PartialEq)]
pub struct UnpinArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The node to unpin.
    pub node: u64,
}

/// Arguments of `summarize`: Add a summary of the path from one node down to another.
#[derive(Debug, Clone, PartialEq)]
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
#[derive(Debug, Clone, PartialEq)]
pub struct BranchesArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
}

/// Arguments of `node`: Show one node in full: text, tokens, intent, summary range and versions, import provenance.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The node to show.
    pub node: u64,
}

/// Arguments of `search`: Find messages and summaries by their words, best matches first.
#[derive(Debug, Clone, PartialEq)]
pub struct SearchArgs {
    /// The timeline; `None` means every timeline.
    pub timeline_id: Option<u64>,
    /// What to find: words (all must occur), "exact phrases", prefix* words; at most 8 search terms (a phrase counts each word, a prefix one more).
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
#[derive(Debug, Clone, PartialEq)]
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
#[derive(Debug, Clone, PartialEq)]
pub struct DiffArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// One side: a branch name or a node ID.
    pub left: String,
    /// The other side: a branch name or a node ID.
    pub right: String,
}

/// Arguments of `archive_check`: Tell whether a branch can be archived, and why not.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchiveCheckArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The branch to check.
    pub branch: String,
}

/// Arguments of `archive_branch`: Archive a finished branch: remove its pointer and move its own messages to the cold zone.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchiveBranchArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The branch to archive.
    pub branch: String,
}

/// Arguments of `restore_branch`: Bring an archived branch back: its pointer, and its archived messages to the hot zone.
#[derive(Debug, Clone, PartialEq)]
pub struct RestoreBranchArgs {
    /// The timeline; `None` means the one with the smallest ID.
    pub timeline_id: Option<u64>,
    /// The archived branch to restore (the latest one archived under that name).
    pub branch: String,
}

/// Arguments of `import`: Import conversations: chat exports, API request bodies, coding-agent sessions, llm logs.
#[derive(Debug, Clone, PartialEq)]
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
    /// No progress bar on standard error, even on a terminal (it is never drawn when standard error is not one). The JSON report on standard output is printed as always.
    pub quiet: bool,
}

/// Arguments of `export`: Export a timeline (draw.io, ASCII tree, HTML) or a context (OpenAI, Anthropic, Markdown); read-only.
#[derive(Debug, Clone, PartialEq)]
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
#[derive(Debug, Clone, PartialEq)]
pub struct DbInfoArgs {
}

/// Arguments of `db_check`: Check the database's integrity and report every problem; --repair rebuilds the search index.
#[derive(Debug, Clone, PartialEq)]
pub struct DbCheckArgs {
    /// First rebuild the indexes the file derives from its messages (SQLite: the full-text search index), then check. Without it nothing is changed.
    pub repair: bool,
}

/// Arguments of `db_convert`: Copy the database into a new file (.json: JSON, else SQLite) or a PostgreSQL URI's database.
#[derive(Debug, Clone, PartialEq)]
pub struct DbConvertArgs {
    /// The new database file, which must not exist yet, or a postgresql:// URI whose schema holds no Timeline tables yet.
    pub to: String,
}

/// Arguments of `db_backup`: Write a consistent copy of the database to a new file while other processes keep working.
#[derive(Debug, Clone, PartialEq)]
pub struct DbBackupArgs {
    /// The copy's file; it must not exist yet. The copy uses the same engine as the database (a PostgreSQL database's copy: the engine its name gives, .json: JSON, else SQLite).
    pub to: String,
}

/// Arguments of `timelines`: List every timeline with its title, times, message and branch counts.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelinesArgs {
}

/// Arguments of `completions`: Print a completion script for a shell (bash, zsh, fish, powershell or elvish).
#[derive(Debug, Clone, PartialEq)]
pub struct CompletionsArgs {
    /// The shell to print the script for.
    pub shell: String,
}

/// Arguments of `man`: Print the manual page of tl as roff text (read it with man -l, or install it as tl.1).
#[derive(Debug, Clone, PartialEq)]
pub struct ManArgs {
}

/// Arguments of `demo`: Walk through a short demo conversation in a new database, printing each tl command and its answer.
#[derive(Debug, Clone, PartialEq)]
pub struct DemoArgs {
}

/// A request that runs inside one database transaction (`ops::run`).
#[derive(Debug, Clone, PartialEq)]
pub enum TxRequest {
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
    /// `timelines`: List every timeline with its title, times, message and branch counts.
    Timelines(TimelinesArgs),
}

/// A request on the database as a whole: its information, checks and copies (`db ...`), and
/// imports (a series of transactions). `service` runs them.
#[derive(Debug, Clone, PartialEq)]
pub enum DatabaseRequest {
    /// `import`: Import conversations: chat exports, API request bodies, coding-agent sessions, llm logs.
    Import(ImportArgs),
    /// `db_info`: Show the storage engine, file, format version, size, and the counts of timelines and messages.
    DbInfo(DbInfoArgs),
    /// `db_check`: Check the database's integrity and report every problem; --repair rebuilds the search index.
    DbCheck(DbCheckArgs),
    /// `db_convert`: Copy the database into a new file (.json: JSON, else SQLite) or a PostgreSQL URI's database.
    DbConvert(DbConvertArgs),
    /// `db_backup`: Write a consistent copy of the database to a new file while other processes keep working.
    DbBackup(DbBackupArgs),
}

/// A command that runs inside `tl` itself, without a database (completions, man, demo).
#[derive(Debug, Clone, PartialEq)]
pub enum LocalRequest {
    /// `completions`: Print a completion script for a shell (bash, zsh, fish, powershell or elvish).
    Completions(CompletionsArgs),
    /// `man`: Print the manual page of tl as roff text (read it with man -l, or install it as tl.1).
    Man(ManArgs),
    /// `demo`: Walk through a short demo conversation in a new database, printing each tl command and its answer.
    Demo(DemoArgs),
}

/// A checked request for one operation of the spec, by where it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Request {
    /// Inside one database transaction.
    Tx(TxRequest),
    /// On the database as a whole.
    Database(DatabaseRequest),
    /// `export`: Export a timeline (draw.io, ASCII tree, HTML) or a context (OpenAI, Anthropic, Markdown); read-only.
    Export(ExportArgs),
    /// Inside `tl` itself.
    Local(LocalRequest),
}

impl Request {
    /// The typed request of `op` from arguments that passed `spec::validate::validate`. The only
    /// place where an operation is picked by its name.
    pub fn from_checked(op: &crate::spec::Operation, args: &crate::spec::validate::Args) -> Result<Request> {
        let a = Fields::new(op, args);
        Ok(match op.name.as_str() {
            "create" => Request::Tx(TxRequest::Create(CreateArgs {
                title: a.text("title")?,
            })),
            "append" => Request::Tx(TxRequest::Append(AppendArgs {
                timeline_id: a.id("timeline_id")?,
                role: a.required("role", a.text("role")?)?,
                text: a.required("text", a.text("text")?)?,
                tokens: a.uint("tokens")?,
                intent: a.intent("intent")?,
                branch: a.text("branch")?,
                expect_head: a.id("expect_head")?,
            })),
            "fork" => Request::Tx(TxRequest::Fork(ForkArgs {
                timeline_id: a.id("timeline_id")?,
                node: a.required("node", a.id("node")?)?,
                name: a.required("name", a.text("name")?)?,
            })),
            "switch" => Request::Tx(TxRequest::Switch(SwitchArgs {
                timeline_id: a.id("timeline_id")?,
                name: a.required("name", a.text("name")?)?,
            })),
            "drop_branch" => Request::Tx(TxRequest::DropBranch(DropBranchArgs {
                timeline_id: a.id("timeline_id")?,
                name: a.required("name", a.text("name")?)?,
            })),
            "rename_branch" => Request::Tx(TxRequest::RenameBranch(RenameBranchArgs {
                timeline_id: a.id("timeline_id")?,
                name: a.required("name", a.text("name")?)?,
                new_name: a.required("new_name", a.text("new_name")?)?,
            })),
            "context" => Request::Tx(TxRequest::Context(ContextArgs {
                timeline_id: a.id("timeline_id")?,
                node: a.required("node", a.id("node")?)?,
            })),
            "context_budget" => Request::Tx(TxRequest::ContextBudget(ContextBudgetArgs {
                timeline_id: a.id("timeline_id")?,
                node: a.required("node", a.id("node")?)?,
                max_tokens: a.required("max_tokens", a.uint("max_tokens")?)?,
                dry_run: a.flag("dry_run")?,
                explain: a.flag("explain")?,
            })),
            "pin" => Request::Tx(TxRequest::Pin(PinArgs {
                timeline_id: a.id("timeline_id")?,
                node: a.required("node", a.id("node")?)?,
            })),
            "unpin" => Request::Tx(TxRequest::Unpin(UnpinArgs {
                timeline_id: a.id("timeline_id")?,
                node: a.required("node", a.id("node")?)?,
            })),
            "summarize" => Request::Tx(TxRequest::Summarize(SummarizeArgs {
                timeline_id: a.id("timeline_id")?,
                from: a.required("from", a.id("from")?)?,
                to: a.required("to", a.id("to")?)?,
                summary: a.required("summary", a.text("summary")?)?,
                tokens: a.uint("tokens")?,
                derived_from: a.ids("derived_from")?,
                supersede: a.id("supersede")?,
                intent: a.intent("intent")?,
            })),
            "branches" => Request::Tx(TxRequest::Branches(BranchesArgs {
                timeline_id: a.id("timeline_id")?,
            })),
            "node" => Request::Tx(TxRequest::Node(NodeArgs {
                timeline_id: a.id("timeline_id")?,
                node: a.required("node", a.id("node")?)?,
            })),
            "search" => Request::Tx(TxRequest::Search(SearchArgs {
                timeline_id: a.id("timeline_id")?,
                query: a.required("query", a.text("query")?)?,
                branch: a.text("branch")?,
                under: a.id("under")?,
                role: a.text("role")?,
                since: a.text("since")?,
                until: a.text("until")?,
                zone: a.text("zone")?,
                limit: a.uint("limit")?,
                cursor: a.text("cursor")?,
            })),
            "log" => Request::Tx(TxRequest::Log(LogArgs {
                timeline_id: a.id("timeline_id")?,
                branch: a.text("branch")?,
                node: a.id("node")?,
                limit: a.uint("limit")?,
                cursor: a.text("cursor")?,
            })),
            "diff" => Request::Tx(TxRequest::Diff(DiffArgs {
                timeline_id: a.id("timeline_id")?,
                left: a.required("left", a.text("left")?)?,
                right: a.required("right", a.text("right")?)?,
            })),
            "archive_check" => Request::Tx(TxRequest::ArchiveCheck(ArchiveCheckArgs {
                timeline_id: a.id("timeline_id")?,
                branch: a.required("branch", a.text("branch")?)?,
            })),
            "archive_branch" => Request::Tx(TxRequest::ArchiveBranch(ArchiveBranchArgs {
                timeline_id: a.id("timeline_id")?,
                branch: a.required("branch", a.text("branch")?)?,
            })),
            "restore_branch" => Request::Tx(TxRequest::RestoreBranch(RestoreBranchArgs {
                timeline_id: a.id("timeline_id")?,
                branch: a.required("branch", a.text("branch")?)?,
            })),
            "import" => Request::Database(DatabaseRequest::Import(ImportArgs {
                timeline_id: a.id("timeline_id")?,
                format: a.required("format", a.text("format")?)?,
                input: a.text("input")?,
                node: a.id("node")?,
                branch: a.text("branch")?,
                max_unzipped_mib: a.uint("max_unzipped_mib")?,
                max_zip_ratio: a.uint("max_zip_ratio")?,
                quiet: a.flag("quiet")?,
            })),
            "export" => Request::Export(ExportArgs {
                timeline_id: a.id("timeline_id")?,
                format: a.required("format", a.text("format")?)?,
                output: a.text("output")?,
                node: a.id("node")?,
                max_tokens: a.uint("max_tokens")?,
            }),
            "db_info" => Request::Database(DatabaseRequest::DbInfo(DbInfoArgs {
            })),
            "db_check" => Request::Database(DatabaseRequest::DbCheck(DbCheckArgs {
                repair: a.flag("repair")?,
            })),
            "db_convert" => Request::Database(DatabaseRequest::DbConvert(DbConvertArgs {
                to: a.required("to", a.text("to")?)?,
            })),
            "db_backup" => Request::Database(DatabaseRequest::DbBackup(DbBackupArgs {
                to: a.required("to", a.text("to")?)?,
            })),
            "timelines" => Request::Tx(TxRequest::Timelines(TimelinesArgs {
            })),
            "completions" => Request::Local(LocalRequest::Completions(CompletionsArgs {
                shell: a.required("shell", a.text("shell")?)?,
            })),
            "man" => Request::Local(LocalRequest::Man(ManArgs {
            })),
            "demo" => Request::Local(LocalRequest::Demo(DemoArgs {
            })),
            _ => return Err(a.unknown()),
        })
    }

    /// The spec name of the operation.
    pub fn name(&self) -> &'static str {
        match self {
            Request::Tx(r) => r.name(),
            Request::Database(r) => r.name(),
            Request::Export(_) => "export",
            Request::Local(r) => r.name(),
        }
    }
}

impl TxRequest {
    /// The spec name of the operation.
    pub fn name(&self) -> &'static str {
        match self {
            TxRequest::Create(_) => "create",
            TxRequest::Append(_) => "append",
            TxRequest::Fork(_) => "fork",
            TxRequest::Switch(_) => "switch",
            TxRequest::DropBranch(_) => "drop_branch",
            TxRequest::RenameBranch(_) => "rename_branch",
            TxRequest::Context(_) => "context",
            TxRequest::ContextBudget(_) => "context_budget",
            TxRequest::Pin(_) => "pin",
            TxRequest::Unpin(_) => "unpin",
            TxRequest::Summarize(_) => "summarize",
            TxRequest::Branches(_) => "branches",
            TxRequest::Node(_) => "node",
            TxRequest::Search(_) => "search",
            TxRequest::Log(_) => "log",
            TxRequest::Diff(_) => "diff",
            TxRequest::ArchiveCheck(_) => "archive_check",
            TxRequest::ArchiveBranch(_) => "archive_branch",
            TxRequest::RestoreBranch(_) => "restore_branch",
            TxRequest::Timelines(_) => "timelines",
        }
    }

    /// The timeline the request names, if any (`None` also for operations without one).
    pub fn timeline_id(&self) -> Option<u64> {
        match self {
            TxRequest::Create(_) => None,
            TxRequest::Append(a) => a.timeline_id,
            TxRequest::Fork(a) => a.timeline_id,
            TxRequest::Switch(a) => a.timeline_id,
            TxRequest::DropBranch(a) => a.timeline_id,
            TxRequest::RenameBranch(a) => a.timeline_id,
            TxRequest::Context(a) => a.timeline_id,
            TxRequest::ContextBudget(a) => a.timeline_id,
            TxRequest::Pin(a) => a.timeline_id,
            TxRequest::Unpin(a) => a.timeline_id,
            TxRequest::Summarize(a) => a.timeline_id,
            TxRequest::Branches(a) => a.timeline_id,
            TxRequest::Node(a) => a.timeline_id,
            TxRequest::Search(a) => a.timeline_id,
            TxRequest::Log(a) => a.timeline_id,
            TxRequest::Diff(a) => a.timeline_id,
            TxRequest::ArchiveCheck(a) => a.timeline_id,
            TxRequest::ArchiveBranch(a) => a.timeline_id,
            TxRequest::RestoreBranch(a) => a.timeline_id,
            TxRequest::Timelines(_) => None,
        }
    }
}

impl DatabaseRequest {
    /// The spec name of the operation.
    pub fn name(&self) -> &'static str {
        match self {
            DatabaseRequest::Import(_) => "import",
            DatabaseRequest::DbInfo(_) => "db_info",
            DatabaseRequest::DbCheck(_) => "db_check",
            DatabaseRequest::DbConvert(_) => "db_convert",
            DatabaseRequest::DbBackup(_) => "db_backup",
        }
    }
}

impl LocalRequest {
    /// The spec name of the operation.
    pub fn name(&self) -> &'static str {
        match self {
            LocalRequest::Completions(_) => "completions",
            LocalRequest::Man(_) => "man",
            LocalRequest::Demo(_) => "demo",
        }
    }
}
