"""The lifecycle and tag filters every read applies (``sessions hide``, ``sessions
tag``): the one rule a tag follows (:func:`check_tag`, for ``sessions tag`` and every
``--tag`` filter), a session's tags, whether a workspace has hidden sessions, and the
search's fragment (``sql/queries/search_filters.sql``), checked at query time against
``sessions`` and ``session_tags`` (the postings are never rewritten). Light to import:
every read loads it."""

from __future__ import annotations

import re
from functools import cache
from typing import Final

import duckdb

from agentlake import sql
from agentlake.errors import ConfigurationError

MAX_TAG: Final = 64
_TAG: Final = re.compile(r"[A-Za-z0-9_.:/-]{1,64}")


def check_tag(tag: str) -> str:
    """``tag`` when it is a valid tag (1-64 ASCII letters, digits, ``-_.:/``); else a
    usage error (exit 2) naming the rule."""
    if not _TAG.fullmatch(tag):
        shown = tag if len(tag) <= MAX_TAG else tag[:MAX_TAG] + "…"
        raise ConfigurationError(
            f"invalid tag {shown!r}: a tag is 1 to {MAX_TAG} characters of letters, "
            "digits and - _ . : /"
        )
    return tag


def tags_of(
    con: duckdb.DuckDBPyConnection, workspace: str, provider: str, session_id: str
) -> tuple[str, ...]:
    """The tags of one session of ``workspace``, sorted."""
    rows = con.execute(
        sql.query("tags_of"),
        {"workspace": workspace, "provider": provider, "session_id": session_id},
    ).fetchall()
    return tuple(str(r[0]) for r in rows)


@cache
def search_predicate() -> str:
    """The ``AND …`` lines that keep a matching event ``e`` only when it passes the
    search's filters, its session is visible (or ``$include_hidden``) and carries
    ``$tag`` (when given)."""
    lines = sql.query("search_filters").splitlines()
    return "\n".join(line for line in lines if not line.lstrip().startswith("--")) + "\n"


def any_hidden(con: duckdb.DuckDBPyConnection, workspace: str) -> bool:
    """Whether ``workspace`` has hidden sessions (a search ranks its postings alone only
    when it has none)."""
    row = con.execute(sql.query("sessions_hidden_count"), {"workspace": workspace}).fetchone()
    return bool(row and row[0])
