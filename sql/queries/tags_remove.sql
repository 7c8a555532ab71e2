-- Take a tag off a session (nothing changes when it did not have it).
-- Parameters: $workspace, $provider, $session_id, $tag
DELETE FROM session_tags
WHERE workspace = $workspace AND provider = $provider AND session_id = $session_id
  AND tag = $tag
