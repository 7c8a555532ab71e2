-- Remove from the index the events listed in temp table `gone_events` (event_id): the
-- publish step applying withdrawals (agentlake.load.search_index). Parameters: $workspace
CREATE OR REPLACE TEMP TABLE gone_docs AS
SELECT d.doc FROM search_docs d SEMI JOIN gone_events g USING (event_id)
WHERE d.workspace = $workspace;

-- (Documents and terms are numbered across workspaces: their numbers say the workspace.)
CREATE OR REPLACE TEMP TABLE gone_postings AS
SELECT p.term_id, p.tf, p.doc FROM search_postings p SEMI JOIN gone_docs g USING (doc);

UPDATE search_terms t SET df = t.df - g.n
FROM (SELECT term_id, count(*) AS n FROM gone_postings GROUP BY term_id) g
WHERE t.term_id = g.term_id;

-- A term no event holds any more is gone, as if it had never been indexed.
DELETE FROM search_terms t
WHERE t.df = 0 AND t.term_id IN (SELECT term_id FROM gone_postings);

UPDATE search_state SET
    docs = docs - (SELECT count(DISTINCT doc) FROM gone_postings),
    total_length = total_length - (SELECT coalesce(sum(tf), 0) FROM gone_postings),
    postings = postings - (SELECT count(*) FROM gone_postings)
WHERE workspace = $workspace;

DELETE FROM search_postings p
WHERE p.doc IN (SELECT doc FROM gone_docs);

DELETE FROM search_docs d
WHERE d.workspace = $workspace AND d.doc IN (SELECT doc FROM gone_docs);
