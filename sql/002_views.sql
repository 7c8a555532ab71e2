-- Public views (DESIGN §3). Costs are per call; an unpriced model costs NULL, never 0.

CREATE VIEW usage_costed AS
SELECT
    u.*,
    (  u.input_tokens * p.input_per_mtok
     + (u.cache_write_tokens - u.cache_write_1h_tokens) * coalesce(p.cache_write_per_mtok, p.input_per_mtok)
     + u.cache_write_1h_tokens * coalesce(p.cache_write_1h_per_mtok, 2 * p.input_per_mtok)
     + u.cache_read_tokens * coalesce(p.cache_read_per_mtok, p.input_per_mtok)
     + u.output_tokens * p.output_per_mtok
    ) / 1e6 AS cost_usd
FROM usage u
LEFT JOIN prices p
  ON p.model = u.model
 AND (p.valid_from IS NULL OR u.ts >= p.valid_from)
 AND (p.valid_to IS NULL OR u.ts < p.valid_to);

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
