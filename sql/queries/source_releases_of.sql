-- The ids of the sources $workspace released.
SELECT source_id FROM source_releases WHERE workspace = $workspace
