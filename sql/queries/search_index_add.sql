-- Index the events just inserted (temp table `new_events`). Each event gets the next
-- number in the index (`search_docs`), and its postings carry that number. The postings
-- (`batch_terms`: doc, term, tf, dl) are made by `agentlake.load.terms.postings`, keyed
-- by the events' `batch_row`: usually over every row of a commit before it, on the
-- import's tokenizer thread, and joined here to the rows that turned out new.
-- Parameters: $workspace
CREATE OR REPLACE TEMP TABLE new_docs AS
SELECT (SELECT coalesce(max(doc), 0) FROM search_docs) + row_number() OVER (ORDER BY event_id) AS doc,
       event_id, batch_row
FROM new_events
WHERE text IS NOT NULL OR tool_input IS NOT NULL;

CREATE OR REPLACE TEMP TABLE new_postings AS
SELECT d.doc, t.term, t.tf, t.dl FROM batch_terms t JOIN new_docs d ON t.doc = d.batch_row;

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
