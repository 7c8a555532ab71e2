-- Refusals already reported, one row per refused source of a workspace (DESIGN §5).
-- A run exits 1 only for a refusal it is the first to meet: a source refused for the
-- first time, or for another reason (code or message) than its last report. A refusal
-- that stays as it was is counted as "still refused" and leaves the exit status 0, so a
-- nightly job reports a lasting problem once, not every night. Rows of sources that are
-- no longer refused go when a complete run of their provider finds them fine.
CREATE TABLE IF NOT EXISTS refusals (
    workspace        VARCHAR NOT NULL,
    source_id        VARCHAR NOT NULL,
    provider         VARCHAR NOT NULL,
    path             VARCHAR NOT NULL,
    code             VARCHAR NOT NULL,
    message          VARCHAR,
    first_import_id  BIGINT NOT NULL,  -- the run that reported this code and message
    last_import_id   BIGINT NOT NULL,  -- the last run that found it still refused
    PRIMARY KEY (workspace, source_id)
);
