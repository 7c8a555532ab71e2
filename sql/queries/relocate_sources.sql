-- Point the checkpoints of $workspace's relocated sources (the registered `moves`
-- table) at their new files. Ids, offsets, digests and sizes stay: the next import
-- finds each file unchanged where it now is and reads nothing.
UPDATE sources AS s
SET path = m.new_path, device = m.device, inode = m.inode, mtime_ns = m.mtime_ns
FROM moves AS m
WHERE s.workspace = $workspace AND s.source_id = m.source_id
