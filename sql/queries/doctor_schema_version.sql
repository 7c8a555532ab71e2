-- The catalog's schema version (the highest migration applied).
SELECT max(version) FROM schema_version
