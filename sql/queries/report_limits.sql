-- The latest rate-limit snapshot of each provider, limit and window, in one workspace
-- (of one session when $session_id is given). A window is known by its length (Codex
-- moved the weekly window from the secondary slot to the primary one), by its slot when
-- no length was written; a snapshot that names no limit is of the provider's general
-- limit (Codex calls it `codex`). Times are local in zone $tz; `age_seconds` is how long
-- before $now_epoch the snapshot was written, `resets_in_seconds` how long after it the
-- window resets (negative, `reset_passed`: it has reset since, and the percentage no
-- longer holds).
-- Parameters: $workspace, $provider, $session_id, $tz, $now_epoch
WITH latest AS (
    SELECT *, coalesce(limit_id, provider) AS limit_name
    FROM rate_limits
    WHERE workspace = $workspace
      AND ($provider IS NULL OR provider = $provider)
      AND ($session_id IS NULL OR session_id = $session_id)
    QUALIFY row_number() OVER (
        PARTITION BY provider, coalesce(limit_id, provider),
                     coalesce(CAST(window_minutes AS VARCHAR), window_kind)
        ORDER BY ts DESC, session_id DESC, source_offset DESC, window_kind
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
