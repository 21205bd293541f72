-- 0 → 1: the first PostgreSQL schema, the SQLite schema's tables (migrations 1 to 6 of
-- src/store/sqlite/migrations) in one file, in the schema the connection's search_path names.
-- Integers are BIGINT holding Timeline's u64 values bit for bit, as in SQLite. The search index is
-- two tables of terms cut in Rust by crate::search (never PostgreSQL's text-search parsers, which
-- do not split CJK): search_docs holds each searchable message's terms, search_postings each
-- (term, message) pair, found by term or by a term's prefix (byte order: COLLATE "C").
CREATE TABLE state (
    id SMALLINT PRIMARY KEY CHECK (id = 0),
    next_timeline BIGINT NOT NULL,
    schema_version BIGINT NOT NULL
);
INSERT INTO state (id, next_timeline, schema_version) VALUES (0, 0, 0);
CREATE TABLE timelines (
    id BIGINT PRIMARY KEY,
    next_node BIGINT NOT NULL,
    current_branch TEXT NOT NULL,
    cold_nodes BIGINT NOT NULL DEFAULT 0,
    title TEXT,
    created_at BIGINT,
    updated_at BIGINT,
    -- Searchable messages and their terms: what BM25's statistics sum over the database, kept per
    -- timeline so that writers to different timelines never update one shared row.
    search_docs BIGINT NOT NULL DEFAULT 0,
    search_terms BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE nodes (
    timeline BIGINT NOT NULL,
    id BIGINT NOT NULL,
    parent BIGINT NOT NULL,
    role TEXT NOT NULL,
    text TEXT NOT NULL,
    tokens BIGINT NOT NULL,
    intent_tag TEXT,
    intent_note TEXT,
    summary_kind TEXT,
    summary_from BIGINT,
    summary_to BIGINT,
    derived_from TEXT,
    supersedes BIGINT,
    version BIGINT,
    request_digest BYTEA,
    cold BOOLEAN NOT NULL DEFAULT FALSE,
    pinned BOOLEAN NOT NULL DEFAULT FALSE,
    prefix_tokens BIGINT NOT NULL,
    depth BIGINT NOT NULL,
    cover_count BIGINT NOT NULL DEFAULT 0,
    stale BOOLEAN NOT NULL DEFAULT FALSE,
    superseded_by BIGINT,
    created_at BIGINT,
    provenance TEXT,
    PRIMARY KEY (timeline, id)
);
CREATE INDEX nodes_by_parent ON nodes (timeline, parent, id);
CREATE INDEX nodes_by_range_start ON nodes (timeline, summary_from, id) WHERE summary_from IS NOT NULL;
CREATE INDEX nodes_by_request ON nodes (timeline, request_digest) WHERE request_digest IS NOT NULL;
CREATE TABLE summary_sources (
    timeline BIGINT NOT NULL,
    summary BIGINT NOT NULL,
    source BIGINT NOT NULL,
    PRIMARY KEY (timeline, summary, source)
);
CREATE INDEX summary_sources_by_source ON summary_sources (timeline, source, summary);
CREATE TABLE branches (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    timeline BIGINT NOT NULL,
    name TEXT NOT NULL,
    head BIGINT NOT NULL,
    watermark BIGINT NOT NULL,
    UNIQUE (timeline, name)
);
CREATE TABLE idempotency (
    seq BIGINT GENERATED ALWAYS AS IDENTITY,
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    op TEXT NOT NULL,
    result TEXT NOT NULL,
    ts BIGINT NOT NULL,
    request TEXT,
    PRIMARY KEY (scope, key)
);
CREATE INDEX idempotency_by_ts ON idempotency (ts);
CREATE TABLE audit (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    ts BIGINT NOT NULL,
    entry TEXT NOT NULL
);
CREATE TABLE archived_branches (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    timeline BIGINT NOT NULL,
    name TEXT NOT NULL,
    head BIGINT NOT NULL,
    watermark BIGINT NOT NULL,
    position BIGINT NOT NULL,
    nodes TEXT NOT NULL
);
CREATE INDEX archived_branches_by_name ON archived_branches (timeline, name, seq);
CREATE TABLE imports (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    format TEXT NOT NULL,
    source_key TEXT NOT NULL,
    digest TEXT NOT NULL,
    timeline BIGINT NOT NULL,
    ts BIGINT NOT NULL,
    title TEXT,
    record TEXT NOT NULL
);
CREATE INDEX imports_by_source ON imports (format, source_key, seq);
CREATE INDEX imports_by_digest ON imports (format, source_key, digest, seq);
CREATE TABLE search_docs (
    timeline BIGINT NOT NULL,
    node BIGINT NOT NULL,
    terms TEXT NOT NULL,
    PRIMARY KEY (timeline, node)
);
CREATE TABLE search_postings (
    term TEXT COLLATE "C" NOT NULL,
    timeline BIGINT NOT NULL,
    node BIGINT NOT NULL,
    PRIMARY KEY (term, timeline, node)
);
