-- Rewrite the text of events committed earlier: `batch_amended` (event_id, text) holds
-- the first chunk of a secret cut across two commits, redacted. Sets `gone_events` (for
-- `search_withdraw`, which runs next: the publish step indexes them again).
-- Parameters: $workspace
CREATE OR REPLACE TEMP TABLE gone_events AS
SELECT e.event_id FROM events e SEMI JOIN batch_amended a USING (event_id)
WHERE e.workspace = $workspace;

UPDATE events SET text = a.text
FROM batch_amended a
WHERE events.workspace = $workspace AND events.event_id = a.event_id;
