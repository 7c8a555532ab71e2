"""Transform: pure functions from raw Arrow tables to catalog-shaped ones."""
