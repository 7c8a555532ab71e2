-- The embedded events a semantic search may rank (agentlake.read.semantic): those of the
-- snapshot the first page pinned, passing every filter of the lexical search and the
-- lifecycle rules (written in from sql/queries/search_lifecycle.sql), without
-- withdrawals the publish step has not applied (their vectors are stale).
-- Parameters: $ws, $snapshot, $provider, $kind, $model, $session, $since, $until,
-- $project, $include_hidden, $tag
SELECT v.event_id
FROM search_vectors v
JOIN events e ON e.workspace = $ws AND e.event_id = v.event_id
WHERE v.workspace = $ws
  AND v.import_id <= $snapshot
  AND v.event_id NOT IN (SELECT event_id FROM vector_withdrawn WHERE workspace = $ws)
  AND ($provider IS NULL OR e.provider = $provider)
  AND ($kind IS NULL OR e.kind = $kind)
  AND ($model IS NULL OR e.model = $model)
  AND ($session IS NULL OR starts_with(e.session_id, $session))
  AND ($since IS NULL OR e.ts >= $since::TIMESTAMP AT TIME ZONE 'UTC')
  AND ($until IS NULL OR e.ts < $until::TIMESTAMP AT TIME ZONE 'UTC')
  AND ($project IS NULL OR EXISTS (
        SELECT 1 FROM sessions x
        WHERE x.workspace = $ws AND x.provider = e.provider AND x.session_id = e.session_id
          AND contains(lower(x.project_path), lower($project))))
  /* lifecycle */
