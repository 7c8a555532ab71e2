-- Index the events just inserted (temp table `new_events`). Each event gets the next
-- number in the index (`search_docs`), and its postings carry that number. The postings
-- come from `sql/queries/search_tokenize.sql`, run here on the new events' text, or run
-- before the commit over the rows of the batch (`batch_terms`, keyed by `batch_row`),
-- joined here to the rows that turned out new (CatalogWriter.commit says which).
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
