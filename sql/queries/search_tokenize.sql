-- Tokenize `index_input` (doc, text, tool_input) into `new_postings` (doc, term, tf, dl):
-- the event's text and its tool input (JSON text), both already redacted, lowercased and
-- split at every character other than a-z and 0-9; words of 2 to 40 characters that are
-- not stop words, stemmed with Porter (when the fts extension loads; else the words
-- themselves, and search applies the same rule); `tf` counts a term in its event, `dl`
-- all its kept words. Only the first 256 KiB of each event is indexed (a 4 MiB tool
-- output would otherwise become hundreds of thousands of token rows in one commit,
-- beyond the import's memory ceiling). The catalog runs this on the events it inserts;
-- an import runs it on a tokenizer thread, on a connection of its own, over the rows it
-- is about to commit (`doc` is then the row's position in the commit).
CREATE OR REPLACE TEMP TABLE new_postings AS
WITH tokens AS (
    SELECT doc,
           unnest(regexp_split_to_array(
               lower(left(concat_ws(' ', text, CAST(tool_input AS VARCHAR)), 262144)),
               '[^a-z0-9]+')) AS token
    FROM index_input
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
