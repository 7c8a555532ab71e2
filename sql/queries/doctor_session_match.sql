-- Sessions of one workspace whose id equals or starts with $prefix (in sessions, or
-- only in events/usage), exact matches first. Parameters: $workspace, $prefix,
-- $providers (VARCHAR[] or NULL for all), $limit
SELECT provider, session_id, bool_or(in_sessions) AS in_sessions
FROM (
    SELECT provider, session_id, true AS in_sessions FROM sessions
    WHERE workspace = $workspace AND starts_with(session_id, $prefix)
    UNION ALL
    SELECT DISTINCT provider, session_id, false FROM events
    WHERE workspace = $workspace AND starts_with(session_id, $prefix)
    UNION ALL
    SELECT DISTINCT provider, session_id, false FROM usage
    WHERE workspace = $workspace AND starts_with(session_id, $prefix)
)
WHERE $providers IS NULL OR list_contains($providers, provider)
GROUP BY provider, session_id
ORDER BY session_id = $prefix DESC, session_id, provider
LIMIT $limit
