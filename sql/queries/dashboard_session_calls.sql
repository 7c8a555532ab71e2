-- A dashboard's calls summed per session and model (the `report_sessions` macro), kept
-- as temp table `dashboard_session_calls`, which dashboard_sessions_macro.sql then puts
-- in the macro's place.
CREATE OR REPLACE TEMP TABLE dashboard_session_calls AS
SELECT * FROM report_sessions($workspace, $tz, $since, $until, $provider, $model, $project, $include_hidden, $tag);
