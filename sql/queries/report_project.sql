-- Usage per project (the session's project path; '<unknown>' when no session names one),
-- provider and model, with the project's distinct sessions. The report rolls these rows
-- up to one per project. Calls are summed per session and model before the join with
-- `sessions` (`report_sessions`), so the join sees one row per session and model, not
-- one per call.
WITH placed AS (
    SELECT p.*, coalesce(s.project_path, '<unknown>') AS project
    FROM report_sessions($workspace, $tz, $since, $until, $provider, $model, $project, $include_hidden, $tag) p
    LEFT JOIN sessions s
      ON s.workspace = $workspace AND s.provider = p.provider AND s.session_id = p.session_id
)
SELECT
    project                                     AS project_path,
    provider,
    model,
    timezone($tz, min(first_ts))                AS first_activity,
    timezone($tz, max(last_ts))                 AS last_activity,
    any_value(project_sessions)                 AS project_sessions,
    count(DISTINCT session_id)                  AS sessions,
    sum(calls)::BIGINT                          AS calls,
    sum(COLUMNS('_tokens$'))::BIGINT,       -- input_tokens … total_tokens, by name
    sum(cost_usd)                               AS cost_usd,
    sum(unpriced_calls)::BIGINT                 AS unpriced_calls
FROM (
    SELECT *, count(DISTINCT (provider, session_id)) OVER (PARTITION BY project) AS project_sessions
    FROM placed
)
GROUP BY project, provider, model
ORDER BY project_path, provider, model
