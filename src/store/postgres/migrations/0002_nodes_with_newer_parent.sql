-- 1 → 2: the rows whose parent is not older than them, which Timeline never writes (as SQLite's
-- migration 6). A parent cycle always contains one, so the first change to a timeline in a
-- transaction checks that the timeline has none (one lookup in this index) before it writes.
CREATE INDEX nodes_with_newer_parent ON nodes (timeline, id) WHERE parent >= id AND id != 0;
