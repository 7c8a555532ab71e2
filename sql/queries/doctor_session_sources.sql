-- The sources a session's events and model calls came from, with their catalog status.
-- Parameters: $workspace, $provider, $session_id
WITH used AS (
    SELECT source_id, count(*) AS events, 0 AS calls FROM events
    WHERE workspace = $workspace AND provider = $provider AND session_id = $session_id
    GROUP BY source_id
    UNION ALL
    SELECT source_id, 0, count(*) FROM usage
    WHERE workspace = $workspace AND provider = $provider AND session_id = $session_id
    GROUP BY source_id
), per AS (
    SELECT source_id, sum(events) AS events, sum(calls) AS calls FROM used GROUP BY source_id
)
SELECT p.source_id, s.provider, s.path, s.status, s.continuity, s.refusal, s.records,
       s.rejected, p.events, p.calls
FROM per p
LEFT JOIN sources s ON s.workspace = $workspace AND s.source_id = p.source_id
ORDER BY s.path NULLS LAST, p.source_id
