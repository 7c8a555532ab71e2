-- Index the events just inserted (temp table `new_events`). Each event gets the next
-- number in the index (`search_docs`), and its postings carry that number. The postings
-- come from `sql/queries/search_tokenize.sql`, run here on the new events' text
-- (`new_postings`, with their numbers, and `new_vocabulary`), or were made before the
-- commit over the rows of the batch (`batch_terms`, keyed by `batch_row`, and their terms
-- `batch_vocabulary`): joined here to the rows that turned out new, or, when every event
-- of the batch is new, read as they are, their numbers joined to them as they are
-- inserted (taking them with their numbers into a table of their own first had cost the
-- benchmark home's 57 commits 1.3 s). CatalogWriter.commit says which source it is;
-- load.search_index_script fills in the placeholders: the postings to count, the column
-- of `new_docs` their `doc` is, the postings with each event's number as `doc`, and the
-- terms.
-- Parameters: $workspace
CREATE OR REPLACE TEMP TABLE new_docs AS
SELECT (SELECT coalesce(max(doc), 0) FROM search_docs) + row_number() OVER (ORDER BY event_id) AS doc,
       event_id, /* new_docs columns */
FROM new_events
WHERE text IS NOT NULL OR tool_input IS NOT NULL;

/* new_postings */

-- Only events with at least one term are numbered in the index.
INSERT INTO search_docs
SELECT $workspace, doc, event_id FROM new_docs
WHERE /* posting key */ IN (SELECT doc FROM /* postings */);

-- The batch's terms (term_no, term) in the catalog's numbers: a term
-- new to the workspace is numbered after every term of the catalog; the others count
-- the batch's events in their df.
CREATE OR REPLACE TEMP TABLE new_terms AS
WITH batch AS (
    SELECT v.term_no, v.term, c.df
    FROM (SELECT term_no, count(*) AS df FROM /* postings */ GROUP BY term_no) c
    JOIN /* vocabulary */ v USING (term_no)
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
SELECT n.term_id, p.doc, p.tf, p.dl FROM /* numbered postings */ p JOIN new_terms n USING (term_no);

INSERT INTO search_state AS s
SELECT $workspace, count(DISTINCT doc), coalesce(sum(tf), 0), count(*), 0 FROM /* postings */
ON CONFLICT (workspace) DO UPDATE SET
    docs = s.docs + excluded.docs,
    total_length = s.total_length + excluded.total_length,
    postings = s.postings + excluded.postings;
