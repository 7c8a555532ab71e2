-- A dashboard's costliest projects, per project and provider: sessions, calls, tokens
-- and cost of the calls inside the filter (report_sessions macro). Kept: every row of
-- the $top costliest projects of all, and the $top costliest of each provider (the page
-- sums a project's rows over the providers it shows).
WITH per_project AS (
    SELECT
        coalesce(s.project_path, '<unknown>')   AS project_path,
        m.provider,
        count(DISTINCT m.session_id)            AS sessions,
        sum(m.calls)::BIGINT                    AS calls,
        sum(m.total_tokens)::BIGINT             AS total_tokens,
        sum(m.cost_usd)                         AS cost_usd
    FROM report_sessions($workspace, $tz, $since, $until, $provider, $model, $project, $include_hidden, $tag) m
    LEFT JOIN sessions s
      ON s.workspace = $workspace AND s.provider = m.provider AND s.session_id = m.session_id
    GROUP BY ALL
),
ranked AS (
    SELECT *,
        dense_rank() OVER (ORDER BY project_cost DESC NULLS LAST, project_tokens DESC, project_path) AS rank_all,
        row_number() OVER (PARTITION BY provider ORDER BY cost_usd DESC NULLS LAST, total_tokens DESC, project_path) AS rank_provider
    FROM (
        SELECT *,
            sum(cost_usd) OVER (PARTITION BY project_path)      AS project_cost,
            sum(total_tokens) OVER (PARTITION BY project_path)  AS project_tokens
        FROM per_project
    )
)
SELECT project_path, provider, sessions, calls, total_tokens, cost_usd
FROM ranked
WHERE rank_all <= $top OR rank_provider <= $top
ORDER BY project_cost DESC NULLS LAST, project_tokens DESC, project_path, provider
