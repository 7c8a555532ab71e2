"""The publish step (agentlake.load.publish): load commits never touch the index,
withdrawn events lose their postings, a rewritten event is indexed again, and a
catalog whose index lags is searched as far as it goes and says how far that is."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import duckdb
import pyarrow as pa
import pytest

from agentlake.ingest.run import ImportOptions, run_import
from agentlake.load import catalog as catalog_module
from agentlake.load import load as load_module
from agentlake.load.catalog import open_for_write
from agentlake.load.load import CatalogWriter
from agentlake.load.publish import above, lag, publish, rebuild, watermark
from agentlake.load.search_index import DuckDBSearchIndex, SearchIndex
from agentlake.read.search import search_page
from tests.pipeline.helpers import scalar, snapshot
from tests.pipeline.test_search import SID_A, _home

# The lexical index's own tests: every library search here ranks by words alone.
pytestmark = pytest.mark.usefixtures("lexical_search")

INDEX_TABLES = ("search_postings", "search_terms", "search_state")


def _imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports, relative ones with their dots, at any depth (under
    ``TYPE_CHECKING`` and inside functions too)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = "." * node.level + (node.module or "")
            names.add(base)
            names.update(f"{base}.{alias.name}" if node.module else base + alias.name
                         for alias in node.names)  # fmt: skip
    return names


def test_the_commit_path_does_not_import_the_index_writer() -> None:
    """The load commits cannot reach the search index: the module of
    ``CatalogWriter.commit`` (and the catalog module it opens with) imports neither
    the publish step nor the tokenizer."""
    assert CatalogWriter.commit.__module__ == load_module.__name__
    for module in (load_module, catalog_module):
        source = inspect.getsourcefile(module)
        assert source is not None
        imported = _imported_modules(Path(source))
        assert imported, source
        assert not any(
            name.split(".")[-1] in ("publish", "search_index", "terms") for name in imported
        ), (
            source,
            sorted(imported),
        )


def _import(home: Path, catalog: Path, *, index: bool = True, restart: bool = False) -> None:
    result = run_import(
        ImportOptions(catalog=catalog, workspace="default", home=home, env={},
                      build_index=index, restart_drifted=restart)
    )  # fmt: skip
    assert result.exit_code in (0, 1)


def _publish(catalog: Path) -> tuple[int, int]:
    with open_for_write(catalog) as con:
        done = publish(con, "default")
    return done.indexed, done.withdrawn


def _orphan_postings(catalog: Path) -> int:
    return int(
        scalar(
            catalog,
            "SELECT count(*) FROM search_postings p LEFT JOIN search_docs d USING (doc) "
            "LEFT JOIN events e USING (event_id) WHERE e.event_id IS NULL",
        )
    )


def test_withdrawn_events_lose_their_postings(tmp_path: Path) -> None:
    """A source re-read whole withdraws its events: until the publish step runs they are
    left out of search (their postings still there), and then their postings go; the
    index equals a clean import of what the source holds now."""
    home = _home(tmp_path)
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    assert [h.snippet for h in search_page(catalog, "default", "layer").hits]
    path = next(home.rglob(f"{SID_A}.jsonl"))
    path.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:2]))
    _import(home, catalog, index=False)  # refused: truncated
    _import(home, catalog, index=False, restart=True)  # re-read from 0, unindexed
    assert scalar(catalog, "SELECT count(DISTINCT event_id) FROM search_withdrawn") == 4
    assert _orphan_postings(catalog) > 0  # not applied yet ...
    page = search_page(catalog, "default", "layer")
    assert page.hits == [] and page.unindexed == 2  # ... but never found
    assert search_page(catalog, "default", "cache").hits == []  # the re-read ones wait

    assert _publish(catalog) == (2, 4)
    assert _orphan_postings(catalog) == 0
    assert scalar(catalog, "SELECT count(*) FROM search_withdrawn") == 0
    assert search_page(catalog, "default", "layer").hits == []
    assert len(search_page(catalog, "default", "cache").hits) == 2
    clean = tmp_path / "clean.duckdb"
    _import(home, clean)
    assert snapshot(catalog, INDEX_TABLES) == snapshot(clean, INDEX_TABLES)


def test_a_rewritten_event_below_the_watermark_is_indexed_again(tmp_path: Path) -> None:
    """An event whose text a commit rewrites (a secret cut across two commits) keeps
    its place below the watermark: its withdrawal drops the old postings and indexes
    the new text, as a rebuild would."""
    home = _home(tmp_path)
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    event = scalar(catalog, "SELECT event_id FROM events WHERE text LIKE 'unrelated note%'")
    with duckdb.connect(str(catalog)) as con:
        con.execute("UPDATE events SET text = 'zeppelin moored' WHERE event_id = ?", [event])
        con.execute("INSERT INTO search_withdrawn VALUES ('default', ?)", [event])
    page = search_page(catalog, "default", "parser")
    assert len(page.hits) == 1 and page.unindexed == 1  # the rewritten one is left out
    assert search_page(catalog, "default", "zeppelin").hits == []

    assert _publish(catalog) == (0, 1)
    assert [h.event_id for h in search_page(catalog, "default", "zeppelin").hits] == [event]
    assert search_page(catalog, "default", "parser").unindexed == 0
    rebuilt = tmp_path / "rebuilt.duckdb"
    rebuilt.write_bytes(catalog.read_bytes())
    with open_for_write(rebuilt) as con:
        rebuild(con, "default")
    unsorted = ("sorted_postings",)  # a rebuild sorts every posting
    assert snapshot(catalog, INDEX_TABLES, exclude=unsorted) == snapshot(
        rebuilt, INDEX_TABLES, exclude=unsorted
    )


def test_the_lag_counts_the_events_above_the_watermark(tmp_path: Path) -> None:
    home = _home(tmp_path)
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog, index=False)
    events = scalar(catalog, "SELECT count(*) FROM events")
    with duckdb.connect(str(catalog), read_only=True) as con:
        behind = lag(con, "default")
    assert (behind.unindexed, behind.withdrawn, behind.events) == (events, 0, events)
    page = search_page(catalog, "default", "cache")
    assert page.hits == [] and page.unindexed == events
    assert _publish(catalog) == (events, 0)
    with duckdb.connect(str(catalog), read_only=True) as con:
        assert lag(con, "default").events == 0
    assert _publish(catalog) == (0, 0)  # nothing left: the watermark is at the newest event


def test_a_finished_publish_step_is_complete_through_the_newest_import(tmp_path: Path) -> None:
    """A publish step that reached the end records the import through which the index is
    complete, so the next one selects events by import id alone (none of that import's
    events are read again); one that stopped early leaves it where it was."""
    home = _home(tmp_path)
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog, index=False)
    newest = int(scalar(catalog, "SELECT max(import_id) FROM imports"))
    with open_for_write(catalog) as con:
        assert publish(con, "default", slice_bytes=64, stop=lambda: True).stopped
        assert watermark(con, "default").through_import == -1
        publish(con, "default")
        mark = watermark(con, "default")
    assert mark.through_import == newest
    assert f"e.import_id > {newest} AND" in above(mark)
    assert _publish(catalog) == (0, 0)


def test_the_index_interface_adds_queries_and_removes(tmp_path: Path) -> None:
    """Search and the publish step reach the index through :class:`SearchIndex`
    alone: events in, a query's terms out, events removed."""
    events = pa.table(
        {
            "event_id": ["e1", "e2", "e3"],
            "text": ["Caching the loader", None, "the loader retries"],
            "tool_input": [None, None, '{"command": "pytest"}'],
        }
    )
    with open_for_write(tmp_path / "c.duckdb") as con:
        index: SearchIndex = DuckDBSearchIndex(con, "default")
        try:
            assert index.add(events) == 3
            found = index.query(["loader", "caching", "the", "zeppelin"])
            assert set(found.terms) == {"loader", "caching", "the", "zeppelin"}
            held = {word: found.known.get(term) for word, term in found.terms.items()}
            assert held["the"] is None and held["zeppelin"] is None  # a stop word, unknown
            assert held["loader"] is not None and held["loader"].df == 2
            assert held["caching"] is not None and held["caching"].df == 1
            index.remove(["e1"])
            after = index.query(["loader", "caching"])
            assert after.known[after.terms["loader"]].df == 1
            assert after.terms["caching"] not in after.known
        finally:
            assert isinstance(index, DuckDBSearchIndex)
            index.close()
        assert con.execute("SELECT docs FROM search_state").fetchone() == (1,)
        staged = "SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE 'search_staging%'"
        assert con.execute(staged).fetchone() == (0,)


def test_a_stopped_publish_step_keeps_its_slices_and_the_next_one_finishes(
    tmp_path: Path,
) -> None:
    home = _home(tmp_path)
    catalog, clean = tmp_path / "c.duckdb", tmp_path / "clean.duckdb"
    _import(home, catalog, index=False)
    _import(home, clean)
    asked: list[bool] = []

    def stop() -> bool:
        asked.append(True)
        return len(asked) > 2  # after two slices

    with open_for_write(catalog) as con:
        first = publish(con, "default", slice_bytes=64, stop=stop)
        assert first.stopped and first.slices == 2
        assert 0 < lag(con, "default").unindexed < scalar_count(con, "events")
        rest = publish(con, "default", slice_bytes=64)
    assert not rest.stopped and first.indexed + rest.indexed == 6
    unsorted = ("sorted_postings",)
    assert snapshot(catalog, INDEX_TABLES, exclude=unsorted) == snapshot(
        clean, INDEX_TABLES, exclude=unsorted
    )


def scalar_count(con: duckdb.DuckDBPyConnection, table: str) -> int:
    row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
    assert row is not None
    return int(row[0])


def test_a_catalog_indexed_in_its_commits_migrates_to_an_up_to_date_watermark(
    tmp_path: Path,
) -> None:
    """Before schema version 14 every commit indexed its events: the migration puts the
    watermark at the newest event, so nothing is indexed twice, and it can run again."""
    home = _home(tmp_path)
    catalog = tmp_path / "c.duckdb"
    _import(home, catalog)
    before = snapshot(catalog, (*INDEX_TABLES, "search_watermark"))
    with duckdb.connect(str(catalog)) as con:
        con.execute("DELETE FROM search_watermark")
        con.execute("DELETE FROM schema_version WHERE version >= 14")
    with open_for_write(catalog) as con:  # migrates again
        assert lag(con, "default").events == 0
        assert publish(con, "default").indexed == 0
    assert snapshot(catalog, (*INDEX_TABLES, "search_watermark")) == before


def testone_ahead_keeps_the_order_and_raises_where_the_result_is_taken() -> None:
    """The publish step's prefetch: results in order, each computed while the one before
    is used; an error surfaces at its own item; closing early waits for the call in
    flight and starts no other."""
    import threading

    from agentlake.load.publish import one_ahead

    calls: list[int] = []

    def square(n: int) -> int:
        calls.append(n)
        return n * n

    assert list(one_ahead(square, 4)) == [0, 1, 4, 9]
    assert calls == [0, 1, 2, 3]
    assert list(one_ahead(lambda n: n, 0)) == []

    def work(n: int) -> int:
        if n == 2:
            raise ValueError("slice 2")
        return n

    items = one_ahead(work, 4)
    assert [next(items), next(items)] == [0, 1]
    with pytest.raises(ValueError, match="slice 2"):
        next(items)

    started, release = threading.Event(), threading.Event()

    def slow(n: int) -> int:
        if n == 1:
            started.set()
            release.wait(5)
        return n

    items = one_ahead(slow, 3)
    assert next(items) == 0
    assert started.wait(5)  # slice 1 is prepared while slice 0 is used
    release.set()
    items.close()  # returns once slice 1's call is done; slice 2 never starts
