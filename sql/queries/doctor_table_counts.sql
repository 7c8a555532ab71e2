-- Rows per catalog table in one workspace (`prices` is shared by every workspace).
-- Parameters: $workspace
SELECT name, n FROM (
    SELECT 1 AS ord, 'sources' AS name, count(*) AS n FROM sources WHERE workspace = $workspace
    UNION ALL SELECT 2, 'sessions', count(*) FROM sessions WHERE workspace = $workspace
    UNION ALL SELECT 3, 'events', count(*) FROM events WHERE workspace = $workspace
    UNION ALL SELECT 4, 'usage', count(*) FROM usage WHERE workspace = $workspace
    UNION ALL SELECT 5, 'imports', count(*) FROM imports WHERE workspace = $workspace
    UNION ALL SELECT 6, 'rejects', count(*) FROM rejects WHERE workspace = $workspace
    UNION ALL SELECT 7, 'prices', count(*) FROM prices
)
ORDER BY ord
