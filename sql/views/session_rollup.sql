-- Every session placed in the tree its parent links make (Claude Code subagent
-- transcripts, Codex forks and spawned threads, Gemini CLI subagents, Cursor subagent
-- composers all set `sessions.parent_session_id`): one row per session with the root of
-- its tree, its depth below that root and its lineage (the root first, the session
-- last). A session whose parent is not in the catalog is its own root. The walk up from
-- each session is bounded: it stops at a session it has already passed (a loop of
-- parent links: the loop's smallest session id becomes the root of every session in and
-- under the loop, its own parent link ignored) and after 64 links (a deeper session is
-- rooted at its 64th ancestor). Every session has exactly one row, so a total over a
-- root's sessions counts each call once.
--
-- Most sessions have no parent: they are their own roots and skip the walk, which starts
-- only from the sessions that name one (the window that finds each walk's end then
-- orders a few rows, not every session).
CREATE VIEW session_rollup AS
WITH RECURSIVE walk (workspace, provider, session_id, up, next_parent, depth) AS (
    SELECT workspace, provider, session_id, [session_id], parent_session_id, 0
    FROM sessions
    WHERE parent_session_id IS NOT NULL
    UNION ALL
    SELECT w.workspace, w.provider, w.session_id, list_append(w.up, p.session_id),
           p.parent_session_id, w.depth + 1
    FROM walk w
    JOIN sessions p
      ON p.workspace = w.workspace AND p.provider = w.provider AND p.session_id = w.next_parent
    WHERE w.depth < 64 AND NOT list_contains(w.up, p.session_id)
),
-- The last step of each walk: `up` runs from the session to where the walk stopped,
-- `loop_at` is where its next parent already is in it (a loop), else NULL.
ends AS (
    SELECT workspace, provider, session_id, up, list_position(up, next_parent) AS loop_at
    FROM walk
    QUALIFY row_number() OVER (PARTITION BY workspace, provider, session_id ORDER BY depth DESC) = 1
),
rooted AS (
    SELECT workspace, provider, session_id, up,
           CASE WHEN loop_at IS NULL THEN up[-1] ELSE list_min(up[loop_at:]) END AS root_session_id
    FROM ends
)
SELECT workspace, provider, session_id AS root_session_id, session_id, 0 AS depth,
       [session_id] AS lineage
FROM sessions
WHERE parent_session_id IS NULL
UNION ALL
SELECT workspace, provider, root_session_id, session_id,
       list_position(up, root_session_id) - 1 AS depth,
       list_reverse(up[:list_position(up, root_session_id)]) AS lineage
FROM rooted;
