-- Remove what earlier generations of one source wrote, before it is re-read from byte 0
-- (or a changed document is re-read whole); `search_withdraw` (over `gone_events`)
-- and `recompute_sessions` run next.
-- Parameters: $workspace, $source_id
-- A source's sessions are those of its events and of its calls: a document may hold
-- calls alone (Droid's settings totals), whose sessions' token totals must follow.
CREATE OR REPLACE TEMP TABLE touched AS
SELECT DISTINCT provider, session_id FROM events
WHERE workspace = $workspace AND source_id = $source_id
UNION
SELECT DISTINCT provider, session_id FROM usage
WHERE workspace = $workspace AND source_id = $source_id;

CREATE OR REPLACE TEMP TABLE gone_events AS
SELECT event_id FROM events WHERE workspace = $workspace AND source_id = $source_id;

-- What the commit re-reads is not new to it: the receipt counts rows the catalog did not
-- hold before the commit (`forgotten_*`, emptied after each commit: count_new_rows.sql).
INSERT INTO forgotten_events SELECT event_id FROM gone_events;
INSERT INTO forgotten_calls
SELECT provider, coalesce(message_id, call_id) FROM usage
WHERE workspace = $workspace AND source_id = $source_id;

DELETE FROM events WHERE workspace = $workspace AND source_id = $source_id;
DELETE FROM usage WHERE workspace = $workspace AND source_id = $source_id;
DELETE FROM rejects WHERE workspace = $workspace AND source_id = $source_id;
DELETE FROM rate_limits WHERE workspace = $workspace AND source_id = $source_id;
