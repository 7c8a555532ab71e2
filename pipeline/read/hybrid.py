"""Semantic and hybrid search pages.

A hybrid page fuses two rankings of the same filtered events by reciprocal rank
(RRF, k = :data:`RRF_K`): the best :data:`DEPTH` by BM25 and the best :data:`DEPTH`
by meaning (:mod:`agentlake.read.semantic`). An event's score is the sum over the
rankings it is in of ``1 / (k + rank)``, so a hit found by only one side still counts,
and one found by both rises. Pages follow the lexical search's cursor rules: the
first page pins the snapshot and the BM25 statistics, and later pages continue after
the last hit's (score, event id). A hybrid search ranks at most ``2 * DEPTH`` events
(``--mode lexical`` or ``semantic`` pages through every match).

The query's own syntax holds on both sides: an excluded word leaves the semantic
candidates that hold it, and a quoted phrase keeps only those that contain it (of the
best :data:`DEPTH` by meaning, in a hybrid search).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Final, Literal, TypeVar

import duckdb

from agentlake import sql
from agentlake.errors import ConfigurationError
from agentlake.load.lake import cursor
from agentlake.load.vector_cache import VectorSet
from agentlake.read import cursors
from agentlake.read.search import (
    SCORE_SCALE,
    LexicalPlan,
    ParsedQuery,
    SearchMode,
    SearchPage,
    _collection,
    _events_by_id,
    as_hit,
    lexical_ranked,
)
from agentlake.read.semantic import eligible, has_vectors, ranked, reordered, vector_set

if TYPE_CHECKING:
    import numpy as np

T = TypeVar("T")

RRF_K: Final = 60
DEPTH: Final = 100  # events each ranking brings to a hybrid page
# Semantic candidates checked for quoted phrases and exclusions: the best DEPTH alone
# (checking a phrase reads each candidate's text).
_WINDOW_MAX: Final = DEPTH


class Semantic:
    """The query's vector and the workspace's vectors, loading in threads while the
    caller ranks by words (the tokenizer, numpy and DuckDB release the GIL)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, workspace: str, query: str) -> None:
        # Two loads, then the ranking by meaning, which waits for both.
        self._pool = ThreadPoolExecutor(3, thread_name_prefix="agentlake-semantic")
        self._reader = cursor(con)
        self.query: Future[np.ndarray] = self._pool.submit(_query_vector, query)
        self.vectors: Future[VectorSet] = self._pool.submit(
            vector_set, con, workspace, self._reader
        )

    @property
    def reader(self) -> duckdb.DuckDBPyConnection:
        """The semantic threads' connection (a cursor of the search's)."""
        return self._reader

    def run(self, work: Callable[[int], T], argument: int) -> Future[T]:
        """``work(argument)`` in a semantic thread (after the loads it waits for)."""
        return self._pool.submit(work, argument)

    def close(self) -> None:
        """Wait for the loads (an error in them is not raised here) and free them."""
        self._pool.shutdown(wait=True)
        self._reader.close()


def start_semantic(con: duckdb.DuckDBPyConnection, workspace: str, query: str) -> Semantic | None:
    """:class:`Semantic` for ``query`` when the workspace has vectors, else ``None``."""
    return Semantic(con, workspace, query) if has_vectors(con, workspace) else None


def _query_vector(query: str) -> np.ndarray:
    from agentlake.load.embedder import load_embedder

    vector: np.ndarray = load_embedder().embed([query])[0]
    return vector


def chosen_mode(
    workspace: str, mode: SearchMode, *, embedded: bool
) -> Literal["lexical", "semantic", "hybrid"]:
    """The mode a search runs in: ``auto`` is hybrid when the workspace's events are
    ``embedded`` and the model is installed; ``hybrid`` and ``semantic`` without them
    are a usage error that says how to get them."""
    from agentlake.load.embedder import ModelUnavailable, model_dir

    if mode == "lexical":
        return "lexical"
    try:
        model_dir()
    except ModelUnavailable as missing:
        if mode == "auto":
            return "lexical"
        raise ConfigurationError(f"--mode {mode}: {missing}") from None
    if not embedded:
        if mode == "auto":
            return "lexical"
        raise ConfigurationError(
            f"--mode {mode}: workspace {workspace!r} has no semantic vectors yet; run "
            "'agentlake index' to embed its events, or search with --mode lexical"
        )
    return "hybrid" if mode == "auto" else mode


def fused_page(
    con: duckdb.DuckDBPyConnection,
    workspace: str,
    parsed: ParsedQuery,
    plan: LexicalPlan,
    semantic: Semantic,
    *,
    chosen: Literal["semantic", "hybrid"],
    bound: dict[str, Any],
    state: dict[str, Any] | None,
    limit: int,
    offset: int,
) -> SearchPage:
    """One page ranked by meaning (``semantic``) or by both rankings fused
    (``hybrid``), after the cursor's ``state`` (else after ``offset`` hits)."""
    snap = _collection(con, workspace)
    after = tuple(state["after"]) if state else None
    snapshot = int(plan.frozen["snapshot"])
    # Words and meaning are ranked at once, each on a core: the meaning in the
    # semantic threads, on their own connection; the words here.
    reader = semantic.reader

    def meaning(depth: int, after_key: tuple[int, str] | None = None) -> list[tuple[str, int]]:
        vectors, query = semantic.vectors.result(), semantic.query.result()
        # The filtered events, unless nothing filters (the lexical side's plain case)
        # and no vector waits to be replaced.
        plain = plan.plain and not _pending(reader, workspace)
        mask = None if plain else eligible(reader, vectors, plan.params)
        keep = _passing(reader, workspace, plan, parsed)
        return _semantic(vectors, query, mask, snapshot, after_key, depth, keep)

    ranks: dict[str, tuple[int | None, int | None]] = {}
    if chosen == "semantic":
        need = limit + (0 if state else offset)
        page = meaning(need, after)[(0 if state else offset) :]
    elif parsed.quoted or plan.params["excluded"]:
        # Quotes and exclusions ask for exact words: meaning reorders the lexical
        # matches (checking them on the nearest events would read every one's text).
        found, _ = lexical_ranked(con, workspace, plan, limit=DEPTH, rows=False)
        lexical = [r.event_id for r in found]
        current = set(lexical) - _withdrawn(con, workspace, lexical)
        by_meaning = reordered(
            semantic.vectors.result(), [e for e in lexical if e in current],
            semantic.query.result(),
        )  # fmt: skip
    else:
        by_meaning_later = semantic.run(meaning, DEPTH)
        found, _ = lexical_ranked(con, workspace, plan, limit=DEPTH, rows=False)
        lexical = [r.event_id for r in found]
        by_meaning = [event_id for event_id, _ in by_meaning_later.result()]
    if chosen == "hybrid":
        fused = fuse(lexical, by_meaning)
        if after is not None:
            fused = [f for f in fused if (-f[1], f[0]) > (-after[0], after[1])]
        page = fused[(0 if state else offset) :][:limit]
        lexical_at = {e: i + 1 for i, e in enumerate(lexical)}
        meaning_at = {e: i + 1 for i, e in enumerate(by_meaning)}
        ranks = {e: (lexical_at.get(e), meaning_at.get(e)) for e, _ in page}
    rows = _events_by_id(con, workspace, [event_id for event_id, _ in page])
    hits = [
        as_hit(rows[event_id], event_id, key, parsed.words, ranks.get(event_id, (None, None)))
        for event_id, key in page
    ]
    next_cursor = None
    if len(hits) == limit:
        cursor_state = {**bound, **plan.frozen, "after": [page[-1][1], page[-1][0]]}
        next_cursor = cursors.encode(cursor_state, snap.secret)
    return SearchPage(hits, next_cursor, snap.unindexed, chosen)


def fuse(lexical: list[str], semantic: list[str]) -> list[tuple[str, int]]:
    """Reciprocal-rank fusion of two rankings (event ids, best first): each event with
    its key (the RRF score in billionths, rounded), best first, ties by event id."""
    score: dict[str, float] = {}
    for ranking in (lexical, semantic):
        for rank, event_id in enumerate(ranking, 1):
            score[event_id] = score.get(event_id, 0.0) + 1.0 / (RRF_K + rank)
    keyed = [(event_id, round(value * SCORE_SCALE)) for event_id, value in score.items()]
    return sorted(keyed, key=lambda item: (-item[1], item[0]))


def _semantic(
    vectors: VectorSet,
    query: np.ndarray,
    mask: np.ndarray | None,
    snapshot: int,
    after: tuple[int, str] | None,
    depth: int,
    keep: Callable[[list[str]], set[str]] | None,
) -> list[tuple[str, int]]:
    """The best ``depth`` events by meaning that ``keep`` (phrases, exclusions) lets
    through: the window of candidates grows until it holds that many or runs out."""
    window = depth
    while True:
        found = ranked(vectors, query, mask=mask, snapshot=snapshot, after=after, depth=window)
        if keep is None:
            return found
        kept = keep([event_id for event_id, _ in found])
        passing = [f for f in found if f[0] in kept]
        if len(passing) >= depth or len(found) < window or window >= _WINDOW_MAX:
            return passing[:depth]
        window *= 8


def _passing(
    con: duckdb.DuckDBPyConnection, workspace: str, plan: LexicalPlan, parsed: ParsedQuery
) -> Callable[[list[str]], set[str]] | None:
    """A check of semantic candidates against the query's quoted phrases and excluded
    words, or ``None`` when the query has neither."""
    excluded = plan.params["excluded"]
    phrases = ["(?i)" + "[^a-z0-9]+".join(p.split()) for p in parsed.quoted]
    if not phrases and not excluded:
        return None

    def keep(ids: list[str]) -> set[str]:
        kept = set(_events_by_id(con, workspace, ids, phrases)) if phrases else set(ids)
        if excluded and kept:
            statement = (
                sql.query("search_excluded_events")
                .replace("/* ids */", sql.literals(sorted(kept)))
                .replace("/* terms */", sql.literals(excluded))
            )
            gone = {row[0] for row in con.execute(statement, {"ws": workspace}).fetchall()}
            kept -= gone
        return kept

    return keep


def _withdrawn(con: duckdb.DuckDBPyConnection, workspace: str, ids: list[str]) -> set[str]:
    """Those of ``ids`` whose vectors a load commit withdrew (stale until the publish
    step replaces them)."""
    rows = con.execute(
        "SELECT event_id FROM vector_withdrawn WHERE workspace = $ws "
        "AND event_id IN (SELECT unnest($ids::VARCHAR[]))",
        {"ws": workspace, "ids": ids},
    ).fetchall()
    return {row[0] for row in rows}


def _pending(con: duckdb.DuckDBPyConnection, workspace: str) -> bool:
    row = con.execute(
        "SELECT count(*) FROM vector_withdrawn WHERE workspace = $ws", {"ws": workspace}
    ).fetchone()
    return bool(row and row[0])
