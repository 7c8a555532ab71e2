-- Usage per provider and model in zone $tz's bounds; the model report is these rows.
SELECT
    provider,
    coalesce(model, '<unknown>')            AS model,
    timezone($tz, min(ts))                  AS first_activity,
    timezone($tz, max(ts))                  AS last_activity,
    count(DISTINCT session_id)              AS sessions,
    count(*)                                AS calls,
    sum(input_tokens)::BIGINT               AS input_tokens,
    sum(cache_write_tokens)::BIGINT         AS cache_write_tokens,
    sum(cache_write_1h_tokens)::BIGINT      AS cache_write_1h_tokens,
    sum(cache_read_tokens)::BIGINT          AS cache_read_tokens,
    sum(output_tokens)::BIGINT              AS output_tokens,
    sum(reasoning_tokens)::BIGINT           AS reasoning_tokens,
    sum(total_tokens)::BIGINT               AS total_tokens,
    sum(cost_usd)                           AS cost_usd,
    count(*) FILTER (cost_usd IS NULL)      AS unpriced_calls
FROM report_calls($workspace, $tz, $since, $until, $provider, $model, $project)
GROUP BY ALL
ORDER BY cost_usd DESC NULLS LAST, total_tokens DESC, provider, model
