"""OpenAI Codex CLI's thread index, ``state_5.sqlite``: session fields a rollout does
not carry (title, preview, archived flag, spawn parent) and the thread's token figure.

``threads.tokens_used`` becomes the session's ``index_tokens``: a figure of the whole
thread, never a call (DESIGN §4 counts calls from the rollouts only).
"""

from __future__ import annotations

import sqlite3
from typing import Any, Final

from ..adapter import SourceContext
from ..rows import RowSink
from ..sources import RelParts, SourceFile
from .codex_fields import iso_ms, nonempty_str

STATE_DB_NAME: Final = "state_5.sqlite"


def owns_state_index(rel: RelParts) -> bool:
    """Only ``state_5.sqlite`` at the top of the Codex home."""
    return rel == (STATE_DB_NAME,)


# threads columns read when present (provider-formats §3); any of them may be missing
# in an older schema generation.
_THREAD_COLUMNS: Final = (
    "title",
    "preview",
    "model",
    "cwd",
    "created_at",
    "updated_at",
    "created_at_ms",
    "updated_at_ms",
    "archived",
    "tokens_used",
)


def _columns(con: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in con.execute(f"PRAGMA table_xinfo({table})")}


def _index_time(ms: Any, seconds: Any) -> str | None:
    if type(ms) is int and ms > 0:
        return iso_ms(ms)
    if type(seconds) is int and seconds > 0:
        return iso_ms(seconds * 1000)
    return None


class StateIndexAdapter:
    """Enriches sessions from Codex's thread index ``state_5.sqlite`` (table
    ``threads``, and ``thread_spawn_edges`` for subagent parents)."""

    def locate(self, source: SourceFile) -> SourceContext:
        """The database is not a session: its rows name their threads."""
        return SourceContext(source, source.path.stem)

    def map_database(self, con: sqlite3.Connection, ctx: SourceContext, sink: RowSink) -> int:
        """Emit one session row per thread with the fields the schema has: title,
        preview, model, cwd, created/updated times, the archived flag and the thread's
        token total (``tokens_used``; 0, the column's default, says nothing). A missing
        table or column yields fewer fields (or none), never an error."""
        present = _columns(con, "threads")
        if "id" not in present:
            return 0
        parents: dict[str, str] = {}
        if {"parent_thread_id", "child_thread_id"} <= _columns(con, "thread_spawn_edges"):
            parents = {
                str(child): str(parent)
                for parent, child in con.execute(
                    "SELECT parent_thread_id, child_thread_id FROM thread_spawn_edges"
                )
                if isinstance(parent, str) and isinstance(child, str)
            }
        select = ", ".join(c if c in present else f"NULL AS {c}" for c in _THREAD_COLUMNS)
        rows = 0
        for row in con.execute(f"SELECT id, {select} FROM threads ORDER BY id"):
            tid, title, preview, model, cwd, c_s, u_s, c_ms, u_ms, archived, tokens = row
            if not isinstance(tid, str) or not tid:
                continue
            rows += 1
            sink.session(
                tid,
                title=nonempty_str(title),
                title_rank=2,
                preview=nonempty_str(preview),
                model=nonempty_str(model),
                project_path=nonempty_str(cwd),
                started_at=_index_time(c_ms, c_s),
                updated_at=_index_time(u_ms, u_s),
                archived=bool(archived) if type(archived) is int else None,
                parent_session_id=parents.get(tid),
                index_tokens=tokens if type(tokens) is int and tokens > 0 else None,
            )
        return rows
