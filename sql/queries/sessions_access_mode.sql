-- Whether this connection is read-only ('read_only') or may write ('read_write'/'automatic').
SELECT current_setting('access_mode')
