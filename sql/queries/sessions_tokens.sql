-- Token totals of one session by model (its deduplicated calls), largest first.
-- Parameters: $workspace, $provider, $session_id
SELECT coalesce(model, '<unknown>')          AS model,
       count(*)                              AS calls,
       sum(COLUMNS('_tokens$'))::BIGINT      -- input_tokens … total_tokens, by name
FROM usage
WHERE workspace = $workspace AND provider = $provider AND session_id = $session_id
GROUP BY 1
ORDER BY total_tokens DESC, model
