-- Schema version 14: the search index is published after the load commits (DESIGN §1),
-- no longer written inside them.
--
-- * `search_watermark`: per workspace, the last event the index holds, in the order the
--   publish step indexes events: (import_id, event_id). Every event above it is not yet
--   searchable; every event at or below it with words is indexed. The watermark moves in
--   the transaction that adds those events' postings, so a killed publish step resumes
--   from it.
-- * `search_withdrawn`: events a load commit withdrew (a retraction, a rewind, a source
--   re-read whole, a rewritten text). The publish step drops their postings, indexes
--   again those that still exist at or below the watermark, and deletes these rows, all
--   in one transaction. Until then search leaves them out.
-- Catalogs made before kept their index in step with every commit: their watermark is
-- their newest event. Runs again without effect.
CREATE TABLE IF NOT EXISTS search_watermark (
    workspace  VARCHAR PRIMARY KEY,
    import_id  BIGINT NOT NULL,
    event_id   VARCHAR NOT NULL
);

CREATE TABLE IF NOT EXISTS search_withdrawn (
    workspace  VARCHAR NOT NULL,
    event_id   VARCHAR NOT NULL
);

INSERT INTO search_watermark (workspace, import_id, event_id)
SELECT e.workspace, e.import_id, max(e.event_id)
FROM events e
JOIN (SELECT workspace, max(import_id) AS import_id FROM events GROUP BY workspace) m
  USING (workspace, import_id)
GROUP BY e.workspace, e.import_id
ON CONFLICT DO NOTHING;
