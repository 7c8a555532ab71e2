-- The exported selection as the lines of an `aiwg.session-interchange` 1.x file after
-- its header, one JSON text per row (`line`), built by DuckDB in bulk: per session, an
-- `agentlake.session` line (sequence 0), its events (sequence 1.., in catalog order),
-- then its calls as `agentlake.usage` lines, each ending in a newline. `part` is 's',
-- 'e' or 'u'.
-- Null members are left out (json_merge_patch drops them), so a line carries only what
-- is known; the text, the bulk of a line, is written in front apart (patching it too
-- took a copy of every text at once, hundreds of MB for one long session). Interchange fields: sessionId = provider:session_id (unique in the file
-- across providers); eventId = the event id, `usage:` + call id, or `session:` +
-- provider/session id (unique in the file); occurredAt in UTC with `Z`.
-- Everything agentlake needs to rebuild the same rows is under extensions.agentlake
-- (README "Export"). Only the sessions of the registered table `export_chunk`
-- (provider, session_id) are read: the export runs this query chunk by chunk, so that
-- each sort holds a bounded number of lines. Parameters: $workspace, $tz, $since,
-- $until, $provider, $project, $include_hidden
WITH s AS (
    SELECT x.*
    FROM export_sessions($workspace, $tz, $since, $until, $provider, $project, $include_hidden) x
    JOIN export_chunk c USING (provider, session_id)
    WHERE c.lo = 0
), numbered AS (
    -- Numbered on the narrow columns alone: a session's texts are never held by a window.
    SELECT x.event_id, c.lo, c.hi,
           row_number() OVER (PARTITION BY x.provider, x.session_id ORDER BY x.seq, x.ts, x.event_id) AS n
    FROM export_events($workspace, $tz, $since, $until, $provider, $project, $include_hidden) x
    JOIN export_chunk c USING (provider, session_id)
), e AS (
    -- Joined with the chunk's sessions first: the scan then skips the row groups of
    -- other sessions (a chunk's session ids are one sorted run).
    SELECT x.*, numbered.n
    FROM export_events($workspace, $tz, $since, $until, $provider, $project, $include_hidden) x
    SEMI JOIN export_chunk c ON c.provider = x.provider AND c.session_id = x.session_id
    JOIN numbered USING (event_id)
    WHERE numbered.n BETWEEN numbered.lo AND numbered.hi
), u AS (
    SELECT * FROM (
        SELECT x.*, c.lo, c.hi,
               c.events + row_number() OVER (PARTITION BY x.provider, x.session_id ORDER BY x.ts, x.call_id) AS n
        FROM report_calls($workspace, $tz, $since, $until, $provider, NULL, $project, $include_hidden, NULL) x
        JOIN export_chunk c USING (provider, session_id)
    ) WHERE n BETWEEN lo AND hi
), lines AS (
    SELECT s.provider, s.session_id, 0 AS part_order, 0::BIGINT AS n, 's' AS part,
        {'type': 'event', 'sessionId': s.provider || ':' || s.session_id,
         'eventId': 'session:' || s.provider || '/' || s.session_id, 'sequence': 0,
         'kind': 'agentlake.session', 'lifecycle': 'complete',
         'occurredAt': strftime(timezone('UTC', s.started_at), '%Y-%m-%dT%H:%M:%S.%fZ'),
         'extensions': {'agentlake': {
            'provider': s.provider, 'sessionId': s.session_id,
            'parentSessionId': s.parent_session_id, 'projectPath': s.project_path,
            'title': s.title, 'titleRank': s.title_rank, 'gitBranch': s.git_branch,
            'cliVersion': s.cli_version, 'model': s.model, 'preview': s.preview,
            'archived': s.archived, 'indexTokens': s.index_tokens,
            'lifecycle': s.lifecycle,
            'startedAt': strftime(timezone('UTC', s.started_at), '%Y-%m-%dT%H:%M:%S.%fZ'),
            'updatedAt': strftime(timezone('UTC', s.updated_at), '%Y-%m-%dT%H:%M:%S.%fZ')}}
        } AS body, coalesce(s.title, '') AS text
    FROM s
    UNION ALL
    SELECT e.provider, e.session_id, 1, e.n, 'e',
        {'type': 'event', 'sessionId': e.provider || ':' || e.session_id, 'eventId': e.event_id,
         'sequence': e.n,
         'kind': CASE e.kind WHEN 'prompt' THEN 'message' WHEN 'response' THEN 'message'
                 WHEN 'tool_call' THEN 'tool-call' WHEN 'tool_result' THEN 'tool-result'
                 ELSE e.kind END,
         'role': e.role, 'lifecycle': 'complete',
         'occurredAt': strftime(timezone('UTC', e.ts), '%Y-%m-%dT%H:%M:%S.%fZ'),
         'extensions': {'toolName': e.tool_name, 'toolCallId': e.tool_call_id,
            'input': e.tool_input, 'isError': e.is_error,
            'agentlake': {
              'provider': e.provider, 'sessionId': e.session_id, 'kind': e.kind,
              'role': e.role, 'seq': e.seq, 'model': e.model, 'hasText': e.text IS NOT NULL,
              'toolName': e.tool_name, 'toolCallId': e.tool_call_id,
              'toolInput': CAST(e.tool_input AS VARCHAR), 'isError': e.is_error,
              'sidechain': e.is_sidechain, 'nativeId': e.native_id}}
        }, coalesce(e.text, '')
    FROM e
    UNION ALL
    SELECT u.provider, u.session_id, 2, u.n, 'u',
        {'type': 'event', 'sessionId': u.provider || ':' || u.session_id,
         'eventId': 'usage:' || u.call_id, 'sequence': u.n,
         'kind': 'agentlake.usage', 'lifecycle': 'complete',
         'occurredAt': strftime(timezone('UTC', u.ts), '%Y-%m-%dT%H:%M:%S.%fZ'),
         'extensions': {
            'usage': {'model': u.model, 'inputTokens': u.input_tokens,
              'outputTokens': u.output_tokens, 'cacheReadTokens': u.cache_read_tokens,
              'cacheWriteTokens': u.cache_write_tokens, 'reasoningTokens': u.reasoning_tokens},
            'agentlake': {
              'provider': u.provider, 'sessionId': u.session_id, 'callId': u.call_id,
              'messageId': u.message_id, 'requestId': u.request_id, 'nativeId': u.native_id,
              'model': u.model, 'inputTokens': u.input_tokens,
              'cacheWriteTokens': u.cache_write_tokens,
              'cacheWrite1hTokens': u.cache_write_1h_tokens,
              'cacheReadTokens': u.cache_read_tokens, 'outputTokens': u.output_tokens,
              'reasoningTokens': u.reasoning_tokens, 'mergeRank': u.merge_rank,
              'perSession': u.per_session, 'sidechain': u.is_sidechain,
              'costUsd': u.cost_usd}}
        }, ''
    FROM u
)
SELECT part,
       '{"text":' || to_json(text) || ',' || substr(CAST(json_merge_patch('{}', to_json(body)) AS VARCHAR), 2)
           || chr(10) AS line
FROM lines
ORDER BY provider, session_id, part_order, n
