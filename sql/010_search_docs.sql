-- Schema version 10: postings name their event by a number instead of its id. An event
-- id is a 32-character string; repeated in every posting it made the postings four
-- times the size they need, and ranking grouped and sorted those strings. `search_docs`
-- numbers each indexed event once, with an index from number to event for the hits of a
-- search; postings carry the number.
CREATE TABLE search_docs (
    workspace  VARCHAR NOT NULL,
    doc        BIGINT NOT NULL,    -- the event's number in the index
    event_id   VARCHAR NOT NULL
);

INSERT INTO search_docs
SELECT workspace, row_number() OVER (ORDER BY workspace, event_id), event_id
FROM (SELECT DISTINCT workspace, event_id FROM search_postings);

CREATE TABLE search_postings_by_doc AS
SELECT p.workspace, p.term, d.doc, p.tf, p.dl
FROM search_postings p JOIN search_docs d USING (workspace, event_id)
ORDER BY p.workspace, p.term;

DROP TABLE search_postings;
ALTER TABLE search_postings_by_doc RENAME TO search_postings;
UPDATE search_state SET sorted_postings = postings;

CREATE INDEX search_docs_by_doc ON search_docs (doc);
