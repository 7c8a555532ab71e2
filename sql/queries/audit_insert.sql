-- One content-free audit row of a mutation; returns its id.
-- Parameters: $workspace, $operation, $actor, $provider, $session_id, $counts (JSON text
-- or NULL), $digest
INSERT INTO audit (workspace, operation, actor, provider, session_id, counts, digest, done_at)
VALUES ($workspace, $operation, $actor, $provider, $session_id, $counts::JSON, $digest, now())
RETURNING audit_id;
