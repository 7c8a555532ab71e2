"""Recall@k of search over the evaluation set (``tests/read/semantic_eval_set.py``): how
many of its queries find their target in the first k hits.

    python -m benchmarks.recall DIR [--k 5]

A query finds its target when one of the first ``k`` hits is the target's prompt event
or its reply event: an event of the target's session whose text is the prompt or the
reply (:class:`~tests.read.semantic_eval_set.EvalEvent`). The paraphrases
(:data:`~tests.read.semantic_eval_set.PARAPHRASES`) share no content word with their
targets, so only a search by meaning finds them; the exact-word queries
(:data:`~tests.read.semantic_eval_set.LEXICAL`) name a rare identifier of their target,
which a search by words finds. :func:`measure_recall` writes the evaluation home into a
directory, imports it (``agentlake import``, the CLI) and scores every query set in
every mode on one read-only connection.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import duckdb

from agentlake.read.search import SearchHit, SearchMode, search
from tests.read.semantic_eval_set import LEXICAL, PARAPHRASES, EvalEvent, Query, write_eval_home

__all__ = [
    "RUNS",
    "K",
    "Recall",
    "finds_target",
    "import_eval_home",
    "measure_recall",
    "recall_at_k",
]

K: Final = 5
#: The query sets and the modes each is scored in: paraphrases need meaning (lexical
#: recall is their baseline); exact words need words (hybrid must keep them).
RUNS: Final[tuple[tuple[str, tuple[Query, ...], tuple[SearchMode, ...]], ...]] = (
    ("paraphrase", PARAPHRASES, ("lexical", "semantic", "hybrid")),
    ("lexical", LEXICAL, ("lexical", "hybrid")),
)
EVAL_SEED: Final = 11


@dataclass(frozen=True, slots=True)
class Recall:
    """One query set in one mode: the queries that found their target, out of all."""

    found: int
    total: int
    missed: tuple[str, ...]  # the texts of the queries that did not

    @property
    def recall(self) -> float:
        return self.found / self.total if self.total else 0.0

    def as_json(self) -> dict[str, Any]:
        return {"recall": self.recall, "found": self.found, "total": self.total,
                "missed": list(self.missed)}  # fmt: skip


def finds_target(
    con: duckdb.DuckDBPyConnection, hits: Sequence[SearchHit], target: EvalEvent
) -> bool:
    """Whether one of ``hits`` is ``target``'s prompt or reply event (same session, and
    the event's text, read from ``events``, is the prompt or the reply)."""
    ids = [hit.event_id for hit in hits if hit.session_id == target.session_id]
    if not ids:
        return False
    row = con.execute(
        "SELECT count(*) FROM events WHERE event_id IN (SELECT unnest($ids)) "
        "AND session_id = $session AND text IN ($prompt, $reply)",
        {"ids": ids, "session": target.session_id, "prompt": target.prompt,
         "reply": target.reply},
    ).fetchone()  # fmt: skip
    return bool(row and row[0])


def recall_at_k(
    con: duckdb.DuckDBPyConnection,
    queries: Sequence[Query],
    placed: Mapping[str, EvalEvent],
    mode: SearchMode,
    k: int = K,
    workspace: str = "default",
) -> Recall:
    """Recall@``k`` of ``queries`` searched in ``mode`` on ``con``; ``placed``: where
    each target went (:func:`~tests.read.semantic_eval_set.write_eval_home`)."""
    missed = [
        q.text for q in queries
        if not finds_target(con, search(con, workspace, q.text, limit=k, mode=mode),
                            placed[q.target])
    ]  # fmt: skip
    return Recall(len(queries) - len(missed), len(queries), tuple(missed))


def import_eval_home(
    folder: Path, env: Mapping[str, str] | None = None, seed: int = EVAL_SEED
) -> tuple[Path, dict[str, EvalEvent], dict[str, Any]]:
    """Write the evaluation home in ``folder`` and import it through the CLI into a
    catalog of its own: the catalog, where each target went, and the import's receipt."""
    home, catalog = folder / "eval-home", folder / "eval.duckdb"
    placed = write_eval_home(home, seed=seed)
    proc = subprocess.run(
        [sys.executable, "-m", "agentlake", "import", "--home", str(home), "--catalog",
         str(catalog), "--json"],
        env=dict(env) if env is not None else None, capture_output=True, text=True, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        raise RuntimeError(f"agentlake import exited {proc.returncode}: {proc.stderr[-800:]}")
    receipt: dict[str, Any] = json.loads(proc.stdout)
    return catalog, placed, receipt


def measure_recall(
    catalog: Path, placed: Mapping[str, EvalEvent], k: int = K
) -> dict[str, dict[str, Recall]]:
    """Every run of :data:`RUNS` on one read-only connection: by query set, by mode."""
    with duckdb.connect(str(catalog), read_only=True) as con:
        return {
            name: {mode: recall_at_k(con, queries, placed, mode, k) for mode in modes}
            for name, queries, modes in RUNS
        }


def main() -> None:
    """Write, import and score the evaluation set; print recall@k per set and mode."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.recall")
    parser.add_argument("dir", type=Path, help="an empty directory for the home and catalog")
    parser.add_argument("--k", type=int, default=K)
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    catalog, placed, _ = import_eval_home(args.dir)
    for name, modes in measure_recall(catalog, placed, args.k).items():
        for mode, found in modes.items():
            print(f"{name:<10} {mode:<8} recall@{args.k} {found.recall:.3f} "
                  f"({found.found}/{found.total})")  # fmt: skip


if __name__ == "__main__":
    main()
