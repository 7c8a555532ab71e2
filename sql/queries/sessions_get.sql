-- One session's metadata, and its parent's and children's ids and titles (hidden
-- children only with $include_hidden).
-- Parameters: $workspace, $provider, $session_id, $include_hidden
SELECT s.provider, s.session_id, s.parent_session_id, s.project_path, s.title, s.first_prompt,
       s.preview, s.model, s.git_branch, s.cli_version, s.started_at, s.updated_at, s.prompts,
       s.events, s.tool_calls, s.total_tokens, s.index_tokens, s.lifecycle, s.archived,
       p.title AS parent_title,
       p.session_id IS NOT NULL AS parent_known,
       (SELECT coalesce(list({'session_id': c.session_id, 'title': coalesce(c.title, c.first_prompt),
                              'started_at': c.started_at, 'updated_at': c.updated_at}
                             ORDER BY c.started_at NULLS LAST, c.session_id), [])
        FROM sessions c
        WHERE c.workspace = s.workspace AND c.provider = s.provider
          AND c.parent_session_id = s.session_id
          AND ($include_hidden OR c.lifecycle = 'active')) AS children
FROM sessions s
LEFT JOIN sessions p
  ON p.workspace = s.workspace AND p.provider = s.provider AND p.session_id = s.parent_session_id
WHERE s.workspace = $workspace AND s.provider = $provider AND s.session_id = $session_id
