-- Tokenize `index_input` (doc, text, tool_input) into `new_postings` (doc, term_no, tf,
-- dl) and `new_vocabulary` (term_no, term), each distinct term of the input numbered:
-- the event's text and its tool input (JSON text), both already redacted, lowercased and
-- split at every character other than a-z and 0-9; words of 2 to 40 characters that are
-- not stop words, stemmed with Porter (when the fts extension loads; else the words
-- themselves, and search applies the same rule); `tf` counts a term in its event, `dl`
-- all its kept words. Only the first 256 KiB of each event is indexed (a 4 MiB tool
-- output would otherwise become hundreds of thousands of token rows in one commit,
-- beyond the import's memory ceiling). The catalog runs this on the events it inserts;
-- an import runs it on a tokenizer thread, on a connection of its own, over the rows it
-- is about to commit (`doc` is then the row's position in the commit). Counting
-- occurrences per event and term number groups integers instead of strings, and the
-- commit turns a batch's term numbers into the catalog's through its vocabulary alone.
CREATE OR REPLACE TEMP TABLE index_tokens AS
SELECT doc, token
FROM (
    SELECT doc,
           unnest(regexp_split_to_array(
               lower(left(concat_ws(' ', text, CAST(tool_input AS VARCHAR)), /* indexed chars */)),
               '[^a-z0-9]+')) AS token
    FROM index_input
)
WHERE length(token) BETWEEN 2 AND 40
  AND token NOT IN (/* stop words */);

-- each distinct word stemmed once, not every occurrence
CREATE OR REPLACE TEMP TABLE index_words AS
SELECT token, stem(token, 'porter') AS term FROM (SELECT DISTINCT token FROM index_tokens);

CREATE OR REPLACE TEMP TABLE new_vocabulary AS
SELECT (row_number() OVER (ORDER BY term))::INTEGER AS term_no, term
FROM (SELECT DISTINCT term FROM index_words);

-- one aggregation: occurrences counted per event and term (counting per word first and
-- summing per term took a second pass over as many rows)
CREATE OR REPLACE TEMP TABLE new_postings AS
WITH numbered AS (
    SELECT w.token, v.term_no FROM index_words w JOIN new_vocabulary v USING (term)
), termed AS (
    SELECT k.doc, n.term_no, count(*)::INTEGER AS tf
    FROM index_tokens k JOIN numbered n USING (token)
    GROUP BY ALL
)
SELECT doc, term_no, tf, (sum(tf) OVER (PARTITION BY doc))::INTEGER AS dl FROM termed;

DROP TABLE index_tokens;
DROP TABLE index_words;
