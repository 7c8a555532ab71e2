-- Usage per period (in zone $tz), provider and model. $unit: 'day' | 'week' (weeks start
-- on Monday) | 'month'. The report rolls these rows up to one per period.
--
-- Calls are first summed per UTC cell of $cell_s seconds, and only the cells are
-- converted to local time. The report passes 900 (every zone's offset, and every change of
-- offset, falls on a quarter hour, so a 15-minute cell never straddles a local midnight)
-- or 86400 for a zone that is UTC all year: a million calls need a few thousand time zone
-- conversions instead of a million.
WITH cells AS (
    SELECT
        epoch_us(ts) // ($cell_s::BIGINT * 1000000) AS cell,
        provider,
        coalesce(model, '<unknown>')            AS model,
        min(ts)                                 AS first_ts,
        max(ts)                                 AS last_ts,
        count(*)                                AS calls,
        sum(COLUMNS('_tokens$'))::BIGINT,       -- input_tokens … total_tokens, by name
        sum(cost_usd)                           AS cost_usd,
        count(*) FILTER (cost_usd IS NULL)      AS unpriced_calls
    FROM report_calls($workspace, $tz, $since, $until, $provider, $model, $project, $include_hidden, $tag)
    GROUP BY ALL
)
SELECT
    CAST(date_trunc($unit, timezone($tz, to_timestamp(cell * $cell_s))) AS DATE)  AS period,
    provider,
    model,
    timezone($tz, min(first_ts))            AS first_activity,
    timezone($tz, max(last_ts))             AS last_activity,
    sum(calls)::BIGINT                      AS calls,
    sum(COLUMNS('_tokens$'))::BIGINT,       -- input_tokens … total_tokens, by name
    sum(cost_usd)                           AS cost_usd,
    sum(unpriced_calls)::BIGINT             AS unpriced_calls
FROM cells
GROUP BY ALL
ORDER BY period, provider, model
