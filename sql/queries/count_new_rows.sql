-- Rows a commit added that the catalog did not hold before it, per source: new events
-- (`new_events`) and new model calls (winners of `merge_usage` that neither replace a
-- call of the same message nor restore one the commit forgot before re-reading its
-- source). A better copy of a known call, or a source re-read whole, is no new row.
-- Statement 1: events; 2: calls; then, when `$forgot` (the commit forgot a source), the
-- forgotten rows are let go.
SELECT source_id, count(*) FROM new_events e
WHERE NOT $forgot OR e.event_id NOT IN (SELECT event_id FROM forgotten_events)
GROUP BY ALL;
SELECT w.source_id, count(*) FROM usage_winners w
WHERE NOT w.existing
  AND NOT EXISTS (SELECT 1 FROM usage_losers l
                  WHERE l.provider = w.provider
                    AND coalesce(l.message_id, l.call_id) = coalesce(w.message_id, w.call_id))
  AND (NOT $forgot OR (w.provider, coalesce(w.message_id, w.call_id)) NOT IN
                      (SELECT provider, call_key FROM forgotten_calls))
GROUP BY ALL;
DELETE FROM forgotten_events;
DELETE FROM forgotten_calls;
