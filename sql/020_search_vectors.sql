-- Schema version 20: semantic search. The publish step embeds the text people search by
-- meaning (prompts, replies and summaries) after the load commits, as it indexes words:
--
-- * `search_vectors`: one unit vector per embedded event (agentlake.load.embedder has
--   the model and the rule), with the event's import id (search pins a snapshot by it).
-- * `vector_watermark`: per workspace, the last event embedded in (import_id, event_id)
--   order, the import through which every event is embedded (-1: none yet), the model
--   that made the vectors (vectors of another model are dropped and made again), and a
--   token (`version`) every transaction that changes the workspace's vectors replaces:
--   the name of their memory-mapped copy beside the catalog (agentlake.load.vector_cache).
-- * `vector_withdrawn`: events a load commit withdrew (their text changed or they are
--   gone), recorded beside `search_withdrawn`. The publish step drops their vectors,
--   embeds again those still in the catalog at or below the watermark, and deletes these
--   rows in one transaction; until then semantic search leaves them out.
-- Catalogs made before hold no vectors: their next publish step embeds every event.
CREATE TABLE IF NOT EXISTS search_vectors (
    workspace  VARCHAR NOT NULL,
    event_id   VARCHAR NOT NULL,
    import_id  BIGINT NOT NULL,
    vec        FLOAT[128] NOT NULL
);

CREATE TABLE IF NOT EXISTS vector_watermark (
    workspace       VARCHAR PRIMARY KEY,
    import_id       BIGINT NOT NULL,
    event_id        VARCHAR NOT NULL,
    through_import  BIGINT NOT NULL DEFAULT -1,
    model           VARCHAR NOT NULL,
    version         VARCHAR NOT NULL DEFAULT (uuid()::VARCHAR)
);

CREATE TABLE IF NOT EXISTS vector_withdrawn (
    workspace  VARCHAR NOT NULL,
    event_id   VARCHAR NOT NULL
);
