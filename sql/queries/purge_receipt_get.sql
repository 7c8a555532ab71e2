-- A workspace's purge receipt by operation id ($operation_id) or, when that is NULL, the
-- newest one that purged a session whose id is $session_id or starts with it (the session
-- named or one of its subtree).
-- Parameters: $workspace, $operation_id, $session_id
SELECT operation_id, provider, session_id, session_ids, counts, digests, purged_at::TIMESTAMP, actor
FROM purge_receipts
WHERE workspace = $workspace
  AND CASE WHEN $operation_id IS NOT NULL THEN operation_id = $operation_id
           ELSE position(chr(10) || $session_id IN chr(10) || array_to_string(session_ids, chr(10))) > 0
      END
ORDER BY purged_at DESC
LIMIT 1
