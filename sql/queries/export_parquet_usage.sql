-- The exported model calls with their cost (`usage_costed`, the user's price overrides
-- in force) as a Hive-partitioned Parquet dataset (workspace / provider / month: the
-- YYYY-MM of the call's time in $tz; every call has a time). Inlined parameters: as
-- export_parquet_events.sql
COPY (
    SELECT *, strftime(timezone($tz, ts), '%Y-%m') AS month
    FROM report_calls($workspace, $tz, $since, $until, $provider, NULL, $project, $include_hidden, NULL)
) TO $target (FORMAT parquet, PARTITION_BY (workspace, provider, month), COMPRESSION zstd)
