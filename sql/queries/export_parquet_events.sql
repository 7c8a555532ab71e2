-- The exported events as a Hive-partitioned Parquet dataset (workspace / provider /
-- month: the YYYY-MM of the event's time in $tz; no time: the Hive default partition).
-- tool_input is written as text. Inlined parameters (COPY binds none): $workspace, $tz,
-- $since, $until, $provider, $project, $include_hidden, $target
COPY (
    SELECT * REPLACE (CAST(tool_input AS VARCHAR) AS tool_input),
           strftime(timezone($tz, ts), '%Y-%m') AS month
    FROM export_events($workspace, $tz, $since, $until, $provider, $project, $include_hidden)
) TO $target (FORMAT parquet, PARTITION_BY (workspace, provider, month), COMPRESSION zstd)
