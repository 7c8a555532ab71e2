-- Models whose calls have no price (their cost is NULL), with their token volume; most
-- tokens first. A call without a model is listed as '<unknown>'.
SELECT
    coalesce(model, '<unknown>')            AS model,
    provider,
    timezone($tz, min(ts))                  AS first_activity,
    timezone($tz, max(ts))                  AS last_activity,
    count(*)                                AS calls,
    sum(input_tokens)::BIGINT               AS input_tokens,
    sum(cache_write_tokens)::BIGINT         AS cache_write_tokens,
    sum(cache_read_tokens)::BIGINT          AS cache_read_tokens,
    sum(output_tokens)::BIGINT              AS output_tokens,
    sum(total_tokens)::BIGINT               AS total_tokens
FROM report_calls($workspace, $tz, $since, $until, $provider, $model, $project, $include_hidden, $tag)
WHERE cost_usd IS NULL
GROUP BY ALL
ORDER BY total_tokens DESC, calls DESC, model, provider
