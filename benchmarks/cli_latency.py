"""How long the commands people run all day take through the CLI, process start included.

    python -m benchmarks.cli_latency CATALOG [--rounds 10]

Each command runs as a subprocess (the ``agentlake`` console script next to this
interpreter, else ``python -m agentlake``) once to warm up, then ``rounds`` times; its
figure is the median wall time. The commands: ``--help`` and ``report --help``, then on
the catalog ``report daily``, ``sessions list``, ``sessions show``, ``search`` of a common
and of a rare term and ``doctor``, each with and without ``--json``. The session shown
and the search terms come from the catalog itself (one read-only query): a session of
the median number of events (the one people open most often is a typical one; ties by
id), the indexed word found in the most events and one found in the fewest (at least
four letters each, ties by spelling), so the same catalog always gets the same commands.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Final

import duckdb
import orjson

from .measure import run_child

__all__ = ["cli_commands", "measure_cli_latency"]

# A read of the catalog that takes longer than this is a failed run, not a figure.
_TIMEOUT_S: Final = 120.0

_PICK_SQL: Final = """
SELECT
    (SELECT session_id FROM (
        SELECT session_id, row_number() OVER (ORDER BY events, session_id) AS r,
               count(*) OVER () AS n
        FROM sessions WHERE workspace = $ws)
     WHERE r = n // 2 + 1),
    (SELECT term FROM search_terms WHERE workspace = $ws AND regexp_full_match(term, '[a-z]{4,}')
     ORDER BY df DESC, term LIMIT 1),
    (SELECT term FROM search_terms WHERE workspace = $ws AND regexp_full_match(term, '[a-z]{4,}')
     ORDER BY df, term LIMIT 1)
"""


def _agentlake() -> list[str]:
    """How people start agentlake: its console script, where this interpreter has one."""
    script = Path(sys.executable).with_name("agentlake")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "agentlake"]


def _picks(catalog: Path, workspace: str) -> tuple[str, str, str]:
    """A session of median size, the most and the least common indexed word."""
    con = duckdb.connect(str(catalog), read_only=True)
    try:
        row = con.execute(_PICK_SQL, {"ws": workspace}).fetchone()
    finally:
        con.close()
    if row is None or None in row:
        raise ValueError(f"{catalog}: no session or no indexed word in workspace {workspace!r}")
    session, common, rare = (str(value) for value in row)
    return session, common, rare


def cli_commands(catalog: Path, *, workspace: str = "default") -> dict[str, dict[str, Any]]:
    """Each measured command by name: its arguments after ``agentlake`` and whether it
    is a help (``"help"``) or a read of the catalog (``"read"``)."""
    session, common, rare = _picks(catalog, workspace)
    on = ["--catalog", str(catalog), "--workspace", workspace]
    reads: dict[str, list[str]] = {
        "report_daily": ["report", "daily", *on],
        "sessions_list": ["sessions", "list", *on],
        "sessions_show": ["sessions", "show", session, *on],
        "search_common": ["search", common, *on],
        "search_rare": ["search", rare, *on],
        "doctor": ["doctor", *on],
    }
    commands: dict[str, dict[str, Any]] = {
        "help": {"args": ["--help"], "group": "help"},
        "report_help": {"args": ["report", "--help"], "group": "help"},
    }
    for name, args in reads.items():
        commands[name] = {"args": args, "group": "read"}
        commands[f"{name}_json"] = {"args": [*args, "--json"], "group": "read"}
    return commands


def _run(argv: Sequence[str], env: Mapping[str, str]) -> float:
    run = run_child(argv, env=env, timeout=_TIMEOUT_S)
    # doctor says 1 when the catalog needs attention: still a full answer.
    if run.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(argv)} exited {run.returncode}: {run.stderr.strip()[-800:]}")
    return run.seconds


def measure_cli_latency(catalog: Path, *, env: dict[str, str], rounds: int) -> dict[str, Any]:
    """Run every command of :func:`cli_commands` once to warm up, then ``rounds`` times,
    as subprocesses with environment ``env``; commands alternate within a round so
    that a burst of load on the machine spreads over all of them.

    Returns ``{"rounds": n, "commands": {name: {"argv": [...], "group": "help"|"read",
    "p50_s": median, "samples_s": [...]}}, "help_max_p50_s": ..., "read_max_p50_s": ...}``
    (the largest median of each group). A command that fails (an exit status other than
    0, or 1 for ``doctor``'s "needs attention") raises RuntimeError."""
    if rounds < 1:
        raise ValueError("rounds must be at least 1")
    commands = cli_commands(catalog, workspace=env.get("AGENTLAKE_WORKSPACE") or "default")
    prefix = _agentlake()
    argvs = {name: [*prefix, *spec["args"]] for name, spec in commands.items()}
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for argv in argvs.values():
        _run(argv, env)
    for _ in range(rounds):
        for name, argv in argvs.items():
            samples[name].append(_run(argv, env))
    results = {
        name: {
            "argv": argvs[name],
            "group": spec["group"],
            "p50_s": statistics.median(samples[name]),
            "samples_s": samples[name],
        }
        for name, spec in commands.items()
    }

    def worst(group: str) -> float:
        return max(float(r["p50_s"]) for r in results.values() if r["group"] == group)

    return {
        "rounds": rounds,
        "commands": results,
        "help_max_p50_s": worst("help"),
        "read_max_p50_s": worst("read"),
    }


def main(argv: Sequence[str] | None = None) -> None:
    """Print each command's median and the JSON document of :func:`measure_cli_latency`."""
    parser = argparse.ArgumentParser(prog="python -m benchmarks.cli_latency")
    parser.add_argument("catalog", type=Path)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--output", type=Path, help="Also write the JSON document here.")
    args = parser.parse_args(argv)
    result = measure_cli_latency(args.catalog, env=dict(os.environ), rounds=args.rounds)
    for name, figures in result["commands"].items():
        print(f"{name:22} {figures['p50_s'] * 1000:7.0f} ms", file=sys.stderr)
    doc = orjson.dumps(result, option=orjson.OPT_INDENT_2)
    if args.output:
        args.output.write_bytes(doc + b"\n")
    sys.stdout.write(doc.decode() + "\n")


if __name__ == "__main__":
    main()
