-- The kept events of `session_timeline_window` in time order (ts, then seq). A truncated
-- event carries at least its first keep_bytes bytes (left() counts characters, so the
-- caller trims it to the exact byte count). Parameters: $workspace, $provider, $session_id
SELECT e.ts, e.seq, e.kind, e.role, e.model, e.tool_name, e.tool_call_id, e.is_error,
       e.is_sidechain,
       CASE WHEN w.keep_bytes < w.bytes THEN left(e.text, w.keep_bytes) ELSE e.text END AS text,
       CASE WHEN w.keep_bytes < w.bytes
            THEN left(CAST(e.tool_input AS VARCHAR), greatest(w.keep_bytes - strlen(coalesce(e.text, '')), 0))
            ELSE CAST(e.tool_input AS VARCHAR) END AS tool_input,
       w.bytes, w.keep_bytes, w.keep_bytes < w.bytes AS truncated, w.bucket, e.event_id
FROM events e
JOIN session_timeline_window w USING (event_id)
WHERE e.workspace = $workspace AND e.provider = $provider AND e.session_id = $session_id
  AND w.kept
ORDER BY e.ts NULLS FIRST, e.seq, e.event_id
