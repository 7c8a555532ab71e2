-- The events in temp table `gone_events` (event_id) leave the search index and the
-- semantic vectors: recorded for the publish step (agentlake.load.publish and
-- agentlake.load.vectors), which drops their postings and vectors. Run by a load commit
-- before those events are deleted or rewritten. Parameters: $workspace
INSERT INTO search_withdrawn SELECT $workspace, event_id FROM gone_events;
INSERT INTO vector_withdrawn SELECT $workspace, event_id FROM gone_events;
