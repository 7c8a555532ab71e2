-- A report's rows as they are (temp table `report_detail`, report_detail.sql, a row's
-- position there being its `arrival`; the session counts `/* drop */` names left out),
-- their cost rounded to 1e-9 USD as in report_rollup.sql, in `/* order */`.
SELECT * EXCLUDE (arrival /* drop */) REPLACE (round(cost_usd, 9) AS cost_usd)
FROM (SELECT *, rowid AS arrival FROM report_detail)
ORDER BY /* order */
