-- Usage per session, provider and model (bounds on the session's calls, in zone $tz).
-- The report rolls these rows up to one per session.
SELECT
    c.provider,
    c.session_id,
    any_value(c.project_path)               AS project_path,
    any_value(s.title)                      AS title,
    coalesce(c.model, '<unknown>')          AS model,
    min(c.local_ts)                         AS first_activity,
    max(c.local_ts)                         AS last_activity,
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
FROM report_calls($workspace, $tz, $since, $until, $provider, $model, $project) c
LEFT JOIN sessions s
  ON s.workspace = c.workspace AND s.provider = c.provider AND s.session_id = c.session_id
GROUP BY c.provider, c.session_id, coalesce(c.model, '<unknown>')
ORDER BY last_activity DESC, c.provider, c.session_id, model
