-- One content-free audit row of a mutation, numbered after the catalog's last (one
-- writer at a time numbers them: the file's lock, a lake's serialized commits); the
-- second statement returns its id.
-- Parameters: $workspace, $operation, $actor, $provider, $session_id, $counts (JSON text
-- or NULL), $digest
INSERT INTO audit (audit_id, workspace, operation, actor, provider, session_id, counts, digest, done_at)
SELECT coalesce(max(audit_id), 0) + 1, $workspace, $operation, $actor, $provider, $session_id,
       $counts::JSON, $digest, now()
FROM audit;
SELECT max(audit_id) FROM audit
