"""``agentlake export parquet``: the dataset read back by DuckDB, polars and pyarrow
equals the catalog's selection (counts and token totals per table and partition), on a
DuckDB file and on a lake; filters and hidden sessions; DIR handling; and a SIGKILLed
export leaves nothing at DIR."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pytest

from agentlake.load.lake import LakeCatalog
from agentlake.read.export_jsonl import export_jsonl
from agentlake.read.export_parquet import PARQUET_TABLES, export_parquet
from agentlake.read.export_target import remove_stale
from agentlake.read.reports import ReportFilter
from tests.conftest import CliRunner, cli_env
from tests.lakes import catalog_of, lake_url, read_connection

from .export_homes import build_catalog, write_home

TOKENS = ("input_tokens", "cache_write_tokens", "cache_read_tokens", "output_tokens")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A home of every agent with a generator (subagents, per-session usage, tools)."""
    return write_home(tmp_path_factory.mktemp("export-home") / "home")


@pytest.fixture(scope="module")
def file_catalog(home: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The home imported into a DuckDB file, one session tree hidden."""
    catalog = tmp_path_factory.mktemp("export-catalog") / "catalog.duckdb"
    build_catalog(home, catalog)
    return catalog


def expected(catalog: Path | LakeCatalog, flt: ReportFilter) -> dict[str, dict[str, Any]]:
    """Rows and token totals per table of the selection, read from the catalog with
    plain SQL (independent of the export's macros)."""
    hidden = "" if flt.include_hidden else "AND s.lifecycle = 'active'"
    prov = "" if flt.provider is None else f"AND s.provider = '{flt.provider}'"
    since = "" if flt.since is None else f"AND t.ts >= TIMESTAMPTZ '{flt.since} 00:00:00+00'"
    keep = f"""(t.provider, t.session_id) IN (SELECT (s.provider, s.session_id) FROM sessions s
               WHERE s.workspace = 'default' {hidden} {prov})"""
    con = read_connection(catalog)
    try:
        usage = con.execute(
            f"SELECT count(*), {', '.join(f'sum({c})' for c in TOKENS)} FROM usage t "
            f"WHERE {keep} {since}"
        ).fetchone()
        events = con.execute(f"SELECT count(*) FROM events t WHERE {keep} {since}").fetchone()
        sessions = con.execute(
            "SELECT count(*) FROM sessions t WHERE "
            + keep.replace("IN", "IN", 1)
            + (
                ""
                if flt.since is None
                else f""" AND ((t.provider, t.session_id) IN (SELECT (provider, session_id)
                    FROM events WHERE ts >= TIMESTAMPTZ '{flt.since} 00:00:00+00')
                 OR (t.provider, t.session_id) IN (SELECT (provider, session_id)
                    FROM usage WHERE ts >= TIMESTAMPTZ '{flt.since} 00:00:00+00'))"""
            )
        ).fetchone()
        rejects = con.execute(
            "SELECT count(*) FROM rejects r JOIN sources s USING (workspace, source_id) "
            f"WHERE true {prov}"
        ).fetchone()
    finally:
        con.close()
    assert usage and events and sessions and rejects
    return {
        "usage": {
            "rows": usage[0],
            **{c: int(v or 0) for c, v in zip(TOKENS, usage[1:], strict=True)},
        },
        "events": {"rows": events[0]},
        "sessions": {"rows": sessions[0]},
        "rejects": {"rows": rejects[0]},
    }


def read_duckdb(path: Path, table: str) -> dict[str, Any]:
    con = duckdb.connect()
    try:
        files = f"{path / table}/**/*.parquet"
        if not list((path / table).rglob("*.parquet")):
            return {"rows": 0}
        cols = ", ".join(f"sum({c})" for c in TOKENS) if table == "usage" else "NULL"
        row = con.execute(
            f"SELECT count(*), {cols} FROM read_parquet('{files}', hive_partitioning = true)"
        ).fetchone()
    finally:
        con.close()
    assert row is not None
    out: dict[str, Any] = {"rows": row[0]}
    if table == "usage":
        out.update({c: int(v or 0) for c, v in zip(TOKENS, row[1:], strict=True)})
    return out


def read_polars(path: Path, table: str) -> dict[str, Any]:
    if not list((path / table).rglob("*.parquet")):
        return {"rows": 0}
    frame = pl.read_parquet(path / table, hive_partitioning=True)
    out: dict[str, Any] = {"rows": frame.height}
    if table == "usage":
        out.update({c: int(frame[c].sum()) for c in TOKENS})
    return out


def read_pyarrow(path: Path, table: str) -> dict[str, Any]:
    data = ds.dataset(path / table, format="parquet", partitioning="hive").to_table()
    out: dict[str, Any] = {"rows": data.num_rows}
    if table == "usage":
        out.update({c: int(pc.sum(data[c]).as_py() or 0) for c in TOKENS})
    return out


def check_readers(path: Path, want: dict[str, dict[str, Any]]) -> None:
    for table in PARQUET_TABLES:
        for reader in (read_duckdb, read_polars, read_pyarrow):
            assert reader(path, table) == want[table], (reader.__name__, table)


def test_dataset_reads_back_equal_with_every_reader(file_catalog: Path, tmp_path: Path) -> None:
    target = tmp_path / "out"
    result = export_parquet(file_catalog, "default", target)
    want = expected(file_catalog, ReportFilter())
    assert {t.table: t.rows for t in result.tables} == {k: v["rows"] for k, v in want.items()}
    check_readers(target, want)
    # Partitions: workspace / provider / month, the month the row's UTC time.
    months = pl.read_parquet(target / "usage", hive_partitioning=True).select(
        "provider",
        "month",
        pl.col("ts").dt.convert_time_zone("UTC").dt.strftime("%Y-%m").alias("m"),
    )
    assert (months["month"] == months["m"]).all()
    assert set(months["provider"]) >= {"claude-code", "codex", "factory", "copilot"}
    assert all(p.name.startswith("workspace=") for p in (target / "events").iterdir())
    rejects = pl.read_parquet(target / "rejects", hive_partitioning=True)
    assert rejects.height == 1 and rejects["provider"].to_list() == ["claude-code"]
    assert rejects["reason"].to_list() == ["MALFORMED"] and rejects["month"][0] is not None
    cost = (
        duckdb.connect()
        .execute(f"SELECT sum(cost_usd) FROM read_parquet('{target}/usage/**/*.parquet')")
        .fetchone()
    )
    assert cost is not None and cost[0] > 0
    # Nothing is left beside the dataset.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_filters_and_hidden_sessions(file_catalog: Path, tmp_path: Path) -> None:
    for n, flt in enumerate(
        [
            ReportFilter(include_hidden=True),
            ReportFilter(provider="claude"),
            ReportFilter(since=_middle_day(file_catalog)),
        ]
    ):
        target = tmp_path / f"out{n}"
        export_parquet(file_catalog, "default", target, flt)
        check_readers(target, expected(file_catalog, flt))
    hidden = expected(file_catalog, ReportFilter(include_hidden=True))["events"]["rows"]
    assert hidden > expected(file_catalog, ReportFilter())["events"]["rows"]


def _middle_day(catalog: Path) -> Any:
    con = read_connection(catalog)
    try:
        row = con.execute("SELECT CAST(quantile_disc(ts, 0.5) AS DATE) FROM usage").fetchone()
    finally:
        con.close()
    assert row is not None
    return row[0]


def test_month_follows_tz(file_catalog: Path, tmp_path: Path) -> None:
    export_parquet(file_catalog, "default", tmp_path / "out", ReportFilter(tz="Pacific/Kiritimati"))
    frame = pl.read_parquet(tmp_path / "out" / "events", hive_partitioning=True)
    local = frame.select(
        pl.col("month"),
        pl.col("ts").dt.convert_time_zone("Pacific/Kiritimati").dt.strftime("%Y-%m").alias("m"),
    )
    timed = local.filter(pl.col("m").is_not_null())
    assert (timed["month"] == timed["m"]).all()
    assert local.filter(pl.col("m").is_null())["month"].is_null().all()


def test_on_a_lake(home: Path, file_catalog: Path, tmp_path: Path) -> None:
    lake = catalog_of(lake_url("sqlite", tmp_path, None), tmp_path)
    assert isinstance(lake, LakeCatalog)
    build_catalog(home, lake)
    target = tmp_path / "out"
    export_parquet(lake, "default", target)
    check_readers(target, expected(lake, ReportFilter()))
    # The interchange export of the lake is line for line the file catalog's.
    from_lake, from_file = tmp_path / "lake.jsonl", tmp_path / "file.jsonl"
    export_jsonl(lake, "default", from_lake, ReportFilter(include_hidden=True))
    export_jsonl(file_catalog, "default", from_file, ReportFilter(include_hidden=True))
    assert from_lake.read_bytes().splitlines()[1:] == from_file.read_bytes().splitlines()[1:]


def test_existing_dir_refused_then_replaced(
    file_catalog: Path, tmp_path: Path, cli: CliRunner
) -> None:
    target = tmp_path / "out"
    target.mkdir()  # an empty folder is taken
    first = cli("export", "parquet", target, "--catalog", file_catalog, "--json")
    assert first.returncode == 0, first.stderr
    doc = json.loads(first.stdout)
    assert doc["tables"]["events"]["rows"] > 0 and doc["replaced"] is False
    again = cli("export", "parquet", target, "--catalog", file_catalog)
    assert again.returncode == 2
    assert f"{target}: exists; pass --force" in again.stderr
    forced = cli("export", "parquet", target, "--catalog", file_catalog, "--provider", "codex",
                 "--force", "--json")  # fmt: skip
    assert forced.returncode == 0, forced.stderr
    assert json.loads(forced.stdout)["replaced"] is True
    assert [p.name for p in (target / "usage" / "workspace=default").iterdir()] == [
        "provider=codex"
    ]
    missing = cli("export", "parquet", tmp_path / "no" / "out", "--catalog", file_catalog)
    assert missing.returncode == 4 and "no such folder" in missing.stderr
    human = cli("export", "parquet", tmp_path / "h", "--catalog", file_catalog)
    assert human.returncode == 0 and human.stdout.startswith("exported ")


# A real export process that reports each table it has written, then stops until its
# stdin closes: the test kills it there, the dataset half written in its temporary.
_PAUSING = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from agentlake.read.export_jsonl import export_jsonl
    from agentlake.read.export_parquet import export_parquet

    class Pause:
        def wrote(self, part, rows):
            print(part, flush=True)
            if part == sys.argv[3]:
                sys.stdin.readline()

    export = export_jsonl if sys.argv[3] == "lines" else export_parquet
    export(Path(sys.argv[1]), "default", Path(sys.argv[2]), replace=True, reporter=Pause())
    print("done", flush=True)
    """
)


def _kill_after(catalog: Path, target: Path, part: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _PAUSING, str(catalog), str(target), part],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=cli_env(),
    )  # fmt: skip
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip() == part:
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL


def test_sigkilled_export_leaves_no_partial_dataset(file_catalog: Path, tmp_path: Path) -> None:
    target = tmp_path / "out"
    _kill_after(file_catalog, target, "usage")
    assert not target.exists()
    stale = [p for p in tmp_path.iterdir() if p.name.startswith(".out.export-")]
    assert len(stale) == 1 and (stale[0] / "events").is_dir()
    # A previous dataset survives a killed replacement whole.
    export_parquet(file_catalog, "default", target)
    before = sorted(str(p.relative_to(target)) for p in target.rglob("*"))
    _kill_after(file_catalog, target, "sessions")
    assert sorted(str(p.relative_to(target)) for p in target.rglob("*")) == before
    check_readers(target, expected(file_catalog, ReportFilter()))
    # The export after the first kill removed that one's temporary; the next removes
    # the second's.
    assert len(remove_stale(target)) == 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_the_notebook_facade_exports_both(file_catalog: Path, tmp_path: Path) -> None:
    import agentlake

    lake = agentlake.open(file_catalog, "default")
    parquet = lake.export_parquet(tmp_path / "out", provider="codex")
    jsonl = lake.export_jsonl(tmp_path / "out.jsonl", provider="codex")
    assert parquet.rows("usage") == jsonl.calls > 0
    assert parquet.rows("sessions") == jsonl.sessions


def test_sigkilled_jsonl_export_leaves_no_file(file_catalog: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.jsonl"
    _kill_after(file_catalog, target, "lines")  # every line written, not yet renamed
    assert not target.exists()
    assert [p.name.startswith(".out.jsonl.export-") for p in tmp_path.iterdir()] == [True]
    assert len(remove_stale(target)) == 1 and not any(tmp_path.iterdir())


def test_replacing_without_an_atomic_swap(
    file_catalog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the system cannot swap two folders, the old one is moved aside, the new
    one renamed in, then the old one deleted."""
    import agentlake.read.export_target as target_module

    monkeypatch.setattr(target_module, "_exchange", lambda a, b: False)
    target = tmp_path / "out"
    export_parquet(file_catalog, "default", target)
    result = export_parquet(file_catalog, "default", target, ReportFilter(provider="codex"),
                            replace=True)  # fmt: skip
    assert result.replaced
    check_readers(target, expected(file_catalog, ReportFilter(provider="codex")))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]
