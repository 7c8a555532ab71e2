-- Set the lifecycle of the archived versions of sessions $ids, which the later pages of
-- a listing begun before an import read (`session_versions`): a hidden session leaves
-- every page.
-- Parameters: $workspace, $provider, $ids (VARCHAR[]), $lifecycle
UPDATE session_versions SET lifecycle = $lifecycle
WHERE workspace = $workspace AND provider = $provider
  AND list_contains(CAST($ids AS VARCHAR[]), session_id)
