-- Index the events just inserted (temp table `new_events`): their text and their tool
-- input (JSON text), both already redacted; the first 256 KiB of each event (a 4 MiB
-- tool output would otherwise become hundreds of thousands of token rows in one commit,
-- beyond the import's memory ceiling). Each event gets the next number in the index
-- (`search_docs`), and its postings carry that number.
-- Parameters: $workspace
CREATE OR REPLACE TEMP TABLE new_docs AS
SELECT (SELECT coalesce(max(doc), 0) FROM search_docs) + row_number() OVER (ORDER BY event_id) AS doc,
       event_id,
       left(concat_ws(' ', text, CAST(tool_input AS VARCHAR)), 262144) AS body
FROM new_events
WHERE text IS NOT NULL OR tool_input IS NOT NULL;

CREATE OR REPLACE TEMP TABLE new_postings AS
WITH tokens AS (
    SELECT doc, unnest(regexp_split_to_array(lower(body), '[^a-z0-9]+')) AS token
    FROM new_docs
), kept AS (
    SELECT doc, token
    FROM tokens
    WHERE length(token) BETWEEN 2 AND 40
      AND token NOT IN ('the', 'and', 'for', 'that', 'this', 'with', 'are', 'was', 'but',
                        'not', 'you', 'have', 'has', 'had', 'its', 'from', 'they', 'will',
                        'would', 'there', 'their', 'what', 'which', 'when', 'can', 'all',
                        'were', 'been', 'into', 'than', 'then', 'them', 'these', 'our', 'out')
), stems AS (
    -- stem each distinct word once, not every occurrence
    SELECT token, stem(token, 'porter') AS term FROM (SELECT DISTINCT token FROM kept)
), termed AS (
    -- one aggregation: occurrences counted per event and stem (counting per word first
    -- and summing per stem took a second pass over as many rows)
    SELECT k.doc, s.term, count(*)::INTEGER AS tf
    FROM kept k JOIN stems s USING (token)
    GROUP BY ALL
)
SELECT doc, term, tf, (sum(tf) OVER (PARTITION BY doc))::INTEGER AS dl FROM termed;

-- Only events with at least one term are numbered in the index.
INSERT INTO search_docs
SELECT $workspace, doc, event_id FROM new_docs
WHERE doc IN (SELECT doc FROM new_postings);

INSERT INTO search_postings SELECT $workspace, term, doc, tf, dl FROM new_postings;

INSERT INTO search_terms AS t
SELECT $workspace, term, count(*) FROM new_postings GROUP BY term
ON CONFLICT (workspace, term) DO UPDATE SET df = t.df + excluded.df;

INSERT INTO search_state AS s
SELECT $workspace, count(DISTINCT doc), coalesce(sum(tf), 0), count(*), 0 FROM new_postings
ON CONFLICT (workspace) DO UPDATE SET
    docs = s.docs + excluded.docs,
    total_length = s.total_length + excluded.total_length,
    postings = s.postings + excluded.postings;
