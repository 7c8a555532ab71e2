-- Index a commit's events when every event of the batch is new (always so when the
-- catalog held none of the batch's sessions) and their postings were made before the
-- commit (`batch_terms`: doc = the row's position, `batch_row`; their terms
-- `batch_vocabulary`). The index is the one search_index_add.sql makes of the same rows,
-- numbers included: each event with text gets the next number in event id order, and
-- only events with at least one term are numbered in `search_docs`. Here the postings
-- are joined to their numbers and terms once, as they are inserted, instead of being
-- copied into a table of their own first, and the events with postings are told from
-- the batch's distinct rows (the benchmark home's index statements: 5.4 -> 4.0 s).
-- Parameters: $workspace
CREATE OR REPLACE TEMP TABLE new_docs AS
SELECT (SELECT coalesce(max(doc), 0) FROM search_docs) + row_number() OVER (ORDER BY event_id) AS doc,
       event_id, batch_row
FROM batch_events
WHERE text IS NOT NULL OR tool_input IS NOT NULL;

INSERT INTO search_docs
SELECT $workspace, doc, event_id FROM new_docs
WHERE batch_row IN (SELECT DISTINCT doc FROM batch_terms);

-- The batch's terms in the catalog's numbers, as search_index_add.sql numbers them.
CREATE OR REPLACE TEMP TABLE new_terms AS
WITH batch AS (
    SELECT v.term_no, v.term, c.df
    FROM (SELECT term_no, count(*) AS df FROM batch_terms GROUP BY term_no) c
    JOIN batch_vocabulary v USING (term_no)
)
SELECT b.term_no, b.term, b.df, t.term_id IS NOT NULL AS known,
       coalesce(t.term_id, (SELECT coalesce(max(term_id), 0) FROM search_terms)
                + row_number() OVER (PARTITION BY t.term_id IS NULL ORDER BY b.term)) AS term_id
FROM batch b LEFT JOIN search_terms t ON t.workspace = $workspace AND t.term = b.term;

UPDATE search_terms t SET df = t.df + n.df
FROM new_terms n
WHERE n.known AND t.term_id = n.term_id;

INSERT INTO search_terms SELECT $workspace, term, term_id, df FROM new_terms WHERE NOT known;

INSERT INTO search_postings
SELECT n.term_id, d.doc, p.tf, p.dl
FROM batch_terms p
JOIN new_docs d ON d.batch_row = p.doc
JOIN new_terms n USING (term_no);

INSERT INTO search_state AS s
SELECT $workspace, count(DISTINCT doc), coalesce(sum(tf), 0), count(*), 0 FROM batch_terms
ON CONFLICT (workspace) DO UPDATE SET
    docs = s.docs + excluded.docs,
    total_length = s.total_length + excluded.total_length,
    postings = s.postings + excluded.postings;
