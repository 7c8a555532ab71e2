-- The providers among a report's rows (temp table report_detail) some of whose usage rows
-- are session totals (usage.per_session): agents that record no per-call counts, whose
-- "calls" in the report are one per session and model. Parameters: $workspace
SELECT DISTINCT u.provider
FROM usage u
WHERE u.workspace = $workspace
  AND u.per_session
  AND u.provider IN (SELECT DISTINCT provider FROM temp.report_detail)
ORDER BY 1
