-- Schema version 17: what users do to their catalog. `audit` holds one content-free row
-- per mutation (hide, restore, tag, purge, relocate…): who did what to which session of
-- which workspace, with counts and a digest of the scope, never any transcript text.
-- `audit_id` grows with every row: `agentlake audit` pages by it (a keyset cursor).
-- `session_tags` holds the tags users give sessions (1-64 safe characters each).
CREATE SEQUENCE IF NOT EXISTS audit_ids START 1;
CREATE TABLE IF NOT EXISTS audit (
    audit_id   BIGINT NOT NULL DEFAULT nextval('audit_ids') PRIMARY KEY,
    workspace  VARCHAR NOT NULL,
    operation  VARCHAR NOT NULL,
    actor      VARCHAR NOT NULL,
    provider   VARCHAR,
    session_id VARCHAR,
    counts     JSON,
    digest     VARCHAR,
    done_at    TIMESTAMPTZ NOT NULL
);
CREATE TABLE IF NOT EXISTS session_tags (
    workspace  VARCHAR NOT NULL,
    provider   VARCHAR NOT NULL,
    session_id VARCHAR NOT NULL,
    tag        VARCHAR NOT NULL,
    tagged_at  TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (workspace, provider, session_id, tag)
);
