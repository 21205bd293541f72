-- 7 → 8 (issue 24): the path columns of every node (see src/store/jumps.rs), filled for existing
-- rows by `migrations::fill_path_columns` right after this file, and the two sets a budget's check
-- above its window enumerates: pinned messages and the starts of real summaries.
ALTER TABLE nodes ADD COLUMN jump INTEGER NOT NULL DEFAULT 0;
ALTER TABLE nodes ADD COLUMN path_min_tokens INTEGER NOT NULL DEFAULT 0;
CREATE INDEX nodes_pinned ON nodes (timeline, id) WHERE pinned = 1;
CREATE INDEX nodes_by_real_start ON nodes (timeline, summary_from) WHERE summary_kind = 'real';
