-- Token usage and cost per session (bounds on the session's calls, in time zone $tz).
SELECT
    u.provider,
    u.session_id,
    any_value(s.project_path)     AS project_path,
    any_value(s.title)            AS title,
    timezone($tz, min(u.ts))      AS first_activity,
    timezone($tz, max(u.ts))      AS last_activity,
    list(DISTINCT coalesce(u.model, '<unknown>') ORDER BY coalesce(u.model, '<unknown>')) AS models,
    count(*)                      AS calls,
    sum(u.input_tokens)::BIGINT           AS input_tokens,
    sum(u.cache_write_tokens)::BIGINT     AS cache_write_tokens,
    sum(u.cache_write_1h_tokens)::BIGINT  AS cache_write_1h_tokens,
    sum(u.cache_read_tokens)::BIGINT      AS cache_read_tokens,
    sum(u.output_tokens)::BIGINT          AS output_tokens,
    sum(u.reasoning_tokens)::BIGINT       AS reasoning_tokens,
    sum(u.total_tokens)::BIGINT           AS total_tokens,
    sum(u.cost_usd)               AS cost_usd
FROM usage_costed u
LEFT JOIN sessions s
  ON s.workspace = u.workspace AND s.provider = u.provider AND s.session_id = u.session_id
WHERE u.workspace = $workspace
  AND ($provider IS NULL OR u.provider = $provider)
  AND ($since IS NULL OR CAST(timezone($tz, u.ts) AS DATE) >= $since)
  AND ($until IS NULL OR CAST(timezone($tz, u.ts) AS DATE) <= $until)
GROUP BY u.provider, u.session_id
ORDER BY last_activity DESC
