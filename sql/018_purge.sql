-- Schema version 18: purging a session for good, and keeping it out.
--
-- * `purge_receipts`: one content-free row per purge (`agentlake sessions purge ID
--   --confirm OPERATION_ID`), written in the purge's transaction and never deleted: the
--   operation id (a digest of the scope the preview showed), the session named and the
--   sessions purged with it (its sub-agent subtree), the count of rows deleted per table
--   (JSON), the digests of their row ids, when and by whom. No transcript text, title or
--   path. A repeated confirmation returns this row.
-- * `purge_revocations`: one row per purged session while it stays revoked. The load
--   stage withholds every row of a revoked (workspace, provider, session) a later import
--   reads (the transcript's old bytes re-read or its later appends alike) and counts them
--   in the import's receipt (`imports.withheld`). `source_ids` are the sources that held
--   its rows: `import --allow-purged` re-reads them from byte 0 as a new generation and
--   drops the revocation of each session it imports again.
-- Runs again without effect.
CREATE TABLE IF NOT EXISTS purge_receipts (
    workspace     VARCHAR NOT NULL,
    operation_id  VARCHAR NOT NULL,
    provider      VARCHAR NOT NULL,
    session_id    VARCHAR NOT NULL,
    session_ids   VARCHAR[] NOT NULL,  -- the session named first, then its subtree, sorted
    counts        JSON NOT NULL,       -- rows deleted per table
    digests       JSON NOT NULL,       -- per table, a digest of the deleted rows' ids
    purged_at     TIMESTAMPTZ NOT NULL,
    actor         VARCHAR NOT NULL,
    PRIMARY KEY (workspace, operation_id)
);

CREATE TABLE IF NOT EXISTS purge_revocations (
    workspace     VARCHAR NOT NULL,
    provider      VARCHAR NOT NULL,
    session_id    VARCHAR NOT NULL,
    operation_id  VARCHAR NOT NULL,
    source_ids    VARCHAR[] NOT NULL,
    purged_at     TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (workspace, provider, session_id)
);

ALTER TABLE imports ADD COLUMN IF NOT EXISTS withheld BIGINT DEFAULT 0;
