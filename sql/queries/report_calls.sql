-- The calls a report covers, as a table macro every report query reads from: this
-- workspace's rows of `usage_costed` inside the filters. Bounds are dates in zone
-- `arg_tz`, inclusive; a NULL filter is open.
-- `arg_model_part` and `arg_project_part` match case-insensitive substrings (of the model name
-- and of the session's project path).
--
-- Written for speed over a million calls: the day bounds become two instants computed
-- once instead of a time-zone conversion per call, and the project filter is a
-- semi-join that is empty when no project is asked for.
-- Hidden sessions' calls (`sessions.lifecycle` 'tombstoned', `agentlake sessions hide`)
-- leave every report unless `arg_hidden` is true; `arg_tag` keeps the calls of the
-- sessions carrying that tag: the conditions of `report_lifecycle.sql`, written in at
-- the lifecycle marker only when a report needs them (a workspace with hidden sessions, or a
-- tag asked for), since even a join with an empty set costs a scan of a million calls
-- a quarter of its time.
-- The parameters are prefixed so they can never capture a column of the views read.
CREATE OR REPLACE TEMP MACRO report_calls(arg_ws, arg_tz, arg_since, arg_until, arg_prov, arg_model_part, arg_project_part, arg_hidden, arg_tag) AS TABLE
SELECT u.*
FROM usage_costed u
WHERE u.workspace = arg_ws
  AND (arg_prov IS NULL OR u.provider = arg_prov)
  AND (arg_since IS NULL OR u.ts >= timezone(arg_tz, CAST(arg_since AS TIMESTAMP)))
  AND (arg_until IS NULL OR u.ts < timezone(arg_tz, CAST(arg_until AS TIMESTAMP) + INTERVAL 1 DAY))
  AND (arg_model_part IS NULL OR contains(lower(coalesce(u.model, '')), lower(arg_model_part)))
  AND (arg_project_part IS NULL OR (u.provider, u.session_id) IN (
        SELECT (s.provider, s.session_id) FROM sessions s
        WHERE s.workspace = arg_ws AND arg_project_part IS NOT NULL
          AND contains(lower(coalesce(s.project_path, '')), lower(arg_project_part))))
  /* lifecycle */
