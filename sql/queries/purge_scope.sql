-- What a purge of the sessions in temp table `purge_scope` (provider, session_id) would
-- delete: per table, the rows of those sessions and a digest of their ids (never of
-- their text), so that a preview's operation id changes whenever the scope does.
-- `search_postings` and `search_docs` are the postings and numbers of the scope's
-- events in the search index; `search_withdrawn` their pending withdrawals;
-- `search_vectors` and `vector_withdrawn` their semantic vectors and pending withdrawals.
-- Parameters: $workspace
WITH scoped_events AS (
    SELECT e.event_id FROM events e SEMI JOIN purge_scope USING (provider, session_id)
    WHERE e.workspace = $workspace
), scoped_docs AS (
    SELECT d.doc FROM search_docs d SEMI JOIN scoped_events USING (event_id)
    WHERE d.workspace = $workspace
), ids (tbl, id) AS (
    SELECT 'sessions', provider || '/' || session_id || '/' || coalesce(last_import_id, 0)
    FROM sessions s SEMI JOIN purge_scope USING (provider, session_id)
    WHERE s.workspace = $workspace
    UNION ALL
    SELECT 'session_versions', provider || '/' || session_id || '/' || coalesce(last_import_id, 0)
           || '/' || coalesce(superseded_by, 0)
    FROM session_versions v SEMI JOIN purge_scope USING (provider, session_id)
    WHERE v.workspace = $workspace
    UNION ALL
    SELECT 'events', event_id FROM scoped_events
    UNION ALL
    SELECT 'usage', call_id || '/' || source_id || '/' || source_offset
    FROM usage u SEMI JOIN purge_scope USING (provider, session_id)
    WHERE u.workspace = $workspace
    UNION ALL
    SELECT 'rate_limits', provider || '/' || session_id || '/' || ts || '/' || window_kind
           || '/' || coalesce(limit_id, '')
    FROM rate_limits r SEMI JOIN purge_scope USING (provider, session_id)
    WHERE r.workspace = $workspace
    UNION ALL
    SELECT 'session_tags', provider || '/' || session_id || '/' || tag
    FROM session_tags t SEMI JOIN purge_scope USING (provider, session_id)
    WHERE t.workspace = $workspace
    UNION ALL
    SELECT 'search_docs', CAST(doc AS VARCHAR) FROM scoped_docs
    UNION ALL
    SELECT 'search_postings', term_id || '/' || doc
    FROM search_postings p SEMI JOIN scoped_docs USING (doc)
    UNION ALL
    SELECT 'search_withdrawn', w.event_id
    FROM search_withdrawn w SEMI JOIN scoped_events USING (event_id)
    WHERE w.workspace = $workspace
    UNION ALL
    SELECT 'search_vectors', v.event_id
    FROM search_vectors v SEMI JOIN scoped_events USING (event_id)
    WHERE v.workspace = $workspace
    UNION ALL
    SELECT 'vector_withdrawn', w.event_id
    FROM vector_withdrawn w SEMI JOIN scoped_events USING (event_id)
    WHERE w.workspace = $workspace
)
SELECT tbl, count(*) AS n, sha256(string_agg(id, chr(10) ORDER BY id)) AS digest
FROM ids
GROUP BY tbl
ORDER BY tbl
