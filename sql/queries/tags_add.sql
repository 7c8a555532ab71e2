-- Give a session a tag (nothing changes when it has it already); returns the row added.
-- Parameters: $workspace, $provider, $session_id, $tag
INSERT OR IGNORE INTO session_tags (workspace, provider, session_id, tag, tagged_at)
VALUES ($workspace, $provider, $session_id, $tag, now())
RETURNING tag
