"""The read side: search, sessions, reports and their roll-ups, diagnosis, and the
scoped SQL boundary, over a catalog opened read-only."""
