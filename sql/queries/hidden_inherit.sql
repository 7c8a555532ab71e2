-- Hiding a session hides its subtree (`sessions hide`), also the sub-agents that arrive
-- after it: a session the commit inserted (`fresh_sessions`) below a hidden one, however
-- deep, is hidden with it. Run after `upsert_sessions` while the workspace has hidden
-- sessions. Parameters: $workspace
UPDATE sessions s SET lifecycle = 'tombstoned'
FROM (
    WITH RECURSIVE up(provider, session_id, ancestor) AS (
        SELECT c.provider, c.session_id, c.parent_session_id
        FROM sessions c JOIN fresh_sessions f USING (provider, session_id)
        WHERE c.workspace = $workspace AND c.parent_session_id IS NOT NULL
        UNION
        SELECT up.provider, up.session_id, p.parent_session_id
        FROM up JOIN sessions p
          ON p.workspace = $workspace AND p.provider = up.provider
         AND p.session_id = up.ancestor
        WHERE p.lifecycle = 'active' AND p.parent_session_id IS NOT NULL
    )
    SELECT DISTINCT up.provider, up.session_id
    FROM up JOIN sessions a
      ON a.workspace = $workspace AND a.provider = up.provider AND a.session_id = up.ancestor
    WHERE a.lifecycle <> 'active'
) h
WHERE s.workspace = $workspace AND s.provider = h.provider AND s.session_id = h.session_id
  AND s.lifecycle = 'active';
