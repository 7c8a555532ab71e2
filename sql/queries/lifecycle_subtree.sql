-- The sessions a lifecycle change (hide, restore) applies to: the named session and
-- every session under it in its tree of parent links (`session_rollup`: subagent
-- transcripts, spawned threads, forks), with their lifecycle and their rows in `events`
-- and `usage`, sorted by id.
-- Parameters: $workspace, $provider, $session_id
WITH subtree AS (
    SELECT r.session_id
    FROM session_rollup r
    WHERE r.workspace = $workspace AND r.provider = $provider
      AND list_contains(r.lineage, $session_id)
)
SELECT s.session_id, s.lifecycle,
       (SELECT count(*) FROM events e
        WHERE e.workspace = $workspace AND e.provider = $provider
          AND e.session_id = s.session_id) AS events,
       (SELECT count(*) FROM usage u
        WHERE u.workspace = $workspace AND u.provider = $provider
          AND u.session_id = s.session_id) AS usage
FROM sessions s
SEMI JOIN subtree t ON t.session_id = s.session_id
WHERE s.workspace = $workspace AND s.provider = $provider
ORDER BY s.session_id
