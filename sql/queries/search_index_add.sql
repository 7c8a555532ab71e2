-- Index the events just inserted (temp table `new_events`): their text and their tool
-- input (JSON text), both already redacted; the first 256 KiB of each event (a 4 MiB
-- tool output would otherwise become hundreds of thousands of token rows in one commit,
-- beyond the import's memory ceiling).
-- Parameters: $workspace
CREATE OR REPLACE TEMP TABLE new_postings AS
WITH tokens AS (
    SELECT event_id,
           unnest(regexp_split_to_array(lower(left(concat_ws(' ', text, CAST(tool_input AS VARCHAR)), 262144)), '[^a-z0-9]+')) AS token
    FROM new_events
    WHERE text IS NOT NULL OR tool_input IS NOT NULL
), counted AS (
    SELECT event_id, token, count(*)::INTEGER AS tf
    FROM tokens
    WHERE length(token) BETWEEN 2 AND 40
      AND token NOT IN ('the', 'and', 'for', 'that', 'this', 'with', 'are', 'was', 'but',
                        'not', 'you', 'have', 'has', 'had', 'its', 'from', 'they', 'will',
                        'would', 'there', 'their', 'what', 'which', 'when', 'can', 'all',
                        'were', 'been', 'into', 'than', 'then', 'them', 'these', 'our', 'out')
    GROUP BY ALL
), stems AS (
    -- stem each distinct word once, not every occurrence
    SELECT token, stem(token, 'porter') AS term FROM (SELECT DISTINCT token FROM counted)
), termed AS (
    SELECT c.event_id, s.term, sum(c.tf)::INTEGER AS tf
    FROM counted c JOIN stems s USING (token)
    GROUP BY ALL
)
SELECT event_id, term, tf, (sum(tf) OVER (PARTITION BY event_id))::INTEGER AS dl FROM termed;

INSERT INTO search_postings SELECT $workspace, term, event_id, tf, dl FROM new_postings;

INSERT INTO search_terms AS t
SELECT $workspace, term, count(*) FROM new_postings GROUP BY term
ON CONFLICT (workspace, term) DO UPDATE SET df = t.df + excluded.df;

INSERT INTO search_state AS s
SELECT $workspace, count(DISTINCT event_id), coalesce(sum(tf), 0), count(*), 0 FROM new_postings
ON CONFLICT (workspace) DO UPDATE SET
    docs = s.docs + excluded.docs,
    total_length = s.total_length + excluded.total_length,
    postings = s.postings + excluded.postings;
