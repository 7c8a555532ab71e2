-- Sources the catalog records as refused (with the one-line reason), optionally only
-- for some providers. Parameters: $workspace, $providers (VARCHAR[] or NULL for all)
SELECT source_id, provider, path, continuity, refusal
FROM sources
WHERE workspace = $workspace
  AND status = 'refused'
  AND ($providers IS NULL OR list_contains($providers, provider))
ORDER BY provider, path
