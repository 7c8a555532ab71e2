-- Usage per provider and model in zone $tz's bounds; the model report is these rows.
SELECT
    provider,
    coalesce(model, '<unknown>')            AS model,
    timezone($tz, min(ts))                  AS first_activity,
    timezone($tz, max(ts))                  AS last_activity,
    count(DISTINCT session_id)              AS sessions,
    count(*)                                AS calls,
    sum(COLUMNS('_tokens$'))::BIGINT,       -- input_tokens … total_tokens, by name
    sum(cost_usd)                           AS cost_usd,
    count(*) FILTER (cost_usd IS NULL)      AS unpriced_calls
FROM report_calls($workspace, $tz, $since, $until, $provider, $model, $project, $include_hidden, $tag)
GROUP BY ALL
ORDER BY cost_usd DESC NULLS LAST, total_tokens DESC, provider, model
