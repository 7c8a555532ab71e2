-- Release $workspace's sources listed in the registered `releasing` table: another
-- workspace may import them from now on. The workspace's own rows stay.
INSERT INTO source_releases (workspace, source_id, provider, path, released_at)
SELECT $workspace, source_id, provider, path, current_timestamp FROM releasing
ON CONFLICT DO NOTHING
