-- Set the lifecycle ('active' | 'tombstoned') of sessions $ids of one provider
-- (`lifecycle_set_versions` does the same to their archived versions).
-- Parameters: $workspace, $provider, $ids (VARCHAR[]), $lifecycle
UPDATE sessions SET lifecycle = $lifecycle
WHERE workspace = $workspace AND provider = $provider
  AND list_contains(CAST($ids AS VARCHAR[]), session_id)
