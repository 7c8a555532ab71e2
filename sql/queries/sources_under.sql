-- The sources of $workspace at $path or under it (`$path/…`), with what relocating
-- one checks and whether the workspace released it, in path order.
SELECT s.source_id, s.provider, s.path, s.position_kind, s.device, s.inode, s.size_bytes,
       s.mtime_ns, s.committed_offset, s.prefix_digest,
       EXISTS (
           SELECT 1 FROM source_releases AS r
           WHERE r.workspace = s.workspace AND r.source_id = s.source_id
       ) AS released
FROM sources AS s
WHERE s.workspace = $workspace AND (s.path = $path OR starts_with(s.path, $under))
ORDER BY s.path, s.provider
