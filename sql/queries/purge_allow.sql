-- `import --allow-purged`: the sessions a commit writes are no longer revoked.
-- Parameters: $workspace
DELETE FROM purge_revocations r
WHERE r.workspace = $workspace
  AND (r.provider, r.session_id) IN (SELECT provider, session_id FROM batch_sessions
                                     UNION SELECT provider, session_id FROM batch_events)
