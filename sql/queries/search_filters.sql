-- A fragment of every ranked search (agentlake.read.search `_RANKED_FILTERED`, and
-- sql/queries/semantic_eligible.sql): the search's filters on the matching event `e`,
-- then the lifecycle and tag filters, checked at query time against the small
-- `sessions` and `session_tags` tables rather than by rewriting postings or vectors, so
-- hiding, restoring and tagging a session never touch the search index.
-- Parameters: $ws, $provider, $kind, $model, $session, $since, $until, $project,
-- $include_hidden, $tag
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
      AND ($include_hidden OR NOT EXISTS (
            SELECT 1 FROM sessions h
            WHERE h.workspace = $ws AND h.provider = e.provider AND h.session_id = e.session_id
              AND h.lifecycle <> 'active'))
      AND ($tag IS NULL OR EXISTS (
            SELECT 1 FROM session_tags g
            WHERE g.workspace = $ws AND g.provider = e.provider AND g.session_id = e.session_id
              AND g.tag = $tag))
