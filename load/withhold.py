"""Rows of purged sessions kept out of a commit (``sessions purge``'s revocation): a
later import reads their sources as any other, and the load withholds their rows here,
counting them per source so the receipt accounts for every row read."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import pyarrow as pa

if TYPE_CHECKING:
    from agentlake.transform.transform import CatalogRows

_WITHHELD_SCHEMA = pa.schema(
    [
        ("provider", pa.string()),
        ("session_id", pa.string()),
        ("operation_id", pa.string()),
        ("source_id", pa.string()),
        ("rows", pa.int64()),
    ]
)


def withhold(
    data: list[CatalogRows], revoked: dict[tuple[str, str], str]
) -> tuple[list[CatalogRows], pa.Table]:
    """``data`` without the rows of ``revoked`` sessions, nor of the sessions a batch
    names as their children (a sub-agent of a purged session, transitively), and the
    rows withheld: per (provider, session, its purge's operation id, source), how many
    events, calls and rate-limit snapshots."""
    import pyarrow.compute as pc

    revoked = dict(revoked)
    for rows in data:  # children of revoked sessions, to a fixpoint
        links = rows.sessions.select(["provider", "session_id", "parent_session_id"]).to_pylist()
        grew = True
        while grew:
            grew = False
            for link in links:
                key = (link["provider"], link["session_id"])
                parent = revoked.get((link["provider"], link["parent_session_id"]))
                if parent is not None and key not in revoked:
                    revoked[key] = parent
                    grew = True
    text = pa.large_string()
    keys = pa.array(sorted(f"{p}\x1f{s}" for p, s in revoked), text)
    gap = pa.scalar("\x1f", text)

    def held(table: pa.Table) -> pa.Array:
        provider, session = (table[c].cast(text) for c in ("provider", "session_id"))
        key = pc.binary_join_element_wise(provider, session, gap)
        return pc.fill_null(pc.is_in(key, value_set=keys), False)

    counted: dict[tuple[str, str, str], int] = {}
    kept: list[CatalogRows] = []
    for rows in data:
        parts = {}
        for name in ("events", "usage", "sessions", "rate_limits"):
            table: pa.Table = getattr(rows, name)
            if not table.num_rows:
                parts[name] = table
                continue
            mask = held(table)
            if name != "sessions":
                for r in (
                    table.filter(mask).select(["provider", "session_id", "source_id"]).to_pylist()
                ):
                    at = (r["provider"], r["session_id"], r["source_id"])
                    counted[at] = counted.get(at, 0) + 1
            parts[name] = table.filter(pc.invert(mask))
        kept.append(replace(rows, **parts))
    out = [
        {
            "provider": p,
            "session_id": s,
            "operation_id": revoked[(p, s)],
            "source_id": src,
            "rows": n,
        }
        for (p, s, src), n in sorted(counted.items())
    ]
    return kept, pa.Table.from_pylist(out, schema=_WITHHELD_SCHEMA)


def withheld_counts(withheld: pa.Table) -> dict[str, int]:
    """Rows withheld per source id."""
    counts: dict[str, int] = {}
    for r in withheld.select(["source_id", "rows"]).to_pylist():
        counts[r["source_id"]] = counts.get(r["source_id"], 0) + int(r["rows"])
    return counts
