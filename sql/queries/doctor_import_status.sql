-- Import receipts per status (running|ok|refused|failed|abandoned).
-- Parameters: $workspace
SELECT status, count(*) AS n
FROM imports
WHERE workspace = $workspace
GROUP BY status
ORDER BY status
