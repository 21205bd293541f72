-- 5 → 6 (issue 21, item 6): the rows whose parent is not older than them, which Timeline never
-- writes. A parent cycle always contains one, so every change checks that this index is empty
-- (one lookup) before it writes: nothing is written to a file that claims a cycle anywhere.
CREATE INDEX nodes_with_newer_parent ON nodes (timeline, id) WHERE parent >= id AND id != 0;
