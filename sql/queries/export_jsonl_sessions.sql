-- The sessions of a JSONL export in file order, each with the lines it takes (its
-- session line, its events and its calls), its events and the bytes of their texts and
-- tool inputs, from which the export cuts its chunks.
-- Parameters: $workspace, $tz, $since, $until, $provider, $project, $include_hidden
WITH e AS (
    SELECT provider, session_id, count(*) AS n,
           sum(coalesce(strlen(text), 0) + coalesce(strlen(CAST(tool_input AS VARCHAR)), 0)) AS bytes
    FROM export_events($workspace, $tz, $since, $until, $provider, $project, $include_hidden)
    GROUP BY ALL
), u AS (
    SELECT provider, session_id, count(*) AS n
    FROM report_calls($workspace, $tz, $since, $until, $provider, NULL, $project, $include_hidden, NULL)
    GROUP BY ALL
)
SELECT s.provider, s.session_id, coalesce(e.n, 0) AS events,
       1 + coalesce(e.n, 0) + coalesce(u.n, 0) AS lines, coalesce(e.bytes, 0)::BIGINT AS bytes
FROM export_sessions($workspace, $tz, $since, $until, $provider, $project, $include_hidden) s
LEFT JOIN e USING (provider, session_id)
LEFT JOIN u USING (provider, session_id)
ORDER BY s.provider, s.session_id
