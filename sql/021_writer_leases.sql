-- Schema version 21: who writes each workspace of a DuckLake catalog. A DuckDB file has
-- one writer, held by a file lock beside it; a lake is written from many machines, so
-- each writer of a workspace (an import, the publish step, a lifecycle change) holds
-- this row while it runs (agentlake.load.lease). `holder` is unique to the process;
-- `started` tells a reused process id from the holder's; a holder on another machine
-- that has not renewed for a while (each commit renews) is taken to be gone.
CREATE TABLE IF NOT EXISTS writer_leases (
    workspace   VARCHAR NOT NULL,
    holder      VARCHAR NOT NULL,
    host        VARCHAR NOT NULL,
    pid         BIGINT NOT NULL,
    started     VARCHAR,
    acquired_at TIMESTAMPTZ NOT NULL,
    renewed_at  TIMESTAMPTZ NOT NULL
);
