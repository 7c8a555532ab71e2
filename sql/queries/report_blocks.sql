-- Usage per cell of a UTC grid and model: the input the `blocks` report (pipeline/blocks.py)
-- cuts into 5-hour billing windows. Cells are $cell_us microseconds wide, aligned on the
-- epoch; the report picks a width on which every block boundary lies, so all calls of
-- one cell belong to the same block. Grouping here keeps the per-call work inside one
-- scan and never converts each call's time to $tz.
-- `cell` is floor(epoch µs / $cell_us); `first_us`/`last_us` are epoch microseconds.
SELECT
    epoch_us(ts) // CAST($cell_us AS BIGINT)
      - CAST(epoch_us(ts) % CAST($cell_us AS BIGINT) < 0 AS BIGINT)  AS cell,
    coalesce(model, '<unknown>')          AS model,
    count(*)                              AS calls,
    sum(COLUMNS('_tokens$'))::BIGINT,       -- input_tokens … total_tokens, by name
    sum(cost_usd)                         AS cost_usd,
    count(*) FILTER (cost_usd IS NULL)    AS unpriced_calls,
    epoch_us(min(ts))                     AS first_us,
    epoch_us(max(ts))                     AS last_us
FROM report_calls($workspace, $tz, $since, $until, $provider, $model, $project, $include_hidden, $tag)
GROUP BY ALL
