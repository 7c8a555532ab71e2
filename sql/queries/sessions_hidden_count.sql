-- How many sessions of the workspace are hidden (lifecycle 'tombstoned'): a search
-- ranks its postings alone only when none is.
-- Parameters: $workspace
SELECT count(*) FROM sessions WHERE workspace = $workspace AND lifecycle <> 'active'
