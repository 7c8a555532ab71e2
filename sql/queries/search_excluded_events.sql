-- Of the events `/* ids */` (a list of event ids), those holding one of the terms
-- `/* terms */` (term numbers): a query's excluded words, applied to semantic candidates
-- (agentlake.read.hybrid). Parameters: $ws
SELECT d.event_id
FROM search_docs d
SEMI JOIN search_postings p ON p.doc = d.doc AND p.term_id IN (/* terms */)
WHERE d.workspace = $ws AND d.event_id IN (/* ids */)
