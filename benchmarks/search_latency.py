"""Search latency on an imported catalog, with queries drawn from the corpus itself.

    python -m benchmarks.search_latency CATALOG [--seed 1] [--queries 60] [--rounds 2]

The vocabulary is the text of a seeded, deterministic sample of the catalog's events
(prompts, responses, reasoning, tool results): words of four letters or more, ranked by
how many sampled events use them. From it come ``--queries`` distinct queries of the
shapes people type — single words (frequent, middling and rare), two words, a phrase
(two words adjacent in some event), a prefix (``pars*``), an ``OR`` and an exclusion
(``cache -flaky``), all timed through the library (``agentlake.read.search.search``,
``mode="lexical"``: BM25 alone) on one open read-only connection, then once more opening
the catalog per call, as the CLI does. Ten queries run first to warm up (the catalog file
and the fts extension in the page cache), then ``--rounds`` measured passes over all of
them.

Then the same queries hybrid (``mode="hybrid"``: BM25 and meaning fused) on the same
connection: the first call alone (it loads the workspace's vectors, which the connection
then keeps, and the model, which the process keeps), the warm-up, and the measured
passes.
"""

from __future__ import annotations

import argparse
import random
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from itertools import pairwise
from pathlib import Path
from typing import Any, Final

import duckdb

from agentlake.load.catalog import CatalogRef
from agentlake.read.search import SearchMode, search

from .measure import percentile, summarize

__all__ = ["draw_queries", "sample_texts", "time_hybrid", "time_search"]

_WORD: Final = re.compile(r"[a-z]{4,}")
_TOKEN: Final = re.compile(r"[a-z0-9]+")
_SAMPLE_SQL: Final = """
SELECT text FROM events
WHERE workspace = $ws AND text IS NOT NULL AND length(text) > 0
  AND kind IN ('prompt', 'response', 'reasoning', 'tool_result')
  AND hash(event_id, $seed) % $modulus = 0
ORDER BY event_id
LIMIT $limit
"""
SAMPLE_EVENTS: Final = 400
WARMUP_CALLS: Final = 10
_MAX_TEXT: Final = 4_000  # characters of each sampled event that are tokenized


def sample_texts(catalog: Path, seed: int, limit: int = SAMPLE_EVENTS) -> list[str]:
    """About ``limit`` event texts chosen by a seeded hash of their ids (so the same
    catalog always yields the same sample), lower-cased and cut to a few KiB."""
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        (count,) = con.execute(
            "SELECT count(*) FROM events WHERE workspace = $ws", {"ws": "default"}
        ).fetchone() or (0,)
        modulus = max(1, int(count) // (limit * 2))
        rows = con.execute(
            _SAMPLE_SQL, {"ws": "default", "seed": seed, "modulus": modulus, "limit": limit}
        ).fetchall()
    finally:
        con.close()
    return [str(text)[:_MAX_TEXT].lower() for (text,) in rows]


def _ranked_words(texts: Sequence[str]) -> list[str]:
    """Words by the number of sampled texts using them (most first), ties by spelling."""
    counts = Counter(word for text in texts for word in set(_WORD.findall(text)))
    return [w for w, _ in sorted(counts.items(), key=lambda item: (-item[1], item[0]))]


def _pairs(texts: Sequence[str]) -> list[tuple[str, str]]:
    """Adjacent word pairs (both four letters or more), for phrase queries."""
    found: set[tuple[str, str]] = set()
    for text in texts:
        tokens = _TOKEN.findall(text)
        found.update(
            (a, b) for a, b in pairwise(tokens)
            if a != b and _WORD.fullmatch(a) and _WORD.fullmatch(b)
        )  # fmt: skip
    return sorted(found)


def draw_queries(texts: Sequence[str], seed: int, count: int = 60) -> list[str]:
    """``count`` distinct queries over the vocabulary of ``texts`` (fewer only when the
    vocabulary is too small), deterministic for ``seed``."""
    words = _ranked_words(texts)
    if len(words) < 4:
        return words[:count]
    rng = random.Random(seed)
    third = max(1, len(words) // 3)
    tiers = (words[:third], words[third : 2 * third] or words, words[2 * third :] or words)
    pairs = _pairs(texts)

    def word() -> str:
        return rng.choice(tiers[rng.randrange(3)])

    def two() -> tuple[str, str]:
        a, b = rng.choice(tiers[0]), word()
        return (a, b) if a != b else (a, rng.choice([w for w in words if w != a]))

    def phrase() -> str:
        a, b = rng.choice(pairs) if pairs else two()
        return f'"{a} {b}"'

    shapes: tuple[Callable[[], str], ...] = (
        word, word, word,
        lambda: "{} {}".format(*two()),
        phrase,
        lambda: rng.choice(tiers[0] + tiers[1])[:4] + "*",
        lambda: "{1} OR {0}".format(*two()),
        lambda: "{} -{}".format(*two()),
    )  # fmt: skip
    queries: dict[str, None] = {}
    for _ in range(count * 50):
        if len(queries) >= count:
            break
        queries.setdefault(shapes[len(queries) % len(shapes)](), None)
    return list(queries)


def _timed(
    source: CatalogRef, queries: Sequence[str], limit: int, mode: SearchMode = "lexical"
) -> tuple[list[float], list[int]]:
    """One pass over ``queries`` searched in ``mode``: seconds and hit count per query."""
    samples: list[float] = []
    hits: list[int] = []
    for query in queries:
        began = time.perf_counter()
        found = search(source, "default", query, limit=limit, mode=mode)
        samples.append(time.perf_counter() - began)
        hits.append(len(found))
    return samples, hits


def _passes(
    con: duckdb.DuckDBPyConnection,
    queries: Sequence[str],
    rounds: int,
    limit: int,
    mode: SearchMode,
) -> dict[str, Any]:
    """Warm up with the first :data:`WARMUP_CALLS` queries, then time ``rounds`` passes
    over all of them (``hits``: the first pass's hit count per query)."""
    started = time.perf_counter()
    _timed(con, queries[:WARMUP_CALLS], limit, mode)
    warmup = time.perf_counter() - started
    samples: list[float] = []
    hits: list[int] = []
    for round_number in range(rounds):
        round_samples, round_hits = _timed(con, queries, limit, mode)
        samples += round_samples
        hits = round_hits if round_number == 0 else hits
    return {
        "mode": mode,
        "queries_with_hits": sum(1 for n in hits if n),
        "hits": hits,
        "warmup_s": warmup,
        "rounds": rounds,
        "samples_s": samples,
        **summarize(samples),
    }


def time_search(
    catalog: Path,
    queries: Sequence[str],
    rounds: int = 2,
    limit: int = 20,
    con: duckdb.DuckDBPyConnection | None = None,
) -> dict[str, Any]:
    """BM25 alone (``mode="lexical"``) on one open read-only connection (the budgeted
    figure, as a notebook or a server keeps it; ``con``, or one opened and closed
    here): the warm-up and ``rounds`` timed passes (:func:`_passes`). Then one pass
    opening the catalog per query, as each CLI command does."""
    own = con is None
    con = con or duckdb.connect(str(catalog), read_only=True)
    try:
        figures = _passes(con, queries, rounds, limit, "lexical")
    finally:
        if own:
            con.close()
    per_call, _ = _timed(catalog, queries, limit)
    return {
        "queries": list(queries),
        "distinct_queries": len(set(queries)),
        **figures,
        "opened_per_call": {"samples_s": per_call, **summarize(per_call)},
    }


def time_hybrid(
    con: duckdb.DuckDBPyConnection, queries: Sequence[str], rounds: int = 2, limit: int = 20
) -> dict[str, Any]:
    """The queries hybrid (``mode="hybrid"``) on ``con``, an open read-only connection:
    the first call alone (``first_call_s``: it loads the workspace's vectors into the
    connection and, the first time in the process, the model), then the warm-up and
    ``rounds`` timed passes (:func:`_passes`). ``vectors``: how many the connection
    holds."""
    began = time.perf_counter()
    search(con, "default", queries[0], limit=limit, mode="hybrid")
    first = time.perf_counter() - began
    figures = _passes(con, queries, rounds, limit, "hybrid")
    row = con.execute(
        "SELECT count(*) FROM search_vectors WHERE workspace = $ws", {"ws": "default"}
    ).fetchone()
    return {"first_call_s": first, "first_query": queries[0], **figures,
            "vectors": int(row[0]) if row else 0}  # fmt: skip


def main() -> None:
    """Print p50/p95 of the drawn queries."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.search_latency")
    parser.add_argument("catalog", type=Path)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    queries = draw_queries(sample_texts(args.catalog, args.seed), args.seed, args.queries)
    with duckdb.connect(str(args.catalog), read_only=True) as con:
        lexical = time_search(args.catalog, queries, args.rounds, con=con)
        hybrid = time_hybrid(con, queries, args.rounds)
    print(f"{len(queries)} queries ({lexical['queries_with_hits']} with hits), lexical "
          f"p50 {percentile(lexical['samples_s'], 50) * 1e3:.1f} ms, "
          f"p95 {percentile(lexical['samples_s'], 95) * 1e3:.1f} ms; hybrid first call "
          f"{hybrid['first_call_s'] * 1e3:.0f} ms, "
          f"p50 {percentile(hybrid['samples_s'], 50) * 1e3:.1f} ms, "
          f"p95 {percentile(hybrid['samples_s'], 95) * 1e3:.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
