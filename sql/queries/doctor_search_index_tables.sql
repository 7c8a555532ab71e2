-- Whether the catalog holds agentlake's full-text index (search_postings, search_state).
SELECT schema_name, table_name
FROM duckdb_tables()
WHERE schema_name = 'main' AND table_name IN ('search_postings', 'search_state')
