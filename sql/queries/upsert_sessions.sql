-- Merge session metadata hints and aggregates of the newly inserted events into
-- `sessions`: earliest start, latest update (events and providers' index times alike),
-- counts added, the earliest prompt, and a null never erases a known value. A session
-- this import changes for the first time keeps its previous values in
-- `session_versions` (see 005_session_snapshots.sql). A session is created hidden when
-- its hint says so (a re-imported export of a hidden session); an existing session keeps
-- its lifecycle. Parameters: $workspace, $import_id
CREATE OR REPLACE TEMP TABLE session_keys AS
SELECT provider, session_id FROM batch_sessions UNION SELECT provider, session_id FROM new_events;

INSERT INTO session_versions BY NAME
SELECT s.*, $import_id AS superseded_by
FROM sessions s
WHERE s.workspace = $workspace AND s.last_import_id < $import_id
  AND (s.provider, s.session_id) IN (SELECT provider, session_id FROM session_keys);

INSERT INTO sessions AS s (workspace, provider, session_id, parent_session_id, project_path,
                           title, title_rank, git_branch, cli_version, started_at, updated_at,
                           prompts, events, tool_calls, model, preview, archived,
                           last_import_id, first_prompt, first_prompt_at, total_tokens,
                           index_tokens, lifecycle)
SELECT $workspace, k.provider, k.session_id, h.parent_session_id, h.project_path, h.title, h.title_rank,
       h.git_branch, h.cli_version,
       least(a.started_at, h.hint_started_at), greatest(a.updated_at, h.hint_updated_at),
       coalesce(a.prompts, 0), coalesce(a.events, 0), coalesce(a.tool_calls, 0),
       h.model, h.preview, h.archived,
       $import_id, a.first_prompt, a.first_prompt_at, 0, h.index_tokens,
       CASE WHEN h.hidden THEN 'tombstoned' ELSE 'active' END
FROM session_keys k
LEFT JOIN batch_sessions h USING (provider, session_id)
LEFT JOIN (
    SELECT provider, session_id, min(ts) AS started_at, max(ts) AS updated_at,
           count(*) FILTER (kind = 'prompt') AS prompts,
           count(*) AS events,
           count(*) FILTER (kind = 'tool_call') AS tool_calls,
           arg_min(left(text, 1000), (coalesce(ts, 'infinity'::TIMESTAMPTZ), left(text, 1000)))
               FILTER (kind = 'prompt') AS first_prompt,
           min(coalesce(ts, 'infinity'::TIMESTAMPTZ)) FILTER (kind = 'prompt') AS first_prompt_at
    FROM new_events GROUP BY provider, session_id
) a USING (provider, session_id)
ON CONFLICT (workspace, provider, session_id) DO UPDATE SET
    parent_session_id = coalesce(s.parent_session_id, excluded.parent_session_id),
    project_path      = coalesce(s.project_path, excluded.project_path),
    title             = CASE WHEN excluded.title IS NOT NULL
                              AND coalesce(excluded.title_rank, 0) >= coalesce(s.title_rank, -1)
                             THEN excluded.title ELSE s.title END,
    title_rank        = CASE WHEN excluded.title IS NOT NULL
                              AND coalesce(excluded.title_rank, 0) >= coalesce(s.title_rank, -1)
                             THEN excluded.title_rank ELSE s.title_rank END,
    git_branch        = coalesce(excluded.git_branch, s.git_branch),
    cli_version       = coalesce(excluded.cli_version, s.cli_version),
    started_at        = least(s.started_at, excluded.started_at),
    updated_at        = greatest(s.updated_at, excluded.updated_at),
    prompts           = s.prompts + excluded.prompts,
    events            = s.events + excluded.events,
    tool_calls        = s.tool_calls + excluded.tool_calls,
    model             = coalesce(excluded.model, s.model),
    preview           = coalesce(excluded.preview, s.preview),
    archived          = coalesce(excluded.archived, s.archived),
    index_tokens      = coalesce(excluded.index_tokens, s.index_tokens),
    last_import_id    = excluded.last_import_id,
    first_prompt      = CASE WHEN excluded.first_prompt_at IS NOT NULL
                              AND (s.first_prompt_at IS NULL
                                   OR (excluded.first_prompt_at, excluded.first_prompt)
                                      < (s.first_prompt_at, s.first_prompt))
                             THEN excluded.first_prompt ELSE s.first_prompt END,
    first_prompt_at   = CASE WHEN excluded.first_prompt_at IS NOT NULL
                              AND (s.first_prompt_at IS NULL
                                   OR (excluded.first_prompt_at, excluded.first_prompt)
                                      < (s.first_prompt_at, s.first_prompt))
                             THEN excluded.first_prompt_at ELSE s.first_prompt_at END;
