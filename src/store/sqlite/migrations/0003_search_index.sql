-- 2 → 3 (issue 14, full-text search): the search index, filled from the existing messages
-- (FILL_SEARCH_INDEX runs after it). `search_docs` gives each searchable message a stable
-- document number (an INTEGER PRIMARY KEY survives VACUUM); `search_index` is a contentless FTS5
-- table over the message's terms as `crate::search` cuts them, joined by spaces, so its `ascii`
-- tokenizer only splits at those spaces. Both are written in the transaction that inserts the
-- node. The terms come from the SQL function `tl_search_terms`, registered on every connection.
CREATE TABLE search_docs (
    doc INTEGER PRIMARY KEY,
    timeline INTEGER NOT NULL,
    node INTEGER NOT NULL,
    UNIQUE (timeline, node)
);
CREATE VIRTUAL TABLE search_index USING fts5(terms, content = '', tokenize = 'ascii');
