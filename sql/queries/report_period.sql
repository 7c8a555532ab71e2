-- Token usage and cost per period and model, bucketed in time zone $tz.
-- $unit: 'day' | 'week' | 'month'. Bounds are dates in $tz, inclusive; NULL = open.
SELECT
    CAST(date_trunc($unit, timezone($tz, ts)) AS DATE)  AS period,
    provider,
    coalesce(model, '<unknown>')  AS model,
    count(*)                      AS calls,
    sum(input_tokens)::BIGINT             AS input_tokens,
    sum(cache_write_tokens)::BIGINT       AS cache_write_tokens,
    sum(cache_write_1h_tokens)::BIGINT    AS cache_write_1h_tokens,
    sum(cache_read_tokens)::BIGINT        AS cache_read_tokens,
    sum(output_tokens)::BIGINT            AS output_tokens,
    sum(reasoning_tokens)::BIGINT         AS reasoning_tokens,
    sum(total_tokens)::BIGINT             AS total_tokens,
    sum(cost_usd)                 AS cost_usd,
    count(*) FILTER (cost_usd IS NULL) AS unpriced_calls
FROM usage_costed
WHERE workspace = $workspace
  AND ($provider IS NULL OR provider = $provider)
  AND ($since IS NULL OR CAST(timezone($tz, ts) AS DATE) >= $since)
  AND ($until IS NULL OR CAST(timezone($tz, ts) AS DATE) <= $until)
GROUP BY ALL
ORDER BY period, provider, model
