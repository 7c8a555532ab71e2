-- Sessions whose id is $id or starts with it, exact matches first (at most $limit);
-- hidden sessions (lifecycle 'tombstoned') only with $include_hidden.
-- Parameters: $workspace, $id, $limit, $include_hidden
SELECT provider, session_id, session_id = $id AS exact
FROM sessions
WHERE workspace = $workspace AND starts_with(session_id, $id)
  AND ($include_hidden OR lifecycle = 'active')
ORDER BY exact DESC, session_id, provider
LIMIT $limit
