-- Public view (DESIGN §3): every usage row with its cost in USD, `cost_usd`, at the
-- price of its model on its day, and `uncached_cost_usd`, its cost had nothing been
-- cached. An unpriced model costs NULL, never 0.
--
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
--
-- User price overrides are pinned aliases (a negative `priority`, provider_id 'user'),
-- kept in connection-local TEMP tables that shadow `prices` and `price_aliases`
-- (load/prices.py). A name resolves to its best pinned alias whatever the match kind of
-- the snapshot's aliases. Before the earliest `valid_from` of the pinned model's prices,
-- the best unpinned alias (the snapshot) prices the call. A call with no tokens costs 0
-- even when its model has no price.
--
-- Shaped for speed: the rates of every price period are resolved per model name first,
-- each CTE is referenced once (a CTE referenced twice is materialized, and then every
-- query on the view would read all of `usage`'s columns), and the per-call part is one
-- flat SELECT with an equi-join on the model name.

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
-- Each name's price periods: the pinned model's, then the snapshot's cut off where the
-- pinned ones start (`since`: NULL when a pinned period is open-ended, so the snapshot
-- never applies). Window functions instead of a second reference to `candidates`, so the
-- optimizer inlines every CTE and a query reads only the `usage` columns it uses.
periods AS (
    SELECT * EXCLUDE (pinned, has_pinned, since, valid_to),
        CASE WHEN NOT pinned AND since IS NOT NULL AND (valid_to IS NULL OR valid_to > since)
             THEN since ELSE valid_to END AS valid_to
    FROM (
        SELECT *,
            bool_or(pinned) OVER by_name AS has_pinned,
            CASE WHEN bool_or(pinned AND valid_from IS NULL) OVER by_name THEN NULL
                 ELSE min(valid_from) FILTER (pinned) OVER by_name END AS since
        FROM candidates
        WINDOW by_name AS (PARTITION BY name)
    )
    WHERE pinned
       OR NOT has_pinned
       OR (since IS NOT NULL AND (valid_from IS NULL OR valid_from < since))
),
-- Each period's effective rates per token kind, below and above the tier threshold: a
-- missing cache rate falls back to the input rate, a missing 1-hour rate to 2x input.
name_prices AS (
    SELECT name,
        coalesce(valid_from, '-infinity'::TIMESTAMPTZ) AS valid_from,
        coalesce(valid_to, 'infinity'::TIMESTAMPTZ) AS valid_to,
        tier_threshold,
        input_per_mtok AS r_in,
        output_per_mtok AS r_out,
        coalesce(cache_write_per_mtok, input_per_mtok) AS r_cw,
        coalesce(cache_write_1h_per_mtok, 2 * input_per_mtok) AS r_cw1h,
        coalesce(cache_read_per_mtok, input_per_mtok) AS r_cr,
        coalesce(input_above_per_mtok, input_per_mtok) AS a_in,
        coalesce(output_above_per_mtok, output_per_mtok) AS a_out,
        coalesce(cache_write_above_per_mtok, cache_write_per_mtok, input_above_per_mtok, input_per_mtok) AS a_cw,
        coalesce(cache_write_1h_above_per_mtok, 2 * input_above_per_mtok, cache_write_1h_per_mtok, 2 * input_per_mtok) AS a_cw1h,
        coalesce(cache_read_above_per_mtok, cache_read_per_mtok, input_above_per_mtok, input_per_mtok) AS a_cr
    FROM periods
)
-- Cost per call: each token kind at its own rate, all of them at the tier's rates when
-- the call's input side (input + cache write + cache read) exceeds the threshold; a kind
-- without a rate costs NULL unless it has no tokens. One flat SELECT over `usage`, so a
-- query reads only the columns it uses.
SELECT
    u.*,
    CASE
        WHEN p.name IS NOT NULL THEN (
              coalesce(u.input_tokens
                       * CASE WHEN u.input_tokens + u.cache_write_tokens + u.cache_read_tokens > p.tier_threshold
                              THEN p.a_in ELSE p.r_in END,
                       CASE WHEN u.input_tokens = 0 THEN 0 END)
            + coalesce((u.cache_write_tokens - u.cache_write_1h_tokens)
                       * CASE WHEN u.input_tokens + u.cache_write_tokens + u.cache_read_tokens > p.tier_threshold
                              THEN p.a_cw ELSE p.r_cw END,
                       CASE WHEN u.cache_write_tokens - u.cache_write_1h_tokens = 0 THEN 0 END)
            + coalesce(u.cache_write_1h_tokens
                       * CASE WHEN u.input_tokens + u.cache_write_tokens + u.cache_read_tokens > p.tier_threshold
                              THEN p.a_cw1h ELSE p.r_cw1h END,
                       CASE WHEN u.cache_write_1h_tokens = 0 THEN 0 END)
            + coalesce(u.cache_read_tokens
                       * CASE WHEN u.input_tokens + u.cache_write_tokens + u.cache_read_tokens > p.tier_threshold
                              THEN p.a_cr ELSE p.r_cr END,
                       CASE WHEN u.cache_read_tokens = 0 THEN 0 END)
            + coalesce(u.output_tokens
                       * CASE WHEN u.input_tokens + u.cache_write_tokens + u.cache_read_tokens > p.tier_threshold
                              THEN p.a_out ELSE p.r_out END,
                       CASE WHEN u.output_tokens = 0 THEN 0 END)
        ) / 1e6
        -- A call without tokens costs nothing whatever its model (Claude Code's
        -- `<synthetic>` messages): it is not an unpriced call.
        WHEN u.input_tokens + u.cache_write_tokens + u.cache_read_tokens + u.output_tokens = 0 THEN 0
    END AS cost_usd,
    -- What the call would have cost without the prompt cache: its cache reads and writes
    -- billed as fresh input (the same tier: the input side's size does not change).
    -- `uncached_cost_usd - cost_usd` is what the cache saved (negative when the cache
    -- writes cost more than the reads saved). NULL exactly when `cost_usd` is.
    CASE
        WHEN p.name IS NOT NULL THEN (
              coalesce((u.input_tokens + u.cache_write_tokens + u.cache_read_tokens)
                       * CASE WHEN u.input_tokens + u.cache_write_tokens + u.cache_read_tokens > p.tier_threshold
                              THEN p.a_in ELSE p.r_in END,
                       CASE WHEN u.input_tokens + u.cache_write_tokens + u.cache_read_tokens = 0 THEN 0 END)
            + coalesce(u.output_tokens
                       * CASE WHEN u.input_tokens + u.cache_write_tokens + u.cache_read_tokens > p.tier_threshold
                              THEN p.a_out ELSE p.r_out END,
                       CASE WHEN u.output_tokens = 0 THEN 0 END)
        ) / 1e6
        WHEN u.input_tokens + u.cache_write_tokens + u.cache_read_tokens + u.output_tokens = 0 THEN 0
    END AS uncached_cost_usd
FROM usage u
LEFT JOIN name_prices p
  ON p.name = u.model AND u.ts >= p.valid_from AND u.ts < p.valid_to;
