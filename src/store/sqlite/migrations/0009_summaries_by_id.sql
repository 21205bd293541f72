-- 8 → 9 (issue 24): coverage is derived from the ranges of summaries and placeholders instead of
-- counted in every covered row (`nodes.cover_count` is no longer written or read; see
-- src/store/cover.rs). A watermark or unpin check enumerates the summaries newer than a node.
CREATE INDEX nodes_summaries ON nodes (timeline, id) WHERE summary_kind IS NOT NULL;
