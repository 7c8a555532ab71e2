-- Schema version 16: usage rows of session granularity. Some agents record no per-call
-- token counts, only a session's running totals per model (Copilot CLI at shutdown,
-- Factory Droid's settings file): such a row is that session's latest snapshot for one
-- model (`per_session` true), replaced, never summed, when a later snapshot grows.
-- Prices apply as to any call; reports say which providers' rows are per session.
-- Existing rows are calls. Runs again without effect.
ALTER TABLE usage ADD COLUMN IF NOT EXISTS per_session BOOLEAN DEFAULT false;
