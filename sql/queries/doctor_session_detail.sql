-- One session's row and how many rows it has in each workspace-scoped table (times as
-- UTC TIMESTAMP).
-- Parameters: $workspace, $provider, $session_id
SELECT
    (SELECT count(*) FROM sessions WHERE workspace = $workspace AND provider = $provider
        AND session_id = $session_id) AS sessions,
    (SELECT count(*) FROM events WHERE workspace = $workspace AND provider = $provider
        AND session_id = $session_id) AS events,
    (SELECT count(*) FROM usage WHERE workspace = $workspace AND provider = $provider
        AND session_id = $session_id) AS usage,
    s.parent_session_id, s.project_path, s.title,
    timezone('UTC', s.started_at) AS started_at, timezone('UTC', s.updated_at) AS updated_at,
    s.lifecycle
FROM (SELECT 1) AS one(x)
LEFT JOIN sessions s
  ON s.workspace = $workspace AND s.provider = $provider AND s.session_id = $session_id
