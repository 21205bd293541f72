-- 1 → 2, archived branches (restore-branch): what archive-branch removed, so that
-- restore-branch can bring it back. `nodes` is a JSON array of the node numbers the archival
-- moved to the cold zone; `seq` orders the archivals.
CREATE TABLE archived_branches (
    seq INTEGER PRIMARY KEY,
    timeline INTEGER NOT NULL,
    name TEXT NOT NULL,
    head INTEGER NOT NULL,
    watermark INTEGER NOT NULL,
    position INTEGER NOT NULL,
    nodes TEXT NOT NULL
);
CREATE INDEX archived_branches_by_name ON archived_branches (timeline, name, seq);
-- Also 1 → 2, imports (tl import, issue 15): one row per conversation brought in. The record column
-- is the ImportRecord as JSON; the other columns are its lookup keys.
CREATE TABLE imports (
    seq INTEGER PRIMARY KEY,
    format TEXT NOT NULL,
    source_key TEXT NOT NULL,
    digest TEXT NOT NULL,
    timeline INTEGER NOT NULL,
    ts INTEGER NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX imports_by_source ON imports (format, source_key, seq);
