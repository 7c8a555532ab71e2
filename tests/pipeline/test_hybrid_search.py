"""Semantic vectors in the publish step (agentlake.load.vectors) and the semantic and
hybrid search modes (agentlake.read.semantic, agentlake.read.hybrid): what is embedded,
incremental and resumable publishing, withdrawals, a model change, filters and the
lifecycle rules on both sides of a fused ranking, cursors, and the CLI."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import duckdb
import numpy as np
import pytest

from agentlake.errors import ConfigurationError
from agentlake.load import embedder as embedder_module
from agentlake.load.embedder import MODEL, ModelUnavailable, load_embedder
from agentlake.load.vectors import EMBEDDED_KINDS, publish_vectors, vector_lag
from agentlake.manage.authz import Authorization
from agentlake.manage.lifecycle import change_lifecycle
from agentlake.manage.purge import preview, purge
from agentlake.read.hybrid import RRF_K, fuse
from agentlake.read.search import SearchFilter, SearchHit, SearchMode, search, search_page
from tests.conftest import CliRunner

EMBEDDABLE = (
    "SELECT event_id, text FROM events WHERE kind IN ('prompt', 'response', 'summary') "
    "AND text IS NOT NULL AND text <> '' ORDER BY event_id"
)


@pytest.fixture
def catalog_copy(demo_home_catalog: tuple[Path, Path], tmp_path: Path) -> Path:
    """A copy of the demo catalog this test may change."""
    copy = tmp_path / "catalog.duckdb"
    shutil.copy(demo_home_catalog[1], copy)
    return copy


def _unique_prompt(catalog: Path) -> tuple[str, str, str, str]:
    """(event id, provider, session id, text) of a prompt whose text no other event has."""
    with duckdb.connect(str(catalog), read_only=True) as con:
        row = con.execute(
            "SELECT any_value(event_id), any_value(provider), any_value(session_id), text "
            "FROM events WHERE kind = 'prompt' AND length(text) > 30 GROUP BY text "
            "HAVING count(*) = 1 ORDER BY text LIMIT 1"
        ).fetchone()
    assert row is not None
    return row[0], row[1], row[2], row[3]


def _vectors(catalog: Path) -> dict[str, np.ndarray]:
    with duckdb.connect(str(catalog), read_only=True) as con:
        rows = con.execute("SELECT event_id, vec FROM search_vectors").fetchall()
    return {event_id: np.array(vec, dtype=np.float32) for event_id, vec in rows}


def test_the_publish_step_embeds_exactly_prompts_replies_and_summaries(
    demo_home_catalog: tuple[Path, Path],
) -> None:
    catalog = demo_home_catalog[1]
    with duckdb.connect(str(catalog), read_only=True) as con:
        expected = con.execute(EMBEDDABLE).fetchall()
        assert vector_lag(con, "default").unembedded == 0
        kinds = {k for (k,) in con.execute(
            "SELECT DISTINCT e.kind FROM search_vectors v JOIN events e USING (workspace, event_id)"
        ).fetchall()}  # fmt: skip
    vectors = _vectors(catalog)
    assert sorted(vectors) == [event_id for event_id, _ in expected] and kinds <= set(
        EMBEDDED_KINDS
    )
    sample = expected[:: max(1, len(expected) // 50)]
    made = load_embedder().embed([text for _, text in sample])
    np.testing.assert_allclose(np.stack([vectors[e] for e, _ in sample]), made, atol=1e-6)


def test_a_killed_publish_resumes_from_its_watermark(catalog_copy: Path) -> None:
    """Slices commit one by one; a fault inside the second leaves the first, and the
    next run embeds the rest: the same vectors as one clean run."""
    before = _vectors(catalog_copy)
    with duckdb.connect(str(catalog_copy)) as con:
        con.execute("DELETE FROM search_vectors; DELETE FROM vector_watermark")
        calls = 0

        def fail_second(point: str) -> None:
            nonlocal calls
            calls += 1
            if calls == 2:
                raise RuntimeError("killed")

        with pytest.raises(RuntimeError, match="killed"):
            publish_vectors(con, "default", slice_chars=20_000, faults=fail_second)
        first = con.execute("SELECT count(*) FROM search_vectors").fetchone()
        assert first is not None and 0 < first[0] < len(before)
        resumed = publish_vectors(con, "default", slice_chars=20_000)
        assert resumed.embedded == len(before) - first[0]
        assert vector_lag(con, "default").unembedded == 0
    after = _vectors(catalog_copy)
    assert after.keys() == before.keys()
    for event_id, vector in before.items():
        np.testing.assert_array_equal(after[event_id], vector)


def test_withdrawn_events_lose_or_replace_their_vectors(catalog_copy: Path) -> None:
    event_id, _, _, _ = _unique_prompt(catalog_copy)
    with duckdb.connect(str(catalog_copy)) as con:
        gone = con.execute(
            "SELECT event_id FROM search_vectors WHERE event_id <> ? ORDER BY event_id LIMIT 1",
            [event_id],
        ).fetchone()
        assert gone is not None
        # a rewritten text and a deleted event, as a load commit records them
        con.execute("UPDATE events SET text = 'a brand new text about kittens' WHERE event_id = ?",
                    [event_id])  # fmt: skip
        con.execute("DELETE FROM events WHERE event_id = ?", [gone[0]])
        con.execute("INSERT INTO vector_withdrawn VALUES ('default', ?), ('default', ?)",
                    [event_id, gone[0]])  # fmt: skip
        assert vector_lag(con, "default").pending == 2
        done = publish_vectors(con, "default")
        assert (done.withdrawn, done.embedded) == (2, 0)
        assert con.execute("SELECT count(*) FROM vector_withdrawn").fetchone() == (0,)
    vectors = _vectors(catalog_copy)
    assert gone[0] not in vectors
    np.testing.assert_allclose(
        vectors[event_id], load_embedder().embed(["a brand new text about kittens"])[0], atol=1e-6
    )


def test_another_models_vectors_are_made_again(catalog_copy: Path) -> None:
    count = len(_vectors(catalog_copy))
    with duckdb.connect(str(catalog_copy)) as con:
        con.execute("UPDATE vector_watermark SET model = 'some-older-model'")
        assert vector_lag(con, "default").stale
        assert publish_vectors(con, "default").embedded == count
        assert con.execute("SELECT model FROM vector_watermark").fetchone() == (MODEL,)


def test_without_the_model_search_stays_lexical(
    catalog_copy: Path, monkeypatch: pytest.MonkeyPatch, cli: CliRunner
) -> None:
    def missing() -> Path:
        raise ModelUnavailable("the semantic model is not installed (package 'wordllama')")

    monkeypatch.setattr(embedder_module, "model_dir", missing)
    monkeypatch.setattr("agentlake.load.vectors.model_dir", missing)
    with duckdb.connect(str(catalog_copy)) as con:
        con.execute("INSERT INTO vector_withdrawn SELECT workspace, event_id FROM events "
                    "WHERE kind = 'prompt'")  # fmt: skip
        assert publish_vectors(con, "default").skipped is not None
    word = max(_unique_prompt(catalog_copy)[3].split(), key=len)
    page = search_page(catalog_copy, "default", word)
    assert page.mode == "lexical" and page.hits
    refused = cli("search", "cache bug", "--mode", "semantic", "--catalog", catalog_copy)
    assert refused.returncode == 2 and "wordllama" in refused.stderr
    doctor = json.loads(cli("doctor", "--json", "--catalog", catalog_copy, "--home",
                            catalog_copy.parent).stdout)  # fmt: skip
    assert doctor["catalog"]["vectors"]["state"] == "unavailable"


def test_semantic_search_finds_a_text_by_its_meaning_first(
    demo_home_catalog: tuple[Path, Path],
) -> None:
    catalog = demo_home_catalog[1]
    event_id, _, _, text = _unique_prompt(catalog)
    page = search_page(catalog, "default", text, mode="semantic", limit=3)
    assert page.mode == "semantic" and page.hits[0].event_id == event_id
    assert page.hits[0].score == pytest.approx(1.0, abs=1e-6)
    assert page.hits[0].score >= page.hits[1].score >= page.hits[2].score


def test_hybrid_fuses_both_rankings_and_shows_each_rank(
    demo_home_catalog: tuple[Path, Path],
) -> None:
    catalog = demo_home_catalog[1]
    page = search_page(catalog, "default", "cache bug", limit=20)
    assert page.mode == "hybrid"
    lexical = [h.event_id for h in search(catalog, "default", "cache bug", limit=200,
                                          mode="lexical")]  # fmt: skip
    semantic = [h.event_id for h in search(catalog, "default", "cache bug", limit=200,
                                           mode="semantic")]  # fmt: skip
    expected = fuse(lexical, semantic)[:20]
    assert [(h.event_id, round(h.score * 1e9)) for h in page.hits] == expected
    for hit in page.hits:
        assert hit.lexical_rank == (lexical.index(hit.event_id) + 1 if hit.event_id in lexical
                                    else None)  # fmt: skip
        assert hit.semantic_rank == (
            semantic.index(hit.event_id) + 1 if hit.event_id in semantic else None
        )
    # a hit of one side only still counts
    assert any(h.semantic_rank is None for h in page.hits) or any(
        h.lexical_rank is None for h in page.hits
    )


def test_fusion_is_reciprocal_rank_with_ties_by_event_id() -> None:
    fused = fuse(["a", "b", "c"], ["c", "d"])
    score = {e: k / 1e9 for e, k in fused}
    assert score["c"] == pytest.approx(1 / (RRF_K + 3) + 1 / (RRF_K + 1), abs=1e-9)
    assert score["a"] == pytest.approx(1 / (RRF_K + 1), abs=1e-9)
    assert [e for e, _ in fused] == ["c", "a", "b", "d"]
    assert fuse(["y"], ["x"]) == [("x", round(1e9 / (RRF_K + 1))), ("y", round(1e9 / (RRF_K + 1)))]


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_filters_apply_to_both_sides(
    demo_home_catalog: tuple[Path, Path], mode: SearchMode
) -> None:
    catalog = demo_home_catalog[1]
    checks: list[tuple[SearchFilter, Callable[[SearchHit], bool]]] = [
        (SearchFilter(provider="codex"), lambda h: h.provider == "codex"),
        (SearchFilter(kind="response"), lambda h: h.kind == "response"),
    ]
    for flt, check in checks:
        hits = search(catalog, "default", "fix the failing test", limit=30, flt=flt, mode=mode)
        assert hits and all(check(h) for h in hits)
    _, _, session_id, text = _unique_prompt(catalog)
    hits = search(catalog, "default", text, limit=10, mode=mode,
                  flt=SearchFilter(session=session_id))  # fmt: skip
    assert hits and {h.session_id for h in hits} == {session_id}


@pytest.mark.parametrize("mode", ["hybrid", "semantic"])
def test_pages_neither_skip_nor_repeat(
    demo_home_catalog: tuple[Path, Path], mode: SearchMode
) -> None:
    catalog = demo_home_catalog[1]
    whole = search_page(catalog, "default", "session loader", limit=12, mode=mode)
    first = search_page(catalog, "default", "session loader", limit=5, mode=mode)
    second = search_page(catalog, "default", "session loader", limit=7, mode=mode,
                         cursor=first.next_cursor)  # fmt: skip
    assert [h.event_id for h in first.hits + second.hits] == [h.event_id for h in whole.hits]
    assert first.next_cursor is not None
    other: SearchMode = "lexical" if mode == "hybrid" else "hybrid"
    with pytest.raises(ConfigurationError):
        search_page(catalog, "default", "session loader", limit=5, mode=other,
                    cursor=first.next_cursor)  # fmt: skip


def test_a_hidden_or_purged_session_is_never_found_by_meaning(catalog_copy: Path) -> None:
    event_id, _, session_id, text = _unique_prompt(catalog_copy)

    def found(*, include_hidden: bool = False) -> set[str]:
        flt = SearchFilter(include_hidden=include_hidden)
        modes: tuple[SearchMode, ...] = ("semantic", "hybrid")
        return {h.session_id for mode in modes
                for h in search(catalog_copy, "default", text, limit=50, flt=flt, mode=mode)}  # fmt: skip

    assert session_id in found()
    change_lifecycle(catalog_copy, Authorization("test", "default", "hide"), session_id)
    assert session_id not in found() and session_id in found(include_hidden=True)
    change_lifecycle(catalog_copy, Authorization("test", "default", "restore"), session_id)
    assert session_id in found()
    auth = Authorization("test", "default", "purge")
    purge(
        catalog_copy, auth, session_id, confirm=preview(catalog_copy, auth, session_id).operation_id
    )
    assert session_id not in found(include_hidden=True)
    assert event_id not in _vectors(catalog_copy)


def test_the_cli_searches_by_mode(demo_home_catalog: tuple[Path, Path], cli: CliRunner) -> None:
    catalog = demo_home_catalog[1]
    done = cli("search", "cache bug", "--json", "--limit", "3", "--catalog", catalog)
    shown = json.loads(done.stdout)
    assert done.returncode == 0 and shown["mode"] == "hybrid" and len(shown["hits"]) == 3
    assert {"lexical_rank", "semantic_rank"} <= set(shown["hits"][0])
    lexical = json.loads(cli("search", "cache bug", "--json", "--mode", "lexical", "--catalog",
                             catalog).stdout)  # fmt: skip
    assert lexical["mode"] == "lexical"
    human = cli("search", "cache bug", "--limit", "2", "--catalog", catalog)
    assert "search (hybrid): cache bug" in human.stdout
    bad = cli("search", "cache bug", "--mode", "fuzzy", "--catalog", catalog)
    assert bad.returncode == 2


def test_searches_map_the_vectors_copy_of_their_version_only(catalog_copy: Path) -> None:
    """The copy beside the catalog is what a search reads (zeroed, it ranks nothing
    first by meaning); a change of the vectors (a purge) gives them a new version, whose
    copy is made from the catalog again; a broken copy is read around."""
    from agentlake.load import vector_cache

    event_id, provider, _, text = _unique_prompt(catalog_copy)
    with duckdb.connect(str(catalog_copy), read_only=True) as con:
        vector_cache.ensure(con, "default")  # the copy of this catalog (copied without it)
        folder = next(Path(f"{catalog_copy}.vectors").iterdir())
        assert folder.name.endswith(str(vector_cache.version(con, "default")))
    best = search(catalog_copy, "default", text, limit=1, mode="semantic")
    assert best[0].event_id == event_id
    matrix = np.load(folder / "matrix.npy", mmap_mode="r+")
    matrix[:] = 0
    matrix.flush()
    del matrix
    assert search(catalog_copy, "default", text, limit=1, mode="semantic")[0].score == 0.0
    other = _session_of_another_provider(catalog_copy, provider)
    auth = Authorization("test", "default", "purge")
    purge(catalog_copy, auth, other, confirm=preview(catalog_copy, auth, other).operation_id)
    again = search(catalog_copy, "default", text, limit=1, mode="semantic")
    assert again[0].event_id == event_id and again[0].score == pytest.approx(1.0, abs=1e-6)
    assert not folder.exists()  # the old version's copy is gone
    (next(Path(f"{catalog_copy}.vectors").iterdir()) / "matrix.npy").unlink()
    assert search(catalog_copy, "default", text, limit=1, mode="semantic")[0].event_id == event_id


def _session_of_another_provider(catalog: Path, provider: str) -> str:
    """A session outside ``provider``'s sub-agent trees, with prompts."""
    with duckdb.connect(str(catalog), read_only=True) as con:
        row = con.execute(
            "SELECT min(session_id) FROM events WHERE kind = 'prompt' AND provider <> ?",
            [provider],
        ).fetchone()
    assert row is not None
    return str(row[0])
