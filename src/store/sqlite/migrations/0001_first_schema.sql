-- 0 → 1: the first schema. The lookups by parent and by range start carry the node ID, so that
-- their `ORDER BY id` walks the index instead of the whole timeline's primary key.
CREATE TABLE state (
    id INTEGER PRIMARY KEY CHECK (id = 0),
    next_timeline INTEGER NOT NULL
);
INSERT INTO state (id, next_timeline) VALUES (0, 0);
CREATE TABLE timelines (
    id INTEGER PRIMARY KEY,
    next_node INTEGER NOT NULL,
    current_branch TEXT NOT NULL,
    cold_nodes INTEGER NOT NULL DEFAULT 0,
    title TEXT,
    created_at INTEGER,
    updated_at INTEGER
);
CREATE TABLE nodes (
    timeline INTEGER NOT NULL,
    id INTEGER NOT NULL,
    parent INTEGER NOT NULL,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    tokens INTEGER NOT NULL,
    intent_tag TEXT,
    intent_note TEXT,
    summary_kind TEXT,
    summary_from INTEGER,
    summary_to INTEGER,
    derived_from TEXT,
    supersedes INTEGER,
    version INTEGER,
    request_digest BLOB,
    cold INTEGER NOT NULL DEFAULT 0,
    pinned INTEGER NOT NULL DEFAULT 0,
    prefix_tokens INTEGER NOT NULL,
    depth INTEGER NOT NULL,
    cover_count INTEGER NOT NULL DEFAULT 0,
    stale INTEGER NOT NULL DEFAULT 0,
    superseded_by INTEGER,
    created_at INTEGER,
    PRIMARY KEY (timeline, id)
);
CREATE INDEX nodes_by_parent ON nodes (timeline, parent, id);
CREATE INDEX nodes_by_range_start ON nodes (timeline, summary_from, id) WHERE summary_from IS NOT NULL;
CREATE INDEX nodes_by_request ON nodes (timeline, request_digest) WHERE request_digest IS NOT NULL;
CREATE TABLE summary_sources (
    timeline INTEGER NOT NULL,
    summary INTEGER NOT NULL,
    source INTEGER NOT NULL,
    PRIMARY KEY (timeline, summary, source)
);
CREATE INDEX summary_sources_by_source ON summary_sources (timeline, source, summary);
CREATE TABLE branches (
    seq INTEGER PRIMARY KEY,
    timeline INTEGER NOT NULL,
    name TEXT NOT NULL,
    head INTEGER NOT NULL,
    watermark INTEGER NOT NULL,
    UNIQUE (timeline, name)
);
CREATE TABLE idempotency (
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    op TEXT NOT NULL,
    result TEXT NOT NULL,
    ts INTEGER NOT NULL,
    request TEXT,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_by_ts ON idempotency (ts);
CREATE TABLE audit (
    seq INTEGER PRIMARY KEY,
    ts INTEGER NOT NULL,
    entry TEXT NOT NULL
);
