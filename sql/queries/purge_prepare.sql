-- Before a purge deletes anything: the events of the sessions in temp table `purge_scope`
-- (`gone_events`, whose postings search_index_remove.sql drops next) and the sources
-- that hold rows of each session (`purge_scope_sources`, kept in its revocation).
-- Parameters: $workspace
CREATE OR REPLACE TEMP TABLE gone_events AS
SELECT e.event_id FROM events e SEMI JOIN purge_scope USING (provider, session_id)
WHERE e.workspace = $workspace;
CREATE OR REPLACE TEMP TABLE purge_scope_sources AS
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
