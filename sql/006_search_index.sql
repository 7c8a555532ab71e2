-- Schema version 6: agentlake's own inverted index over events.text, maintained with
-- every commit (the fts extension's index can only be rebuilt whole). BM25 statistics
-- are per workspace. Postings are kept sorted by (workspace, term) up to
-- `search_state.sorted_postings`; appended postings form a small unsorted tail that a
-- compaction folds in, so a term lookup reads few row groups.

CREATE TABLE search_postings (
    workspace  VARCHAR NOT NULL,
    term       VARCHAR NOT NULL,
    event_id   VARCHAR NOT NULL,
    tf         INTEGER NOT NULL,   -- occurrences of the term in the event's text
    dl         INTEGER NOT NULL    -- the event's length in indexed terms
);

CREATE TABLE search_terms (
    workspace  VARCHAR NOT NULL,
    term       VARCHAR NOT NULL,
    df         BIGINT NOT NULL,    -- events containing the term
    PRIMARY KEY (workspace, term)
);

CREATE TABLE search_state (
    workspace        VARCHAR PRIMARY KEY,
    docs             BIGINT NOT NULL,
    total_length     BIGINT NOT NULL,
    postings         BIGINT NOT NULL,
    sorted_postings  BIGINT NOT NULL
);
