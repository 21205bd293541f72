-- 9 → 10 (issue 24, item 5): a message written on its own waits here for the search index, which
-- takes such messages in batches (src/store/sqlite/pending.rs). An append then writes this one small
-- row instead of FTS5's new segment, structure record, segment index entry and size record, and
-- the search document's row and unique index. Searches read the waiting messages as well.
CREATE TABLE search_pending (
    timeline INTEGER NOT NULL,
    node INTEGER NOT NULL,
    PRIMARY KEY (timeline, node)
) WITHOUT ROWID;
