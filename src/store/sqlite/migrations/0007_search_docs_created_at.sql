-- 6 → 7 (issue 24, item 6): each search document keeps its message's creation time, so ranking a
-- query that matches most messages (ties go to the newest) and its --since/--until filter read it
-- beside the document number instead of looking each match up in nodes. A node's creation time is
-- never rewritten; the row is written with the node (and by tl db check --repair).
ALTER TABLE search_docs ADD COLUMN created_at INTEGER;
UPDATE search_docs SET created_at = (
    SELECT n.created_at FROM nodes n WHERE n.timeline = search_docs.timeline AND n.id = search_docs.node
);
