-- The embeddable events `/* selection */` keeps (SQL over an event `e`), in
-- (import_id, event_id) order, numbered by slice of about $slice characters of embedded
-- text (each text counted up to the $cap characters embedded). A slice's end is where
-- the vector watermark moves. Parameters: $workspace, $kinds, $cap, $slice
CREATE OR REPLACE TEMP TABLE vector_slices AS
WITH sized AS (
    SELECT e.import_id, e.event_id, least(strlen(e.text), $cap) AS chars
    FROM events e
    WHERE e.workspace = $workspace AND e.kind IN (SELECT unnest($kinds))
      AND e.text IS NOT NULL AND e.text <> '' AND /* selection */
)
SELECT import_id, event_id,
       (sum(chars) OVER (ORDER BY import_id, event_id) - chars) // $slice AS slice
FROM sized
