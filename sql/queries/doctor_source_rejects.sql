-- Rejected spans per reason for some sources (content-free).
-- Parameters: $workspace, $source_ids (VARCHAR[])
SELECT source_id, reason, count(*) AS rejects
FROM rejects
WHERE workspace = $workspace AND list_contains($source_ids, source_id)
GROUP BY ALL
ORDER BY source_id, rejects DESC, reason
