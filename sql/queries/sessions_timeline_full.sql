-- Every event of one session in time order (ts, then seq), unbounded.
-- Parameters: $workspace, $provider, $session_id
SELECT ts, seq, kind, role, model, tool_name, tool_call_id, is_error, is_sidechain, text,
       CAST(tool_input AS VARCHAR) AS tool_input,
       strlen(coalesce(text, '')) + strlen(coalesce(CAST(tool_input AS VARCHAR), '')) AS bytes,
       strlen(coalesce(text, '')) + strlen(coalesce(CAST(tool_input AS VARCHAR), '')) AS shown_bytes,
       false AS truncated, event_id
FROM events
WHERE workspace = $workspace AND provider = $provider AND session_id = $session_id
ORDER BY ts NULLS FIRST, seq, event_id
