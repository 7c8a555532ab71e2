-- A report's rows from its per-(key, provider, model) rows (temp table `report_detail`,
-- report_detail.sql; a row's position there is its `arrival`): one
-- row per key (`/* keys */`, its columns) in `/* order */` (`min(arrival)`: the order
-- the keys first appear in), with its first and last activity, the
-- providers (`/* providers */`: the list, when the key does not name one) and models it
-- spans, the session count a row carries (`/* sessions */`: its first value, when the
-- report has one) and the sums of its calls, tokens and cost. A cost sums the priced
-- calls: NULL when none is priced. Costs are rounded to 1e-9 USD, so that one amount
-- prints the same in every report whatever order its calls were summed in.
SELECT /* keys */,
       min(first_activity) AS first_activity,
       max(last_activity) AS last_activity,
       /* providers */
       /* sessions */
       list_sort(list_distinct(list(model))) AS models,
       sum(calls)::BIGINT AS calls,
       sum(input_tokens)::BIGINT AS input_tokens,
       sum(cache_write_tokens)::BIGINT AS cache_write_tokens,
       sum(cache_write_1h_tokens)::BIGINT AS cache_write_1h_tokens,
       sum(cache_read_tokens)::BIGINT AS cache_read_tokens,
       sum(output_tokens)::BIGINT AS output_tokens,
       sum(reasoning_tokens)::BIGINT AS reasoning_tokens,
       sum(total_tokens)::BIGINT AS total_tokens,
       round(sum(cost_usd), 9) AS cost_usd,
       sum(unpriced_calls)::BIGINT AS unpriced_calls
FROM (SELECT *, rowid AS arrival FROM report_detail)
GROUP BY /* keys */
ORDER BY /* order */
