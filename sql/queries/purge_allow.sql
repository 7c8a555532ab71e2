-- `import --allow-purged`: the sessions a commit writes are no longer revoked. Each
-- revocation dropped leaves an audit row (operation 'release', the purge's operation id
-- as its digest; the columns of audit_insert.sql), in the commit's transaction.
-- Parameters: $workspace, $actor
CREATE OR REPLACE TEMP TABLE released AS
SELECT r.provider, r.session_id, r.operation_id
FROM purge_revocations r
WHERE r.workspace = $workspace
  AND (r.provider, r.session_id) IN (SELECT provider, session_id FROM batch_sessions
                                     UNION SELECT provider, session_id FROM batch_events);
INSERT INTO audit (audit_id, workspace, operation, actor, provider, session_id, counts, digest, done_at)
SELECT (SELECT coalesce(max(audit_id), 0) FROM audit) + row_number() OVER (ORDER BY provider, session_id),
       $workspace, 'release', $actor, provider, session_id, NULL, operation_id, now()
FROM released ORDER BY provider, session_id;
DELETE FROM purge_revocations r
WHERE r.workspace = $workspace
  AND (r.provider, r.session_id) IN (SELECT provider, session_id FROM released)
