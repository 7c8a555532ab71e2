-- The search index's own counters against its tables, within one workspace, read
-- without touching any event (what `doctor` checks unless --deep): the events it
-- numbers, and the documents and postings its state records. Postings name no
-- workspace: they are counted over all of them.
-- Parameters: $workspace
SELECT
    (SELECT count(*) FROM search_docs WHERE workspace = $workspace) AS docs,
    (SELECT coalesce(sum(docs), 0) FROM search_state WHERE workspace = $workspace) AS counted_docs,
    (SELECT count(*) FROM search_postings) AS postings,
    (SELECT coalesce(sum(postings), 0) FROM search_state) AS counted_postings
