-- Rows of purged sessions a commit withheld (`batch_withheld`: provider, session_id,
-- operation_id, source_id, rows): each such session stays revoked, the sources it was
-- read from added to its revocation (`import --allow-purged` re-reads them), and a new
-- session withheld because its parent is purged is revoked under the parent's purge.
-- Parameters: $workspace
INSERT INTO purge_revocations AS r (workspace, provider, session_id, operation_id, source_ids, purged_at)
SELECT $workspace, provider, session_id, any_value(operation_id), list(DISTINCT source_id ORDER BY source_id), now()
FROM batch_withheld
GROUP BY provider, session_id
ON CONFLICT (workspace, provider, session_id) DO UPDATE SET
    source_ids = list_sort(list_distinct(list_concat(r.source_ids, excluded.source_ids)))
