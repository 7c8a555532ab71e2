-- The events with text the publish step has not reached: above its watermark
-- (`/* above */`, the watermark written in as constants) or withdrawn and not yet indexed
-- again. Read only when the index lags at all (its text columns are not read otherwise).
-- Parameters: $workspace
SELECT count(*) FROM events e
WHERE e.workspace = $workspace AND (e.text IS NOT NULL OR e.tool_input IS NOT NULL)
  AND (/* above */
       OR e.event_id IN (SELECT event_id FROM search_withdrawn WHERE workspace = $workspace))
