"""Which workspace each source is bound to: the one that first imported it, until it
releases it (``agentlake sources release``). The planner asks for the sources it would
read without a checkpoint of its own workspace (one query per plan); a source the
workspace already holds is never looked up."""

from __future__ import annotations

from collections.abc import Sequence

import duckdb

from agentlake import sql


class CatalogBindings:
    """The bindings of the catalog on ``con`` as seen from ``workspace`` (implements
    :class:`agentlake.ingest.plan.SourceBindings`)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, workspace: str) -> None:
        self._con = con
        self._workspace = workspace

    def released(self) -> frozenset[str]:
        """Ids of the sources ``workspace`` released."""
        rows = self._con.execute(
            sql.query("source_releases_of"), {"workspace": self._workspace}
        ).fetchall()
        return frozenset(str(r[0]) for r in rows)

    def owners(self, keys: Sequence[tuple[str, str]]) -> dict[tuple[str, str], str]:
        """For ``(provider, path)`` keys: the other workspace holding each (absent when
        none does)."""
        if not keys:
            return {}
        rows = self._con.execute(
            sql.query("source_owners"),
            {
                "workspace": self._workspace,
                "providers": [k[0] for k in keys],
                "paths": [k[1] for k in keys],
            },
        ).fetchall()
        return {(str(p), str(path)): str(owner) for p, path, owner in rows}
