-- The most recent import receipts of a workspace, newest first (times as UTC TIMESTAMP).
-- Parameters: $workspace, $limit
SELECT import_id, timezone('UTC', started_at) AS started_at,
       timezone('UTC', ended_at) AS ended_at, status, sources_seen, sources_imported,
       sources_unchanged, sources_failed, records, events, usage_rows, rejected
FROM imports
WHERE workspace = $workspace
ORDER BY import_id DESC
LIMIT $limit
