-- Delete every row of the sessions in temp table `purge_scope` (provider, session_id),
-- in the purge's one transaction: their events' postings first (`gone_events`, then
-- search_index_remove.sql, run by the caller before this script), then their pending
-- withdrawals, semantic vectors, events, calls, rate-limit snapshots, tags, archived versions and rows.
-- The audit, the receipt and the sources' checkpoints stay (the checkpoints are what
-- keeps the sessions' old bytes from being read again).
-- Parameters: $workspace
DELETE FROM search_withdrawn
WHERE workspace = $workspace AND event_id IN (SELECT event_id FROM gone_events);
DELETE FROM search_vectors
WHERE workspace = $workspace AND event_id IN (SELECT event_id FROM gone_events);
DELETE FROM vector_withdrawn
WHERE workspace = $workspace AND event_id IN (SELECT event_id FROM gone_events);
UPDATE vector_watermark SET version = uuid()::VARCHAR WHERE workspace = $workspace;
DELETE FROM events e
WHERE e.workspace = $workspace AND (e.provider, e.session_id) IN (SELECT provider, session_id FROM purge_scope);
DELETE FROM usage u
WHERE u.workspace = $workspace AND (u.provider, u.session_id) IN (SELECT provider, session_id FROM purge_scope);
DELETE FROM rate_limits r
WHERE r.workspace = $workspace AND (r.provider, r.session_id) IN (SELECT provider, session_id FROM purge_scope);
DELETE FROM session_tags t
WHERE t.workspace = $workspace AND (t.provider, t.session_id) IN (SELECT provider, session_id FROM purge_scope);
DELETE FROM session_versions v
WHERE v.workspace = $workspace AND (v.provider, v.session_id) IN (SELECT provider, session_id FROM purge_scope);
DELETE FROM sessions s
WHERE s.workspace = $workspace AND (s.provider, s.session_id) IN (SELECT provider, session_id FROM purge_scope)
