-- A dashboard's usage per local day (zone $tz), provider and model, from the
-- `dashboard_cells` temp table (dashboard_cells.sql).
SELECT
    CAST(timezone($tz, to_timestamp(cell * $cell_s)) AS DATE)  AS day,
    provider,
    model,
    sum(calls)::BIGINT                          AS calls,
    sum(COLUMNS('_tokens$'))::BIGINT,           -- input_tokens … total_tokens, by name
    sum(cost_usd)                               AS cost_usd,
    sum(uncached_cost_usd)                      AS uncached_cost_usd,
    sum(unpriced_calls)::BIGINT                 AS unpriced_calls
FROM dashboard_cells
GROUP BY ALL
ORDER BY day, provider, model
