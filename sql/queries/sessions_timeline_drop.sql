-- Forget the window of a bounded session view.
DROP TABLE IF EXISTS session_timeline_window
