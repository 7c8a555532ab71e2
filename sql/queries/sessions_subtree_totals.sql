-- The calls of a subtree's sessions (`/* sessions */`, a list of constants the scan of
-- `usage` prunes by), summed apart for the session itself (`own`) and the others.
-- Parameters: $workspace, $provider, $session_id
SELECT session_id = $session_id               AS own,
       count(*)                               AS calls,
       sum(COLUMNS('_tokens$'))::BIGINT       -- input_tokens … total_tokens, by name
FROM usage
WHERE workspace = $workspace AND provider = $provider AND session_id IN (/* sessions */)
GROUP BY ALL
