-- Schema version 8: pinned price aliases (user price overrides) win over the snapshot.
--
-- An alias with a negative `priority` is pinned: load/prices.py gives one to every user
-- override (provider_id 'user'), kept in connection-local TEMP tables that shadow
-- `prices` and `price_aliases`. A name resolves to its best pinned alias whatever the
-- match kind of the snapshot's aliases (a user key that matches only the normalized name
-- still beats a snapshot alias equal to the raw name). Before the earliest `valid_from` of
-- the pinned model's prices, the best unpinned alias (the snapshot) prices the call, so
-- an override that starts on a date corrects the snapshot from that day on only.
--
-- Everything else is as in 007 — the same order among aliases of one kind (exact raw,
-- exact normalized, prefix raw, prefix normalized, then priority, then the longest
-- alias), the same per-call cost and the same columns — but for two changes:
-- `gpt-5-codex-mini` normalizes to `gpt-5-mini`, and a call with no tokens costs 0
-- instead of NULL when its model has no price.

-- `snapshot_source` says where a row's price comes from: 'bundled' (the installed
-- package's snapshot), 'fetched' (the genai-prices feed) or 'user' (an override). Only
-- the bundled snapshot existed before this version.
ALTER TABLE prices ADD COLUMN snapshot_source VARCHAR;

UPDATE prices SET snapshot_source = 'bundled' WHERE snapshot_version IS NOT NULL;

DROP VIEW usage_daily;

DROP VIEW usage_costed;

CREATE VIEW usage_costed AS
WITH names AS (
    SELECT name, raw,
        regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(
            raw,
            '^.*/', ''),
            '^([a-z]{2,6}\.)?anthropic\.', ''),
            '-v[0-9]+(:[0-9]+)?$', ''),
            '-thinking$', ''),
            '([-@][0-9]{8}|-[0-9]{4}-[0-9]{2}-[0-9]{2})$', ''),
            '^claude-([0-9]+)[.-]?([0-9]*)-(opus|sonnet|haiku)', 'claude-\3-\1-\2') AS norm0
    FROM (SELECT DISTINCT model AS name, lower(trim(model)) AS raw FROM usage WHERE model IS NOT NULL)
),
keys AS (
    SELECT name, raw,
        CASE WHEN starts_with(norm0, 'claude-')
             THEN rtrim(replace(norm0, '.', '-'), '-')
             -- Codex CLI's gpt-5-codex-mini has no entry of its own in the snapshot (which
             -- prices gpt-5-codex as gpt-5); it is priced as gpt-5-mini.
             WHEN norm0 = 'gpt-5-codex-mini' THEN 'gpt-5-mini'
             ELSE norm0 END AS norm
    FROM names
),
-- Per name, the best pinned and the best unpinned alias (at most two rows).
resolved AS (
    SELECT k.name, a.provider_id, a.model, a.priority < 0 AS pinned
    FROM keys k
    JOIN price_aliases a
      ON (a.kind = 'exact' AND (a.alias = k.raw OR a.alias = k.norm))
      OR (a.kind = 'prefix' AND (starts_with(k.raw, a.alias) OR starts_with(k.norm, a.alias)))
    QUALIFY row_number() OVER (
        PARTITION BY k.name, a.priority < 0
        ORDER BY
            CASE WHEN a.kind = 'exact' AND a.alias = k.raw THEN 0
                 WHEN a.kind = 'exact' THEN 1
                 WHEN starts_with(k.raw, a.alias) THEN 2
                 ELSE 3 END,
            a.priority, length(a.alias) DESC, a.provider_id, a.model
    ) = 1
),
candidates AS (
    SELECT r.name, r.pinned, p.valid_from, p.valid_to, p.tier_threshold,
        p.input_per_mtok, p.output_per_mtok, p.cache_write_per_mtok,
        p.cache_write_1h_per_mtok, p.cache_read_per_mtok,
        p.input_above_per_mtok, p.output_above_per_mtok, p.cache_write_above_per_mtok,
        p.cache_write_1h_above_per_mtok, p.cache_read_above_per_mtok
    FROM resolved r
    JOIN prices p ON p.provider_id = r.provider_id AND p.model = r.model
),
-- From when a pinned model prices a name: NULL when one of its periods is open-ended.
pinned_from AS (
    SELECT name,
        CASE WHEN bool_or(valid_from IS NULL) THEN NULL ELSE min(valid_from) END AS since
    FROM candidates
    WHERE pinned
    GROUP BY name
),
-- Each name's price periods: the pinned model's, then the snapshot's cut off where the
-- pinned ones start.
name_prices AS (
    SELECT * EXCLUDE (pinned) FROM candidates WHERE pinned
    UNION ALL BY NAME
    SELECT c.* EXCLUDE (pinned, valid_to),
        CASE WHEN f.since IS NOT NULL AND (c.valid_to IS NULL OR c.valid_to > f.since)
             THEN f.since ELSE c.valid_to END AS valid_to
    FROM candidates c
    LEFT JOIN pinned_from f ON f.name = c.name
    WHERE NOT c.pinned
      AND (f.name IS NULL OR (f.since IS NOT NULL AND (c.valid_from IS NULL OR c.valid_from < f.since)))
),
rated AS (
    SELECT
        u.*,
        p.name IS NOT NULL AS _priced,
        coalesce(p.tier_threshold IS NOT NULL
                 AND u.input_tokens + u.cache_write_tokens + u.cache_read_tokens > p.tier_threshold,
                 false) AS _above,
        p.input_per_mtok AS _in, p.output_per_mtok AS _out,
        p.cache_write_per_mtok AS _cw, p.cache_write_1h_per_mtok AS _cw1h,
        p.cache_read_per_mtok AS _cr,
        p.input_above_per_mtok AS _in_a, p.output_above_per_mtok AS _out_a,
        p.cache_write_above_per_mtok AS _cw_a, p.cache_write_1h_above_per_mtok AS _cw1h_a,
        p.cache_read_above_per_mtok AS _cr_a
    FROM usage u
    LEFT JOIN name_prices p
      ON p.name = u.model
     AND (p.valid_from IS NULL OR u.ts >= p.valid_from)
     AND (p.valid_to IS NULL OR u.ts < p.valid_to)
),
rates AS (
    SELECT
        * EXCLUDE (_in, _out, _cw, _cw1h, _cr, _in_a, _out_a, _cw_a, _cw1h_a, _cr_a),
        CASE WHEN _above THEN coalesce(_in_a, _in) ELSE _in END AS _r_in,
        CASE WHEN _above THEN coalesce(_out_a, _out) ELSE _out END AS _r_out,
        CASE WHEN _above THEN coalesce(_cw_a, _cw, _in_a, _in) ELSE coalesce(_cw, _in) END AS _r_cw,
        CASE WHEN _above THEN coalesce(_cw1h_a, 2 * _in_a, _cw1h, 2 * _in)
             ELSE coalesce(_cw1h, 2 * _in) END AS _r_cw1h,
        CASE WHEN _above THEN coalesce(_cr_a, _cr, _in_a, _in) ELSE coalesce(_cr, _in) END AS _r_cr
    FROM rated
)
SELECT
    * EXCLUDE (_priced, _above, _r_in, _r_out, _r_cw, _r_cw1h, _r_cr),
    CASE WHEN _priced THEN
        (  coalesce(input_tokens * _r_in, CASE WHEN input_tokens = 0 THEN 0 END)
         + coalesce((cache_write_tokens - cache_write_1h_tokens) * _r_cw,
                    CASE WHEN cache_write_tokens - cache_write_1h_tokens = 0 THEN 0 END)
         + coalesce(cache_write_1h_tokens * _r_cw1h, CASE WHEN cache_write_1h_tokens = 0 THEN 0 END)
         + coalesce(cache_read_tokens * _r_cr, CASE WHEN cache_read_tokens = 0 THEN 0 END)
         + coalesce(output_tokens * _r_out, CASE WHEN output_tokens = 0 THEN 0 END)
        ) / 1e6
        -- A call without tokens costs nothing whatever its model (Claude Code's
        -- `<synthetic>` messages): it is not an unpriced call.
        WHEN input_tokens + cache_write_tokens + cache_read_tokens + output_tokens = 0 THEN 0
    END AS cost_usd
FROM rates;

CREATE VIEW usage_daily AS
SELECT
    CAST(timezone('UTC', ts) AS DATE) AS day,
    workspace,
    provider,
    model,
    count(*)                 AS calls,
    sum(input_tokens)        AS input_tokens,
    sum(cache_write_tokens)  AS cache_write_tokens,
    sum(cache_read_tokens)   AS cache_read_tokens,
    sum(output_tokens)       AS output_tokens,
    sum(reasoning_tokens)    AS reasoning_tokens,
    sum(total_tokens)        AS total_tokens,
    sum(cost_usd)            AS cost_usd
FROM usage_costed
GROUP BY ALL;
