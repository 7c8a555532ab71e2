"""A workspace's semantic vectors as memory-mapped arrays beside the catalog.

Reading a million events' vectors out of DuckDB takes about half a second (its array
column is read value by value into Arrow), which every one-shot ``agentlake search``
would pay. The publish step therefore also writes them, once per change, as NumPy files
in ``<catalog>.vectors/``: the event ids, their import ids and the float32 matrix, in a
folder named by the workspace and the vectors' version. A search maps them (the page
cache shares them between processes) and reads nothing else.

The catalog stays the truth: the version is a token the catalog's ``vector_watermark``
row changes in every transaction that changes the workspace's vectors (publish slices,
withdrawals, a purge), so a folder of another version is never read, and a missing,
unreadable or unwritable folder only means reading the catalog instead.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

import duckdb

if TYPE_CHECKING:
    import numpy as np

_FILES: Final = ("event_ids.npy", "import_ids.npy", "matrix.npy")


@dataclass(frozen=True, slots=True)
class VectorSet:
    """A workspace's vectors in memory: event ids (bytes, ascending: an event's row is
    found by binary search), import ids and unit vectors."""

    event_ids: np.ndarray  # (events,) fixed-width bytes, sorted
    import_ids: np.ndarray  # (events,) int64
    matrix: np.ndarray  # (events, dims) float32

    def __len__(self) -> int:
        return len(self.event_ids)


def version(con: duckdb.DuckDBPyConnection, workspace: str) -> str | None:
    """The token of the workspace's vectors as they are now (``None``: none made)."""
    row = con.execute(
        "SELECT version FROM vector_watermark WHERE workspace = $ws", {"ws": workspace}
    ).fetchone()
    return str(row[0]) if row and row[0] is not None else None


def load(con: duckdb.DuckDBPyConnection, workspace: str) -> VectorSet:
    """The workspace's vectors: mapped from the cache when it holds this version, else
    read from the catalog (and cached when the folder can be written)."""
    folder = _folder(con, workspace)
    if folder is not None and folder.is_dir():
        try:
            return _mapped(folder)
        except (OSError, ValueError):
            pass  # a partial or foreign folder: read the catalog
    return write(con, workspace, read_back=False)


def ensure(con: duckdb.DuckDBPyConnection, workspace: str) -> None:
    """Cache the workspace's vectors unless this version is cached already (the publish
    step's last act)."""
    folder = _folder(con, workspace)
    if folder is not None and not folder.is_dir():
        write(con, workspace, read_back=False)


def write(con: duckdb.DuckDBPyConnection, workspace: str, *, read_back: bool = True) -> VectorSet:
    """Read the workspace's vectors from the catalog and cache them (best effort), then
    drop the folders of other versions. Returns them (mapped when ``read_back``)."""
    import shutil
    import tempfile  # the writer's: a search that finds its copy never loads it

    import numpy as np

    table = con.execute(
        "SELECT event_id, import_id, vec FROM search_vectors WHERE workspace = $ws "
        "ORDER BY event_id",
        {"ws": workspace},
    ).to_arrow_table()
    vectors = table.column("vec").combine_chunks()
    dims = vectors.type.list_size
    found = VectorSet(
        np.array(table.column("event_id").to_pylist(), dtype=np.bytes_),
        table.column("import_id").to_numpy().astype(np.int64),
        np.ascontiguousarray(
            vectors.values.to_numpy(zero_copy_only=False).reshape(-1, dims), dtype=np.float32
        ),
    )
    folder = _folder(con, workspace)
    if folder is None:
        return found
    try:
        folder.parent.mkdir(exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".writing-", dir=folder.parent))
        for name, array in zip(_FILES, (found.event_ids, found.import_ids, found.matrix),
                               strict=True):  # fmt: skip
            np.save(staging / name, array, allow_pickle=False)
        try:
            staging.replace(folder)
        except OSError:  # another process cached this version first
            shutil.rmtree(staging, ignore_errors=True)
        for other in folder.parent.glob(f"{folder.name.split('-')[0]}-*"):
            if other != folder:
                shutil.rmtree(other, ignore_errors=True)
        return _mapped(folder) if read_back else found
    except OSError:
        return found


def _mapped(folder: Path) -> VectorSet:
    import numpy as np

    ids, imports, matrix = (
        np.load(folder / name, mmap_mode="r", allow_pickle=False) for name in _FILES
    )
    if not (len(ids) == len(imports) == len(matrix)):
        raise ValueError(f"{folder}: arrays of different lengths")
    return VectorSet(ids, imports, matrix)


def _folder(con: duckdb.DuckDBPyConnection, workspace: str) -> Path | None:
    """``<catalog>.vectors/<workspace digest>-<version>``, or ``None`` (no vectors, or
    a catalog that is not a file)."""
    token = version(con, workspace)
    row = con.execute(
        "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
    ).fetchone()
    if token is None or not row or not row[0]:
        return None
    digest = hashlib.sha256(workspace.encode()).hexdigest()[:16]
    return Path(f"{row[0]}.vectors") / f"{digest}-{token}"
