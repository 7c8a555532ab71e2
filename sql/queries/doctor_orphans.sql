-- Rows that point at a session or source the catalog does not hold.
-- Parameters: $workspace
SELECT
    (SELECT count(*) FROM events e
     WHERE e.workspace = $workspace
       AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.workspace = e.workspace
                       AND s.provider = e.provider AND s.session_id = e.session_id))
        AS events_without_session,
    (SELECT count(*) FROM usage u
     WHERE u.workspace = $workspace
       AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.workspace = u.workspace
                       AND s.provider = u.provider AND s.session_id = u.session_id))
        AS usage_without_session,
    (SELECT count(*) FROM events e
     WHERE e.workspace = $workspace
       AND NOT EXISTS (SELECT 1 FROM sources s WHERE s.workspace = e.workspace
                       AND s.source_id = e.source_id))
        AS events_without_source,
    (SELECT count(*) FROM usage u
     WHERE u.workspace = $workspace
       AND NOT EXISTS (SELECT 1 FROM sources s WHERE s.workspace = u.workspace
                       AND s.source_id = u.source_id))
        AS usage_without_source
