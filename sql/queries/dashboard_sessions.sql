-- A dashboard's costliest sessions: the session report rolled up to root sessions
-- (report_session_rollup.sql, written in at the placeholder: a subagent's calls count
-- in the session that spawned it), one row per root session with its models (costliest
-- first), its subagents (every session below it, with calls or not) and its own start
-- and last update. Kept: the $top costliest sessions of all, and of each provider (the
-- page filters by provider).
WITH rolled AS (
    /* sessions */
),
per_root AS (
    SELECT
        provider,
        session_id,
        any_value(project_path)                 AS project_path,
        any_value(title)                        AS title,
        min(first_activity)                     AS first_activity,
        max(last_activity)                      AS last_activity,
        sum(calls)::BIGINT                      AS calls,
        sum(COLUMNS('_tokens$'))::BIGINT,       -- input_tokens … total_tokens, by name
        sum(cost_usd)                           AS cost_usd,
        list(model ORDER BY cost_usd DESC NULLS LAST, total_tokens DESC, model) AS models
    FROM rolled
    GROUP BY provider, session_id
),
ranked AS (
    SELECT *,
        row_number() OVER (ORDER BY cost_usd DESC NULLS LAST, total_tokens DESC, provider, session_id) AS rank_all,
        row_number() OVER (PARTITION BY provider ORDER BY cost_usd DESC NULLS LAST, total_tokens DESC, session_id) AS rank_provider
    FROM per_root
)
SELECT
    r.* EXCLUDE (rank_all, rank_provider),
    coalesce(t.subagents, 0)                    AS subagents,
    timezone($tz, s.started_at)                 AS started_at,
    timezone($tz, s.updated_at)                 AS updated_at,
    coalesce(s.title, s.first_prompt, s.preview) AS label
FROM ranked r
LEFT JOIN sessions s
  ON s.workspace = $workspace AND s.provider = r.provider AND s.session_id = r.session_id
LEFT JOIN (
    SELECT provider, root_session_id, count(*) FILTER (depth > 0) AS subagents
    FROM session_rollup WHERE workspace = $workspace GROUP BY ALL
) t ON t.provider = r.provider AND t.root_session_id = r.session_id
WHERE r.rank_all <= $top OR r.rank_provider <= $top
ORDER BY r.cost_usd DESC NULLS LAST, r.total_tokens DESC, r.provider, r.session_id
