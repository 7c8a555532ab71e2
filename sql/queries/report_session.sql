-- Usage per session, provider and model (bounds on the session's calls, in zone $tz).
-- The report rolls these rows up to one per session and orders them (most recent first). Calls are summed before the join
-- with `sessions`, so the join sees one row per session and model, not one per call.
WITH per_model AS (
    SELECT
        provider,
        session_id,
        coalesce(model, '<unknown>')            AS model,
        min(ts)                                 AS first_ts,
        max(ts)                                 AS last_ts,
        count(*)                                AS calls,
        sum(COLUMNS('_tokens$'))::BIGINT,       -- input_tokens … total_tokens, by name
        sum(cost_usd)                           AS cost_usd,
        count(*) FILTER (cost_usd IS NULL)      AS unpriced_calls
    FROM report_calls($workspace, $tz, $since, $until, $provider, $model, $project)
    GROUP BY ALL
)
SELECT
    m.provider,
    m.session_id,
    s.project_path,
    s.title,
    m.model,
    timezone($tz, m.first_ts)                   AS first_activity,
    timezone($tz, m.last_ts)                    AS last_activity,
    m.* EXCLUDE (provider, session_id, model, first_ts, last_ts)
FROM per_model m
LEFT JOIN sessions s
  ON s.workspace = $workspace AND s.provider = m.provider AND s.session_id = m.session_id
