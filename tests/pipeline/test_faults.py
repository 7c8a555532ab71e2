"""Faults injected into the load stage: a failing batch (before its transaction, after
its rows are written but before it commits, inside the publish step) leaves the
catalog as the previous commit left it, closes the receipt as ``failed`` with the bytes
that were committed, and the next run completes to a catalog equal to a clean import."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from agentlake.extract.extract import ExtractLimits
from agentlake.ingest.run import ImportOptions, run_import
from agentlake.load.load import BULK_INDEXES, FaultHook, FaultPoint
from fixtures.synth import generate_claude_corpus

from .helpers import scalar, snapshot

TABLES = ("events", "usage", "sessions", "rejects", "search_postings")


class Injected(RuntimeError):
    """The fault a test injects."""


def fail_at(point: FaultPoint, nth: int) -> tuple[list[int], FaultHook]:
    """A fault hook raising :class:`Injected` the ``nth`` time ``point`` is reached."""
    seen = [0]

    def hook(at: FaultPoint) -> None:
        if at == point:
            seen[0] += 1
            if seen[0] == nth:
                raise Injected(f"injected at {point} #{nth}")

    return seen, hook


def _options(
    home: Path,
    catalog: Path,
    *,
    faults: FaultHook | None = None,
    reindex: bool = False,
    build_index: bool = True,
) -> ImportOptions:
    return ImportOptions(
        catalog=catalog, workspace="default", home=home, env={},
        limits=ExtractLimits(batch_lines=400), faults=faults, reindex=reindex,
        build_index=build_index,
    )  # fmt: skip


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("faults")
    home = root / "home"
    generate_claude_corpus(home, seed=3, target_lines=5_000)
    clean = root / "clean.duckdb"
    assert run_import(_options(home, clean, reindex=True)).exit_code == 0
    return home, clean


def _consistent(catalog: Path) -> None:
    """Rows exist only for committed checkpoints, and the index covers exactly the events."""
    assert scalar(catalog, "SELECT count(*) FROM events e LEFT JOIN sources s USING (source_id) "
                           "WHERE s.source_id IS NULL") == 0  # fmt: skip
    orphans = scalar(
        catalog,
        "SELECT count(*) FROM search_postings p LEFT JOIN search_docs d USING (doc) "
        "LEFT JOIN events e USING (event_id) WHERE e.event_id IS NULL",
    )
    assert orphans == 0
    unused = scalar(
        catalog, "SELECT count(*) FROM search_docs d ANTI JOIN search_postings p USING (doc)"
    )
    assert unused == 0


@pytest.mark.parametrize(
    ("point", "nth"),
    [("commit", 1), ("commit", 4), ("after-data", 1), ("after-data", 3), ("index", 1)],
)
def test_a_failed_batch_leaves_the_previous_state_and_a_receipt(
    corpus: tuple[Path, Path], tmp_path: Path, point: FaultPoint, nth: int
) -> None:
    home, clean = corpus
    catalog = tmp_path / "c.duckdb"
    seen, hook = fail_at(point, nth)
    with pytest.raises(Injected):
        run_import(_options(home, catalog, faults=hook))
    assert seen[0] == nth
    assert scalar(catalog, "SELECT status FROM imports") == "failed"
    detail = json.loads(scalar(catalog, "SELECT detail FROM imports"))
    assert "Injected" in detail["error"]
    committed = sum(s["bytes"] for s in detail["committed"])
    assert committed == (scalar(catalog, "SELECT sum(committed_offset) FROM sources") or 0)
    if nth == 1 and point != "index":
        assert committed == 0 and scalar(catalog, "SELECT count(*) FROM events") == 0
    _consistent(catalog)

    assert run_import(_options(home, catalog, reindex=True)).exit_code == 0
    assert snapshot(catalog, TABLES) == snapshot(clean, TABLES)


def test_a_failure_in_index_compaction_keeps_the_committed_rows(
    corpus: tuple[Path, Path], tmp_path: Path
) -> None:
    home, clean = corpus
    catalog = tmp_path / "c.duckdb"
    assert run_import(_options(home, catalog, build_index=False)).exit_code == 0
    events = scalar(catalog, "SELECT count(*) FROM events")
    _, hook = fail_at("index", 1)
    with pytest.raises(Injected):
        run_import(_options(home, catalog, reindex=True, faults=hook))  # compaction fails
    assert scalar(catalog, "SELECT status FROM imports ORDER BY import_id DESC LIMIT 1") == "failed"
    assert scalar(catalog, "SELECT count(*) FROM events") == events
    _consistent(catalog)
    assert run_import(_options(home, catalog, reindex=True)).exit_code == 0
    assert snapshot(catalog, TABLES) == snapshot(clean, TABLES)


def _bulk_indexes(catalog: Path) -> int:
    """How many of the indexes a bulk import drops are there."""
    names = ", ".join(f"'{name}'" for name in BULK_INDEXES)
    return int(
        scalar(catalog, f"SELECT count(*) FROM duckdb_indexes() WHERE index_name IN ({names})")
    )


def test_a_bulk_import_drops_the_largest_indexes_and_builds_them_at_the_end(
    corpus: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past BULK_MIN_BYTES the event id and search document indexes are dropped for the
    run; a run that fails meanwhile leaves them missing, and the next run (even one with
    nothing to read) builds them again. The rows are those of a clean import either way."""
    from agentlake.ingest import run as running
    from agentlake.load.load import CatalogWriter

    home, clean = corpus
    catalog = tmp_path / "c.duckdb"
    monkeypatch.setattr(running, "BULK_MIN_BYTES", 1)
    dropped: list[bool] = []
    drop = CatalogWriter.drop_bulk_indexes

    def recorded(self: CatalogWriter) -> None:
        dropped.append(True)
        drop(self)

    monkeypatch.setattr(CatalogWriter, "drop_bulk_indexes", recorded)
    _, hook = fail_at("commit", 3)
    with pytest.raises(Injected):
        run_import(_options(home, catalog, faults=hook))
    assert dropped and _bulk_indexes(catalog) == 0
    _consistent(catalog)
    assert run_import(_options(home, catalog)).exit_code == 0
    assert _bulk_indexes(catalog) == len(BULK_INDEXES)
    assert snapshot(catalog, TABLES) == snapshot(clean, TABLES)
    with duckdb.connect(str(catalog)) as con:
        con.execute("DROP INDEX search_docs_by_doc")
    assert run_import(_options(home, catalog)).exit_code == 0  # nothing new to read
    assert _bulk_indexes(catalog) == len(BULK_INDEXES)
