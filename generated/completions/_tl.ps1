
using namespace System.Management.Automation
using namespace System.Management.Automation.Language

Register-ArgumentCompleter -Native -CommandName 'tl' -ScriptBlock {
    param($wordToComplete, $commandAst, $cursorPosition)

    $commandElements = $commandAst.CommandElements
    $command = @(
        'tl'
        for ($i = 1; $i -lt $commandElements.Count; $i++) {
            $element = $commandElements[$i]
            if ($element -isnot [StringConstantExpressionAst] -or
                $element.StringConstantType -ne [StringConstantType]::BareWord -or
                $element.Value.StartsWith('-') -or
                $element.Value -eq $wordToComplete) {
                break
        }
        $element.Value
    }) -join ';'

    $completions = @(switch ($command) {
        'tl' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by log, search, diff, context and branches. [json, text]')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('-V', '-V ', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('--version', '--version', [CompletionResultType]::ParameterName, 'Print version')
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Create a new timeline with an empty main branch.')
            [CompletionResult]::new('append', 'append', [CompletionResultType]::ParameterValue, 'Append a message to the current branch (or the one named) and move its head.')
            [CompletionResult]::new('fork', 'fork', [CompletionResultType]::ParameterValue, 'Create a branch whose head is the given node.')
            [CompletionResult]::new('switch', 'switch', [CompletionResultType]::ParameterValue, 'Make another branch the current one.')
            [CompletionResult]::new('drop-branch', 'drop-branch', [CompletionResultType]::ParameterValue, 'Remove a branch pointer; its messages stay in the timeline.')
            [CompletionResult]::new('rename-branch', 'rename-branch', [CompletionResultType]::ParameterValue, 'Rename a branch, keeping its head, watermark, place and current-branch marker.')
            [CompletionResult]::new('context', 'context', [CompletionResultType]::ParameterValue, 'Print the messages from the root to a node, oldest first.')
            [CompletionResult]::new('budget', 'budget', [CompletionResultType]::ParameterValue, 'Fit the context of a node into a token budget with summaries and placeholders.')
            [CompletionResult]::new('pin', 'pin', [CompletionResultType]::ParameterValue, 'Pin a node so that budgets always keep it verbatim.')
            [CompletionResult]::new('unpin', 'unpin', [CompletionResultType]::ParameterValue, 'Remove a pin.')
            [CompletionResult]::new('summarize', 'summarize', [CompletionResultType]::ParameterValue, 'Add a summary of the path from one node down to another.')
            [CompletionResult]::new('branches', 'branches', [CompletionResultType]::ParameterValue, 'List the branches with their heads.')
            [CompletionResult]::new('node', 'node', [CompletionResultType]::ParameterValue, 'Show one node in full: text, tokens, intent, summary range and versions.')
            [CompletionResult]::new('search', 'search', [CompletionResultType]::ParameterValue, 'Find messages and summaries by their words, best matches first.')
            [CompletionResult]::new('log', 'log', [CompletionResultType]::ParameterValue, 'Page through the messages of a branch, newest first.')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'Compare two branches or nodes: their common ancestor and what each has after it.')
            [CompletionResult]::new('archive-check', 'archive-check', [CompletionResultType]::ParameterValue, 'Tell whether a branch can be archived, and why not.')
            [CompletionResult]::new('archive-branch', 'archive-branch', [CompletionResultType]::ParameterValue, 'Archive a finished branch: remove its pointer and move its own messages to the cold zone.')
            [CompletionResult]::new('restore-branch', 'restore-branch', [CompletionResultType]::ParameterValue, 'Bring an archived branch back: its pointer, and its archived messages to the hot zone.')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Import conversations: a ChatGPT or Claude export, OpenAI messages, an Anthropic request body.')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Export a timeline (draw.io, ASCII tree) or a context (OpenAI, Anthropic, Markdown); read-only.')
            [CompletionResult]::new('db', 'db', [CompletionResultType]::ParameterValue, 'Commands on the database file as a whole (db ...).')
            [CompletionResult]::new('timelines', 'timelines', [CompletionResultType]::ParameterValue, 'List every timeline with its title, times, message and branch counts.')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a completion script for a shell (bash, zsh, fish, powershell or elvish).')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the manual page of tl as roff text (read it with man -l, or install it as tl.1).')
            [CompletionResult]::new('demo', 'demo', [CompletionResultType]::ParameterValue, 'Walk through a short demo conversation in a new database, printing each tl command and its answer.')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'tl;create' {
            [CompletionResult]::new('--title', '--title', [CompletionResultType]::ParameterName, 'An optional title, shown by timelines.')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;append' {
            [CompletionResult]::new('--role', '--role', [CompletionResultType]::ParameterName, 'Who wrote the message: user, assistant, system or summary. [user, assistant, system, summary] (required)')
            [CompletionResult]::new('--text', '--text', [CompletionResultType]::ParameterName, 'The message text. Use - to read it from standard input, or --text-file PATH. (required)')
            [CompletionResult]::new('--text-file', '--text-file', [CompletionResultType]::ParameterName, 'Read --text from this file (UTF-8).')
            [CompletionResult]::new('--tokens', '--tokens', [CompletionResultType]::ParameterName, 'Token count of the message. Default: max(1, ceil(Unicode scalars / 4)).')
            [CompletionResult]::new('--intent-tag', '--intent-tag', [CompletionResultType]::ParameterName, 'Label the message with an intent tag (your own vocabulary).')
            [CompletionResult]::new('--intent-note', '--intent-note', [CompletionResultType]::ParameterName, 'A note that explains the intent; needs the intent tag. Shown by node, never in context.')
            [CompletionResult]::new('--branch', '--branch', [CompletionResultType]::ParameterName, 'The branch to append to; it does not become current. Default: the current branch.')
            [CompletionResult]::new('--expect-head', '--expect-head', [CompletionResultType]::ParameterName, 'Refuse with a conflict (nothing written) unless the branch''s head is this node: compare-and-set for concurrent writers.')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;fork' {
            [CompletionResult]::new('--node', '--node', [CompletionResultType]::ParameterName, 'The node the new branch starts from (its head). (required)')
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'The new branch''s name. (required)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;switch' {
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'The branch to make current. (required)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;drop-branch' {
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'The branch to remove. The current branch cannot be removed. (required)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;rename-branch' {
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'The branch to rename. (required)')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'Its new name; no other branch may have it. (required)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;context' {
            [CompletionResult]::new('--node', '--node', [CompletionResultType]::ParameterName, 'The last message of the context. (required)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by log, search, diff, context and branches. [json, text]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;budget' {
            [CompletionResult]::new('--node', '--node', [CompletionResultType]::ParameterName, 'The target message; it is always kept verbatim. (required)')
            [CompletionResult]::new('--max', '--max', [CompletionResultType]::ParameterName, 'The token budget. (required)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('--dry-run', '--dry-run', [CompletionResultType]::ParameterName, 'Show the layout without writing anything: a placeholder that would be created appears with node null and the range it would cover (from, to), and summaries_created lists only existing placeholders. An idempotency key has no effect.')
            [CompletionResult]::new('--explain', '--explain', [CompletionResultType]::ParameterName, 'Add an explanation: for every message of the path, in order, whether it was kept, covered by a summary or by a placeholder, and why. If the budget is infeasible, the error data holds the smallest layout (messages) and its explanation.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;pin' {
            [CompletionResult]::new('--node', '--node', [CompletionResultType]::ParameterName, 'The node to pin. (required)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;unpin' {
            [CompletionResult]::new('--node', '--node', [CompletionResultType]::ParameterName, 'The node to unpin. (required)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;summarize' {
            [CompletionResult]::new('--from', '--from', [CompletionResultType]::ParameterName, 'The first node of the summarised range. (required)')
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'The last node of the range: the start itself or a descendant of it. (required)')
            [CompletionResult]::new('--summary', '--summary', [CompletionResultType]::ParameterName, 'The summary text. Use - to read it from standard input, or --summary-file PATH. (required)')
            [CompletionResult]::new('--summary-file', '--summary-file', [CompletionResultType]::ParameterName, 'Read --summary from this file (UTF-8).')
            [CompletionResult]::new('--tokens', '--tokens', [CompletionResultType]::ParameterName, 'Token count of the summary. Default: max(1, ceil(Unicode scalars / 4)).')
            [CompletionResult]::new('--derived-from', '--derived-from', [CompletionResultType]::ParameterName, 'Summaries this one was derived from, comma-separated (n9,n10).')
            [CompletionResult]::new('--supersede', '--supersede', [CompletionResultType]::ParameterName, 'A summary this one replaces as its next version.')
            [CompletionResult]::new('--intent-tag', '--intent-tag', [CompletionResultType]::ParameterName, 'Label the message with an intent tag (your own vocabulary).')
            [CompletionResult]::new('--intent-note', '--intent-note', [CompletionResultType]::ParameterName, 'A note that explains the intent; needs the intent tag. Shown by node, never in context.')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;branches' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by log, search, diff, context and branches. [json, text]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;node' {
            [CompletionResult]::new('--node', '--node', [CompletionResultType]::ParameterName, 'The node to show. (required)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;search' {
            [CompletionResult]::new('--query', '--query', [CompletionResultType]::ParameterName, 'What to find: words (all must occur), "exact phrases", prefix* words. (required)')
            [CompletionResult]::new('--branch', '--branch', [CompletionResultType]::ParameterName, 'Only messages on this branch''s path (from the root to its head). The branch of --timeline, or of the timeline with the smallest ID.')
            [CompletionResult]::new('--under', '--under', [CompletionResultType]::ParameterName, 'Only this node and its descendants. A node of --timeline, or of the timeline with the smallest ID.')
            [CompletionResult]::new('--role', '--role', [CompletionResultType]::ParameterName, 'Only messages with this role. [user, assistant, system, summary]')
            [CompletionResult]::new('--since', '--since', [CompletionResultType]::ParameterName, 'Only messages created at or after this time (messages without a recorded time never match).')
            [CompletionResult]::new('--until', '--until', [CompletionResultType]::ParameterName, 'Only messages created at or before this time (messages without a recorded time never match).')
            [CompletionResult]::new('--zone', '--zone', [CompletionResultType]::ParameterName, 'Only hot (live) or cold (archived) messages. Default: all. [hot, cold, all]')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Hits per page. Default: 20.')
            [CompletionResult]::new('--cursor', '--cursor', [CompletionResultType]::ParameterName, 'The next_cursor of the previous page (same query and filters), for the page after it.')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by log, search, diff, context and branches. [json, text]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;log' {
            [CompletionResult]::new('--branch', '--branch', [CompletionResultType]::ParameterName, 'The branch to read. Default: the current branch.')
            [CompletionResult]::new('--node', '--node', [CompletionResultType]::ParameterName, 'Read the path that ends at this node instead of a branch.')
            [CompletionResult]::new('--limit', '--limit', [CompletionResultType]::ParameterName, 'Messages per page. Default: 50.')
            [CompletionResult]::new('--cursor', '--cursor', [CompletionResultType]::ParameterName, 'The next_cursor of the previous page, for the older messages after it.')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by log, search, diff, context and branches. [json, text]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;diff' {
            [CompletionResult]::new('--left', '--left', [CompletionResultType]::ParameterName, 'One side: a branch name or a node ID. (required)')
            [CompletionResult]::new('--right', '--right', [CompletionResultType]::ParameterName, 'The other side: a branch name or a node ID. (required)')
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by log, search, diff, context and branches. [json, text]')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;archive-check' {
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'The branch to check. (required)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;archive-branch' {
            [CompletionResult]::new('--name', '--name', [CompletionResultType]::ParameterName, 'The branch to archive. (required)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;restore-branch' {
            [CompletionResult]::new('--branch', '--branch', [CompletionResultType]::ParameterName, 'The archived branch to restore (the latest one archived under that name). (required)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;import' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'What the file holds: chatgpt or claude (a data export: conversations.json, conversations-000.json, the folder or the .zip), openai (a Chat Completions messages array, or an object with messages), anthropic (a Messages request body). [chatgpt, claude, openai, anthropic] (required)')
            [CompletionResult]::new('--input', '--input', [CompletionResultType]::ParameterName, 'The file to read (for chatgpt and claude also the export''s folder or .zip). (required)')
            [CompletionResult]::new('--node', '--node', [CompletionResultType]::ParameterName, 'openai and anthropic only: attach the messages as a new branch from this node of the timeline (--timeline, default the first) instead of making a new timeline.')
            [CompletionResult]::new('--branch', '--branch', [CompletionResultType]::ParameterName, 'With --node: the new branch''s name. Default: import-1, import-2, ... (the first that is free).')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;export' {
            [CompletionResult]::new('--format', '--format', [CompletionResultType]::ParameterName, 'drawio (needs --output) or ascii: the whole timeline; openai, anthropic or markdown: the context of --node. [drawio, ascii, openai, anthropic, markdown] (required)')
            [CompletionResult]::new('--output', '--output', [CompletionResultType]::ParameterName, 'The file to write; it must not exist yet. Without it, every format but drawio is printed.')
            [CompletionResult]::new('--node', '--node', [CompletionResultType]::ParameterName, 'openai, anthropic and markdown: the last message of the exported context (required for them).')
            [CompletionResult]::new('--max', '--max', [CompletionResultType]::ParameterName, 'openai, anthropic and markdown: export the layout a budget of this many tokens would give (summaries and placeholders as text), computed without writing anything.')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;db' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('info', 'info', [CompletionResultType]::ParameterValue, 'Show the storage engine, file, format version, size, and the counts of timelines and messages.')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check the database''s integrity and report every problem; --repair rebuilds the search index.')
            [CompletionResult]::new('convert', 'convert', [CompletionResultType]::ParameterValue, 'Copy the database into a new file; its extension picks the engine (.json: JSON, else SQLite).')
            [CompletionResult]::new('backup', 'backup', [CompletionResultType]::ParameterValue, 'Write a consistent copy of the database to a new file while other processes keep working.')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'tl;db;info' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;db;check' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('--repair', '--repair', [CompletionResultType]::ParameterName, 'First rebuild the indexes the file derives from its messages (SQLite: the full-text search index), then check. Without it nothing is changed.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;db;convert' {
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'The new database file; it must not exist yet. (required)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;db;backup' {
            [CompletionResult]::new('--to', '--to', [CompletionResultType]::ParameterName, 'The copy''s file; it must not exist yet. The copy uses the same engine as the database. (required)')
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;db;help' {
            [CompletionResult]::new('info', 'info', [CompletionResultType]::ParameterValue, 'Show the storage engine, file, format version, size, and the counts of timelines and messages.')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check the database''s integrity and report every problem; --repair rebuilds the search index.')
            [CompletionResult]::new('convert', 'convert', [CompletionResultType]::ParameterValue, 'Copy the database into a new file; its extension picks the engine (.json: JSON, else SQLite).')
            [CompletionResult]::new('backup', 'backup', [CompletionResultType]::ParameterValue, 'Write a consistent copy of the database to a new file while other processes keep working.')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'tl;db;help;info' {
            break
        }
        'tl;db;help;check' {
            break
        }
        'tl;db;help;convert' {
            break
        }
        'tl;db;help;backup' {
            break
        }
        'tl;db;help;help' {
            break
        }
        'tl;timelines' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;completions' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;man' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;demo' {
            [CompletionResult]::new('--db', '--db', [CompletionResultType]::ParameterName, 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.')
            [CompletionResult]::new('--timeline', '--timeline', [CompletionResultType]::ParameterName, 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.')
            [CompletionResult]::new('--idempotency-key', '--idempotency-key', [CompletionResultType]::ParameterName, 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.')
            [CompletionResult]::new('-h', '-h', [CompletionResultType]::ParameterName, 'Print help')
            [CompletionResult]::new('--help', '--help', [CompletionResultType]::ParameterName, 'Print help')
            break
        }
        'tl;help' {
            [CompletionResult]::new('create', 'create', [CompletionResultType]::ParameterValue, 'Create a new timeline with an empty main branch.')
            [CompletionResult]::new('append', 'append', [CompletionResultType]::ParameterValue, 'Append a message to the current branch (or the one named) and move its head.')
            [CompletionResult]::new('fork', 'fork', [CompletionResultType]::ParameterValue, 'Create a branch whose head is the given node.')
            [CompletionResult]::new('switch', 'switch', [CompletionResultType]::ParameterValue, 'Make another branch the current one.')
            [CompletionResult]::new('drop-branch', 'drop-branch', [CompletionResultType]::ParameterValue, 'Remove a branch pointer; its messages stay in the timeline.')
            [CompletionResult]::new('rename-branch', 'rename-branch', [CompletionResultType]::ParameterValue, 'Rename a branch, keeping its head, watermark, place and current-branch marker.')
            [CompletionResult]::new('context', 'context', [CompletionResultType]::ParameterValue, 'Print the messages from the root to a node, oldest first.')
            [CompletionResult]::new('budget', 'budget', [CompletionResultType]::ParameterValue, 'Fit the context of a node into a token budget with summaries and placeholders.')
            [CompletionResult]::new('pin', 'pin', [CompletionResultType]::ParameterValue, 'Pin a node so that budgets always keep it verbatim.')
            [CompletionResult]::new('unpin', 'unpin', [CompletionResultType]::ParameterValue, 'Remove a pin.')
            [CompletionResult]::new('summarize', 'summarize', [CompletionResultType]::ParameterValue, 'Add a summary of the path from one node down to another.')
            [CompletionResult]::new('branches', 'branches', [CompletionResultType]::ParameterValue, 'List the branches with their heads.')
            [CompletionResult]::new('node', 'node', [CompletionResultType]::ParameterValue, 'Show one node in full: text, tokens, intent, summary range and versions.')
            [CompletionResult]::new('search', 'search', [CompletionResultType]::ParameterValue, 'Find messages and summaries by their words, best matches first.')
            [CompletionResult]::new('log', 'log', [CompletionResultType]::ParameterValue, 'Page through the messages of a branch, newest first.')
            [CompletionResult]::new('diff', 'diff', [CompletionResultType]::ParameterValue, 'Compare two branches or nodes: their common ancestor and what each has after it.')
            [CompletionResult]::new('archive-check', 'archive-check', [CompletionResultType]::ParameterValue, 'Tell whether a branch can be archived, and why not.')
            [CompletionResult]::new('archive-branch', 'archive-branch', [CompletionResultType]::ParameterValue, 'Archive a finished branch: remove its pointer and move its own messages to the cold zone.')
            [CompletionResult]::new('restore-branch', 'restore-branch', [CompletionResultType]::ParameterValue, 'Bring an archived branch back: its pointer, and its archived messages to the hot zone.')
            [CompletionResult]::new('import', 'import', [CompletionResultType]::ParameterValue, 'Import conversations: a ChatGPT or Claude export, OpenAI messages, an Anthropic request body.')
            [CompletionResult]::new('export', 'export', [CompletionResultType]::ParameterValue, 'Export a timeline (draw.io, ASCII tree) or a context (OpenAI, Anthropic, Markdown); read-only.')
            [CompletionResult]::new('db', 'db', [CompletionResultType]::ParameterValue, 'Commands on the database file as a whole (db ...).')
            [CompletionResult]::new('timelines', 'timelines', [CompletionResultType]::ParameterValue, 'List every timeline with its title, times, message and branch counts.')
            [CompletionResult]::new('completions', 'completions', [CompletionResultType]::ParameterValue, 'Print a completion script for a shell (bash, zsh, fish, powershell or elvish).')
            [CompletionResult]::new('man', 'man', [CompletionResultType]::ParameterValue, 'Print the manual page of tl as roff text (read it with man -l, or install it as tl.1).')
            [CompletionResult]::new('demo', 'demo', [CompletionResultType]::ParameterValue, 'Walk through a short demo conversation in a new database, printing each tl command and its answer.')
            [CompletionResult]::new('help', 'help', [CompletionResultType]::ParameterValue, 'Print this message or the help of the given subcommand(s)')
            break
        }
        'tl;help;create' {
            break
        }
        'tl;help;append' {
            break
        }
        'tl;help;fork' {
            break
        }
        'tl;help;switch' {
            break
        }
        'tl;help;drop-branch' {
            break
        }
        'tl;help;rename-branch' {
            break
        }
        'tl;help;context' {
            break
        }
        'tl;help;budget' {
            break
        }
        'tl;help;pin' {
            break
        }
        'tl;help;unpin' {
            break
        }
        'tl;help;summarize' {
            break
        }
        'tl;help;branches' {
            break
        }
        'tl;help;node' {
            break
        }
        'tl;help;search' {
            break
        }
        'tl;help;log' {
            break
        }
        'tl;help;diff' {
            break
        }
        'tl;help;archive-check' {
            break
        }
        'tl;help;archive-branch' {
            break
        }
        'tl;help;restore-branch' {
            break
        }
        'tl;help;import' {
            break
        }
        'tl;help;export' {
            break
        }
        'tl;help;db' {
            [CompletionResult]::new('info', 'info', [CompletionResultType]::ParameterValue, 'Show the storage engine, file, format version, size, and the counts of timelines and messages.')
            [CompletionResult]::new('check', 'check', [CompletionResultType]::ParameterValue, 'Check the database''s integrity and report every problem; --repair rebuilds the search index.')
            [CompletionResult]::new('convert', 'convert', [CompletionResultType]::ParameterValue, 'Copy the database into a new file; its extension picks the engine (.json: JSON, else SQLite).')
            [CompletionResult]::new('backup', 'backup', [CompletionResultType]::ParameterValue, 'Write a consistent copy of the database to a new file while other processes keep working.')
            break
        }
        'tl;help;db;info' {
            break
        }
        'tl;help;db;check' {
            break
        }
        'tl;help;db;convert' {
            break
        }
        'tl;help;db;backup' {
            break
        }
        'tl;help;timelines' {
            break
        }
        'tl;help;completions' {
            break
        }
        'tl;help;man' {
            break
        }
        'tl;help;demo' {
            break
        }
        'tl;help;help' {
            break
        }
    })

    $completions.Where{ $_.CompletionText -like "$wordToComplete*" } |
        Sort-Object -Property ListItemText
}
