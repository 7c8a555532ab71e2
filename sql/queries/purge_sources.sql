-- The sources that hold rows of each session in temp table `purge_scope`: a revocation
-- keeps them, so that `import --allow-purged` can read them again.
-- Parameters: $workspace
SELECT provider, session_id, list(DISTINCT source_id ORDER BY source_id) AS source_ids
FROM (
    SELECT provider, session_id, source_id FROM events e SEMI JOIN purge_scope USING (provider, session_id)
    WHERE e.workspace = $workspace
    UNION ALL
    SELECT provider, session_id, source_id FROM usage u SEMI JOIN purge_scope USING (provider, session_id)
    WHERE u.workspace = $workspace
    UNION ALL
    SELECT provider, session_id, source_id FROM rate_limits r SEMI JOIN purge_scope USING (provider, session_id)
    WHERE r.workspace = $workspace
)
GROUP BY ALL
