-- Usage per period (in zone $tz), provider and model. $unit: 'day' | 'week' (weeks start
-- on Monday) | 'month'. The report rolls these rows up to one per period.
SELECT
    CAST(date_trunc($unit, local_ts) AS DATE)  AS period,
    provider,
    coalesce(model, '<unknown>')            AS model,
    min(local_ts)                           AS first_activity,
    max(local_ts)                           AS last_activity,
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
ORDER BY period, provider, model
