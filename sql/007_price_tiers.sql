-- Schema version 7: prices materialized from the genai-prices snapshot with one threshold
-- tier, a name → price-model mapping, and a vectorized per-call cost.
--
-- `prices` holds one row per (provider_id, model, price period) of the bundled
-- genai-prices snapshot (load/prices.py refreshes it when the installed package's version
-- differs from `snapshot_version`). A period is [valid_from, valid_to); NULL is open.
-- `price_aliases` maps a lowercase name to a priced model: kind 'exact' (the model id or
-- an `equals` clause) or 'prefix' (a `starts_with` clause); `priority` orders providers
-- (first-party before resellers).

ALTER TABLE prices ADD COLUMN provider_id VARCHAR;
ALTER TABLE prices ADD COLUMN tier_threshold BIGINT;
ALTER TABLE prices ADD COLUMN input_above_per_mtok DOUBLE;
ALTER TABLE prices ADD COLUMN output_above_per_mtok DOUBLE;
ALTER TABLE prices ADD COLUMN cache_write_above_per_mtok DOUBLE;
ALTER TABLE prices ADD COLUMN cache_write_1h_above_per_mtok DOUBLE;
ALTER TABLE prices ADD COLUMN cache_read_above_per_mtok DOUBLE;
ALTER TABLE prices ADD COLUMN snapshot_version VARCHAR;

CREATE TABLE price_aliases (
    alias        VARCHAR NOT NULL,
    kind         VARCHAR NOT NULL,   -- 'exact' | 'prefix'
    provider_id  VARCHAR NOT NULL,
    model        VARCHAR NOT NULL,
    priority     INTEGER NOT NULL    -- lower wins among equally good matches
);

DROP VIEW usage_daily;

DROP VIEW usage_costed;

-- Name resolution, per distinct usage.model, best first:
--   0. the lowercase name equals an exact alias;
--   1. the normalized name equals an exact alias;
--   2. the lowercase name starts with a prefix alias;
--   3. the normalized name starts with a prefix alias;
-- then provider priority, then the longest alias. Normalization: drop anything up to a
-- '/' (`anthropic/claude-…`), a Bedrock `[region.]anthropic.` prefix and `-vN:M` suffix, a
-- `-thinking` suffix, a date suffix (-20250929, @20250929, -2025-09-29), and turn Cursor's
-- `claude-4.5-sonnet` into `claude-sonnet-4-5`.
--
-- Cost per call, each token kind at its own rate: input, output, cache read, 5-minute
-- cache writes (cache_write − cache_write_1h) and 1-hour cache writes (2× input when the
-- snapshot lists no 1h price). The threshold tier applies to the whole call when its
-- input-side tokens exceed `tier_threshold`, Anthropic's rule: input_tokens +
-- cache_write_tokens + cache_read_tokens > 200,000 (output does not count). The price is
-- the period containing the call's timestamp. A call whose model has no price costs NULL;
-- a token kind with no listed rate costs NULL unless it has 0 tokens.
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
             THEN rtrim(replace(norm0, '.', '-'), '-') ELSE norm0 END AS norm
    FROM names
),
resolved AS (
    SELECT k.name, a.provider_id, a.model
    FROM keys k
    JOIN price_aliases a
      ON (a.kind = 'exact' AND (a.alias = k.raw OR a.alias = k.norm))
      OR (a.kind = 'prefix' AND (starts_with(k.raw, a.alias) OR starts_with(k.norm, a.alias)))
    QUALIFY row_number() OVER (
        PARTITION BY k.name
        ORDER BY
            CASE WHEN a.kind = 'exact' AND a.alias = k.raw THEN 0
                 WHEN a.kind = 'exact' THEN 1
                 WHEN starts_with(k.raw, a.alias) THEN 2
                 ELSE 3 END,
            a.priority, length(a.alias) DESC, a.provider_id, a.model
    ) = 1
),
rated AS (
    SELECT
        u.*,
        p.model IS NOT NULL AS _priced,
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
    LEFT JOIN resolved r ON r.name = u.model
    LEFT JOIN prices p
      ON p.provider_id = r.provider_id
     AND p.model = r.model
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
