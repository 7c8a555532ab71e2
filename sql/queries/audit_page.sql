-- One page of a workspace's audit rows, newest first, after the keyset position $before
-- (an audit_id; NULL for the first page), optionally of one operation.
-- Parameters: $workspace, $before, $operation, $limit
SELECT audit_id, operation, actor, provider, session_id, counts::VARCHAR AS counts, digest,
       strftime(done_at AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%S.%gZ') AS done_at
FROM audit
WHERE workspace = $workspace
  AND ($before IS NULL OR audit_id < $before)
  AND ($operation IS NULL OR operation = $operation)
ORDER BY audit_id DESC
LIMIT $limit
