-- 3 → 4 (issue 21, item 7): where an imported message came from, in a column only import
-- writes (see `Node::provenance`). Import records written before kept it in the intent note;
-- it moves only for the nodes an import record says that import created, so a caller's
-- look-alike note on any other node stays an ordinary note.
ALTER TABLE nodes ADD COLUMN provenance TEXT;
UPDATE nodes SET provenance = intent_note, intent_note = NULL
WHERE intent_note LIKE '{"import":%'
  AND json_valid(intent_note)
  AND json_type(intent_note, '$.import') = 'text'
  AND EXISTS (
    SELECT 1 FROM imports i
    WHERE i.timeline = nodes.timeline
      AND nodes.id >= CAST(substr(json_extract(i.record, '$.first_node'), 2) AS INTEGER)
      AND nodes.id < CAST(substr(json_extract(i.record, '$.first_node'), 2) AS INTEGER)
                     + json_extract(i.record, '$.nodes')
  );
