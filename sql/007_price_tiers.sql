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

-- The public views this version changed are defined in sql/views/, which the migration
-- runner re-creates after every run: a migration changes tables only.
