-- A fragment of the ranked search (agentlake.read.search, `_RANKED_FILTERED`): the
-- lifecycle and tag filters, checked at query time against the small `sessions` and
-- `session_tags` tables rather than by rewriting postings, so hiding, restoring and
-- tagging a session never touch the search index. `e` is the matching event.
-- Parameters: $ws, $include_hidden, $tag
      AND ($include_hidden OR NOT EXISTS (
            SELECT 1 FROM sessions h
            WHERE h.workspace = $ws AND h.provider = e.provider AND h.session_id = e.session_id
              AND h.lifecycle <> 'active'))
      AND ($tag IS NULL OR EXISTS (
            SELECT 1 FROM session_tags g
            WHERE g.workspace = $ws AND g.provider = e.provider AND g.session_id = e.session_id
              AND g.tag = $tag))
