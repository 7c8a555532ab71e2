-- agentlake's own index against events.text, within one workspace. An event is expected
-- in the index when its text has at least one word of 2 to 40 letters or digits (the
-- index's tokens); `dangling` counts indexed events that no longer exist.
-- Parameters: $workspace
WITH texts AS (
    SELECT event_id, concat_ws(' ', text, CAST(tool_input AS VARCHAR)) AS text FROM events
    WHERE workspace = $workspace AND (text IS NOT NULL OR tool_input IS NOT NULL)
), indexed AS (
    SELECT DISTINCT d.event_id
    FROM search_postings p JOIN search_docs d ON d.doc = p.doc
    WHERE d.workspace = $workspace
)
SELECT
    (SELECT count(*) FROM texts) AS events_with_text,
    (SELECT count(*) FROM texts t SEMI JOIN indexed i USING (event_id)) AS indexed,
    (SELECT count(*) FROM texts t ANTI JOIN indexed i USING (event_id)
     WHERE regexp_matches(lower(t.text), '(^|[^a-z0-9])[a-z0-9]{2,40}([^a-z0-9]|$)')) AS missing,
    (SELECT count(*) FROM indexed i ANTI JOIN texts t USING (event_id)) AS dangling,
    (SELECT count(*) FROM indexed) AS indexed_docs,
    (SELECT coalesce(sum(docs), 0) FROM search_state WHERE workspace = $workspace) AS counted_docs
