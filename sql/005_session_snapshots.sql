-- Schema version 5: stable session listings.
--
-- * `settings` holds per-catalog values. `cursor_secret` (32 random bytes, hex, drawn by
--   the migrating process) keys the HMAC of pagination cursors; it is never printed.
-- * `sessions.last_import_id` is the import that produced a row's current values. Every
--   statement that changes a session first copies its previous values into
--   `session_versions` (with `superseded_by` = the changing import), so the sessions
--   "as of import S" are the current rows with last_import_id <= S plus the archived
--   versions with last_import_id <= S < superseded_by. A later migration that adds a
--   column to `sessions` adds it to `session_versions` too.
-- * `first_prompt` / `first_prompt_at`: the earliest prompt (first 1,000 characters; ties
--   in time go to the smaller text) for listings and their text filter.
-- * `total_tokens`: the sum of the session's deduplicated calls in `usage`.

CREATE TABLE settings (
    key    VARCHAR PRIMARY KEY,
    value  VARCHAR NOT NULL
);

INSERT INTO settings VALUES ('cursor_secret', $random_secret);

ALTER TABLE sessions ADD COLUMN last_import_id BIGINT DEFAULT 0;
ALTER TABLE sessions ADD COLUMN first_prompt VARCHAR;
ALTER TABLE sessions ADD COLUMN first_prompt_at TIMESTAMPTZ;
ALTER TABLE sessions ADD COLUMN total_tokens BIGINT DEFAULT 0;

UPDATE sessions s
SET first_prompt = a.first_prompt, first_prompt_at = a.first_prompt_at
FROM (
    SELECT workspace, provider, session_id,
           arg_min(left(text, 1000), (coalesce(ts, 'infinity'::TIMESTAMPTZ), left(text, 1000))) AS first_prompt,
           min(coalesce(ts, 'infinity'::TIMESTAMPTZ)) AS first_prompt_at
    FROM events WHERE kind = 'prompt'
    GROUP BY ALL
) a
WHERE s.workspace = a.workspace AND s.provider = a.provider AND s.session_id = a.session_id;

UPDATE sessions s
SET total_tokens = a.total_tokens
FROM (
    SELECT workspace, provider, session_id, sum(total_tokens)::BIGINT AS total_tokens
    FROM usage GROUP BY ALL
) a
WHERE s.workspace = a.workspace AND s.provider = a.provider AND s.session_id = a.session_id;

CREATE TABLE session_versions AS
SELECT *, CAST(NULL AS BIGINT) AS superseded_by FROM sessions LIMIT 0;
