-- Index the events in `index_events` (event_id, batch_row), none of which the index
-- holds, from their postings `index_terms` (doc = batch_row, term_no, tf, dl) and terms
-- `index_vocabulary` (term_no, term), made by agentlake.load.terms. Each event with a
-- posting gets the next number in the index (`search_docs`, in event id order), and its
-- postings carry it; a term new to the workspace is numbered after every term of the
-- catalog, the others count these events in their df.
-- Parameters: $workspace
CREATE OR REPLACE TEMP TABLE new_docs AS
SELECT (SELECT coalesce(max(doc), 0) FROM search_docs) + row_number() OVER (ORDER BY event_id) AS doc,
       event_id, batch_row
FROM index_events;

INSERT INTO search_docs
SELECT $workspace, doc, event_id FROM new_docs
WHERE batch_row IN (SELECT doc FROM index_terms);

CREATE OR REPLACE TEMP TABLE new_terms AS
WITH batch AS (
    SELECT v.term_no, v.term, c.df
    FROM (SELECT term_no, count(*) AS df FROM index_terms GROUP BY term_no) c
    JOIN index_vocabulary v USING (term_no)
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
FROM index_terms p JOIN new_docs d ON d.batch_row = p.doc JOIN new_terms n USING (term_no);

INSERT INTO search_state AS s
SELECT $workspace, count(DISTINCT doc), coalesce(sum(tf), 0), count(*), 0 FROM index_terms
ON CONFLICT (workspace) DO UPDATE SET
    docs = s.docs + excluded.docs,
    total_length = s.total_length + excluded.total_length,
    postings = s.postings + excluded.postings;
