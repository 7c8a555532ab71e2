-- Usage per project (the session's project path; '<unknown>' when no session names one),
-- provider and model, with the project's distinct sessions. The report rolls these rows
-- up to one per project.
WITH calls AS (
    SELECT *, coalesce(project_path, '<unknown>') AS project
    FROM report_calls($workspace, $tz, $since, $until, $provider, $model, $project)
),
per_project AS (
    SELECT project, count(DISTINCT (provider, session_id)) AS project_sessions
    FROM calls
    GROUP BY project
)
SELECT
    c.project                               AS project_path,
    c.provider,
    coalesce(c.model, '<unknown>')          AS model,
    min(c.local_ts)                         AS first_activity,
    max(c.local_ts)                         AS last_activity,
    any_value(p.project_sessions)           AS project_sessions,
    count(DISTINCT c.session_id)            AS sessions,
    count(*)                                AS calls,
    sum(c.input_tokens)::BIGINT             AS input_tokens,
    sum(c.cache_write_tokens)::BIGINT       AS cache_write_tokens,
    sum(c.cache_write_1h_tokens)::BIGINT    AS cache_write_1h_tokens,
    sum(c.cache_read_tokens)::BIGINT        AS cache_read_tokens,
    sum(c.output_tokens)::BIGINT            AS output_tokens,
    sum(c.reasoning_tokens)::BIGINT         AS reasoning_tokens,
    sum(c.total_tokens)::BIGINT             AS total_tokens,
    sum(c.cost_usd)                         AS cost_usd,
    count(*) FILTER (c.cost_usd IS NULL)    AS unpriced_calls
FROM calls c
JOIN per_project p USING (project)
GROUP BY c.project, c.provider, coalesce(c.model, '<unknown>')
ORDER BY project_path, c.provider, model
