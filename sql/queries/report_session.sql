-- Usage per session, provider and model (bounds on the session's calls, in zone $tz).
-- The report rolls these rows up to one per session and orders them (most recent first).
-- Calls are summed before the join with `sessions` (`report_sessions`), so the join sees
-- one row per session and model, not one per call.
SELECT
    m.provider,
    m.session_id,
    s.project_path,
    s.title,
    m.model,
    timezone($tz, m.first_ts)                   AS first_activity,
    timezone($tz, m.last_ts)                    AS last_activity,
    m.* EXCLUDE (provider, session_id, model, first_ts, last_ts)
FROM report_sessions($workspace, $tz, $since, $until, $provider, $model, $project, $include_hidden, $tag) m
LEFT JOIN sessions s
  ON s.workspace = $workspace AND s.provider = m.provider AND s.session_id = m.session_id
