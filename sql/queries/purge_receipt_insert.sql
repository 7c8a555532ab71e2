-- The receipt of a purge and the revocation of each session it purged (`purge_scope`
-- joined with the sources that held its rows, `purge_scope_sources`), in the purge's
-- transaction; the third statement returns the receipt's time.
-- Parameters: $workspace, $operation_id, $provider, $session_id, $session_ids (list),
-- $counts (JSON text), $digests (JSON text), $actor
INSERT INTO purge_revocations (workspace, provider, session_id, operation_id, source_ids, purged_at)
SELECT $workspace, p.provider, p.session_id, $operation_id, coalesce(s.source_ids, []), now()
FROM purge_scope p LEFT JOIN purge_scope_sources s USING (provider, session_id)
ON CONFLICT (workspace, provider, session_id) DO UPDATE SET
    operation_id = excluded.operation_id,
    source_ids = list_distinct(list_concat(purge_revocations.source_ids, excluded.source_ids)),
    purged_at = excluded.purged_at;
INSERT INTO purge_receipts (workspace, operation_id, provider, session_id, session_ids, counts,
                            digests, purged_at, actor)
VALUES ($workspace, $operation_id, $provider, $session_id, $session_ids, $counts::JSON,
        $digests::JSON, now(), $actor);
SELECT purged_at::TIMESTAMP FROM purge_receipts
WHERE workspace = $workspace AND operation_id = $operation_id
