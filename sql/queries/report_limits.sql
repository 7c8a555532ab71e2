-- The latest rate-limit snapshot of each provider, limit and window, in one workspace
-- (of one session when $session_id is given). A window is known by its length (Codex
-- moved the weekly window from the secondary slot to the primary one), by its slot when
-- no length was written; a snapshot that names no limit is of the provider's general
-- limit (Codex calls it `codex`). Times are local in zone $tz; `age_seconds` is how long
-- before $now_epoch the snapshot was written, `resets_in_seconds` how long after it the
-- window resets (negative, `reset_passed`: it has reset since, and the percentage no
-- longer holds).
-- Snapshots written by hidden sessions are left out unless $include_hidden (their ids
-- would show).
-- Parameters: $workspace, $provider, $session_id, $tz, $now_epoch, $include_hidden
-- The newest time of each group is found first (an aggregate of three keys); only the
-- rows at that time are then ranked (ordering every snapshot by several keys cost five
-- times as much).
WITH newest AS (
    SELECT provider,
           coalesce(limit_id, provider)                                              AS limit_name,
           coalesce(window_minutes, CASE window_kind WHEN 'primary' THEN -1 ELSE -2 END) AS window_key,
           max(ts)                                                                   AS ts
    FROM rate_limits
    WHERE workspace = $workspace
      AND ($provider IS NULL OR provider = $provider)
      AND ($session_id IS NULL OR session_id = $session_id)
      AND ($include_hidden OR (provider, session_id) NOT IN (
            SELECT (h.provider, h.session_id) FROM sessions h
            WHERE h.workspace = $workspace AND h.lifecycle <> 'active'))
    GROUP BY ALL
),
latest AS (
    SELECT r.*, n.limit_name
    FROM rate_limits r
    JOIN newest n
      ON r.provider = n.provider AND r.ts = n.ts
     AND coalesce(r.limit_id, r.provider) = n.limit_name
     AND coalesce(r.window_minutes, CASE r.window_kind WHEN 'primary' THEN -1 ELSE -2 END) = n.window_key
    WHERE r.workspace = $workspace
      AND ($session_id IS NULL OR r.session_id = $session_id)
      AND ($include_hidden OR (r.provider, r.session_id) NOT IN (
            SELECT (h.provider, h.session_id) FROM sessions h
            WHERE h.workspace = $workspace AND h.lifecycle <> 'active'))
    QUALIFY row_number() OVER (
        PARTITION BY n.provider, n.limit_name, n.window_key
        ORDER BY r.session_id DESC, r.source_offset DESC, r.window_kind
    ) = 1
)
SELECT
    provider,
    limit_name                                              AS limit_id,
    window_kind,
    window_minutes,
    plan_type,
    used_percent,
    timezone($tz, resets_at)                                AS resets_at,
    CAST(round(epoch(resets_at) - $now_epoch) AS BIGINT)    AS resets_in_seconds,
    epoch(resets_at) <= $now_epoch                          AS reset_passed,
    timezone($tz, ts)                                       AS observed_at,
    CAST(round($now_epoch - epoch(ts)) AS BIGINT)           AS age_seconds,
    session_id
FROM latest
ORDER BY provider, limit_id, window_minutes NULLS LAST, window_kind
