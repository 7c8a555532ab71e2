-- Rejected spans per provider and reason (rejects are content-free: offsets and lengths).
-- Parameters: $workspace, $providers (VARCHAR[] or NULL for all)
SELECT coalesce(s.provider, 'unknown') AS provider, r.reason, count(*) AS rejects,
       sum(r.length) AS bytes
FROM rejects r
LEFT JOIN sources s ON s.workspace = r.workspace AND s.source_id = r.source_id
WHERE r.workspace = $workspace
  AND ($providers IS NULL OR list_contains($providers, s.provider))
GROUP BY ALL
ORDER BY provider, rejects DESC, reason
