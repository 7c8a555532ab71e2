-- Schema version 15: the search watermark also names the import through which the index
-- is complete (`through_import`): every event of that import and of the ones before it is
-- at or below the watermark. A publish step that reached the end records it, so the next
-- one, with nothing new, selects events by import id alone and reads none of them (the
-- events' import ids prune the scan), however large the last import was.
-- -1 (or NULL): no such import yet. Runs again without effect.
ALTER TABLE search_watermark ADD COLUMN IF NOT EXISTS through_import BIGINT DEFAULT -1;
