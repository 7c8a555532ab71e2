-- The sessions a commit is about to insert, taken before `upsert_sessions` (for
-- `hidden_inherit`). Run only while the workspace has hidden sessions.
-- Parameters: $workspace
CREATE OR REPLACE TEMP TABLE fresh_sessions AS
SELECT k.provider, k.session_id
FROM (SELECT provider, session_id FROM batch_sessions
      UNION SELECT provider, session_id FROM new_events) k
WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.workspace = $workspace
                  AND s.provider = k.provider AND s.session_id = k.session_id);
