-- Events of a workspace that carry text (what a full-text index must cover).
-- Parameters: $workspace
SELECT count(*) FROM events WHERE workspace = $workspace AND (text IS NOT NULL OR tool_input IS NOT NULL)
