"""Semantic ranking: every vector of the workspace scored against the query's, exactly.

The vectors (``search_vectors``, made by the publish step) are one float32 matrix,
memory-mapped from their copy beside the catalog (:mod:`agentlake.load.vector_cache`),
scored with one matrix-vector product: at a million events (about a quarter of them
embedded) that takes about 10 ms, where DuckDB's exact scan of the array column took 70
and an HNSW index took minutes to build and could not apply the search's filters before
ranking (``python -m benchmarks.vector_scan``; benchmarks/HISTORY.md). A
read-only connection (one nobody can write while it is open) keeps its set for the next
search.

Filters and the lifecycle rules are applied before ranking: the events they keep are
found in SQL (``sql/queries/semantic_eligible.sql``) and the others' scores never
compete. Events whose vectors a load commit withdrew, and the publish step has not yet
replaced, are left out.
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any, Final

import duckdb

from agentlake import sql
from agentlake.load import vector_cache
from agentlake.load.embedder import MODEL
from agentlake.load.vector_cache import VectorSet

if TYPE_CHECKING:
    import numpy as np

SCORE_SCALE: Final = 1e9  # similarities rank to nine decimals, as BM25 scores do


_KEPT: Final[weakref.WeakKeyDictionary[duckdb.DuckDBPyConnection, dict[str, VectorSet]]] = (
    weakref.WeakKeyDictionary()
)


def has_vectors(con: duckdb.DuckDBPyConnection, workspace: str) -> bool:
    """Whether the workspace's vectors are this model's and the publish step made some
    (the search's default mode is then hybrid)."""
    row = con.execute(
        "SELECT model FROM vector_watermark WHERE workspace = $ws", {"ws": workspace}
    ).fetchone()
    return row is not None and row[0] == MODEL


def vector_set(
    con: duckdb.DuckDBPyConnection,
    workspace: str,
    reader: duckdb.DuckDBPyConnection | None = None,
) -> VectorSet:
    """The workspace's :class:`VectorSet` (memory-mapped from the catalog's vector cache,
    :mod:`agentlake.load.vector_cache`), kept per read-only connection ``con``; read
    through ``reader`` (a cursor of ``con``, for a thread of its own) when given."""
    kept = _KEPT.get(con)
    if kept is not None and workspace in kept:
        return kept[workspace]
    found = vector_cache.load(reader or con, workspace)
    if _read_only(reader or con):
        _KEPT.setdefault(con, {})[workspace] = found
    return found


def _read_only(con: duckdb.DuckDBPyConnection) -> bool:
    row = con.execute("SELECT current_setting('access_mode') = 'read_only'").fetchone()
    return bool(row and row[0])


def eligible(
    con: duckdb.DuckDBPyConnection, vectors: VectorSet, params: dict[str, Any]
) -> np.ndarray:
    """A mask over ``vectors`` of the events the search's filters, lifecycle rules and
    snapshot keep (``params``: the lexical search's, ``$ws``, ``$snapshot`` and the
    filters)."""
    import numpy as np

    from agentlake.read.lifecycle_filters import search_predicate

    statement = sql.query("semantic_eligible").replace("/* filters */", search_predicate())
    names = ("ws", "snapshot", "provider", "kind", "model", "session", "since", "until",
             "project", "include_hidden", "tag")  # fmt: skip
    kept = con.execute(statement, {k: params[k] for k in names}).fetchnumpy()["event_id"]
    mask = np.zeros(len(vectors), dtype=bool)
    mask[_rows_of(vectors, kept.astype(np.str_))] = True
    return mask


def _rows_of(vectors: VectorSet, ids: np.ndarray) -> np.ndarray:
    """The rows of ``vectors`` holding the event ids ``ids`` (text), in their order; ids
    without a vector are left out (a binary search in the rows' order by id)."""
    import numpy as np

    width = vectors.event_ids.dtype.itemsize
    if not len(vectors) or not len(ids):
        return np.empty(0, dtype=np.int64)
    # An id longer than every stored one is none of them (cut, it could equal one).
    wanted = ids[np.char.str_len(ids) <= width].astype(vectors.event_ids.dtype)
    at = np.searchsorted(vectors.sorted_ids, wanted).clip(max=len(vectors) - 1)
    found: np.ndarray = vectors.by_id[at[vectors.sorted_ids[at] == wanted]]
    return found


def ranked(
    vectors: VectorSet,
    query: np.ndarray,
    *,
    mask: np.ndarray | None = None,
    snapshot: int | None = None,
    after: tuple[int, str] | None = None,
    depth: int,
) -> list[tuple[str, int]]:
    """The best ``depth`` events by similarity to ``query`` (a unit vector), as (event
    id, key: the similarity in billionths, rounded), best first, ties by event id;
    only those ``mask`` keeps, of imports up to ``snapshot``, after the key ``after``."""
    import numpy as np

    if not len(vectors):
        return []
    keys = np.rint((vectors.matrix @ query) * SCORE_SCALE).astype(np.int64)
    keep = np.ones(len(keys), dtype=bool) if mask is None else mask.copy()
    if snapshot is not None:
        keep &= vectors.import_ids <= snapshot
    if after is not None:
        # Past the page's last hit: a lower key, or the same key and a later event id.
        lower = keys < after[0]
        same = np.flatnonzero((keys == after[0]) & keep)
        later = np.zeros(len(keys), dtype=bool)
        later[same[vectors.event_ids[same] > after[1].encode()]] = True
        keep &= lower | later
    candidates = np.flatnonzero(keep)
    if len(candidates) > depth:
        # Every event tied with the depth-th best stays in, so ties break by id alone.
        cut = np.partition(keys[candidates], len(candidates) - depth)[len(candidates) - depth]
        candidates = candidates[keys[candidates] >= cut]
    ids = [event_id.decode() for event_id in vectors.event_ids[candidates].tolist()]
    order = sorted(zip((-keys[candidates]).tolist(), ids, strict=True))[:depth]
    return [(event_id, -negative) for negative, event_id in order]


def reordered(vectors: VectorSet, ids: list[str], query: np.ndarray) -> list[str]:
    """``ids`` (events) ordered by similarity to ``query``, best first (ties by event
    id), without those that have no vector."""
    import numpy as np

    if not ids or not len(vectors):
        return []
    rows = _rows_of(vectors, np.array(ids, dtype=np.str_))
    named = [event_id.decode() for event_id in vectors.event_ids[rows].tolist()]
    keys = np.rint((np.asarray(vectors.matrix[rows]) @ query) * SCORE_SCALE).astype(np.int64)
    return [event_id for _, event_id in sorted(zip((-keys).tolist(), named, strict=True))]
