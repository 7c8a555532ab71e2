"""Deterministic ids from provider-native identity (never from time or file path).

An id is the MD5 of ``provider`` and the identity parts joined by the unit separator,
computed by DuckDB over a whole column at once (stable across versions, unlike a
dataframe library's internal hash). Nulls hash as the empty string, so an absent
request id equals "none".
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import duckdb
import polars as pl

_local = threading.local()


def _connection() -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB used as a vectorized function library (no I/O)."""
    con: duckdb.DuckDBPyConnection | None = getattr(_local, "con", None)
    if con is None:
        con = _local.con = duckdb.connect(config={"threads": 1})
    return con


def with_id(frame: pl.DataFrame, name: str, provider: str, columns: Sequence[str]) -> pl.DataFrame:
    """``frame`` with a column ``name``: one 128-bit hex id per row over ``columns``."""
    parts = " || chr(31) || ".join(f"coalesce(CAST(\"{c}\" AS VARCHAR), '')" for c in columns)
    con = _connection()
    con.register("identity_input", frame.select(columns).to_arrow())
    try:
        ids = con.execute(
            f"SELECT md5($provider || chr(31) || {parts}) AS id FROM identity_input",
            {"provider": provider},
        ).to_arrow_table()
    finally:
        con.unregister("identity_input")
    return frame.with_columns(pl.Series(name, ids.column("id"), dtype=pl.String))


def stable_ids(provider: str, *parts: Sequence[object]) -> list[str]:
    """The ids :func:`with_id` gives rows whose identity parts are ``parts`` (columns)."""
    names = [f"p{i}" for i in range(len(parts))]
    frame = pl.DataFrame(
        {n: pl.Series(n, [None if v is None else str(v) for v in col], dtype=pl.String)
         for n, col in zip(names, parts, strict=True)}
    )  # fmt: skip
    return with_id(frame, "id", provider, names).get_column("id").to_list()
