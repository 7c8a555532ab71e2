-- Events of the batch not yet in the catalog (identity = event_id within a workspace).
-- The batch's sessions are written as a list of constants (`/* sessions */`): a test of
-- one column against it spares probing every event of the catalog by id.
-- Parameters: $workspace, $import_id
CREATE OR REPLACE TEMP TABLE new_events AS
SELECT b.*
FROM batch_events b
WHERE NOT EXISTS (
    SELECT 1 FROM events e
    WHERE e.workspace = $workspace
      AND e.session_id IN (/* sessions */)
      AND e.event_id = b.event_id
);
INSERT INTO events
SELECT event_id, $workspace, provider, session_id, seq, ts, kind, role, model, text, tool_name,
       tool_call_id, tool_input, is_error, coalesce(is_sidechain, false), source_id, source_offset,
       $import_id, native_id
FROM new_events;
