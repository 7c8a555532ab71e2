"""Benchmark agentlake on a seeded synthetic home of several providers (DESIGN §8).

    python -m benchmarks --events 1000000 --seed 1   # every provider; --providers picks some

Generates the home (``benchmarks.corpus``), imports it with the CLI, re-runs the import
with nothing changed and after a 1 % append, then times search, session listing, every
report, ``agentlake report daily`` and — when ccusage 20.0.24 is installed — ccusage's
daily report on the same home. Each figure is checked against its budget. Writes
``test-results/benchmark.json`` atomically after every phase (see
``benchmarks.harness``) and prints a summary table.

Exit status: 0 the run finished (every budget met, or some missed without
``--strict``) · 1 a phase failed · 2 usage · 3 a budget was missed with ``--strict`` ·
124 ``--max-wall`` exceeded · 130/143 stopped by SIGINT/SIGTERM. In every case but
usage errors the artifact holds the outcome and its reason.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from .corpus import PROVIDERS, parse_providers
from .harness import Settings, run


def _providers(text: str) -> tuple[str, ...]:
    try:
        return parse_providers(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text}")
    return value


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number, got {text}")
    return value


def parser() -> argparse.ArgumentParser:
    """The command line."""
    p = argparse.ArgumentParser(
        prog="python -m benchmarks",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--events",
        type=_positive_int,
        default=1_000_000,
        help="source records (JSONL lines) to generate (default: 1,000,000)",
    )
    p.add_argument(
        "--lines",
        type=_positive_int,
        dest="lines",
        default=None,
        help="deprecated alias of --events",
    )
    p.add_argument("--seed", type=int, default=1, help="generator seed (default: 1)")
    p.add_argument(
        "--providers",
        type=_providers,
        default=PROVIDERS,
        help=f"comma list of providers (default: {','.join(PROVIDERS)})",
    )
    p.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="work directory, kept afterwards (default: a temporary one)",
    )
    p.add_argument(
        "--out",
        type=Path,
        default=Path("test-results/benchmark.json"),
        help="the artifact (default: test-results/benchmark.json)",
    )
    p.add_argument(
        "--ccusage-dir",
        type=Path,
        default=None,
        help="directory whose node_modules/ holds ccusage 20.0.24",
    )
    p.add_argument(
        "--record-only",
        action="store_true",
        help="record the budgets without enforcing them (a miss is not an outcome)",
    )
    p.add_argument("--strict", action="store_true", help="exit 3 when a budget is missed")
    p.add_argument(
        "--max-wall",
        type=_positive_float,
        default=None,
        metavar="SECONDS",
        help="stop (outcome fail) after this many seconds",
    )
    p.add_argument(
        "--search-queries",
        type=_positive_int,
        default=60,
        help="distinct search queries to draw (default: 60)",
    )
    p.add_argument(
        "--search-rounds",
        type=_positive_int,
        default=2,
        help="timed passes over the queries (default: 2)",
    )
    p.add_argument(
        "--report-samples",
        type=_positive_int,
        default=9,
        help="timed calls of each report (default: 9)",
    )
    p.add_argument(
        "--rerun-samples",
        type=_positive_int,
        default=3,
        help="no-change re-runs timed, warm and cold each (default: 3)",
    )
    p.add_argument(
        "--cli-rounds",
        type=_positive_int,
        default=5,
        help="timed runs of each command through the CLI (default: 5)",
    )
    p.add_argument(
        "--no-cold-rerun",
        action="store_true",
        help="do not drop the page cache for the cold re-run (the phase is skipped)",
    )
    return p


def settings_from(args: argparse.Namespace, argv: Sequence[str]) -> Settings:
    """The run's settings from parsed arguments."""
    events: int = args.events
    if args.lines is not None:
        print("warning: --lines is deprecated; use --events", file=sys.stderr)
        events = args.lines
    return Settings(
        events=events, seed=args.seed, providers=tuple(args.providers), out=args.out,
        work=args.dir, ccusage_dir=args.ccusage_dir, enforce_budgets=not args.record_only,
        strict=args.strict, max_wall_s=args.max_wall, search_queries=args.search_queries,
        search_rounds=args.search_rounds, report_samples=args.report_samples,
        rerun_samples=args.rerun_samples, cli_rounds=args.cli_rounds,
        cold_rerun=not args.no_cold_rerun, argv=tuple(argv),
    )  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line and run the benchmark; returns the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(args_list)
    return run(settings_from(args, ["python", "-m", "benchmarks", *args_list]))


if __name__ == "__main__":
    sys.exit(main())
