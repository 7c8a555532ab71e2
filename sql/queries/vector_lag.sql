-- How far a workspace's semantic vectors lag: embeddable events (prompts, replies and
-- summaries with text) above the vector watermark (`/* above */`, SQL over an event `e`,
-- written in by agentlake.load.vectors), and withdrawals not yet applied.
-- Parameters: $workspace, $kinds (agentlake.load.vectors.EMBEDDED_KINDS)
SELECT
    (SELECT count(*) FROM events e
     WHERE e.workspace = $workspace AND e.kind IN (SELECT unnest($kinds))
       AND e.text IS NOT NULL AND e.text <> '' AND /* above */) AS unembedded,
    (SELECT count(DISTINCT event_id) FROM vector_withdrawn WHERE workspace = $workspace) AS pending
