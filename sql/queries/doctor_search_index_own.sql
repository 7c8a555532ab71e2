-- agentlake's own index against events.text, within one workspace. An event is expected
-- in the index when its text has at least one word of 2 to 40 letters or digits (the
-- index's tokens) and the publish step has reached it: `lag` counts the events it has
-- not (above the watermark, or withdrawn and not yet indexed again), and they are
-- neither `missing` nor, while their withdrawal is pending, `dangling` (indexed events
-- that no longer exist).
-- Parameters: $workspace
WITH w AS (
    SELECT coalesce(max(import_id), -1) AS import_id, coalesce(max(event_id), '') AS event_id,
           coalesce(max(through_import), -1) AS through_import
    FROM search_watermark WHERE workspace = $workspace
), gone AS (
    SELECT DISTINCT event_id FROM search_withdrawn WHERE workspace = $workspace
), texts AS (
    SELECT e.event_id, concat_ws(' ', e.text, CAST(e.tool_input AS VARCHAR)) AS text,
           ((e.import_id > w.through_import AND (e.import_id > w.import_id
             OR (e.import_id = w.import_id AND e.event_id > w.event_id)))
            OR e.event_id IN (SELECT event_id FROM gone)) AS lagging
    FROM events e, w
    WHERE e.workspace = $workspace AND (e.text IS NOT NULL OR e.tool_input IS NOT NULL)
), indexed AS (
    SELECT DISTINCT d.event_id
    FROM search_postings p JOIN search_docs d ON d.doc = p.doc
    WHERE d.workspace = $workspace
)
SELECT
    (SELECT count(*) FROM texts) AS events_with_text,
    (SELECT count(*) FROM texts t SEMI JOIN indexed i USING (event_id) WHERE NOT t.lagging) AS indexed,
    (SELECT count(*) FROM texts t ANTI JOIN indexed i USING (event_id)
     WHERE NOT t.lagging
       AND regexp_matches(lower(t.text), '(^|[^a-z0-9])[a-z0-9]{2,40}([^a-z0-9]|$)')) AS missing,
    (SELECT count(*) FROM indexed i ANTI JOIN texts t USING (event_id)
     WHERE i.event_id NOT IN (SELECT event_id FROM gone)) AS dangling,
    (SELECT count(*) FROM indexed) AS indexed_docs,
    (SELECT coalesce(sum(docs), 0) FROM search_state WHERE workspace = $workspace) AS counted_docs,
    (SELECT count(*) FROM texts WHERE lagging) AS lag
