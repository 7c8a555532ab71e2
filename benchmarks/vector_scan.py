"""Three ways to rank unit vectors by a query, measured side by side.

    python -m benchmarks.vector_scan [--vectors 250000] [--dims 128] [--hnsw]

Random unit vectors of the shape search ranks (``search_vectors``: one per embedded
event; 250,000 at a million events) in a DuckDB file; then, per query, the best 1,000:

* ``duckdb_exact``: ``array_inner_product`` over the array column, ``ORDER BY … LIMIT``;
* ``numpy_exact``: one matrix-vector product over the matrix in memory (what
  :mod:`agentlake.read.semantic` does, over the matrix mapped from the catalog's copy);
* ``hnsw`` (with ``--hnsw``): the ``vss`` extension's HNSW index from its wheel (a dev
  dependency): its build, the first query of a fresh connection (the index is loaded),
  then warm queries.

Prints one JSON object of medians in seconds. ``benchmarks/HISTORY.md`` ("Search by
meaning") has the figures that chose the exact scan in NumPy.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

TOP = 1_000
QUERIES = 7


def _median(run: Callable[[], object], times: int = QUERIES) -> float:
    run()  # warm
    samples = []
    for _ in range(times):
        started = time.perf_counter()
        run()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def _vss(con: duckdb.DuckDBPyConnection) -> None:
    import duckdb_extension_vss

    folder = Path(next(iter(duckdb_extension_vss.__path__)))
    con.execute(f"LOAD '{next(folder.rglob('vss.duckdb_extension')).as_posix()}'")


def measure(vectors: int, dims: int, *, hnsw: bool) -> dict[str, Any]:
    """The medians (seconds) of each method on ``vectors`` random unit vectors."""
    rng = np.random.default_rng(1)
    matrix = rng.standard_normal((vectors, dims)).astype(np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    query = matrix[7] + 0.1 * rng.standard_normal(dims).astype(np.float32)
    query /= np.linalg.norm(query)
    out: dict[str, Any] = {"vectors": vectors, "dims": dims, "top": TOP}
    with tempfile.TemporaryDirectory() as work:
        path = Path(work) / "vectors.duckdb"
        rows = pa.table({
            "doc": np.arange(vectors, dtype=np.int64),
            "vec": pa.FixedSizeListArray.from_arrays(pa.array(matrix.ravel()), dims),
        })  # fmt: skip
        with duckdb.connect(str(path)) as con:
            con.execute(f"CREATE TABLE v (doc BIGINT, vec FLOAT[{dims}])")
            con.register("rows", rows)
            con.execute("INSERT INTO v SELECT * FROM rows")
            con.execute("CHECKPOINT")
        ranked = (
            f"SELECT doc FROM v ORDER BY array_inner_product(vec, $q::FLOAT[{dims}]) DESC "
            f"LIMIT {TOP}"
        )
        with duckdb.connect(str(path), read_only=True) as con:
            out["duckdb_exact_s"] = _median(
                lambda: con.execute(ranked, {"q": query.tolist()}).fetchall()
            )
        out["numpy_exact_s"] = _median(lambda: np.argpartition(-(matrix @ query), TOP)[:TOP])
        if hnsw:
            config: dict[str, str | bool | int | float | list[str]] = {
                "autoinstall_known_extensions": False,
                "autoload_known_extensions": False,
            }
            with duckdb.connect(str(path), config=config) as con:
                _vss(con)
                con.execute("SET hnsw_enable_experimental_persistence = true")
                started = time.perf_counter()
                con.execute("CREATE INDEX v_hnsw ON v USING HNSW (vec) WITH (metric = 'ip')")
                con.execute("CHECKPOINT")
                out["hnsw_build_s"] = time.perf_counter() - started
            nearest = (
                f"SELECT doc FROM v ORDER BY array_negative_inner_product(vec, "
                f"$q::FLOAT[{dims}]) LIMIT {TOP}"
            )
            with duckdb.connect(str(path), read_only=True, config=config) as con:
                _vss(con)
                started = time.perf_counter()
                con.execute(nearest, {"q": query.tolist()}).fetchall()
                out["hnsw_first_query_s"] = time.perf_counter() - started
                out["hnsw_query_s"] = _median(
                    lambda: con.execute(nearest, {"q": query.tolist()}).fetchall()
                )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.vector_scan")
    parser.add_argument("--vectors", type=int, default=250_000)
    parser.add_argument("--dims", type=int, default=128)
    parser.add_argument("--hnsw", action="store_true", help="also build and query an HNSW index")
    args = parser.parse_args()
    print(json.dumps(measure(args.vectors, args.dims, hnsw=args.hnsw), indent=2))


if __name__ == "__main__":
    main()
