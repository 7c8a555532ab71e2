-- agentlake catalog, schema version 1. Public contract: DESIGN §3 (README "Catalog").
-- Every table carries `workspace`; every query filters on it.

CREATE TABLE schema_version (
    version     INTEGER NOT NULL,
    name        VARCHAR NOT NULL,
    applied_at  TIMESTAMPTZ NOT NULL DEFAULT current_timestamp
);

CREATE TABLE sources (
    source_id          VARCHAR NOT NULL,
    workspace          VARCHAR NOT NULL,
    provider           VARCHAR NOT NULL,
    path               VARCHAR NOT NULL,
    device             UBIGINT,
    inode              UBIGINT,
    size_bytes         BIGINT,      -- size when last read (or skipped as unchanged)
    mtime_ns           BIGINT,      -- mtime when last read
    position_kind      VARCHAR NOT NULL,  -- 'byte-offset' | 'document' | 'sqlite'
    committed_offset   BIGINT NOT NULL DEFAULT 0,  -- always just after a newline
    prefix_digest      VARCHAR,     -- blake2b of <= 64 KiB before committed_offset
    generation         INTEGER NOT NULL DEFAULT 1,
    adapter_version    VARCHAR NOT NULL,
    policy_version     INTEGER NOT NULL,
    checkpoint_version INTEGER NOT NULL DEFAULT 1,
    continuity         VARCHAR,     -- the planner's last outcome for this source
    status             VARCHAR NOT NULL,  -- 'ok' | 'refused'
    refusal            VARCHAR,     -- one-line reason when refused
    records            BIGINT NOT NULL DEFAULT 0,
    rejected           BIGINT NOT NULL DEFAULT 0,
    last_import_id     BIGINT,
    PRIMARY KEY (workspace, source_id)
);

CREATE TABLE sessions (
    workspace          VARCHAR NOT NULL,
    provider           VARCHAR NOT NULL,
    session_id         VARCHAR NOT NULL,
    parent_session_id  VARCHAR,
    project_path       VARCHAR,
    title              VARCHAR,
    title_rank         TINYINT,
    git_branch         VARCHAR,
    cli_version        VARCHAR,
    started_at         TIMESTAMPTZ,
    updated_at         TIMESTAMPTZ,
    prompts            BIGINT NOT NULL DEFAULT 0,
    events             BIGINT NOT NULL DEFAULT 0,
    tool_calls         BIGINT NOT NULL DEFAULT 0,
    lifecycle          VARCHAR NOT NULL DEFAULT 'active',  -- 'active' | 'tombstoned'
    PRIMARY KEY (workspace, provider, session_id)
);

CREATE TABLE events (
    event_id       VARCHAR NOT NULL,
    workspace      VARCHAR NOT NULL,
    provider       VARCHAR NOT NULL,
    session_id     VARCHAR NOT NULL,
    seq            BIGINT NOT NULL,
    ts             TIMESTAMPTZ,
    kind           VARCHAR NOT NULL,  -- prompt|response|reasoning|tool_call|tool_result|summary|system
    role           VARCHAR,
    model          VARCHAR,
    text           VARCHAR,           -- redacted
    tool_name      VARCHAR,
    tool_call_id   VARCHAR,
    tool_input     JSON,              -- redacted
    is_error       BOOLEAN,
    is_sidechain   BOOLEAN NOT NULL DEFAULT false,
    source_id      VARCHAR NOT NULL,
    source_offset  BIGINT NOT NULL,
    import_id      BIGINT NOT NULL
);

CREATE TABLE usage (
    call_id                VARCHAR NOT NULL,
    workspace              VARCHAR NOT NULL,
    provider               VARCHAR NOT NULL,
    session_id             VARCHAR NOT NULL,
    message_id             VARCHAR,
    request_id             VARCHAR,
    is_sidechain           BOOLEAN NOT NULL DEFAULT false,
    ts                     TIMESTAMPTZ NOT NULL,
    model                  VARCHAR,
    input_tokens           BIGINT NOT NULL,
    cache_write_tokens     BIGINT NOT NULL,
    cache_write_1h_tokens  BIGINT NOT NULL,
    cache_read_tokens      BIGINT NOT NULL,
    output_tokens          BIGINT NOT NULL,
    reasoning_tokens       BIGINT NOT NULL,
    total_tokens           BIGINT NOT NULL,
    source_id              VARCHAR NOT NULL,
    source_offset          BIGINT NOT NULL,
    import_id              BIGINT NOT NULL
);

CREATE TABLE imports (
    import_id          BIGINT NOT NULL,
    workspace          VARCHAR NOT NULL,
    receipt_version    INTEGER NOT NULL DEFAULT 1,
    started_at         TIMESTAMPTZ NOT NULL,
    ended_at           TIMESTAMPTZ,
    status             VARCHAR NOT NULL,  -- running|ok|refused|failed|abandoned
    sources_seen       BIGINT NOT NULL DEFAULT 0,
    sources_imported   BIGINT NOT NULL DEFAULT 0,
    sources_unchanged  BIGINT NOT NULL DEFAULT 0,
    sources_failed     BIGINT NOT NULL DEFAULT 0,
    sources_opened     BIGINT NOT NULL DEFAULT 0,
    records            BIGINT NOT NULL DEFAULT 0,
    events             BIGINT NOT NULL DEFAULT 0,
    usage_rows         BIGINT NOT NULL DEFAULT 0,
    rejected           BIGINT NOT NULL DEFAULT 0,
    bytes              BIGINT NOT NULL DEFAULT 0,
    pending_bytes      BIGINT NOT NULL DEFAULT 0,
    peak_rss_bytes     BIGINT,
    detail             JSON,             -- per-outcome counts, refused sources
    PRIMARY KEY (workspace, import_id)
);

CREATE TABLE rejects (
    workspace   VARCHAR NOT NULL,
    source_id   VARCHAR NOT NULL,
    "offset"    BIGINT NOT NULL,
    length      BIGINT NOT NULL,
    reason      VARCHAR NOT NULL,
    detail      VARCHAR,
    import_id   BIGINT NOT NULL
);

CREATE TABLE prices (
    model                    VARCHAR NOT NULL,
    provider                 VARCHAR,
    valid_from               TIMESTAMPTZ,
    valid_to                 TIMESTAMPTZ,
    input_per_mtok           DOUBLE,
    output_per_mtok          DOUBLE,
    cache_write_per_mtok     DOUBLE,
    cache_write_1h_per_mtok  DOUBLE,
    cache_read_per_mtok      DOUBLE,
    snapshot                 VARCHAR
);
