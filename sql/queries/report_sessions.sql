-- The calls of `report_calls` summed per session and model, as a table macro: the
-- roll-up the project, session and root-session reports start from. Each joins
-- `sessions` (or `session_rollup`) on these rows, one per session and model, not one
-- per call. The arguments are those of `report_calls`.
CREATE OR REPLACE TEMP MACRO report_sessions(arg_ws, arg_tz, arg_since, arg_until, arg_prov, arg_model_part, arg_project_part, arg_hidden, arg_tag) AS TABLE
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
FROM report_calls(arg_ws, arg_tz, arg_since, arg_until, arg_prov, arg_model_part, arg_project_part, arg_hidden, arg_tag)
GROUP BY ALL
