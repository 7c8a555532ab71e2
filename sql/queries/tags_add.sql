-- Give a session a tag (nothing changes when it has it already).
-- Parameters: $workspace, $provider, $session_id, $tag
INSERT OR IGNORE INTO session_tags (workspace, provider, session_id, tag, tagged_at)
VALUES ($workspace, $provider, $session_id, $tag, now())
