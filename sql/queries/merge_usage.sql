-- Global dedup of model calls (DESIGN §4), applied to the union of the catalog's
-- current winners and the batch's candidates, for the affected message ids only:
--   * a message id that has any non-sidechain copy drops its sidechain copies;
--   * a message id whose copies are all sidechain keeps exactly one;
--   * otherwise one row per call_id (message id, request id): the highest merge_rank
--     wins (Claude: the largest token total; append logs: the latest copy);
--     ties (verbatim copies, e.g. a resumed session) go to the smallest (session_id,
--     source_offset, source_id), a pure function of the candidates' provider-native
--     identity first, so the winner depends neither on which file was imported first
--     nor on where the home lives; a replayed identical row keeps the existing one.
-- Winners(old ∪ new) = Winners(Winners(old) ∪ new), so running it batch by batch gives
-- the same catalog as one global pass. Parameters: $workspace, $import_id

-- The catalog's calls that share a call or message id with the batch: first only their
-- row ids, from the three narrow columns the test reads (usually none match, and the
-- wide rows are then never read: fetching every column of each row the test scanned
-- doubled its cost).
CREATE OR REPLACE TEMP TABLE usage_matches AS
SELECT u.rowid AS row_id
FROM usage u
WHERE u.workspace = $workspace
  AND (u.call_id IN (SELECT call_id FROM batch_usage)
       OR (u.message_id IS NOT NULL AND (u.provider, u.message_id) IN
           (SELECT provider, message_id FROM batch_usage WHERE message_id IS NOT NULL)));

CREATE OR REPLACE TEMP TABLE usage_candidates AS
SELECT call_id, provider, session_id, message_id, request_id, coalesce(is_sidechain, false) AS is_sidechain,
       ts, model, input_tokens, cache_write_tokens, cache_write_1h_tokens, cache_read_tokens,
       output_tokens, reasoning_tokens, total_tokens, merge_rank, native_id, source_id, source_offset, $import_id AS import_id,
       coalesce(per_session, false) AS per_session, false AS existing
FROM batch_usage
UNION ALL BY NAME
SELECT u.call_id, u.provider, u.session_id, u.message_id, u.request_id, u.is_sidechain, u.ts, u.model,
       u.input_tokens, u.cache_write_tokens, u.cache_write_1h_tokens, u.cache_read_tokens,
       u.output_tokens, u.reasoning_tokens, u.total_tokens, u.merge_rank, u.native_id, u.source_id, u.source_offset, u.import_id,
       u.per_session, true AS existing
FROM usage u
WHERE u.workspace = $workspace AND u.rowid IN (SELECT row_id FROM usage_matches);

CREATE OR REPLACE TEMP TABLE usage_winners AS
WITH scoped AS (
    SELECT *,
           bool_or(NOT is_sidechain) OVER msg AS has_main
    FROM usage_candidates
    WINDOW msg AS (PARTITION BY provider, coalesce(message_id, call_id))
), kept AS (
    SELECT * FROM scoped WHERE NOT (has_main AND is_sidechain)
)
SELECT * EXCLUDE (has_main)
FROM kept
QUALIFY row_number() OVER (
    PARTITION BY CASE WHEN has_main THEN call_id ELSE provider || ':' || coalesce(message_id, call_id) END
    ORDER BY merge_rank DESC, session_id, source_offset, source_id, existing DESC
) = 1;

-- The catalog's calls that lost to a candidate of the batch (usually none: the DELETE
-- then never scans the usage table).
CREATE OR REPLACE TEMP TABLE usage_losers AS
SELECT c.provider, c.session_id, c.call_id, c.message_id, c.source_id, c.source_offset, c.total_tokens
FROM usage_candidates c
WHERE c.existing
  AND NOT EXISTS (SELECT 1 FROM usage_winners w
                  WHERE w.existing AND w.call_id = c.call_id AND w.source_id = c.source_id
                    AND w.source_offset = c.source_offset);

DELETE FROM usage u
WHERE u.workspace = $workspace
  AND (u.call_id, u.source_id, u.source_offset) IN
      (SELECT call_id, source_id, source_offset FROM usage_losers);

INSERT INTO usage
SELECT call_id, $workspace, provider, session_id, message_id, request_id, is_sidechain, ts, model,
       input_tokens, cache_write_tokens, cache_write_1h_tokens, cache_read_tokens, output_tokens,
       reasoning_tokens, total_tokens, source_id, source_offset, import_id, merge_rank, native_id,
       per_session
FROM usage_winners WHERE NOT existing;

-- Session token totals follow the winners: + calls inserted, − existing calls removed.
-- A session whose total changes keeps its previous values in `session_versions`.
CREATE OR REPLACE TEMP TABLE session_token_delta AS
SELECT provider, session_id, sum(delta)::BIGINT AS delta
FROM (
    SELECT provider, session_id, total_tokens AS delta FROM usage_winners WHERE NOT existing
    UNION ALL
    SELECT provider, session_id, -total_tokens AS delta FROM usage_losers
)
GROUP BY ALL
HAVING sum(delta) <> 0;

INSERT INTO session_versions BY NAME
SELECT s.*, $import_id AS superseded_by
FROM sessions s
WHERE s.workspace = $workspace AND s.last_import_id < $import_id
  AND (s.provider, s.session_id) IN (SELECT provider, session_id FROM session_token_delta);

UPDATE sessions s
SET total_tokens = s.total_tokens + d.delta, last_import_id = $import_id
FROM session_token_delta d
WHERE s.workspace = $workspace AND s.provider = d.provider AND s.session_id = d.session_id;
