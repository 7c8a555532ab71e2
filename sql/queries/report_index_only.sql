-- Sessions without calls whose provider's own thread index records a token total
-- (Codex `threads.tokens_used`, for a thread whose rollout is gone): shown beside a
-- per-session report, never in its totals (the figure has no calls, days or models).
-- The bounds hold a session whose activity (its start to its last update, in zone $tz)
-- meets the days asked for; `$model` matches the session's model.
-- Hidden sessions are left out unless $include_hidden; $tag keeps the sessions with that tag.
-- Parameters: $workspace, $tz, $since, $until, $provider, $model, $project, $include_hidden, $tag
SELECT
    s.provider,
    s.session_id,
    s.project_path,
    s.title,
    s.model,
    timezone($tz, s.started_at)                 AS first_activity,
    timezone($tz, s.updated_at)                 AS last_activity,
    s.index_tokens
FROM sessions s
WHERE s.workspace = $workspace
  AND s.index_tokens > 0
  AND s.total_tokens = 0
  AND ($include_hidden OR s.lifecycle = 'active')
  AND ($tag IS NULL OR EXISTS (
        SELECT 1 FROM session_tags t
        WHERE t.workspace = s.workspace AND t.provider = s.provider
          AND t.session_id = s.session_id AND t.tag = $tag))
  AND ($provider IS NULL OR s.provider = $provider)
  AND ($model IS NULL OR contains(lower(coalesce(s.model, '')), lower($model)))
  AND ($project IS NULL OR contains(lower(coalesce(s.project_path, '')), lower($project)))
  AND ($since IS NULL
       OR coalesce(s.updated_at, s.started_at) >= timezone($tz, CAST($since AS TIMESTAMP)))
  AND ($until IS NULL
       OR coalesce(s.started_at, s.updated_at) < timezone($tz, CAST($until AS TIMESTAMP) + INTERVAL 1 DAY))
ORDER BY s.updated_at DESC NULLS LAST, s.provider, s.session_id
