-- `report_sessions` redefined on this connection to read temp table
-- `dashboard_session_calls` (dashboard_session_calls.sql): the top sessions, the top
-- projects and the session counts then share one pass over the calls instead of one
-- each. The arguments are those the table was made with (a dashboard reads one filter).
CREATE OR REPLACE TEMP MACRO report_sessions(arg_ws, arg_tz, arg_since, arg_until, arg_prov, arg_model_part, arg_project_part, arg_hidden, arg_tag) AS TABLE
SELECT * FROM dashboard_session_calls;
