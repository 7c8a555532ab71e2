"""A session's place in the tree its parent links make, and its own and subtree totals.

Subagent transcripts (Claude Code), spawned threads and forks (Codex), subagents
(Gemini CLI) and subagent composers (Cursor) are sessions of their own whose
``parent_session_id`` names the session they were started from. The ``session_rollup``
view (``sql/012_delegated_usage.sql``) gives every session its root, depth and lineage;
a session's subtree is every session whose lineage names it, so a subtree total counts
each call once, whatever loops the parent links make.
"""

from __future__ import annotations

from dataclasses import asdict, astuple, dataclass, field
from typing import Any

import duckdb

from agentlake import sql

TOKEN_FIELDS = (
    "input_tokens", "cache_write_tokens", "cache_write_1h_tokens", "cache_read_tokens",
    "output_tokens", "reasoning_tokens", "total_tokens",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class TokenTotals:
    """Calls and token sums of a set of sessions' deduplicated calls."""

    calls: int = 0
    input_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0
    cache_read_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    total_tokens: int = 0


@dataclass(frozen=True, slots=True)
class SessionTree:
    """Where a session sits among the sessions its parent links tie it to: the root of
    its tree (itself when its parent is not in the catalog), its depth below the root,
    its direct children in the catalog, the sessions of its subtree (itself included),
    and the token totals of its own calls and of its subtree's."""

    root_session_id: str
    depth: int = 0
    children_count: int = 0
    subtree_sessions: int = 1
    own: TokenTotals = field(default_factory=TokenTotals)
    subtree: TokenTotals = field(default_factory=TokenTotals)

    def to_json(self) -> dict[str, Any]:
        """The ``tree`` and ``totals`` members of ``sessions show --json``."""
        return {
            "tree": {
                "root_session_id": self.root_session_id,
                "depth": self.depth,
                "children_count": self.children_count,
                "subtree_sessions": self.subtree_sessions,
            },
            "totals": {"own": asdict(self.own), "subtree": asdict(self.subtree)},
        }


def session_tree(
    con: duckdb.DuckDBPyConnection,
    workspace: str,
    provider: str,
    session_id: str,
    *,
    children_count: int,
    include_hidden: bool = False,
) -> SessionTree:
    """The tree facts and totals of one session of the catalog on ``con``: its subtree
    from ``session_rollup`` (``sql/queries/sessions_subtree.sql``), then the calls of
    those sessions (``sessions_subtree_totals.sql``). Hidden sessions under it are left
    out unless ``include_hidden``."""
    key = {"workspace": workspace, "provider": provider, "session_id": session_id}
    found = con.execute(
        sql.query("sessions_subtree"), {**key, "include_hidden": include_hidden}
    ).fetchone()
    if found is None or found[0] is None:  # not in the catalog (removed since it was resolved)
        return SessionTree(session_id, children_count=children_count)
    root, depth, subtree = str(found[0]), int(found[1]), [str(s) for s in found[2]]
    query = sql.query("sessions_subtree_totals").replace("/* sessions */", sql.literals(subtree))
    sums = {bool(row["own"]): row for row in con.execute(query, key).to_arrow_table().to_pylist()}
    own = _totals(sums.get(True))
    rest = _totals(sums.get(False))
    return SessionTree(
        root_session_id=root,
        depth=depth,
        children_count=children_count,
        subtree_sessions=len(subtree),
        own=own,
        subtree=TokenTotals(*(a + b for a, b in zip(astuple(own), astuple(rest), strict=True))),
    )


def _totals(row: dict[str, Any] | None) -> TokenTotals:
    """The totals of one row of ``sessions_subtree_totals`` (none: no call)."""
    if row is None:
        return TokenTotals()
    return TokenTotals(int(row["calls"]), *(int(row[name]) for name in TOKEN_FIELDS))
