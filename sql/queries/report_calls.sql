-- The calls a report covers, as a table macro every report query reads from: this
-- workspace's rows of `usage_costed` inside the filters, with the call's local time in
-- zone `tz` and its session's project. Bounds are dates in `tz`, inclusive; a NULL filter
-- is open. `model_part` and `project_part` match case-insensitive substrings.
CREATE OR REPLACE TEMP MACRO report_calls(ws, tz, since, until, prov, model_part, project_part) AS TABLE
SELECT
    u.*,
    timezone(tz, u.ts)  AS local_ts,
    s.project_path
FROM usage_costed u
LEFT JOIN sessions s
  ON s.workspace = u.workspace AND s.provider = u.provider AND s.session_id = u.session_id
WHERE u.workspace = ws
  AND (prov IS NULL OR u.provider = prov)
  AND (since IS NULL OR CAST(timezone(tz, u.ts) AS DATE) >= since)
  AND (until IS NULL OR CAST(timezone(tz, u.ts) AS DATE) <= until)
  AND (model_part IS NULL OR contains(lower(coalesce(u.model, '')), lower(model_part)))
  AND (project_part IS NULL OR contains(lower(coalesce(s.project_path, '')), lower(project_part)))
