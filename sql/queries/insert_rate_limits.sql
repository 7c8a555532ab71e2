-- The batch's rate-limit snapshots not yet in the catalog. A snapshot's identity is its
-- session, time, limit and window (never the import or the file), so a re-read or an
-- archived copy of a transcript adds nothing; only the batch's sessions can hold one
-- (`/* sessions */`, a list of constants the scan prunes by).
-- Parameters: $workspace, $import_id
INSERT INTO rate_limits BY NAME
SELECT $workspace AS workspace, b.provider, b.session_id, b.ts, b.limit_id, b.window_kind,
       b.used_percent, b.window_minutes, b.resets_at, b.plan_type, b.source_id,
       b.source_offset, $import_id AS import_id
FROM batch_rate_limits b
WHERE NOT EXISTS (
    SELECT 1 FROM rate_limits r
    WHERE r.workspace = $workspace
      AND r.session_id IN (/* sessions */)
      AND r.provider = b.provider AND r.session_id = b.session_id AND r.ts = b.ts
      AND r.window_kind = b.window_kind AND r.limit_id IS NOT DISTINCT FROM b.limit_id
);
