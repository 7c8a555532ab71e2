-- Sessions whose id is $id or starts with it, exact matches first (at most $limit).
-- Parameters: $workspace, $id, $limit
SELECT provider, session_id, session_id = $id AS exact
FROM sessions
WHERE workspace = $workspace AND starts_with(session_id, $id)
ORDER BY exact DESC, session_id, provider
LIMIT $limit
