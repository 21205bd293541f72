-- 4 → 5 (issue 21, item 11): an import looks up a conversation's digest by index, not by
-- reading every earlier record of its source key (linear time for many shared source IDs).
-- IF NOT EXISTS: tests that rebuild an older schema by dropping tables keep this index.
CREATE INDEX IF NOT EXISTS imports_by_digest ON imports (format, source_key, digest, seq);
