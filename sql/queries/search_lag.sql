-- How far the search index lags behind the events of a workspace: `unindexed`, the
-- events above its watermark (`/* above */`, the watermark written in as constants), and
-- `pending`, the withdrawals the publish step has not applied.
-- Parameters: $workspace
SELECT
    (SELECT count(*) FROM events e WHERE e.workspace = $workspace AND /* above */) AS unindexed,
    (SELECT count(DISTINCT event_id) FROM search_withdrawn WHERE workspace = $workspace) AS pending
