-- Token totals of one session by model (its deduplicated calls), largest first.
-- Parameters: $workspace, $provider, $session_id
SELECT coalesce(model, '<unknown>')          AS model,
       count(*)                              AS calls,
       sum(input_tokens)::BIGINT             AS input_tokens,
       sum(cache_write_tokens)::BIGINT       AS cache_write_tokens,
       sum(cache_write_1h_tokens)::BIGINT    AS cache_write_1h_tokens,
       sum(cache_read_tokens)::BIGINT        AS cache_read_tokens,
       sum(output_tokens)::BIGINT            AS output_tokens,
       sum(reasoning_tokens)::BIGINT         AS reasoning_tokens,
       sum(total_tokens)::BIGINT             AS total_tokens
FROM usage
WHERE workspace = $workspace AND provider = $provider AND session_id = $session_id
GROUP BY 1
ORDER BY total_tokens DESC, model
