-- Schema version 19: a source is bound to the workspace that first imported it. Another
-- workspace's import refuses it (SOURCE_NOT_AUTHORIZED) before reading it, unless the
-- owning workspace released it: `source_releases` holds one row per source a workspace
-- gave up (`agentlake sources release`). The releasing workspace keeps its imported rows
-- and may go on reading the file until another workspace imports it.
CREATE TABLE IF NOT EXISTS source_releases (
    workspace   VARCHAR NOT NULL,
    source_id   VARCHAR NOT NULL,
    provider    VARCHAR NOT NULL,
    path        VARCHAR NOT NULL,  -- where the file was when released
    released_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (workspace, source_id)
);
