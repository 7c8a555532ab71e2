"""Latency of every report on an imported catalog, next to ccusage's daily report on the
same home.

    python -m benchmarks.reports CATALOG [--home HOME] [--ccusage-dir DIR] [--samples 7]

Each report is called through the library (``agentlake.read.reports.report``, which opens
the catalog read-only, as the CLI does) once to warm the file cache and then
``--samples`` times; p50 and p95 are printed in milliseconds. ``report daily --json``
is also timed through the CLI (process start included). When ccusage is installed
(``DIR/node_modules/.bin/ccusage``, default: the repository root, then ``$PATH``) and
``--home`` is given, ``ccusage daily --json --offline --timezone UTC`` (every agent it
detects: Claude Code, Codex and Gemini CLI; it does not read Cursor) is timed on it,
three times, with ``HOME`` and the agents' directory variables pointing into it.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

from agentlake.load.lake import Catalog
from agentlake.read.reports import REPORT_KINDS, ReportFilter, ReportKind, report

from .errors import PhaseError
from .measure import percentile, run_child

REPO = Path(__file__).resolve().parent.parent
CCUSAGE_VERSION: Final = "20.0.24"
CCUSAGE_TIMEOUT_S: Final = 900.0
CLI_TIMEOUT_S: Final = 300.0


def time_reports(
    catalog: Catalog, samples: int, kinds: tuple[ReportKind, ...] = REPORT_KINDS
) -> dict[str, Any]:
    """p50/p95 seconds and raw samples of each report kind (``kinds``), library call."""
    out: dict[str, Any] = {}
    for kind in kinds:
        report(catalog, "default", kind, ReportFilter())
        times = []
        for _ in range(samples):
            started = time.perf_counter()
            result = report(catalog, "default", kind, ReportFilter())
            times.append(time.perf_counter() - started)
        out[kind] = {"rows": result.rows.num_rows, "p50_s": percentile(times, 50),
                     "p95_s": percentile(times, 95), "samples_s": times}  # fmt: skip
    return out


def time_cli_daily(
    catalog: Path | str, samples: int = 3, env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """``agentlake report daily --json`` as a subprocess (includes interpreter start)."""
    times = []
    argv = [
        sys.executable,
        "-m",
        "agentlake",
        "report",
        "daily",
        "--json",
        "--catalog",
        str(catalog),
    ]
    for _ in range(samples):
        run = run_child(argv, env=env, timeout=CLI_TIMEOUT_S)
        if run.returncode != 0:
            raise PhaseError(
                f"agentlake report daily exited {run.returncode}: {run.stderr.strip()}"
            )
        times.append(run.seconds)
    return {"p50_s": percentile(times, 50), "samples_s": times, "note": "includes process start"}


def time_cli_dashboard(
    catalog: Path | str, out: Path, samples: int = 3, env: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """``agentlake report html OUT --json`` as a subprocess (includes interpreter start):
    the wall time of each run, the library's own time and the page's size."""
    times, inside = [], []
    argv = [sys.executable, "-m", "agentlake", "report", "html", str(out), "--json",
            "--catalog", str(catalog)]  # fmt: skip
    doc: dict[str, Any] = {}
    for _ in range(samples):
        run = run_child(argv, env=env, timeout=CLI_TIMEOUT_S)
        if run.returncode != 0:
            raise PhaseError(f"agentlake report html exited {run.returncode}: {run.stderr.strip()}")
        doc = json.loads(run.stdout)
        times.append(run.seconds)
        inside.append(float(doc["seconds"]))
    return {"p50_s": percentile(times, 50), "samples_s": times,
            "library_p50_s": percentile(inside, 50), "library_samples_s": inside,
            "bytes": doc["bytes"], "calls": doc["calls"], "providers": doc["providers"],
            "note": "includes process start"}  # fmt: skip


def find_ccusage(ccusage_dir: Path | None) -> str | None:
    """The ccusage executable: under ``ccusage_dir`` or the repository, else on PATH."""
    for base in (ccusage_dir, REPO):
        if base is not None and (base / "node_modules" / ".bin" / "ccusage").exists():
            return str(base / "node_modules" / ".bin" / "ccusage")
    return shutil.which("ccusage")


def ccusage_env(home: Path) -> dict[str, str]:
    """An environment in which ccusage finds every agent's files under ``home`` only."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_DIR", "XDG_CONFIG_HOME")}  # fmt: skip
    env.update({"HOME": str(home), "CLAUDE_CONFIG_DIR": str(home / ".claude"),
                "CODEX_HOME": str(home / ".codex"), "XDG_CONFIG_HOME": str(home / ".config"),
                "CCUSAGE_OFFLINE": "1", "LOG_LEVEL": "0", "NO_COLOR": "1"})  # fmt: skip
    return env


def ccusage_version(executable: str) -> str | None:
    """``ccusage --version`` (the version number only), or None when it does not answer."""
    run = run_child([executable, "--version"], timeout=60)
    words = run.stdout.split()
    return words[-1].removeprefix("v") if run.returncode == 0 and words else None


def time_ccusage(executable: str, home: Path, samples: int = 3) -> dict[str, Any]:
    """ccusage's daily report over ``home`` (every agent it detects, offline, UTC)."""
    argv = [executable, "daily", "--json", "--offline", "--timezone", "UTC"]
    times, days = [], 0
    for _ in range(samples):
        run = run_child(argv, env=ccusage_env(home), timeout=CCUSAGE_TIMEOUT_S)
        if run.returncode != 0:
            raise PhaseError(f"ccusage daily exited {run.returncode}: {run.stderr.strip()[-500:]}")
        times.append(run.seconds)
        days = len(json.loads(run.stdout)["daily"])
    return {"p50_s": percentile(times, 50), "samples_s": times, "days": days,
            "command": " ".join(["ccusage", *argv[1:]]), "note": "includes process start"}  # fmt: skip


def run(catalog: Path, home: Path | None, ccusage_dir: Path | None, samples: int) -> dict[str, Any]:
    """Every measurement of this module as one JSON-able document."""
    doc: dict[str, Any] = {"library": time_reports(catalog, samples)}
    doc["cli_daily"] = time_cli_daily(catalog)
    executable = find_ccusage(ccusage_dir)
    if executable and home is not None:
        doc["ccusage_daily"] = time_ccusage(executable, home)
    else:
        doc["ccusage_daily"] = {"skipped": "ccusage is not installed or no --home was given"}
    return doc


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.reports", description=__doc__)
    parser.add_argument("catalog", type=Path)
    parser.add_argument("--home", type=Path, default=None)
    parser.add_argument("--ccusage-dir", type=Path, default=None)
    parser.add_argument("--samples", type=int, default=7)
    args = parser.parse_args()
    doc = run(args.catalog, args.home, args.ccusage_dir, args.samples)
    for kind, stats in doc["library"].items():
        print(f"report {kind:8} {stats['rows']:>7,} rows  p50 {stats['p50_s'] * 1e3:7.1f} ms  "
              f"p95 {stats['p95_s'] * 1e3:7.1f} ms")  # fmt: skip
    print(f"agentlake report daily --json (CLI, process start included): "
          f"{doc['cli_daily']['p50_s']:.2f} s")  # fmt: skip
    cc = doc["ccusage_daily"]
    print("ccusage daily: " + (f"{cc['p50_s']:.2f} s" if "p50_s" in cc else cc["skipped"]))


if __name__ == "__main__":
    main()
