-- The calls of a dashboard summed per UTC cell of $cell_s seconds, provider, model and
-- kind of row (`per_session`: a session's running total, which has no time of its own
-- worth charting by hour), kept on the connection as temp table `dashboard_cells` for
-- the day and hour queries. As in report_period.sql, only the cells are converted to
-- local time ($cell_s is 900, or 86400 for a zone that is UTC all year).
CREATE OR REPLACE TEMP TABLE dashboard_cells AS
SELECT
    epoch_us(ts) // ($cell_s::BIGINT * 1000000) AS cell,
    provider,
    coalesce(model, '<unknown>')                AS model,
    per_session,
    count(*)                                    AS calls,
    sum(COLUMNS('_tokens$'))::BIGINT,           -- input_tokens … total_tokens, by name
    sum(cost_usd)                               AS cost_usd,
    sum(uncached_cost_usd)                      AS uncached_cost_usd,
    count(*) FILTER (cost_usd IS NULL)          AS unpriced_calls
FROM report_calls($workspace, $tz, $since, $until, $provider, $model, $project, $include_hidden, $tag)
GROUP BY ALL
