-- Ranked full-text search (BM25 over events.text) within one workspace.
SELECT e.event_id, e.provider, e.session_id, timezone($tz, e.ts) AS ts, e.kind, e.text, e.score
FROM (
    SELECT *, fts_main_events.match_bm25(event_id, $query) AS score
    FROM events
    WHERE workspace = $workspace
      AND ($provider IS NULL OR provider = $provider)
      AND ($kind IS NULL OR kind = $kind)
) e
WHERE e.score IS NOT NULL
ORDER BY e.score DESC, e.event_id
LIMIT $limit
