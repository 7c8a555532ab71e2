-- When the work happens: calls per provider, local weekday (ISO: 1 = Monday) and local
-- hour in zone $tz, from the `dashboard_cells` temp table. Session running totals are
-- left out: their time is when the total was last written, not when the work was done.
SELECT
    provider,
    isodow(local)                               AS weekday,
    hour(local)                                 AS hour,
    sum(calls)::BIGINT                          AS calls,
    sum(total_tokens)::BIGINT                   AS total_tokens,
    sum(cost_usd)                               AS cost_usd
FROM (
    SELECT *, timezone($tz, to_timestamp(cell * $cell_s)) AS local
    FROM dashboard_cells
    WHERE NOT coalesce(per_session, false)
)
GROUP BY ALL
ORDER BY provider, weekday, hour
