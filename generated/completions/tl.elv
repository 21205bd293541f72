
use builtin;
use str;

set edit:completion:arg-completer[tl] = {|@words|
    fn spaces {|n|
        builtin:repeat $n ' ' | str:join ''
    }
    fn cand {|text desc|
        edit:complex-candidate $text &display=$text' '(spaces (- 14 (wcswidth $text)))$desc
    }
    var command = 'tl'
    for word $words[1..-1] {
        if (str:has-prefix $word '-') {
            break
        }
        set command = $command';'$word
    }
    var completions = [
        &'tl'= {
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand --format 'How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by log, search, diff, context and branches. [json, text]'
            cand -h 'Print help'
            cand --help 'Print help'
            cand -V 'Print version'
            cand --version 'Print version'
            cand create 'Create a new timeline with an empty main branch.'
            cand append 'Append a message to the current branch (or the one named) and move its head.'
            cand fork 'Create a branch whose head is the given node.'
            cand switch 'Make another branch the current one.'
            cand drop-branch 'Remove a branch pointer; its messages stay in the timeline.'
            cand rename-branch 'Rename a branch, keeping its head, watermark, place and current-branch marker.'
            cand context 'Print the messages from the root to a node, oldest first.'
            cand budget 'Fit the context of a node into a token budget with summaries and placeholders.'
            cand pin 'Pin a node so that budgets always keep it verbatim.'
            cand unpin 'Remove a pin.'
            cand summarize 'Add a summary of the path from one node down to another.'
            cand branches 'List the branches with their heads.'
            cand node 'Show one node in full: text, tokens, intent, summary range and versions.'
            cand search 'Find messages and summaries by their words, best matches first.'
            cand log 'Page through the messages of a branch, newest first.'
            cand diff 'Compare two branches or nodes: their common ancestor and what each has after it.'
            cand archive-check 'Tell whether a branch can be archived, and why not.'
            cand archive-branch 'Archive a finished branch: remove its pointer and move its own messages to the cold zone.'
            cand restore-branch 'Bring an archived branch back: its pointer, and its archived messages to the hot zone.'
            cand import 'Import conversations: a ChatGPT or Claude export, OpenAI messages, an Anthropic request body.'
            cand export 'Export a timeline (draw.io, ASCII tree) or a context (OpenAI, Anthropic, Markdown); read-only.'
            cand db 'Commands on the database file as a whole (db ...).'
            cand timelines 'List every timeline with its title, times, message and branch counts.'
            cand completions 'Print a completion script for a shell (bash, zsh, fish, powershell or elvish).'
            cand man 'Print the manual page of tl as roff text (read it with man -l, or install it as tl.1).'
            cand demo 'Walk through a short demo conversation in a new database, printing each tl command and its answer.'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'tl;create'= {
            cand --title 'An optional title, shown by timelines.'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;append'= {
            cand --role 'Who wrote the message: user, assistant, system or summary. [user, assistant, system, summary] (required)'
            cand --text 'The message text. Use - to read it from standard input, or --text-file PATH. (required)'
            cand --text-file 'Read --text from this file (UTF-8).'
            cand --tokens 'Token count of the message. Default: max(1, ceil(Unicode scalars / 4)).'
            cand --intent-tag 'Label the message with an intent tag (your own vocabulary).'
            cand --intent-note 'A note that explains the intent; needs the intent tag. Shown by node, never in context.'
            cand --branch 'The branch to append to; it does not become current. Default: the current branch.'
            cand --expect-head 'Refuse with a conflict (nothing written) unless the branch''s head is this node: compare-and-set for concurrent writers.'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;fork'= {
            cand --node 'The node the new branch starts from (its head). (required)'
            cand --name 'The new branch''s name. (required)'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;switch'= {
            cand --name 'The branch to make current. (required)'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;drop-branch'= {
            cand --name 'The branch to remove. The current branch cannot be removed. (required)'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;rename-branch'= {
            cand --name 'The branch to rename. (required)'
            cand --to 'Its new name; no other branch may have it. (required)'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;context'= {
            cand --node 'The last message of the context. (required)'
            cand --format 'How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by log, search, diff, context and branches. [json, text]'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;budget'= {
            cand --node 'The target message; it is always kept verbatim. (required)'
            cand --max 'The token budget. (required)'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand --dry-run 'Show the layout without writing anything: a placeholder that would be created appears with node null and the range it would cover (from, to), and summaries_created lists only existing placeholders. An idempotency key has no effect.'
            cand --explain 'Add an explanation: for every message of the path, in order, whether it was kept, covered by a summary or by a placeholder, and why. If the budget is infeasible, the error data holds the smallest layout (messages) and its explanation.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;pin'= {
            cand --node 'The node to pin. (required)'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;unpin'= {
            cand --node 'The node to unpin. (required)'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;summarize'= {
            cand --from 'The first node of the summarised range. (required)'
            cand --to 'The last node of the range: the start itself or a descendant of it. (required)'
            cand --summary 'The summary text. Use - to read it from standard input, or --summary-file PATH. (required)'
            cand --summary-file 'Read --summary from this file (UTF-8).'
            cand --tokens 'Token count of the summary. Default: max(1, ceil(Unicode scalars / 4)).'
            cand --derived-from 'Summaries this one was derived from, comma-separated (n9,n10).'
            cand --supersede 'A summary this one replaces as its next version.'
            cand --intent-tag 'Label the message with an intent tag (your own vocabulary).'
            cand --intent-note 'A note that explains the intent; needs the intent tag. Shown by node, never in context.'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;branches'= {
            cand --format 'How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by log, search, diff, context and branches. [json, text]'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;node'= {
            cand --node 'The node to show. (required)'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;search'= {
            cand --query 'What to find: words (all must occur), "exact phrases", prefix* words. (required)'
            cand --branch 'Only messages on this branch''s path (from the root to its head). The branch of --timeline, or of the timeline with the smallest ID.'
            cand --under 'Only this node and its descendants. A node of --timeline, or of the timeline with the smallest ID.'
            cand --role 'Only messages with this role. [user, assistant, system, summary]'
            cand --since 'Only messages created at or after this time (messages without a recorded time never match).'
            cand --until 'Only messages created at or before this time (messages without a recorded time never match).'
            cand --zone 'Only hot (live) or cold (archived) messages. Default: all. [hot, cold, all]'
            cand --limit 'Hits per page. Default: 20.'
            cand --cursor 'The next_cursor of the previous page (same query and filters), for the page after it.'
            cand --format 'How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by log, search, diff, context and branches. [json, text]'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;log'= {
            cand --branch 'The branch to read. Default: the current branch.'
            cand --node 'Read the path that ends at this node instead of a branch.'
            cand --limit 'Messages per page. Default: 50.'
            cand --cursor 'The next_cursor of the previous page, for the older messages after it.'
            cand --format 'How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by log, search, diff, context and branches. [json, text]'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;diff'= {
            cand --left 'One side: a branch name or a node ID. (required)'
            cand --right 'The other side: a branch name or a node ID. (required)'
            cand --format 'How results are printed: json (the default; the contract for scripts) or text (for people: role, time, node ID, text wrapped to the terminal, branch markers; coloured on a terminal unless NO_COLOR is set). Taken by log, search, diff, context and branches. [json, text]'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;archive-check'= {
            cand --name 'The branch to check. (required)'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;archive-branch'= {
            cand --name 'The branch to archive. (required)'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;restore-branch'= {
            cand --branch 'The archived branch to restore (the latest one archived under that name). (required)'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;import'= {
            cand --format 'What the file holds: chatgpt or claude (a data export: conversations.json, conversations-000.json, the folder or the .zip), openai (a Chat Completions messages array, or an object with messages), anthropic (a Messages request body). [chatgpt, claude, openai, anthropic] (required)'
            cand --input 'The file to read (for chatgpt and claude also the export''s folder or .zip). (required)'
            cand --node 'openai and anthropic only: attach the messages as a new branch from this node of the timeline (--timeline, default the first) instead of making a new timeline.'
            cand --branch 'With --node: the new branch''s name. Default: import-1, import-2, ... (the first that is free).'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;export'= {
            cand --format 'drawio (needs --output) or ascii: the whole timeline; openai, anthropic or markdown: the context of --node. [drawio, ascii, openai, anthropic, markdown] (required)'
            cand --output 'The file to write; it must not exist yet. Without it, every format but drawio is printed.'
            cand --node 'openai, anthropic and markdown: the last message of the exported context (required for them).'
            cand --max 'openai, anthropic and markdown: export the layout a budget of this many tokens would give (summaries and placeholders as text), computed without writing anything.'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;db'= {
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
            cand info 'Show the storage engine, file, format version, size, and the counts of timelines and messages.'
            cand check 'Check the database''s integrity and report every problem; --repair rebuilds the search index.'
            cand convert 'Copy the database into a new file; its extension picks the engine (.json: JSON, else SQLite).'
            cand backup 'Write a consistent copy of the database to a new file while other processes keep working.'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'tl;db;info'= {
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;db;check'= {
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand --repair 'First rebuild the indexes the file derives from its messages (SQLite: the full-text search index), then check. Without it nothing is changed.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;db;convert'= {
            cand --to 'The new database file; it must not exist yet. (required)'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;db;backup'= {
            cand --to 'The copy''s file; it must not exist yet. The copy uses the same engine as the database. (required)'
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;db;help'= {
            cand info 'Show the storage engine, file, format version, size, and the counts of timelines and messages.'
            cand check 'Check the database''s integrity and report every problem; --repair rebuilds the search index.'
            cand convert 'Copy the database into a new file; its extension picks the engine (.json: JSON, else SQLite).'
            cand backup 'Write a consistent copy of the database to a new file while other processes keep working.'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'tl;db;help;info'= {
        }
        &'tl;db;help;check'= {
        }
        &'tl;db;help;convert'= {
        }
        &'tl;db;help;backup'= {
        }
        &'tl;db;help;help'= {
        }
        &'tl;timelines'= {
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;completions'= {
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;man'= {
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;demo'= {
            cand --db 'The database file (a new file ending in .json is a JSON snapshot, any other a SQLite database). Default: $TIMELINE_DB if set and non-empty, else ~/.timeline.json if it exists, else timeline/timeline.db in your data directory.'
            cand --timeline 'The timeline to use (tl0, tl1, ...). Default: the timeline with the smallest ID.'
            cand --idempotency-key 'Make a change safe to retry: the same key on the same timeline within 7 days returns the first result; the same key with another request is refused.'
            cand -h 'Print help'
            cand --help 'Print help'
        }
        &'tl;help'= {
            cand create 'Create a new timeline with an empty main branch.'
            cand append 'Append a message to the current branch (or the one named) and move its head.'
            cand fork 'Create a branch whose head is the given node.'
            cand switch 'Make another branch the current one.'
            cand drop-branch 'Remove a branch pointer; its messages stay in the timeline.'
            cand rename-branch 'Rename a branch, keeping its head, watermark, place and current-branch marker.'
            cand context 'Print the messages from the root to a node, oldest first.'
            cand budget 'Fit the context of a node into a token budget with summaries and placeholders.'
            cand pin 'Pin a node so that budgets always keep it verbatim.'
            cand unpin 'Remove a pin.'
            cand summarize 'Add a summary of the path from one node down to another.'
            cand branches 'List the branches with their heads.'
            cand node 'Show one node in full: text, tokens, intent, summary range and versions.'
            cand search 'Find messages and summaries by their words, best matches first.'
            cand log 'Page through the messages of a branch, newest first.'
            cand diff 'Compare two branches or nodes: their common ancestor and what each has after it.'
            cand archive-check 'Tell whether a branch can be archived, and why not.'
            cand archive-branch 'Archive a finished branch: remove its pointer and move its own messages to the cold zone.'
            cand restore-branch 'Bring an archived branch back: its pointer, and its archived messages to the hot zone.'
            cand import 'Import conversations: a ChatGPT or Claude export, OpenAI messages, an Anthropic request body.'
            cand export 'Export a timeline (draw.io, ASCII tree) or a context (OpenAI, Anthropic, Markdown); read-only.'
            cand db 'Commands on the database file as a whole (db ...).'
            cand timelines 'List every timeline with its title, times, message and branch counts.'
            cand completions 'Print a completion script for a shell (bash, zsh, fish, powershell or elvish).'
            cand man 'Print the manual page of tl as roff text (read it with man -l, or install it as tl.1).'
            cand demo 'Walk through a short demo conversation in a new database, printing each tl command and its answer.'
            cand help 'Print this message or the help of the given subcommand(s)'
        }
        &'tl;help;create'= {
        }
        &'tl;help;append'= {
        }
        &'tl;help;fork'= {
        }
        &'tl;help;switch'= {
        }
        &'tl;help;drop-branch'= {
        }
        &'tl;help;rename-branch'= {
        }
        &'tl;help;context'= {
        }
        &'tl;help;budget'= {
        }
        &'tl;help;pin'= {
        }
        &'tl;help;unpin'= {
        }
        &'tl;help;summarize'= {
        }
        &'tl;help;branches'= {
        }
        &'tl;help;node'= {
        }
        &'tl;help;search'= {
        }
        &'tl;help;log'= {
        }
        &'tl;help;diff'= {
        }
        &'tl;help;archive-check'= {
        }
        &'tl;help;archive-branch'= {
        }
        &'tl;help;restore-branch'= {
        }
        &'tl;help;import'= {
        }
        &'tl;help;export'= {
        }
        &'tl;help;db'= {
            cand info 'Show the storage engine, file, format version, size, and the counts of timelines and messages.'
            cand check 'Check the database''s integrity and report every problem; --repair rebuilds the search index.'
            cand convert 'Copy the database into a new file; its extension picks the engine (.json: JSON, else SQLite).'
            cand backup 'Write a consistent copy of the database to a new file while other processes keep working.'
        }
        &'tl;help;db;info'= {
        }
        &'tl;help;db;check'= {
        }
        &'tl;help;db;convert'= {
        }
        &'tl;help;db;backup'= {
        }
        &'tl;help;timelines'= {
        }
        &'tl;help;completions'= {
        }
        &'tl;help;man'= {
        }
        &'tl;help;demo'= {
        }
        &'tl;help;help'= {
        }
    ]
    $completions[$command]
}
