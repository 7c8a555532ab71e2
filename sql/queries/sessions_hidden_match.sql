-- Whether a hidden session of the workspace has the id $id or one starting with it (to
-- say so when a read that leaves hidden sessions out does not find it).
-- Parameters: $workspace, $id
SELECT count(*) > 0 FROM sessions
WHERE workspace = $workspace AND starts_with(session_id, $id) AND lifecycle <> 'active'
