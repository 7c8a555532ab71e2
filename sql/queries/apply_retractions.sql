-- Withdraw every event and call of the messages in `batch_retractions` (provider,
-- session_id, native_id): a rewind, or a message whose later copy replaces it.
-- `search_withdraw` (over `gone_events`) and `recompute_sessions` run next.
-- The retracted sessions are also written as a list of constants (`/* sessions */`):
-- testing one column against it first spares probing every event of the catalog.
-- Parameters: $workspace
CREATE OR REPLACE TEMP TABLE touched AS
SELECT DISTINCT provider, session_id FROM batch_retractions;

CREATE OR REPLACE TEMP TABLE gone_events AS
SELECT e.event_id FROM events e
WHERE e.workspace = $workspace
  AND e.session_id IN (/* sessions */)
  AND EXISTS (SELECT 1 FROM batch_retractions r
              WHERE r.provider = e.provider AND r.session_id = e.session_id
                AND r.native_id = e.native_id);

DELETE FROM events e
WHERE e.workspace = $workspace
  AND e.session_id IN (/* sessions */)
  AND EXISTS (SELECT 1 FROM batch_retractions r
              WHERE r.provider = e.provider AND r.session_id = e.session_id
                AND r.native_id = e.native_id);

DELETE FROM usage u
WHERE u.workspace = $workspace
  AND u.session_id IN (/* sessions */)
  AND EXISTS (SELECT 1 FROM batch_retractions r
              WHERE r.provider = u.provider AND r.session_id = u.session_id
                AND r.native_id = u.native_id);
