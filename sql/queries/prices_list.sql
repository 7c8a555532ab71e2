-- The prices in force (the catalog's, or with user overrides applied, theirs first): one
-- row per provider, model and price period, optionally for models whose id contains
-- $model (case-insensitive).
SELECT
    coalesce(snapshot_source, CASE WHEN provider_id = 'user' THEN 'user' END) AS source,
    provider_id,
    model,
    valid_from,
    valid_to,
    input_per_mtok,
    output_per_mtok,
    cache_read_per_mtok,
    cache_write_per_mtok,
    cache_write_1h_per_mtok,
    tier_threshold,
    input_above_per_mtok,
    output_above_per_mtok
FROM prices
WHERE $model IS NULL OR contains(lower(model), lower($model))
ORDER BY provider_id <> 'user', provider_id, model, valid_from NULLS FIRST
