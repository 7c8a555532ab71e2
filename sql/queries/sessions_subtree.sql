-- One session's place in its tree of parent links (`session_rollup`) and its token
-- totals: `own` (its calls) and `subtree` (its calls and every descendant's, each call
-- once: a session is in the subtree when its lineage names this one). `sessions` counts
-- the subtree's sessions, this one included; `depth` is 0 for a root.
-- Parameters: $workspace, $provider, $session_id
WITH tree AS MATERIALIZED (
    SELECT session_id, root_session_id, depth, lineage
    FROM session_rollup
    WHERE workspace = $workspace AND provider = $provider
),
me AS (
    SELECT root_session_id, depth, (SELECT count(*) FROM tree t WHERE list_contains(t.lineage, $session_id)) AS sessions
    FROM tree WHERE session_id = $session_id
),
picked AS (
    SELECT u.session_id = $session_id AS own, COLUMNS('_tokens$')
    FROM usage u
    WHERE u.workspace = $workspace AND u.provider = $provider
      AND u.session_id IN (SELECT session_id FROM tree WHERE list_contains(lineage, $session_id))
)
SELECT s.scope, m.root_session_id, m.depth, m.sessions,
       count(p.own)                                 AS calls,
       coalesce(sum(COLUMNS('_tokens$')), 0)::BIGINT  -- input_tokens … total_tokens, by name
FROM (VALUES ('own'), ('subtree')) s(scope)
CROSS JOIN me m
LEFT JOIN picked p ON s.scope = 'subtree' OR p.own
GROUP BY ALL
ORDER BY s.scope
