-- Refusals already reported of relocated sources name their new paths.
UPDATE refusals AS f
SET path = m.new_path
FROM moves AS m
WHERE f.workspace = $workspace AND f.source_id = m.source_id
