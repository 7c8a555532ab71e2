"""Extract: provider-owned files → Arrow record batches with a fixed schema."""
