-- The lifecycle and tag conditions of the `report_calls` macro (written in at its
-- lifecycle marker when a report needs them): the calls of hidden sessions leave unless
-- `arg_hidden`; with `arg_tag`, only the calls of sessions with that tag stay.
  AND (arg_hidden OR (u.provider, u.session_id) NOT IN (
        SELECT (h.provider, h.session_id) FROM sessions h
        WHERE h.workspace = arg_ws AND h.lifecycle <> 'active'))
  AND (arg_tag IS NULL OR (u.provider, u.session_id) IN (
        SELECT (t.provider, t.session_id) FROM session_tags t
        WHERE t.workspace = arg_ws AND t.tag = arg_tag))
