-- Public view (DESIGN §3): usage and cost per UTC day, workspace, provider and model.
-- Reports in other time zones are computed from `usage`, not from this view.

CREATE VIEW usage_daily AS
SELECT
    CAST(make_timestamp(epoch_us(ts)) AS DATE) AS day,   -- the UTC day, without a time-zone lookup per row
    workspace,
    provider,
    model,
    count(*)                 AS calls,
    sum(input_tokens)        AS input_tokens,
    sum(cache_write_tokens)  AS cache_write_tokens,
    sum(cache_read_tokens)   AS cache_read_tokens,
    sum(output_tokens)       AS output_tokens,
    sum(reasoning_tokens)    AS reasoning_tokens,
    sum(total_tokens)        AS total_tokens,
    sum(cost_usd)            AS cost_usd
FROM usage_costed
GROUP BY ALL;
