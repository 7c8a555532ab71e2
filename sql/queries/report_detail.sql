-- A report's per-(key, provider, model) rows (the report's own query, written in where
-- the placeholder stands) kept on the connection as temp table `report_detail`, in the
-- order the query returns them (its `rowid`), for report_rollup.sql and
-- report_settle.sql to read. The connection may be read-only: a temp table lives in
-- memory. Parameters: those of the query.
CREATE OR REPLACE TEMP TABLE report_detail AS
/* query */
