-- Which full-text index the catalog holds: agentlake's own (search_postings,
-- search_state) and/or the fts extension's (fts_main_events.docs).
SELECT schema_name, table_name
FROM duckdb_tables()
WHERE (schema_name = 'main' AND table_name IN ('search_postings', 'search_state'))
   OR (schema_name = 'fts_main_events' AND table_name = 'docs')
