-- The sessions with calls inside a dashboard's filter, per provider.
SELECT provider, count(DISTINCT session_id) AS sessions
FROM report_sessions($workspace, $tz, $since, $until, $provider, $model, $project, $include_hidden, $tag)
GROUP BY provider
ORDER BY provider
