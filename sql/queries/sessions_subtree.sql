-- One session's place in its tree of parent links (`session_rollup`): its root, its
-- depth (0 for a root) and the sessions of its subtree (every session whose lineage
-- names it, itself included; hidden ones only with $include_hidden), sorted; in one
-- pass over the view (NULLs when the session is not in it). `sessions_subtree_totals`
-- sums their calls.
-- Parameters: $workspace, $provider, $session_id, $include_hidden
SELECT any_value(r.root_session_id) FILTER (r.session_id = $session_id)          AS root_session_id,
       any_value(r.depth) FILTER (r.session_id = $session_id)                    AS depth,
       list(r.session_id ORDER BY r.session_id) FILTER (
           list_contains(r.lineage, $session_id)
           AND ($include_hidden OR r.session_id = $session_id OR s.lifecycle = 'active')
       )                                                                          AS subtree
FROM session_rollup r
JOIN sessions s
  ON s.workspace = r.workspace AND s.provider = r.provider AND s.session_id = r.session_id
WHERE r.workspace = $workspace AND r.provider = $provider
