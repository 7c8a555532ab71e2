-- One page of sessions as of import $snapshot, newest first: current rows no later import
-- changed, plus the archived versions that were current at $snapshot. Order key: the
-- update time in microseconds (sessions without one last), then provider and session id.
-- Keyset: rows strictly after ($after_key, $after_provider, $after_session).
-- Returns $limit + 1 rows so the caller knows whether another page follows.
-- Hidden sessions (lifecycle 'tombstoned') only with $include_hidden; $tag keeps the
-- sessions with that tag.
-- Parameters: $workspace, $snapshot, $providers (VARCHAR[]; empty = all), $project,
-- $since, $text, $include_hidden, $tag, $after_key, $after_provider, $after_session,
-- $limit
WITH as_of AS (
    SELECT provider, session_id, parent_session_id, project_path, title, first_prompt,
           preview, model, started_at, updated_at, prompts, events, tool_calls, total_tokens,
           index_tokens, lifecycle
    FROM sessions
    WHERE workspace = $workspace AND last_import_id <= $snapshot
    UNION ALL
    SELECT provider, session_id, parent_session_id, project_path, title, first_prompt,
           preview, model, started_at, updated_at, prompts, events, tool_calls, total_tokens,
           index_tokens, lifecycle
    FROM session_versions
    WHERE workspace = $workspace AND last_import_id <= $snapshot AND superseded_by > $snapshot
), keyed AS (
    SELECT *, coalesce(epoch_us(updated_at), -9223372036854775807) AS order_key
    FROM as_of
    WHERE ($include_hidden OR lifecycle = 'active')
      AND ($tag IS NULL OR EXISTS (
            SELECT 1 FROM session_tags t
            WHERE t.workspace = $workspace AND t.provider = as_of.provider
              AND t.session_id = as_of.session_id AND t.tag = $tag))
      AND (len(CAST($providers AS VARCHAR[])) = 0 OR list_contains(CAST($providers AS VARCHAR[]), provider))
      AND ($project IS NULL OR contains(project_path, $project))
      AND ($since IS NULL OR updated_at >= $since)
      AND ($text IS NULL
           OR contains(lower(title), lower($text))
           OR contains(lower(first_prompt), lower($text))
           OR contains(lower(preview), lower($text)))
)
SELECT provider, session_id, parent_session_id, project_path, title, first_prompt, preview,
       model, started_at, updated_at, prompts, events, tool_calls, total_tokens, index_tokens,
       lifecycle, order_key
FROM keyed
WHERE $after_key IS NULL
   OR order_key < $after_key
   OR (order_key = $after_key
       AND (provider > $after_provider
            OR (provider = $after_provider AND session_id > $after_session)))
ORDER BY order_key DESC, provider, session_id
LIMIT $limit + 1
