"""Load: the DuckDB catalog — migrations, batch commits with checkpoints, receipts,
rejects and the full-text index."""
