-- Events of the batch not yet in the catalog (identity = event_id within a workspace).
-- Only the events of the batch's sessions that the catalog already holds can be there:
-- they are written as a list of constants (`/* sessions */`), and when there is none
-- (the usual case in a bulk import, where most sessions are new) every event of the
-- batch is new and no event of the catalog is read: `new_events` is then a view of
-- `batch_events` (CatalogWriter.commit; a test of session_id against a list still read
-- and hashed every event's id and session, 25-35 ms a commit on a million events, and
-- copying the batch's rows cost 30 ms more).
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
