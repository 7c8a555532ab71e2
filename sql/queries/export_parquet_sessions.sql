-- The exported sessions as a Hive-partitioned Parquet dataset (workspace / provider /
-- month: the YYYY-MM of `started_at` in $tz; no start: the Hive default partition).
-- Inlined parameters: as export_parquet_events.sql
COPY (
    SELECT *, strftime(timezone($tz, started_at), '%Y-%m') AS month
    FROM export_sessions($workspace, $tz, $since, $until, $provider, $project, $include_hidden)
) TO $target (FORMAT parquet, PARTITION_BY (workspace, provider, month), COMPRESSION zstd)
