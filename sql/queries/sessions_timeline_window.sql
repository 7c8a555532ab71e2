-- Which events of one session a bounded view keeps, newest first, into temp table
-- `session_timeline_window`. Buckets: prompts (kind prompt), tools (tool_call,
-- tool_result), responses (every other kind). Each bucket keeps at most its item count;
-- then the kept prompts and responses share $message_bytes of text, the kept tool events
-- $tool_bytes (text plus tool_input). The event that crosses a budget is truncated to what
-- remains (`keep_bytes`); older events of that budget are cut.
-- Parameters: $workspace, $provider, $session_id, $max_prompts, $max_responses,
-- $max_tools, $message_bytes, $tool_bytes
CREATE OR REPLACE TEMP TABLE session_timeline_window AS
WITH ev AS (
    SELECT event_id, ts, seq,
           CASE WHEN kind = 'prompt' THEN 'prompts'
                WHEN kind IN ('tool_call', 'tool_result') THEN 'tools'
                ELSE 'responses' END AS bucket,
           strlen(coalesce(text, '')) + strlen(coalesce(CAST(tool_input AS VARCHAR), '')) AS bytes
    FROM events
    WHERE workspace = $workspace AND provider = $provider AND session_id = $session_id
), counted AS (
    SELECT *,
           row_number() OVER (PARTITION BY bucket ORDER BY ts DESC NULLS LAST, seq DESC, event_id DESC)
               <= CASE bucket WHEN 'prompts' THEN $max_prompts
                              WHEN 'tools' THEN $max_tools
                              ELSE $max_responses END AS within_count,
           CASE WHEN bucket = 'tools' THEN $tool_bytes ELSE $message_bytes END AS budget
    FROM ev
), budgeted AS (
    SELECT *,
           CAST(coalesce(sum(bytes) OVER (
               PARTITION BY bucket = 'tools', within_count
               ORDER BY ts DESC NULLS LAST, seq DESC, event_id DESC
               ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS BIGINT) AS bytes_before
    FROM counted
)
SELECT event_id, bucket, bytes,
       within_count AND bytes_before < budget AS kept,
       CASE WHEN within_count AND bytes_before < budget
            THEN least(bytes, budget - bytes_before) ELSE 0 END::BIGINT AS keep_bytes
FROM budgeted
