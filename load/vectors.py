"""The publish step's semantic part: the vectors of the events people search by meaning.

The events embedded are prompts, assistant replies and summaries with text
(:data:`EMBEDDED_KINDS`): what a person remembers of a session. Reasoning, tool calls
and their output stay lexical only (long, machine-made, and far from how people phrase
a memory). Vectors follow the search index's rules (:mod:`agentlake.load.publish`):
events above the workspace's vector watermark are embedded a slice per transaction with
the watermark's move, so a killed step resumes from it; withdrawn events lose their
vectors, and those still in the catalog at or below the watermark are embedded again,
in one transaction with the removal of their withdrawal rows. A catalog whose vectors
were made by another model is embedded again from scratch.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, Final, Literal

import duckdb

from agentlake import sql
from agentlake.load.lake import cursor

from . import vector_cache
from .catalog import run_script
from .embedder import DIMS, MODEL, Embedder, ModelUnavailable, load_embedder, model_dir
from .lease import committed

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

EMBEDDED_KINDS: Final = ("prompt", "response", "summary")
# Characters embedded per slice (each text counted up to the embedded prefix): a slice's
# tokens and their gathered vectors stay within a few tens of MiB.
SLICE_CHARS: Final = 4 << 20

Progress = Callable[[Literal["embedded", "committed"], int], None]
FaultHook = Callable[[Literal["embed"]], None]  # tests: may raise inside a transaction


@dataclass(frozen=True, slots=True)
class VectorLag:
    """How far a workspace's vectors lag: embeddable events above the watermark, and
    withdrawals not yet applied; ``model`` made the stored vectors (``None``: none)."""

    unembedded: int
    pending: int
    model: str | None

    @property
    def stale(self) -> bool:
        """The stored vectors are another model's: they are all made again."""
        return self.model is not None and self.model != MODEL


@dataclass(frozen=True, slots=True)
class EmbedResult:
    """What the semantic part of a publish step did: events embedded, withdrawals
    applied, slices committed, seconds taken, whether it stopped before the end, and
    why it did nothing (``skipped``: the model cannot be loaded)."""

    embedded: int = 0
    withdrawn: int = 0
    slices: int = 0
    seconds: float = 0.0
    stopped: bool = False
    skipped: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The counts, seconds and reason as ``--json`` shows them."""
        return {
            "embedded": self.embedded,
            "withdrawn": self.withdrawn,
            "slices": self.slices,
            "seconds": round(self.seconds, 3),
            "model": None if self.skipped else MODEL,
            "skipped": self.skipped,
        }


def vector_lag(con: duckdb.DuckDBPyConnection, workspace: str) -> VectorLag:
    """The vectors' :class:`VectorLag` for ``workspace``."""
    from .publish import Watermark, above

    import_id, event_id, through, model = _watermark(con, workspace)
    mark = above(Watermark(import_id, event_id, through)) if model == MODEL else "true"
    statement = sql.query("vector_lag").replace("/* above */", mark)
    params = {"workspace": workspace, "kinds": list(EMBEDDED_KINDS)}
    row = con.execute(sql.inline(statement, params)).fetchone()
    assert row is not None
    return VectorLag(int(row[0]), int(row[1]), model)


def publish_vectors(
    con: duckdb.DuckDBPyConnection,
    workspace: str,
    *,
    embedder: Embedder | None = None,
    slice_chars: int | None = None,
    progress: Progress | None = None,
    stop: Callable[[], bool] | None = None,
    faults: FaultHook | None = None,
) -> EmbedResult:
    """Bring ``workspace``'s vectors up to date: drop another model's, apply the pending
    withdrawals, then embed every embeddable event above the watermark, about
    ``slice_chars`` characters (:data:`SLICE_CHARS`) per transaction. Without the model
    it does nothing and says why (``skipped``); search stays lexical."""
    from .publish import Watermark, above, one_ahead

    started = time.perf_counter()
    try:
        # Loaded only when there is something to embed (a re-run with nothing new never
        # pays for it), but always checked: a missing model is said at every run.
        model = _Lazy(embedder)
        if embedder is None:
            model_dir()
    except ModelUnavailable as missing:
        return EmbedResult(skipped=str(missing))
    params = {"workspace": workspace}
    fault = faults or (lambda point: None)
    tell = progress or (lambda point, number: None)
    if _watermark(con, workspace)[3] not in (None, MODEL):
        committed(con, lambda: run_script(con, _CLEAR, params))
    withdrawn = _apply_withdrawals(con, workspace, model, slice_chars, fault)
    through = int(_one(con, "SELECT coalesce(max(import_id), -1) FROM imports"))
    import_id, event_id, done, _ = _watermark(con, workspace)
    selection = above(Watermark(import_id, event_id, done))
    # Slices are read and embedded one ahead of their writes, on a connection of their
    # own (the tokenizer and numpy release the GIL).
    reader = cursor(con)
    embedded: Generator[pa.Table, None, None] | None = None
    insert = sql.inline(_INSERT, params)
    try:
        slices = _make_slices(reader, workspace, selection, slice_chars)
        ends = reader.execute(_SLICE_ENDS).fetchall()
        embedded = one_ahead(lambda n: _embedded(model, _slice_texts(reader, workspace, n)), slices)
        count = 0
        for number in range(slices):
            if stop is not None and stop():
                return EmbedResult(count, withdrawn, number, time.perf_counter() - started, True)
            vectors = next(embedded)
            tell("embedded", number)
            end = {**params, "import_id": ends[number][1], "event_id": ends[number][2]}
            committed(con, partial(_write_slice, con, insert, end, fault), slice_vectors=vectors)
            tell("committed", number)
            count += vectors.num_rows
        complete = {**params, "through": through, "model": MODEL}
        committed(con, lambda: run_script(con, _COMPLETE_THROUGH, complete))
    finally:
        if embedded is not None:
            embedded.close()  # waits for the slice in the reader's hands
        reader.close()
    vector_cache.ensure(con, workspace)
    return EmbedResult(count, withdrawn, slices, time.perf_counter() - started)


class _Lazy:
    """The given model, or the installed one loaded on first use."""

    def __init__(self, given: Embedder | None) -> None:
        self.given = given

    def embed(self, texts: list[str]) -> np.ndarray:
        return (self.given or load_embedder()).embed(texts)


def _write_slice(
    con: duckdb.DuckDBPyConnection, insert: str, end: dict[str, object], fault: FaultHook
) -> None:
    """Insert the registered ``slice_vectors`` and move the watermark to ``end``, in the
    caller's transaction."""
    con.execute(insert)
    run_script(con, _SET_WATERMARK, {**end, "model": MODEL})
    fault("embed")


def _apply_withdrawals(
    con: duckdb.DuckDBPyConnection,
    workspace: str,
    model: _Lazy,
    slice_chars: int | None,
    fault: FaultHook,
) -> int:
    """Drop the vectors of the workspace's withdrawn events, embed again those still
    in the catalog at or below the watermark, and forget the withdrawals, in one
    transaction. Returns how many events were withdrawn."""
    from .publish import Watermark, above

    params = {"workspace": workspace}
    gone = int(_one(con, sql.inline(_PENDING, params)))
    if not gone:
        return 0
    import_id, event_id, through, _ = _watermark(con, workspace)
    mark = above(Watermark(import_id, event_id, through))
    again = f"e.event_id IN (SELECT event_id FROM vector_withdrawn WHERE workspace = $workspace) AND NOT {mark}"

    def body() -> None:
        con.execute(sql.inline(_DROP_WITHDRAWN, params))
        for number in range(_make_slices(con, workspace, again, slice_chars)):
            con.register("slice_vectors", _embedded(model, _slice_texts(con, workspace, number)))
            try:
                con.execute(sql.inline(_INSERT, params))
            finally:
                con.unregister("slice_vectors")
        con.execute(sql.inline("DELETE FROM vector_withdrawn WHERE workspace = $workspace", params))
        con.execute(sql.inline(_NEW_VERSION, params))
        fault("embed")

    committed(con, body)
    return gone


def _watermark(con: duckdb.DuckDBPyConnection, workspace: str) -> tuple[int, str, int, str | None]:
    """(import_id, event_id, through_import, model) of the vector watermark:
    (-1, '', -1, None) before any event was embedded."""
    row = con.execute(
        "SELECT import_id, event_id, through_import, model FROM vector_watermark "
        "WHERE workspace = $workspace",
        {"workspace": workspace},
    ).fetchone()
    return (int(row[0]), str(row[1]), int(row[2]), str(row[3])) if row else (-1, "", -1, None)


def _one(con: duckdb.DuckDBPyConnection, statement: str) -> Any:
    row = con.execute(statement).fetchone()
    return row[0] if row else None


def _make_slices(
    con: duckdb.DuckDBPyConnection, workspace: str, selection: str, slice_chars: int | None
) -> int:
    """Make temp table ``vector_slices`` of the embeddable events ``selection`` (SQL
    over ``e``) holds; returns how many slices there are."""
    from .embedder import EMBED_CHARS

    params = {"workspace": workspace, "cap": EMBED_CHARS, "slice": slice_chars or SLICE_CHARS,
              "kinds": list(EMBEDDED_KINDS)}  # fmt: skip
    statement = sql.query("vector_slices").replace("/* selection */", selection)
    con.execute(sql.inline(statement, params))
    return int(_one(con, "SELECT coalesce(max(slice) + 1, 0) FROM vector_slices"))


def _slice_texts(con: duckdb.DuckDBPyConnection, workspace: str, number: int) -> pa.Table:
    """(event_id, import_id, text) of slice ``number``, each text cut to the prefix
    that is embedded."""
    from .embedder import EMBED_CHARS

    return con.execute(
        f"SELECT e.event_id, e.import_id, left(e.text, {EMBED_CHARS}) AS text FROM events e "
        f"SEMI JOIN (SELECT event_id FROM vector_slices WHERE slice = {number}) s "
        f"USING (event_id) WHERE e.workspace = {sql.constant(workspace)}"
    ).to_arrow_table()


def _embedded(model: _Lazy, rows: pa.Table) -> pa.Table:
    """``rows`` with their text replaced by its vector (column ``vec``)."""
    import pyarrow as pa

    vectors = model.embed(rows.column("text").to_pylist())
    flat = pa.array(vectors.reshape(-1), type=pa.float32())
    return pa.table({
        "event_id": rows.column("event_id"),
        "import_id": rows.column("import_id"),
        "vec": pa.FixedSizeListArray.from_arrays(flat, DIMS),
    })  # fmt: skip


_INSERT: Final = """
INSERT INTO search_vectors (workspace, event_id, import_id, vec)
SELECT $workspace, event_id, import_id, vec FROM slice_vectors
"""

_PENDING: Final = (
    "SELECT count(DISTINCT event_id) FROM vector_withdrawn WHERE workspace = $workspace"
)

_DROP_WITHDRAWN: Final = """
DELETE FROM search_vectors
WHERE workspace = $workspace
  AND event_id IN (SELECT event_id FROM vector_withdrawn WHERE workspace = $workspace)
"""

_CLEAR: Final = """
DELETE FROM search_vectors WHERE workspace = $workspace;
DELETE FROM vector_withdrawn WHERE workspace = $workspace;
DELETE FROM vector_watermark WHERE workspace = $workspace
"""

_SLICE_ENDS: Final = """
SELECT DISTINCT ON (slice) slice, import_id, event_id FROM vector_slices
ORDER BY slice, import_id DESC, event_id DESC
"""

_SET_WATERMARK: Final = """
INSERT INTO vector_watermark (workspace, import_id, event_id, model)
VALUES ($workspace, $import_id, $event_id, $model)
ON CONFLICT (workspace) DO UPDATE
SET import_id = excluded.import_id, event_id = excluded.event_id, model = excluded.model,
    version = uuid()::VARCHAR
"""

# The workspace's vectors changed (withdrawals applied): a new token for their copy.
_NEW_VERSION: Final = (
    "UPDATE vector_watermark SET version = uuid()::VARCHAR WHERE workspace = $workspace"
)

_COMPLETE_THROUGH: Final = """
INSERT INTO vector_watermark (workspace, import_id, event_id, through_import, model)
VALUES ($workspace, -1, '', $through, $model)
ON CONFLICT (workspace) DO UPDATE
SET through_import = excluded.through_import, model = excluded.model
"""
