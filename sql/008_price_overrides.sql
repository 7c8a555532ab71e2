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
-- instead of NULL when its model has no price. The view is also shaped for speed: the
-- rates of every price period are resolved per model name first, each CTE is referenced
-- once (a CTE referenced twice is materialized, and then every query on the view would
-- read all of `usage`'s columns), and the per-call part is one flat SELECT with an
-- equi-join on the model name.

-- `snapshot_source` says where a row's price comes from: 'bundled' (the installed
-- package's snapshot), 'fetched' (the genai-prices feed) or 'user' (an override). Only
-- the bundled snapshot existed before this version.
ALTER TABLE prices ADD COLUMN snapshot_source VARCHAR;

UPDATE prices SET snapshot_source = 'bundled' WHERE snapshot_version IS NOT NULL;

-- The public views this version changed are defined in sql/views/, which the migration
-- runner re-creates after every run: a migration changes tables only.
