-- Schema version 3: adapter state saved with each checkpoint, and the rank that decides
-- which copy of a model call wins (Claude: the token total; append-log formats whose
-- last copy wins: a growing position).

ALTER TABLE sources ADD COLUMN adapter_state JSON;
ALTER TABLE usage ADD COLUMN merge_rank BIGINT;
UPDATE usage SET merge_rank = total_tokens;

-- The provider's own id of the message an event or call came from, so an append-log
-- format can withdraw a message (a rewind, or a rewrite whose last copy wins).
ALTER TABLE events ADD COLUMN native_id VARCHAR;
ALTER TABLE usage ADD COLUMN native_id VARCHAR;
