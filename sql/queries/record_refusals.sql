-- Store a run's refusals (`run_refusals`: source_id, provider, path, code, message).
-- Statement 1 lists the sources refused anew; the caller then runs statement 2 (only
-- after a complete run: forget the refusals of its providers' sources that are fine now)
-- and statement 3 (upsert).
SELECT r.source_id
FROM run_refusals r
LEFT JOIN refusals o ON o.workspace = $workspace AND o.source_id = r.source_id
WHERE o.source_id IS NULL OR o.code <> r.code OR o.message IS DISTINCT FROM r.message;
DELETE FROM refusals
WHERE workspace = $workspace AND list_contains($providers, provider)
  AND source_id NOT IN (SELECT source_id FROM run_refusals);
INSERT INTO refusals AS o BY NAME
SELECT $workspace AS workspace, source_id, provider, path, code, message,
       $import_id AS first_import_id, $import_id AS last_import_id
FROM run_refusals
ON CONFLICT (workspace, source_id) DO UPDATE SET
    first_import_id = CASE WHEN o.code = excluded.code
                            AND o.message IS NOT DISTINCT FROM excluded.message
                           THEN o.first_import_id ELSE excluded.first_import_id END,
    path = excluded.path, code = excluded.code, message = excluded.message,
    last_import_id = excluded.last_import_id;
