-- Sources of $workspace whose path is one of $paths (a relocation's targets), other
-- than the ones being moved ($moving).
SELECT source_id, provider, path
FROM sources
WHERE workspace = $workspace
  AND path IN (SELECT unnest($paths))
  AND source_id NOT IN (SELECT unnest($moving))
ORDER BY path
LIMIT 1
