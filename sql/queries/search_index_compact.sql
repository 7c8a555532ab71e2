-- Rewrite the postings sorted by term so a term lookup reads only the row groups that
-- hold it (zone maps). Run when the unsorted tail has grown. The order within a term
-- does not matter to a lookup, and leaving it out spares comparing event numbers. Terms
-- are numbers: sorting a million events' 14.7 million postings by term took 4.5 s
-- with the workspace and the term's spelling as keys, 3.4 s with the spelling alone.
CREATE TABLE search_postings_sorted (   -- as sql/011_term_numbers.sql made it
    term_id  INTEGER NOT NULL,
    doc      BIGINT NOT NULL,
    tf       INTEGER NOT NULL,
    dl       INTEGER NOT NULL
);
INSERT INTO search_postings_sorted SELECT * FROM search_postings ORDER BY term_id;
DROP TABLE search_postings;
ALTER TABLE search_postings_sorted RENAME TO search_postings;
UPDATE search_state SET sorted_postings = postings;
