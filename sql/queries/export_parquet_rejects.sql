-- The rejects of the exported provider(s) as a Hive-partitioned Parquet dataset
-- (workspace / provider of the source / month: the YYYY-MM, in $tz, of the start of the
-- import that recorded the reject). Inlined parameters: $workspace, $tz, $provider, $target
COPY (
    SELECT *, strftime(timezone($tz, imported_at), '%Y-%m') AS month
    FROM export_rejects($workspace, $provider)
) TO $target (FORMAT parquet, PARTITION_BY (workspace, provider, month), COMPRESSION zstd)
