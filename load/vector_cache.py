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
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

import duckdb

from .embedder import DIMS
from .lake import lake_cache_dir

if TYPE_CHECKING:
    import numpy as np

_FILES: Final = ("event_ids.npy", "import_ids.npy", "matrix.npy", "by_id.npy", "sorted_ids.npy")
_BATCH: Final = 65_536  # vectors copied at a time
_COUNT: Final = "SELECT count(*) FROM search_vectors WHERE workspace = $ws"
# Cast to the model's fixed width: a lake stores the vectors as variable-size lists.
_VECTORS: Final = (
    f"SELECT event_id, import_id, vec::FLOAT[{DIMS}] AS vec FROM search_vectors "
    "WHERE workspace = $ws"
)


@dataclass(frozen=True, slots=True)
class VectorSet:
    """A workspace's vectors: event ids (bytes), import ids, unit vectors, and the rows
    in event id order with their ids (an event's row is found by binary search)."""

    event_ids: np.ndarray  # (events,) fixed-width bytes
    import_ids: np.ndarray  # (events,) int64
    matrix: np.ndarray  # (events, dims) float32
    by_id: np.ndarray  # (events,) the rows sorted by event id
    sorted_ids: np.ndarray  # (events,) event_ids[by_id]

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
    copied there from the catalog and mapped (or read into memory when the folder
    cannot be written)."""
    folder = _folder(con, workspace)
    if folder is not None:
        with suppress(OSError, ValueError):  # a partial or foreign folder: made again
            if folder.is_dir():
                return _mapped(folder)
        with suppress(OSError):
            return _mapped(_write(con, workspace, folder))
    return _in_memory(con, workspace)


def ensure(con: duckdb.DuckDBPyConnection, workspace: str) -> None:
    """Copy the workspace's vectors unless this version is copied already (the publish
    step's last act; a folder that cannot be written is left to the readers)."""
    folder = _folder(con, workspace)
    if folder is not None and not folder.is_dir():
        with suppress(OSError):
            _write(con, workspace, folder)


def _write(con: duckdb.DuckDBPyConnection, workspace: str, folder: Path) -> Path:
    """Copy the workspace's vectors into ``folder`` (written beside it, then renamed),
    a batch at a time (memory stays a batch's, however many there are), and drop the
    folders of other versions."""
    import shutil
    import tempfile  # the writer's: a search that finds its copy never loads it

    import numpy as np

    row = con.execute(_COUNT, {"ws": workspace}).fetchone()
    count = int(row[0]) if row else 0
    folder.parent.mkdir(exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".writing-", dir=folder.parent))
    try:
        ids, imports, written = [], [], 0
        batches = con.execute(_VECTORS, {"ws": workspace}).to_arrow_reader(_BATCH)
        with (staging / "matrix.npy").open("wb") as out:
            dims = batches.schema.field("vec").type.list_size
            header = {"descr": "<f4", "fortran_order": False, "shape": (count, dims)}
            np.lib.format.write_array_header_1_0(out, header)
            for batch in batches:
                values = batch.column("vec").values.to_numpy(zero_copy_only=False)
                out.write(np.asarray(values, dtype="<f4").tobytes())
                ids.append(np.array(batch.column("event_id").to_pylist(), dtype=np.bytes_))
                imports.append(batch.column("import_id").to_numpy().astype(np.int64))
                written += batch.num_rows
        if written != count:
            raise OSError(f"{folder}: {written} vectors read, {count} counted")
        event_ids = np.concatenate(ids) if ids else np.array([], dtype=np.bytes_)
        np.save(staging / "event_ids.npy", event_ids, allow_pickle=False)
        np.save(staging / "import_ids.npy", np.concatenate(imports) if imports
                else np.array([], dtype=np.int64), allow_pickle=False)  # fmt: skip
        by_id = np.argsort(event_ids, kind="stable")
        np.save(staging / "by_id.npy", by_id, allow_pickle=False)
        np.save(staging / "sorted_ids.npy", event_ids[by_id], allow_pickle=False)
        try:
            staging.replace(folder)
        except OSError:  # another process copied this version first
            shutil.rmtree(staging, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    for other in folder.parent.glob(f"{folder.name.split('-')[0]}-*"):
        if other != folder:
            shutil.rmtree(other, ignore_errors=True)
    return folder


def _in_memory(con: duckdb.DuckDBPyConnection, workspace: str) -> VectorSet:
    """The vectors read into memory (a catalog whose folder cannot be written)."""
    import numpy as np

    table = con.execute(_VECTORS, {"ws": workspace}).to_arrow_table()
    vectors = table.column("vec").combine_chunks()
    matrix = vectors.values.to_numpy(zero_copy_only=False).reshape(-1, vectors.type.list_size)
    event_ids = np.array(table.column("event_id").to_pylist(), dtype=np.bytes_)
    by_id = np.argsort(event_ids, kind="stable")
    return VectorSet(
        event_ids,
        table.column("import_id").to_numpy().astype(np.int64),
        np.ascontiguousarray(matrix, dtype=np.float32),
        by_id,
        event_ids[by_id],
    )


def _mapped(folder: Path) -> VectorSet:
    import numpy as np

    arrays = [np.load(folder / name, mmap_mode="r", allow_pickle=False) for name in _FILES]
    if len({len(array) for array in arrays}) != 1:
        raise ValueError(f"{folder}: arrays of different lengths")
    return VectorSet(*arrays)


def _folder(con: duckdb.DuckDBPyConnection, workspace: str) -> Path | None:
    """``<catalog>.vectors/<workspace digest>-<version>`` (a lake's in this machine's
    cache folder for it), or ``None`` (no vectors, or an in-memory catalog)."""
    token = version(con, workspace)
    if token is None:
        return None
    digest = hashlib.sha256(workspace.encode()).hexdigest()[:16]
    if (cache := lake_cache_dir(con)) is not None:
        return cache / "vectors" / f"{digest}-{token}"
    row = con.execute(
        "SELECT path FROM duckdb_databases() WHERE database_name = current_database()"
    ).fetchone()
    if not row or not row[0]:
        return None
    return Path(f"{row[0]}.vectors") / f"{digest}-{token}"
