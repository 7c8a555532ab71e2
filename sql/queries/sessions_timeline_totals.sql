-- Events and text bytes per bucket of the window in `session_timeline_window`.
SELECT bucket, count(*) AS items, sum(bytes)::BIGINT AS bytes
FROM session_timeline_window
GROUP BY bucket
