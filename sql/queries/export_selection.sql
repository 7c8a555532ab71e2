-- What an export (`agentlake export parquet|jsonl`) covers, as table macros over one
-- workspace; the calls are the `report_calls` macro's (defined first on the connection),
-- so a filter means in an export what it means in a report. Bounds are dates in zone
-- `arg_tz`, inclusive; a NULL filter is open. Hidden sessions (`lifecycle <> 'active'`)
-- are left out unless `arg_hidden`.
--
-- * export_events: the events of the selected sessions whose time is within the
--   bounds (an event without a time only when no bound is given);
-- * export_sessions: the sessions matching provider, project and lifecycle that have
--   an exported event or call; with no time bound, every such session (also those
--   without events);
-- * export_rejects: the rejects of the workspace's sources of the provider (rejects
--   have no time and no session: the time and project bounds do not apply), with
--   their source's provider and path and the start of the import that recorded them.
-- The parameters are prefixed so they can never capture a column of the tables read.
CREATE OR REPLACE TEMP MACRO export_session_keys(arg_ws, arg_prov, arg_project_part, arg_hidden) AS TABLE
SELECT s.provider, s.session_id
FROM sessions s
WHERE s.workspace = arg_ws
  AND (arg_prov IS NULL OR s.provider = arg_prov)
  AND (arg_project_part IS NULL
       OR contains(lower(coalesce(s.project_path, '')), lower(arg_project_part)))
  AND (arg_hidden OR s.lifecycle = 'active');

CREATE OR REPLACE TEMP MACRO export_events(arg_ws, arg_tz, arg_since, arg_until, arg_prov, arg_project_part, arg_hidden) AS TABLE
SELECT e.*
FROM events e
WHERE e.workspace = arg_ws
  AND (arg_prov IS NULL OR e.provider = arg_prov)
  AND (arg_since IS NULL OR e.ts >= timezone(arg_tz, CAST(arg_since AS TIMESTAMP)))
  AND (arg_until IS NULL OR e.ts < timezone(arg_tz, CAST(arg_until AS TIMESTAMP) + INTERVAL 1 DAY))
  AND (e.provider, e.session_id) IN (
        SELECT (k.provider, k.session_id)
        FROM export_session_keys(arg_ws, arg_prov, arg_project_part, arg_hidden) k);

CREATE OR REPLACE TEMP MACRO export_sessions(arg_ws, arg_tz, arg_since, arg_until, arg_prov, arg_project_part, arg_hidden) AS TABLE
SELECT s.*
FROM sessions s
WHERE s.workspace = arg_ws
  AND (s.provider, s.session_id) IN (
        SELECT (k.provider, k.session_id)
        FROM export_session_keys(arg_ws, arg_prov, arg_project_part, arg_hidden) k)
  AND ((arg_since IS NULL AND arg_until IS NULL)
       OR (s.provider, s.session_id) IN (
            SELECT (e.provider, e.session_id)
            FROM export_events(arg_ws, arg_tz, arg_since, arg_until, arg_prov, arg_project_part, arg_hidden) e)
       OR (s.provider, s.session_id) IN (
            SELECT (u.provider, u.session_id)
            FROM report_calls(arg_ws, arg_tz, arg_since, arg_until, arg_prov, NULL, arg_project_part, arg_hidden, NULL) u));

CREATE OR REPLACE TEMP MACRO export_rejects(arg_ws, arg_prov) AS TABLE
SELECT r.*, src.provider, src.path, i.started_at AS imported_at
FROM rejects r
JOIN sources src ON src.workspace = r.workspace AND src.source_id = r.source_id
LEFT JOIN imports i ON i.workspace = r.workspace AND i.import_id = r.import_id
WHERE r.workspace = arg_ws
  AND (arg_prov IS NULL OR src.provider = arg_prov);
