-- One session's place in its tree of parent links (`session_rollup`): its root, its
-- depth (0 for a root) and the sessions of its subtree (every session whose lineage
-- names it, itself included), sorted; in one pass over the view (NULLs when the session
-- is not in it). `sessions_subtree_totals` sums their calls.
-- Parameters: $workspace, $provider, $session_id
SELECT any_value(root_session_id) FILTER (session_id = $session_id)             AS root_session_id,
       any_value(depth) FILTER (session_id = $session_id)                       AS depth,
       list(session_id ORDER BY session_id) FILTER (list_contains(lineage, $session_id)) AS subtree
FROM session_rollup
WHERE workspace = $workspace AND provider = $provider
