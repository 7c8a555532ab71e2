-- Rewrite the postings sorted by (workspace, term) so a term lookup reads only the row
-- groups that hold it (zone maps). Run when the unsorted tail has grown. The order
-- within a term does not matter to a lookup, and leaving it out spares comparing event
-- ids (the sort's most frequent tie-break).
CREATE TABLE search_postings_sorted AS
SELECT * FROM search_postings ORDER BY workspace, term;
DROP TABLE search_postings;
ALTER TABLE search_postings_sorted RENAME TO search_postings;
UPDATE search_state SET sorted_postings = postings;
