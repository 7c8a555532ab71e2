-- One session's tags, sorted.
-- Parameters: $workspace, $provider, $session_id
SELECT tag FROM session_tags
WHERE workspace = $workspace AND provider = $provider AND session_id = $session_id
ORDER BY tag
