-- The embedded events a semantic search may rank (agentlake.read.semantic): those of the
-- snapshot the first page pinned, passing every filter of the lexical search and the
-- lifecycle rules (written in from sql/queries/search_filters.sql), without
-- withdrawals the publish step has not applied (their vectors are stale).
-- Parameters: $ws, $snapshot, $provider, $kind, $model, $session, $since, $until,
-- $project, $include_hidden, $tag
SELECT v.event_id
FROM search_vectors v
JOIN events e ON e.workspace = $ws AND e.event_id = v.event_id
WHERE v.workspace = $ws
  AND v.import_id <= $snapshot
  AND v.event_id NOT IN (SELECT event_id FROM vector_withdrawn WHERE workspace = $ws)
  /* filters */
