-- Usage per root session (`report session --rollup`), provider and model: the calls of
-- every session are put under the root of its tree (`session_rollup`), so a root's row
-- holds its own calls and every descendant's, each call once (a session has one root).
-- A session the catalog has no row for is its own root. `root_sessions` counts the
-- distinct sessions whose calls a root's rows hold (the root's own, if it has any, and
-- its descendants'). Calls are summed per session and model before any join
-- (`report_sessions`). The report rolls these rows up to one per root and orders them
-- (most recent first).
--
-- Only sessions below a root need a lookup (the rest are their own roots): the view's
-- branch of sessions without a parent is then never read.
WITH placed AS (
    SELECT m.*, coalesce(r.root_session_id, m.session_id) AS root_id
    FROM report_sessions($workspace, $tz, $since, $until, $provider, $model, $project, $include_hidden, $tag) m
    LEFT JOIN (SELECT provider, session_id, root_session_id FROM session_rollup
               WHERE workspace = $workspace AND depth > 0) r
      ON r.provider = m.provider AND r.session_id = m.session_id
),
rolled AS (
    SELECT
        provider,
        root_id,
        model,
        min(first_ts)                           AS first_ts,
        max(last_ts)                            AS last_ts,
        sum(calls)::BIGINT                      AS calls,
        sum(COLUMNS('_tokens$'))::BIGINT,       -- input_tokens … total_tokens, by name
        sum(cost_usd)                           AS cost_usd,
        sum(unpriced_calls)::BIGINT             AS unpriced_calls
    FROM placed
    GROUP BY provider, root_id, model
),
-- A group, not a window: count(DISTINCT …) OVER a partition cost a third of the query.
counted AS (
    SELECT provider, root_id, count(DISTINCT session_id) AS root_sessions
    FROM placed
    GROUP BY provider, root_id
)
SELECT
    r.provider,
    r.root_id                                   AS session_id,
    s.project_path,
    s.title,
    r.model,
    timezone($tz, r.first_ts)                   AS first_activity,
    timezone($tz, r.last_ts)                    AS last_activity,
    r.* EXCLUDE (provider, root_id, model, first_ts, last_ts),
    c.root_sessions
FROM rolled r
JOIN counted c USING (provider, root_id)
LEFT JOIN sessions s
  ON s.workspace = $workspace AND s.provider = r.provider AND s.session_id = r.root_id
