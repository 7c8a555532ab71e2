-- Schema version 12: tokens of delegated work.
--
-- * `session_rollup` places every session in the tree its parent links make (Claude
--   Code subagent transcripts, Codex forks and spawned threads, Gemini CLI subagents,
--   Cursor subagent composers all set `sessions.parent_session_id`): one row per
--   session with the root of its tree, its depth below that root and its lineage (the
--   root first, the session last). A session whose parent is not in the catalog is its
--   own root. The walk up from each session is bounded: it stops at a session it has
--   already passed (a loop of parent links: the loop's smallest session id becomes the
--   root of every session in and under the loop, its own parent link ignored) and after
--   64 links (a deeper session is rooted at its 64th ancestor). Every session has
--   exactly one row, so a total over a root's sessions counts each call once.
-- * `sessions.index_tokens`: the token total a provider's own thread index records
--   for a session (Codex `state_5.sqlite` `threads.tokens_used`). It is never a call:
--   it has no time, day or model, and no report total includes it. Reports and
--   listings show it only for sessions without calls (a thread whose rollout is gone).
-- * `rate_limits`: one row per window of each rate-limit snapshot a provider writes
--   into its transcripts (Codex `token_count` events' `rate_limits`): the plan, the
--   percentage of the window used, the window's length and when it resets (UTC). Its
--   identity is the session, the snapshot's time, the limit and the window, so a
--   re-import or an archived copy of a rollout adds no row.

ALTER TABLE sessions ADD COLUMN IF NOT EXISTS index_tokens BIGINT;
ALTER TABLE session_versions ADD COLUMN IF NOT EXISTS index_tokens BIGINT;

CREATE TABLE IF NOT EXISTS rate_limits (
    workspace       VARCHAR NOT NULL,
    provider        VARCHAR NOT NULL,
    session_id      VARCHAR NOT NULL,
    ts              TIMESTAMPTZ NOT NULL,  -- when the snapshot was written
    limit_id        VARCHAR,               -- the limit it measures ('codex', a model's own limit); NULL: not named
    window_kind     VARCHAR NOT NULL,      -- 'primary' | 'secondary' (the slot; its length says what it is)
    used_percent    DOUBLE,
    window_minutes  INTEGER,               -- 300 = 5 hours, 10080 = a week
    resets_at       TIMESTAMPTZ,           -- absolute, UTC
    plan_type       VARCHAR,               -- 'plus', 'pro', … when the snapshot names it
    source_id       VARCHAR NOT NULL,
    source_offset   BIGINT NOT NULL,
    import_id       BIGINT NOT NULL
);

-- The public view this version added, session_rollup, is defined in sql/views/, which
-- the migration runner re-creates after every run: a migration changes tables only.
