-- What a session listing binds its cursor to: the catalog's cursor secret and the
-- snapshot, the workspace's newest import (no import is in flight while a reader holds
-- the catalog: the writer lock excludes readers). Parameters: $workspace
SELECT (SELECT value FROM settings WHERE key = 'cursor_secret') AS secret,
       (SELECT coalesce(max(import_id), 0) FROM imports WHERE workspace = $workspace) AS snapshot
