-- Recompute the aggregates of the sessions listed in temp table `touched` from the
-- events that remain (after rows were withdrawn). Parameters: $workspace
UPDATE sessions s
SET started_at = a.started_at, updated_at = a.updated_at,
    prompts = coalesce(a.prompts, 0), events = coalesce(a.events, 0),
    tool_calls = coalesce(a.tool_calls, 0)
FROM touched t
LEFT JOIN (
    SELECT e.provider, e.session_id, min(e.ts) AS started_at, max(e.ts) AS updated_at,
           count(*) FILTER (e.kind = 'prompt') AS prompts, count(*) AS events,
           count(*) FILTER (e.kind = 'tool_call') AS tool_calls
    FROM events e SEMI JOIN touched USING (provider, session_id)
    WHERE e.workspace = $workspace
    GROUP BY ALL
) a USING (provider, session_id)
WHERE s.workspace = $workspace AND s.provider = t.provider AND s.session_id = t.session_id;
