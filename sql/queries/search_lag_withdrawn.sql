-- The withdrawn events still in the catalog at or below the watermark (`/* above */`):
-- their postings are not yet replaced, and search leaves them out until they are.
-- Parameters: $workspace
SELECT count(*) FROM events e
WHERE e.workspace = $workspace
  AND e.event_id IN (SELECT event_id FROM search_withdrawn WHERE workspace = $workspace)
  AND NOT /* above */
