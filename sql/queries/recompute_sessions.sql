-- Recompute the aggregates of the sessions listed in temp table `touched` from the
-- events and calls that remain (after rows were withdrawn). Their previous values go to
-- `session_versions` first; the running import is the workspace's newest receipt
-- (begin_import writes it before any commit, under the writer lock).
-- Parameters: $workspace
CREATE OR REPLACE TEMP TABLE touched_import AS
SELECT max(import_id) AS import_id FROM imports WHERE workspace = $workspace;

INSERT INTO session_versions BY NAME
SELECT s.*, (SELECT import_id FROM touched_import) AS superseded_by
FROM sessions s
WHERE s.workspace = $workspace
  AND s.last_import_id < (SELECT import_id FROM touched_import)
  AND (s.provider, s.session_id) IN (SELECT provider, session_id FROM touched);

UPDATE sessions s
SET started_at = a.started_at, updated_at = a.updated_at,
    prompts = coalesce(a.prompts, 0), events = coalesce(a.events, 0),
    tool_calls = coalesce(a.tool_calls, 0),
    first_prompt = a.first_prompt, first_prompt_at = a.first_prompt_at,
    total_tokens = coalesce(u.total_tokens, 0),
    last_import_id = (SELECT import_id FROM touched_import)
FROM touched t
LEFT JOIN (
    SELECT e.provider, e.session_id, min(e.ts) AS started_at, max(e.ts) AS updated_at,
           count(*) FILTER (e.kind = 'prompt') AS prompts, count(*) AS events,
           count(*) FILTER (e.kind = 'tool_call') AS tool_calls,
           arg_min(left(e.text, 1000), (coalesce(e.ts, 'infinity'::TIMESTAMPTZ), left(e.text, 1000)))
               FILTER (e.kind = 'prompt') AS first_prompt,
           min(coalesce(e.ts, 'infinity'::TIMESTAMPTZ)) FILTER (e.kind = 'prompt') AS first_prompt_at
    FROM events e SEMI JOIN touched USING (provider, session_id)
    WHERE e.workspace = $workspace
    GROUP BY ALL
) a USING (provider, session_id)
LEFT JOIN (
    SELECT u.provider, u.session_id, sum(u.total_tokens)::BIGINT AS total_tokens
    FROM usage u SEMI JOIN touched USING (provider, session_id)
    WHERE u.workspace = $workspace
    GROUP BY ALL
) u USING (provider, session_id)
WHERE s.workspace = $workspace AND s.provider = t.provider AND s.session_id = t.session_id;
