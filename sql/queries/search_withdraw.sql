-- The events in temp table `gone_events` (event_id) leave the search index: recorded for
-- the publish step (agentlake.load.search_index), which drops their postings. Run by a
-- load commit before those events are deleted or rewritten. Parameters: $workspace
INSERT INTO search_withdrawn SELECT $workspace, event_id FROM gone_events;
