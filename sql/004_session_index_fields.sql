-- Schema version 4: what providers' own session indexes (Codex state_5.sqlite, Cursor
-- state.vscdb) know of a session beyond its events.
ALTER TABLE sessions ADD COLUMN model VARCHAR;
ALTER TABLE sessions ADD COLUMN preview VARCHAR;
ALTER TABLE sessions ADD COLUMN archived BOOLEAN;
