-- The workspace other than $workspace that holds each of the given (provider, path)
-- pairs ($providers and $paths, element by element): one with a checkpoint of it that
-- it did not release. When several hold it (catalogs from before sources were bound),
-- the first by name.
SELECT s.provider, s.path, min(s.workspace) AS owner
FROM sources AS s
JOIN (SELECT unnest($providers) AS provider, unnest($paths) AS path) AS k
  ON s.provider = k.provider AND s.path = k.path
WHERE s.workspace <> $workspace
  AND NOT EXISTS (
      SELECT 1 FROM source_releases AS r
      WHERE r.workspace = s.workspace AND r.source_id = s.source_id
  )
GROUP BY s.provider, s.path
