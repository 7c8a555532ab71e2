-- The fts extension's index (fts_main_events, one document per events row, built over
-- every workspace) against this workspace's events with text. `dangling` only says
-- whether some document's event is gone (a count would span workspaces).
-- Parameters: $workspace
WITH texts AS (
    SELECT event_id FROM events WHERE workspace = $workspace AND text IS NOT NULL
)
SELECT
    (SELECT count(*) FROM texts) AS events_with_text,
    (SELECT count(*) FROM texts t WHERE EXISTS
        (SELECT 1 FROM fts_main_events.docs d WHERE d.name = t.event_id)) AS indexed,
    (SELECT count(*) FROM texts t WHERE NOT EXISTS
        (SELECT 1 FROM fts_main_events.docs d WHERE d.name = t.event_id)) AS missing,
    (SELECT CAST(count(*) > 0 AS INTEGER) FROM fts_main_events.docs d WHERE NOT EXISTS
        (SELECT 1 FROM events e WHERE e.event_id = d.name)) AS dangling,
    NULL AS indexed_docs,
    NULL AS counted_docs
