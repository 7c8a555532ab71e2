-- Rewrite the postings sorted by term so a term lookup reads only the row groups that
-- hold it (zone maps). Run when the unsorted tail has grown. The order within a term
-- does not matter to a lookup, and leaving it out spares comparing event numbers; nor
-- does the workspace (a term's postings of every workspace lie together, and a lookup
-- filters them), and leaving it out cut the sort of a million events' 14.7 million
-- postings from 4.5 s to 3.4 s.
CREATE TABLE search_postings_sorted AS
SELECT * FROM search_postings ORDER BY term;
DROP TABLE search_postings;
ALTER TABLE search_postings_sorted RENAME TO search_postings;
UPDATE search_state SET sorted_postings = postings;
