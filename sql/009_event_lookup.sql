-- Schema version 9: an index on events.event_id, so that reading a handful of events
-- by id (the hits of a search) is a lookup instead of a scan of every event of the
-- catalog.
CREATE INDEX events_by_id ON events (event_id);
