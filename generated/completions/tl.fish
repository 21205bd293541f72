# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_tl_global_optspecs
    string join \n db= timeline= idempotency-key= format= h/help V/version
end

function __fish_tl_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_tl_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_tl_using_subcommand
    set -l cmd (__fish_tl_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c tl -n "__fish_tl_needs_command" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_needs_command" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_needs_command" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_needs_command" -l format -d 'How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by log, search, diff, context and branches. [json, text]' -r
complete -c tl -n "__fish_tl_needs_command" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_needs_command" -s V -l version -d 'Print version'
complete -c tl -n "__fish_tl_needs_command" -f -a "create" -d 'Create a new timeline with an empty main branch.'
complete -c tl -n "__fish_tl_needs_command" -f -a "append" -d 'Append a message to the current branch (or the one named) and move its head.'
complete -c tl -n "__fish_tl_needs_command" -f -a "fork" -d 'Create a branch whose head is the given node.'
complete -c tl -n "__fish_tl_needs_command" -f -a "switch" -d 'Make another branch the current one.'
complete -c tl -n "__fish_tl_needs_command" -f -a "drop-branch" -d 'Remove a branch pointer; its messages stay in the timeline.'
complete -c tl -n "__fish_tl_needs_command" -f -a "rename-branch" -d 'Rename a branch, keeping its head, watermark, place and current-branch marker.'
complete -c tl -n "__fish_tl_needs_command" -f -a "context" -d 'Print the messages from the root to a node, oldest first.'
complete -c tl -n "__fish_tl_needs_command" -f -a "budget" -d 'Fit the context of a node into a token budget with summaries and placeholders.'
complete -c tl -n "__fish_tl_needs_command" -f -a "pin" -d 'Pin a node so that budgets always keep it verbatim.'
complete -c tl -n "__fish_tl_needs_command" -f -a "unpin" -d 'Remove a pin.'
complete -c tl -n "__fish_tl_needs_command" -f -a "summarize" -d 'Add a summary of the path from one node down to another.'
complete -c tl -n "__fish_tl_needs_command" -f -a "branches" -d 'List the branches with their heads.'
complete -c tl -n "__fish_tl_needs_command" -f -a "node" -d 'Show one node in full: text, tokens, intent, summary range and versions.'
complete -c tl -n "__fish_tl_needs_command" -f -a "search" -d 'Find messages and summaries by their words, best matches first.'
complete -c tl -n "__fish_tl_needs_command" -f -a "log" -d 'Page through the messages of a branch, newest first.'
complete -c tl -n "__fish_tl_needs_command" -f -a "diff" -d 'Compare two branches or nodes: their common ancestor and what each has after it.'
complete -c tl -n "__fish_tl_needs_command" -f -a "archive-check" -d 'Tell whether a branch can be archived, and why not.'
complete -c tl -n "__fish_tl_needs_command" -f -a "archive-branch" -d 'Archive a finished branch: remove its pointer and move its own messages to the cold zone.'
complete -c tl -n "__fish_tl_needs_command" -f -a "restore-branch" -d 'Bring an archived branch back: its pointer, and its archived messages to the hot zone.'
complete -c tl -n "__fish_tl_needs_command" -f -a "import" -d 'Import conversations: a ChatGPT or Claude export, OpenAI messages, an Anthropic request body.'
complete -c tl -n "__fish_tl_needs_command" -f -a "export" -d 'Export a timeline (draw.io, ASCII tree) or a context (OpenAI, Anthropic, Markdown); read-only.'
complete -c tl -n "__fish_tl_needs_command" -f -a "db" -d 'Commands on the database file as a whole (db ...).'
complete -c tl -n "__fish_tl_needs_command" -f -a "timelines" -d 'List every timeline with its title, times, message and branch counts.'
complete -c tl -n "__fish_tl_needs_command" -f -a "completions" -d 'Print a completion script for a shell (bash, zsh, fish, powershell or elvish).'
complete -c tl -n "__fish_tl_needs_command" -f -a "man" -d 'Print the manual page of tl as roff text (read it with man -l, or install it as tl.1).'
complete -c tl -n "__fish_tl_needs_command" -f -a "demo" -d 'Walk through a short demo conversation in a new database, printing each tl command and its answer.'
complete -c tl -n "__fish_tl_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tl -n "__fish_tl_using_subcommand create" -l title -d 'An optional title, shown by timelines.' -r
complete -c tl -n "__fish_tl_using_subcommand create" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand create" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand create" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand create" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand append" -l role -d 'Who wrote the message: user, assistant, system or summary. [user, assistant, system, summary] (required)' -r -f -a "user\t''
assistant\t''
system\t''
summary\t''"
complete -c tl -n "__fish_tl_using_subcommand append" -l text -d 'The message text. Use - to read it from standard input, or --text-file PATH. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand append" -l text-file -d 'Read --text from this file (UTF-8).' -r -F
complete -c tl -n "__fish_tl_using_subcommand append" -l tokens -d 'Token count of the message. Default: max(1, ceil(Unicode scalars / 4)).' -r
complete -c tl -n "__fish_tl_using_subcommand append" -l intent-tag -d 'Label the message with an intent tag (your own vocabulary).' -r
complete -c tl -n "__fish_tl_using_subcommand append" -l intent-note -d 'A note that explains the intent; needs the intent tag. Shown by node, never in context.' -r
complete -c tl -n "__fish_tl_using_subcommand append" -l branch -d 'The branch to append to; it does not become current. Default: the current branch.' -r
complete -c tl -n "__fish_tl_using_subcommand append" -l expect-head -d 'Refuse with a conflict (nothing written) unless the branch\'s head is this node: compare-and-set for concurrent writers.' -r
complete -c tl -n "__fish_tl_using_subcommand append" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand append" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand append" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand append" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand fork" -l node -d 'The node the new branch starts from (its head). (required)' -r
complete -c tl -n "__fish_tl_using_subcommand fork" -l name -d 'The new branch\'s name. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand fork" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand fork" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand fork" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand fork" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand switch" -l name -d 'The branch to make current. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand switch" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand switch" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand switch" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand switch" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand drop-branch" -l name -d 'The branch to remove. The current branch cannot be removed. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand drop-branch" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand drop-branch" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand drop-branch" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand drop-branch" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand rename-branch" -l name -d 'The branch to rename. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand rename-branch" -l to -d 'Its new name; no other branch may have it. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand rename-branch" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand rename-branch" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand rename-branch" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand rename-branch" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand context" -l node -d 'The last message of the context. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand context" -l format -d 'How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by log, search, diff, context and branches. [json, text]' -r -f -a "json\t''
text\t''"
complete -c tl -n "__fish_tl_using_subcommand context" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand context" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand context" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand context" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand budget" -l node -d 'The target message; it is always kept verbatim. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand budget" -l max -d 'The token budget. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand budget" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand budget" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand budget" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand budget" -l dry-run -d 'Show the layout without writing anything: a placeholder that would be created appears with node null and the range it would cover (from, to), and summaries_created lists only existing placeholders. An idempotency key has no effect.'
complete -c tl -n "__fish_tl_using_subcommand budget" -l explain -d 'Add an explanation: for every message of the path, in order, whether it was kept, covered by a summary or by a placeholder, and why. If the budget is infeasible, the error data holds the smallest layout (messages) and its explanation.'
complete -c tl -n "__fish_tl_using_subcommand budget" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand pin" -l node -d 'The node to pin. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand pin" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand pin" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand pin" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand pin" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand unpin" -l node -d 'The node to unpin. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand unpin" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand unpin" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand unpin" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand unpin" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand summarize" -l from -d 'The first node of the summarised range. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand summarize" -l to -d 'The last node of the range: the start itself or a descendant of it. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand summarize" -l summary -d 'The summary text. Use - to read it from standard input, or --summary-file PATH. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand summarize" -l summary-file -d 'Read --summary from this file (UTF-8).' -r -F
complete -c tl -n "__fish_tl_using_subcommand summarize" -l tokens -d 'Token count of the summary. Default: max(1, ceil(Unicode scalars / 4)).' -r
complete -c tl -n "__fish_tl_using_subcommand summarize" -l derived-from -d 'Summaries this one was derived from, comma-separated (n9,n10).' -r
complete -c tl -n "__fish_tl_using_subcommand summarize" -l supersede -d 'A summary this one replaces as its next version.' -r
complete -c tl -n "__fish_tl_using_subcommand summarize" -l intent-tag -d 'Label the message with an intent tag (your own vocabulary).' -r
complete -c tl -n "__fish_tl_using_subcommand summarize" -l intent-note -d 'A note that explains the intent; needs the intent tag. Shown by node, never in context.' -r
complete -c tl -n "__fish_tl_using_subcommand summarize" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand summarize" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand summarize" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand summarize" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand branches" -l format -d 'How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by log, search, diff, context and branches. [json, text]' -r -f -a "json\t''
text\t''"
complete -c tl -n "__fish_tl_using_subcommand branches" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand branches" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand branches" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand branches" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand node" -l node -d 'The node to show. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand node" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand node" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand node" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand node" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand search" -l query -d 'What to find: words (all must occur), "exact phrases", prefix* words. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand search" -l branch -d 'Only messages on this branch\'s path (from the root to its head). The branch of --timeline, or of the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand search" -l under -d 'Only this node and its descendants. A node of --timeline, or of the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand search" -l role -d 'Only messages with this role. [user, assistant, system, summary]' -r -f -a "user\t''
assistant\t''
system\t''
summary\t''"
complete -c tl -n "__fish_tl_using_subcommand search" -l since -d 'Only messages created at or after this time (messages without a recorded time never match).' -r
complete -c tl -n "__fish_tl_using_subcommand search" -l until -d 'Only messages created at or before this time (messages without a recorded time never match).' -r
complete -c tl -n "__fish_tl_using_subcommand search" -l zone -d 'Only hot (live) or cold (archived) messages. Default: all. [hot, cold, all]' -r -f -a "hot\t''
cold\t''
all\t''"
complete -c tl -n "__fish_tl_using_subcommand search" -l limit -d 'Hits per page. Default: 20.' -r
complete -c tl -n "__fish_tl_using_subcommand search" -l cursor -d 'The next_cursor of the previous page (same query and filters), for the page after it.' -r
complete -c tl -n "__fish_tl_using_subcommand search" -l format -d 'How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by log, search, diff, context and branches. [json, text]' -r -f -a "json\t''
text\t''"
complete -c tl -n "__fish_tl_using_subcommand search" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand search" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand search" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand search" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand log" -l branch -d 'The branch to read. Default: the current branch.' -r
complete -c tl -n "__fish_tl_using_subcommand log" -l node -d 'Read the path that ends at this node instead of a branch.' -r
complete -c tl -n "__fish_tl_using_subcommand log" -l limit -d 'Messages per page. Default: 50.' -r
complete -c tl -n "__fish_tl_using_subcommand log" -l cursor -d 'The next_cursor of the previous page, for the older messages after it.' -r
complete -c tl -n "__fish_tl_using_subcommand log" -l format -d 'How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by log, search, diff, context and branches. [json, text]' -r -f -a "json\t''
text\t''"
complete -c tl -n "__fish_tl_using_subcommand log" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand log" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand log" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand log" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand diff" -l left -d 'One side: a branch name or a node ID. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand diff" -l right -d 'The other side: a branch name or a node ID. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand diff" -l format -d 'How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by log, search, diff, context and branches. [json, text]' -r -f -a "json\t''
text\t''"
complete -c tl -n "__fish_tl_using_subcommand diff" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand diff" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand diff" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand diff" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand archive-check" -l name -d 'The branch to check. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand archive-check" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand archive-check" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand archive-check" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand archive-check" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand archive-branch" -l name -d 'The branch to archive. (required)' -r
complete -c tl -n "__fish_tl_using_subcommand archive-branch" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand archive-branch" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand archive-branch" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand archive-branch" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand restore-branch" -l branch -d 'The archived branch to restore (the latest one archived under that name). (required)' -r
complete -c tl -n "__fish_tl_using_subcommand restore-branch" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand restore-branch" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand restore-branch" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand restore-branch" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand import" -l format -d 'What the file holds: chatgpt or claude (a data export: conversations.json, conversations-000.json, the folder or the .zip), openai (a Chat Completions messages array, or an object with messages), anthropic (a Messages request body). [chatgpt, claude, openai, anthropic] (required)' -r -f -a "chatgpt\t''
claude\t''
openai\t''
anthropic\t''"
complete -c tl -n "__fish_tl_using_subcommand import" -l input -d 'The file to read (for chatgpt and claude also the export\'s folder or .zip). (required)' -r -F
complete -c tl -n "__fish_tl_using_subcommand import" -l node -d 'openai and anthropic only: attach the messages as a new branch from this node of the timeline (--timeline, default the first) instead of making a new timeline.' -r
complete -c tl -n "__fish_tl_using_subcommand import" -l branch -d 'With --node: the new branch\'s name. Default: import-1, import-2, ... (the first that is free).' -r
complete -c tl -n "__fish_tl_using_subcommand import" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand import" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand import" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand import" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand export" -l format -d 'drawio (needs --output) or ascii: the whole timeline; openai, anthropic or markdown: the context of --node. [drawio, ascii, openai, anthropic, markdown] (required)' -r -f -a "drawio\t''
ascii\t''
openai\t''
anthropic\t''
markdown\t''"
complete -c tl -n "__fish_tl_using_subcommand export" -l output -d 'The file to write; it must not exist yet. Without it, every format but drawio is printed.' -r -F
complete -c tl -n "__fish_tl_using_subcommand export" -l node -d 'openai, anthropic and markdown: the last message of the exported context (required for them).' -r
complete -c tl -n "__fish_tl_using_subcommand export" -l max -d 'openai, anthropic and markdown: export the layout a budget of this many tokens would give (summaries and placeholders as text), computed without writing anything.' -r
complete -c tl -n "__fish_tl_using_subcommand export" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand export" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand export" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand export" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand db; and not __fish_seen_subcommand_from info check convert backup help" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand db; and not __fish_seen_subcommand_from info check convert backup help" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand db; and not __fish_seen_subcommand_from info check convert backup help" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand db; and not __fish_seen_subcommand_from info check convert backup help" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand db; and not __fish_seen_subcommand_from info check convert backup help" -f -a "info" -d 'Show the storage engine, file, format version, size, and the counts of timelines and messages.'
complete -c tl -n "__fish_tl_using_subcommand db; and not __fish_seen_subcommand_from info check convert backup help" -f -a "check" -d 'Check the database\'s integrity and report every problem; --repair rebuilds the search index.'
complete -c tl -n "__fish_tl_using_subcommand db; and not __fish_seen_subcommand_from info check convert backup help" -f -a "convert" -d 'Copy the database into a new file; its extension picks the engine (.json: JSON, else SQLite).'
complete -c tl -n "__fish_tl_using_subcommand db; and not __fish_seen_subcommand_from info check convert backup help" -f -a "backup" -d 'Write a consistent copy of the database to a new file while other processes keep working.'
complete -c tl -n "__fish_tl_using_subcommand db; and not __fish_seen_subcommand_from info check convert backup help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from info" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from info" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from info" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from info" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from check" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from check" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from check" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from check" -l repair -d 'First rebuild the indexes the file derives from its messages (SQLite: the full-text search index), then check. Without it nothing is changed.'
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from check" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from convert" -l to -d 'The new database file; it must not exist yet. (required)' -r -F
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from convert" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from convert" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from convert" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from convert" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from backup" -l to -d 'The copy\'s file; it must not exist yet. The copy uses the same engine as the database. (required)' -r -F
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from backup" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from backup" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from backup" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from backup" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from help" -f -a "info" -d 'Show the storage engine, file, format version, size, and the counts of timelines and messages.'
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from help" -f -a "check" -d 'Check the database\'s integrity and report every problem; --repair rebuilds the search index.'
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from help" -f -a "convert" -d 'Copy the database into a new file; its extension picks the engine (.json: JSON, else SQLite).'
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from help" -f -a "backup" -d 'Write a consistent copy of the database to a new file while other processes keep working.'
complete -c tl -n "__fish_tl_using_subcommand db; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tl -n "__fish_tl_using_subcommand timelines" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand timelines" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand timelines" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand timelines" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand completions" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand completions" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand completions" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand completions" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand man" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand man" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand man" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand man" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand demo" -l db -d 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.' -r -F
complete -c tl -n "__fish_tl_using_subcommand demo" -l timeline -d 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.' -r
complete -c tl -n "__fish_tl_using_subcommand demo" -l idempotency-key -d 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.' -r
complete -c tl -n "__fish_tl_using_subcommand demo" -s h -l help -d 'Print help'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "create" -d 'Create a new timeline with an empty main branch.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "append" -d 'Append a message to the current branch (or the one named) and move its head.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "fork" -d 'Create a branch whose head is the given node.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "switch" -d 'Make another branch the current one.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "drop-branch" -d 'Remove a branch pointer; its messages stay in the timeline.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "rename-branch" -d 'Rename a branch, keeping its head, watermark, place and current-branch marker.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "context" -d 'Print the messages from the root to a node, oldest first.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "budget" -d 'Fit the context of a node into a token budget with summaries and placeholders.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "pin" -d 'Pin a node so that budgets always keep it verbatim.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "unpin" -d 'Remove a pin.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "summarize" -d 'Add a summary of the path from one node down to another.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "branches" -d 'List the branches with their heads.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "node" -d 'Show one node in full: text, tokens, intent, summary range and versions.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "search" -d 'Find messages and summaries by their words, best matches first.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "log" -d 'Page through the messages of a branch, newest first.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "diff" -d 'Compare two branches or nodes: their common ancestor and what each has after it.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "archive-check" -d 'Tell whether a branch can be archived, and why not.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "archive-branch" -d 'Archive a finished branch: remove its pointer and move its own messages to the cold zone.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "restore-branch" -d 'Bring an archived branch back: its pointer, and its archived messages to the hot zone.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "import" -d 'Import conversations: a ChatGPT or Claude export, OpenAI messages, an Anthropic request body.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "export" -d 'Export a timeline (draw.io, ASCII tree) or a context (OpenAI, Anthropic, Markdown); read-only.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "db" -d 'Commands on the database file as a whole (db ...).'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "timelines" -d 'List every timeline with its title, times, message and branch counts.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "completions" -d 'Print a completion script for a shell (bash, zsh, fish, powershell or elvish).'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "man" -d 'Print the manual page of tl as roff text (read it with man -l, or install it as tl.1).'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "demo" -d 'Walk through a short demo conversation in a new database, printing each tl command and its answer.'
complete -c tl -n "__fish_tl_using_subcommand help; and not __fish_seen_subcommand_from create append fork switch drop-branch rename-branch context budget pin unpin summarize branches node search log diff archive-check archive-branch restore-branch import export db timelines completions man demo help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c tl -n "__fish_tl_using_subcommand help; and __fish_seen_subcommand_from db" -f -a "info" -d 'Show the storage engine, file, format version, size, and the counts of timelines and messages.'
complete -c tl -n "__fish_tl_using_subcommand help; and __fish_seen_subcommand_from db" -f -a "check" -d 'Check the database\'s integrity and report every problem; --repair rebuilds the search index.'
complete -c tl -n "__fish_tl_using_subcommand help; and __fish_seen_subcommand_from db" -f -a "convert" -d 'Copy the database into a new file; its extension picks the engine (.json: JSON, else SQLite).'
complete -c tl -n "__fish_tl_using_subcommand help; and __fish_seen_subcommand_from db" -f -a "backup" -d 'Write a consistent copy of the database to a new file while other processes keep working.'
